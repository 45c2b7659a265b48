"""The schedule cache key: a graph's structure with its buffers and bound values normalized.

Two graphs with equal keys schedule identically, up to which buffers they read and which
values their Variables hold. The key comes with the graph's input BUFFERs in the order the
template numbers them, and the bound Variables' values.

The key is made part by part and each part remembered on its node (``UOp.__dict__``): a node's
part is ``(op, dtype, arg, tag)`` and, per source, the source's part with the positions its
leaves take among the node's leaves (the BUFFERs and bound Variables under it, in first-use
order). A BUFFER's part is ``(device, size, dtype)``, a bound Variable's the Variable (its
value goes to ``var_vals``). Parts are interned, so equal structure is the same object and a
node's part costs one lookup over its sources' parts: a graph built again over new buffers
(a training step, a generate loop) makes parts only for its new nodes, and the nodes it
shares with the graphs before (constants, weights' views) cost nothing. Hash-consing makes
this exact: equal subgraphs over the same leaves are one node.

Graphs with more than ``LEAF_LIMIT`` leaves, or with UOps inside args (symbolic sizes), are
keyed by ``_KeyWalk`` instead: one walk that emits ``(op, dtype, arg, source positions, tag)``
per node, with BUFFERs and bound Variables as numbered leaves.
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


LEAF_LIMIT = 32  # leaves a node's remembered part may have (merging them is O(leaves))
_MEMO = "_schedule_part"  # the attribute a node's (part, leaves) lives in (None: walk instead)
_MAX_PARTS = 1 << 16


class _Part:
    """An interned key part (see the module docstring): equal parts are one object, so
    identity is equality and hashing is by identity."""

    __slots__ = ("parts",)

    def __init__(self, parts: tuple[Hashable, ...]) -> None:
        self.parts = parts


_PARTS: dict[tuple[Hashable, ...], _Part] = {}


def _intern(parts: tuple[Hashable, ...]) -> _Part:
    found = _PARTS.get(parts)
    if found is None:
        if len(_PARTS) >= _MAX_PARTS:
            # parts already remembered on nodes stay valid (they are never equal to new ones:
            # such graphs only miss the cache once more)
            _PARTS.clear()
        found = _PARTS[parts] = _Part(parts)
    return found


def _holds_uop(arg: Any) -> bool:
    if isinstance(arg, UOp):
        return True
    return type(arg) is tuple and any(_holds_uop(a) for a in arg)


Memo = tuple[_Part, tuple[UOp, ...]] | None


def _leaf(u: UOp) -> Memo:
    """The (part, leaves) of a BUFFER or bound Variable (made each time: leaves are new more
    often than not); None for any other node."""
    if u.op is Ops.BUFFER:
        return _intern(("buffer", u.src[1].arg, u.arg, u.dtype, u.tag)), (u,)
    if u.op is Ops.AFTER and u.is_bound_var:
        return _intern(("var", u.unbind()[0])), (u,)
    return None


def _node_memo(u: UOp) -> Memo:
    """``u``'s (part, leaves) from its sources' (each a leaf or remembered already)."""
    arg = u.arg
    if type(arg) is float:
        arg = (float, _DOUBLE.pack(arg))  # 0.0 == -0.0 and NaN != NaN: compare bits
    elif type(arg) not in _PLAIN and _holds_uop(arg):
        return None
    index: dict[UOp, int] = {}
    srcs: list[Hashable] = []
    for s in u.src:
        sub = s.__dict__.get(_MEMO, _MISSING)
        if sub is _MISSING:
            sub = _leaf(s)
        if sub is None:
            return None
        part, leaves = sub
        srcs.append(part)
        if len(leaves) == 1:  # the commonest: one leaf (a buffer), or a node over one
            leaf = leaves[0]
            found = index.get(leaf)
            if found is None:
                found = index[leaf] = len(index)
            srcs.append(found)
        else:
            srcs.append(tuple([index.setdefault(leaf, len(index)) for leaf in leaves]))
    if len(index) > LEAF_LIMIT:
        return None
    return _intern((u.op, u.dtype, arg, tuple(srcs), u.tag)), tuple(index)


def _memo(root: UOp) -> Memo:
    """``root``'s (part, leaves), remembering it on every node below that lacked it: the
    nodes without a part, sources first (leaves and remembered nodes end the walk; a node is
    looked at again once its sources are done)."""
    memo = root.__dict__
    found = memo.get(_MEMO, _MISSING)
    if found is not _MISSING:
        return found  # type: ignore[no-any-return]
    buffer, after = Ops.BUFFER, Ops.AFTER
    for s in root.src:
        if (
            _MEMO not in s.__dict__
            and s.op is not buffer
            and not (s.op is after and s.is_bound_var)
        ):
            break
    else:  # the common case: only the root is new (a step's op over earlier nodes)
        part = memo[_MEMO] = _node_memo(root)
        return part
    stack = [root]
    while stack:
        u = stack[-1]
        todo = [
            s
            for s in u.src
            if _MEMO not in s.__dict__
            and s.op is not buffer
            and not (s.op is after and s.is_bound_var)
        ]
        if todo:
            stack += todo
            continue
        stack.pop()
        if _MEMO not in u.__dict__:  # pushed by two users: made once
            u.__dict__[_MEMO] = _node_memo(u)
    return root.__dict__[_MEMO]  # type: ignore[no-any-return]


def structure_key(sink: UOp) -> tuple[Hashable, list[UOp], dict[UOp, int]]:
    """(key, the input BUFFERs in key order, the bound Variables' values) of ``sink``."""
    src = sink.src
    if len(src) == 1 and sink.arg is None and sink.tag is None:
        found = target_key(src[0])  # a plain realize's one target: keyed without the SINK
        if found is not None:
            return found
    else:
        memo = _leaf(sink) or _memo(sink)
        if memo is not None:
            return _with_leaves(*memo)
    walk = _KeyWalk()
    key = StructureKey(walk.walk(sink))
    return key, list(walk.inputs), walk.prep.var_vals


def target_key(target: UOp) -> tuple[Hashable, list[UOp], dict[UOp, int]] | None:
    """``structure_key`` of a SINK of ``target`` alone, without making the SINK: the target's
    part with the same leaves in the same order (a SINK of several targets has a part of op
    SINK, which no single target's part equals). None where the parts don't cover it (more
    than ``LEAF_LIMIT`` leaves, UOps in args, a SINK): key its SINK with ``structure_key``."""
    if target.op is Ops.SINK:
        return None
    memo = _leaf(target) or _memo(target)
    return None if memo is None else _with_leaves(*memo)


def _with_leaves(
    part: _Part, leaves: tuple[UOp, ...]
) -> tuple[Hashable, list[UOp], dict[UOp, int]]:
    inputs = [leaf for leaf in leaves if leaf.op is Ops.BUFFER]
    if len(inputs) == len(leaves):
        return part, inputs, {}
    prep = PrepareContext()
    for leaf in leaves:
        if leaf.op is not Ops.BUFFER:
            prep.unbind(leaf)  # raises on one Variable bound to two values
    return part, inputs, prep.var_vals


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

    def peek(self, key: Hashable) -> ScheduleTemplate | None:
        """The template for ``key`` without counting or reordering (a caller that may still
        take the ``get`` path: it counts the hit with ``get`` once it uses the template)."""
        return self.entries.get(key)

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
