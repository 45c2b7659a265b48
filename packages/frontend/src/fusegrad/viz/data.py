"""A VIZ trace as plain data (picklable, no UOps), and the graph pages the web page draws.

``export`` numbers every node of every recorded graph once (UOps are hash-consed, so the
stages of one kernel share most of their nodes) and keeps, per node, its op, dtype, a short
arg text and its sources' numbers. ``VizData`` answers the page's questions: the group and
stage lists, one page of a stage's graph laid out in layers (Python computes the layout, the
browser only draws), what the stage changed, the rules that fired.
"""

from __future__ import annotations

import pickle
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fusegrad.uop import UOp
from fusegrad.uop.viztrace import Trace

PAGE = 1500
"""Nodes drawn per page of a graph: a bigger graph is drawn a page at a time from its sink."""
STEPS_SHOWN = 500
"""Rule firings listed per stage (the count is always exact)."""
FORMAT = 1


def _arg_text(arg: Any) -> str:
    text = repr(arg) if arg is not None else ""
    return text if len(text) <= 60 else text[:57] + "..."


class _Numbering:
    def __init__(self) -> None:
        self.ids: dict[UOp, int] = {}
        self.nodes: list[tuple[str, str, str, tuple[int, ...]]] = []

    def number(self, root: UOp) -> int:
        ids = self.ids
        if root in ids:
            return ids[root]
        stack: list[tuple[UOp, bool]] = [(root, False)]
        while stack:
            u, ready = stack.pop()
            if u in ids:
                continue
            if ready:
                ids[u] = len(self.nodes)
                self.nodes.append(
                    (u.op.name, repr(u.dtype), _arg_text(u.arg), tuple(ids[s] for s in u.src))
                )
                continue
            stack.append((u, True))
            stack.extend((s, False) for s in u.src if s not in ids)
        return ids[root]


def export(trace: Trace, profile: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """``trace`` as plain data (what ``save`` pickles and ``VizData`` reads)."""
    num = _Numbering()
    groups = []
    for g in trace.groups:
        stages = []
        for s in g.stages:
            out = s.output if s.output is not None else s.input
            steps = [
                (st.rule, st.source, num.number(st.before), num.number(st.after))
                for st in s.steps[:STEPS_SHOWN]
            ]
            stages.append(
                {
                    "name": s.name,
                    "kind": s.kind,
                    "input": num.number(s.input),
                    "output": num.number(out),
                    "seconds": s.seconds,
                    "n_steps": len(s.steps),
                    "steps": steps,
                }
            )
        groups.append({"name": g.name, "kind": g.kind, "info": dict(g.info), "stages": stages})
    return {"format": FORMAT, "nodes": num.nodes, "groups": groups, "profile": profile or []}


def save(data: dict[str, Any], path: Path) -> Path:
    """Write exported trace data to ``path`` (a pickle of plain Python values)."""
    with open(path, "wb") as f:
        pickle.dump(data, f, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def load(path: Path) -> dict[str, Any]:
    """Read a trace written by ``save``; a clear error for anything else."""
    try:
        with open(path, "rb") as f:
            data = pickle.load(f)
    except (OSError, pickle.UnpicklingError, EOFError) as e:
        raise ValueError(f"fusegrad.viz: cannot read trace {path}: {e}") from e
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"fusegrad.viz: {path} is not a fusegrad VIZ trace (format {FORMAT})")
    return data


@dataclass
class _Order:
    order: list[int]  # breadth-first from the sink (users before sources)
    members: set[int]


class VizData:
    """Queries over exported trace data."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.nodes: list[tuple[str, str, str, tuple[int, ...]]] = data["nodes"]
        self.groups: list[dict[str, Any]] = data["groups"]
        self._orders: dict[int, _Order] = {}
        self.sources = {
            step[1].rpartition(":")[0]
            for g in self.groups
            for s in g["stages"]
            for step in s["steps"]
            if step[1]
        }

    def listing(self) -> list[dict[str, Any]]:
        """Groups with their stages' names and counts (what the side panel lists)."""
        return [
            {
                "name": g["name"],
                "kind": g["kind"],
                "stages": [
                    {"name": s["name"], "kind": s["kind"], "steps": s["n_steps"],
                     "ms": round(s["seconds"] * 1e3, 3)}
                    for s in g["stages"]
                ],
            }
            for g in self.groups
        ]  # fmt: skip

    def _stage(self, g: int, s: int) -> dict[str, Any]:
        try:
            return dict(self.groups[g]["stages"][s])
        except (IndexError, TypeError) as e:
            raise KeyError(f"no stage {s} in group {g}") from e

    def order(self, root: int) -> _Order:
        """Every node under ``root``, breadth-first from it (cached per root)."""
        hit = self._orders.get(root)
        if hit is None:
            seen = {root}
            order = [root]
            nodes = self.nodes
            i = 0
            while i < len(order):
                for s in nodes[order[i]][3]:
                    if s not in seen:
                        seen.add(s)
                        order.append(s)
                i += 1
            hit = self._orders[root] = _Order(order, seen)
        return hit

    def stage(self, g: int, s: int) -> dict[str, Any]:
        """A stage's rules fired (name, source, before/after ops) and its group's texts."""
        st = self._stage(g, s)
        steps = [
            {"rule": rule, "source": src, "before": self.nodes[b][0], "after": self.nodes[a][0],
             "after_id": a}
            for rule, src, b, a in st["steps"]
        ]  # fmt: skip
        return {
            "name": st["name"],
            "kind": st["kind"],
            "n_steps": st["n_steps"],
            "steps": steps,
            "info": self.groups[g]["info"],
            "group": self.groups[g]["name"],
        }

    def graph(self, g: int, s: int, side: str = "output", page: int = 0) -> dict[str, Any]:
        """One page of a stage's input or output graph, laid out: nodes with x/y/label, edges,
        which nodes are new in this stage and which rule made them, and how many nodes the
        page leaves out."""
        st = self._stage(g, s)
        if side not in ("input", "output"):
            raise KeyError(f"side must be input or output, not {side!r}")
        root = st[side]
        full = self.order(root)
        total = len(full.order)
        pages = max(1, -(-total // PAGE))
        if not 0 <= page < pages:
            raise KeyError(f"page {page} out of range (the graph has {pages} pages)")
        shown = full.order[page * PAGE : (page + 1) * PAGE]
        other = self.order(st["input" if side == "output" else "output"]).members
        made_by = {a: i for i, (_, _, _, a) in enumerate(st["steps"])}
        return {
            "side": side,
            "page": page,
            "pages": pages,
            "total": total,
            "changed": sum(1 for u in full.order if u not in other),
            **self._layout(shown, other, made_by),
        }

    def _layers(
        self, shown: list[int], inside: set[int]
    ) -> tuple[dict[int, int], dict[int, list[int]]]:
        """Each shown node's row (longest path from the page's top: below every user shown)
        and its users on the page."""
        nodes = self.nodes
        users: dict[int, list[int]] = {u: [] for u in shown}
        pending = dict.fromkeys(shown, 0)
        for u in shown:
            for s in set(nodes[u][3]) & inside:
                users[s].append(u)
                pending[s] += 1
        layer = dict.fromkeys(shown, 0)
        ready = deque(u for u in shown if pending[u] == 0)
        while ready:
            u = ready.popleft()
            for s in set(nodes[u][3]) & inside:
                layer[s] = max(layer[s], layer[u] + 1)
                pending[s] -= 1
                if pending[s] == 0:
                    ready.append(s)
        return layer, users

    def _layout(self, shown: list[int], other: set[int], made_by: dict[int, int]) -> dict[str, Any]:
        nodes = self.nodes
        inside = set(shown)
        layer, users = self._layers(shown, inside)
        rows: dict[int, list[int]] = {}
        for u in shown:
            rows.setdefault(layer[u], []).append(u)
        x: dict[int, float] = {}
        for depth in sorted(rows):
            row = rows[depth]
            if depth:  # order a row by the mean position of its users (one barycenter pass)
                row.sort(key=lambda u: sum(x[v] for v in users[u]) / max(1, len(users[u])))
            for i, u in enumerate(row):
                x[u] = float(i - (len(row) - 1) / 2)
        out_nodes = []
        for u in shown:
            op, dtype, arg, src = nodes[u]
            out_nodes.append(
                {"id": u, "op": op, "dtype": dtype, "arg": arg, "x": x[u], "y": layer[u],
                 "new": u not in other, "rule": made_by.get(u),
                 "hidden": sum(1 for s in src if s not in inside)}
            )  # fmt: skip
        edges = [[u, s] for u in shown for s in nodes[u][3] if s in inside]
        return {"nodes": out_nodes, "edges": edges}

    def search(self, text: str) -> list[int]:
        """Indices of the groups whose name contains ``text`` (case-insensitive)."""
        t = text.lower()
        return [i for i, g in enumerate(self.groups) if t in g["name"].lower()]

    def source_lines(self, path: str) -> list[str]:
        """The lines of a rule's source file (only files that rules of this trace are in)."""
        if path not in self.sources:
            raise KeyError(f"{path} is not the source of a rule in this trace")
        return Path(path).read_text(errors="replace").splitlines()
