"""The schedule cache key: a graph's structure with its buffers and bound values normalized.

``structure_key`` walks the graph once (no rewriting): every node becomes a small tuple
``(op, dtype, arg, source positions, tag)``; a BUFFER becomes ``(device, size, dtype)`` and
its position in the list of input buffers; a bound Variable becomes the Variable, its value
going to ``var_vals``. Two graphs with equal keys schedule identically, up to which buffers
they read and which values their Variables hold.
"""

from __future__ import annotations

import struct
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from fusegrad.codegen.schedule.graph import ScheduleTemplate
from fusegrad.codegen.schedule.realize import PrepareContext, map_arg
from fusegrad.uop import Ops, UOp

CACHE_SIZE = 256


_PLAIN = (int, float, str, bool, type(None))
_DOUBLE = struct.Struct("<d")
_MISSING = object()
_EXPANDED = object()  # a walk's marker: the node below it has its sources emitted


class StructureKey:
    """A structure key: the per-node tuples, with their hash computed once (a dict would
    otherwise rehash the whole nested tuple on every lookup)."""

    __slots__ = ("hash", "nodes")

    def __init__(self, nodes: tuple[Hashable, ...]) -> None:
        self.nodes = nodes
        self.hash = hash(nodes)

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, StructureKey)
            and other.hash == self.hash
            and other.nodes == self.nodes
        )


@dataclass
class _KeyWalk:
    inputs: dict[UOp, int] = field(default_factory=dict)
    prep: PrepareContext = field(default_factory=PrepareContext)

    def node_key(self, u: UOp, pos: dict[UOp, int]) -> Hashable:
        if u.op is Ops.BUFFER:
            n = self.inputs.setdefault(u, len(self.inputs))
            return ("buffer", n, u.src[1].arg, u.arg, u.dtype, u.tag)
        if u.is_bound_var:
            return ("var", self.prep.unbind(u))
        arg = u.arg if type(u.arg) in _PLAIN else map_arg(u.arg, self.sub_key)
        if type(arg) is float:
            arg = (float, _DOUBLE.pack(arg))
        return (u.op, u.dtype, arg, tuple([pos[s] for s in u.src]), u.tag)

    def sub_key(self, u: UOp) -> Any:
        """A UOp inside an arg (a symbolic size) as a nested key."""
        return ("uop", self.walk(u))

    def walk(self, root: UOp) -> tuple[Hashable, ...]:
        """The node keys of ``root``'s graph in topological order (one walk: a node's key is
        made when it is emitted, its sources' positions known by then)."""
        pos: dict[UOp, int] = {}
        args: dict[Any, Any] = {}  # arg -> its key (shapes repeat: computed once per walk)
        keys: list[Hashable] = []
        emit = keys.append
        # a stack of UOps, each followed by a marker once its sources are pushed (as in
        # UOp.toposort); BUFFERs and bound Variables are leaves here
        stack: list[Any] = [root]
        pop, push = stack.pop, stack.extend
        while stack:
            u = pop()
            if u is _EXPANDED:
                u = pop()
            elif u in pos:
                continue
            else:
                op = u.op
                if u.src and op is not Ops.BUFFER and not (op is Ops.AFTER and u.is_bound_var):
                    pos[u] = -1  # being expanded: a source pushed twice is skipped later
                    push((u, _EXPANDED, *reversed(u.src)))
                    continue
            op = u.op
            if op is Ops.BUFFER or op is Ops.AFTER:
                pos[u] = len(keys)
                emit(self.node_key(u, pos))
                continue
            arg = u.arg
            if type(arg) is float:
                arg = (float, _DOUBLE.pack(arg))  # 0.0 == -0.0 and NaN != NaN: compare bits
            elif type(arg) not in _PLAIN:
                if (hit := args.get(arg, _MISSING)) is _MISSING:
                    hit = args[arg] = map_arg(arg, self.sub_key)
                arg = hit
            src = u.src
            pos[u] = len(keys)
            emit((op, u.dtype, arg, tuple([pos[s] for s in src]) if src else (), u.tag))
        return tuple(keys)


def structure_key(sink: UOp) -> tuple[StructureKey, list[UOp], dict[UOp, int]]:
    """(key, the input BUFFERs in key order, the bound Variables' values) of ``sink``."""
    walk = _KeyWalk()
    key = StructureKey(walk.walk(sink))
    return key, list(walk.inputs), walk.prep.var_vals


class ScheduleCache:
    """An LRU map from structure keys to schedule templates."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self.entries: OrderedDict[Hashable, ScheduleTemplate] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable) -> ScheduleTemplate | None:
        """The template for ``key`` (None on a miss)."""
        tpl = self.entries.get(key)
        if tpl is None:
            self.misses += 1
            return None
        self.hits += 1
        self.entries.move_to_end(key)
        return tpl

    def put(self, key: Hashable, tpl: ScheduleTemplate) -> None:
        """Remember ``tpl`` for ``key``, evicting the least recently used past ``size``."""
        self.entries[key] = tpl
        self.entries.move_to_end(key)
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)

    def clear(self) -> None:
        """Forget every template."""
        self.entries.clear()
        self.hits = self.misses = 0
