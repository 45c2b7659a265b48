"""The call graph the multi-output merge works on (``order._Graph``): its cycle check, pruned
by the topological order it keeps through merges, agrees with a full search, and the order
stays topological after every merge (random graphs and merges)."""

from __future__ import annotations

import random

import pytest
from fusegrad.codegen.schedule.order import _Graph


def _reaches(graph: _Graph, start: set[int], goal: set[int]) -> bool:
    todo, seen = list(start), set(start)
    while todo:
        for s in graph.succs[todo.pop()]:
            if s in goal:
                return True
            if s not in seen:
                seen.add(s)
                todo.append(s)
    return False


def _acyclic_as_one_by_search(graph: _Graph, members: list[int]) -> bool:
    inside = set(members)
    outside = {s for m in members for s in graph.succs[m]} - inside
    return not _reaches(graph, outside, inside)


def _random_dag(rng: random.Random, n: int) -> _Graph:
    preds: dict[int, set[int]] = {i: set() for i in range(n)}
    for i in range(n):
        for j in range(i + 1, n):
            if rng.random() < 3 / n:
                preds[j].add(i)
    ids = list(range(n))
    rng.shuffle(ids)  # ids need not follow the edges (a write-after-read edge goes back)
    return _Graph({ids[k]: {ids[p] for p in before} for k, before in preds.items()})


@pytest.mark.parametrize("seed", range(20))
def test_cycle_check_and_kept_order_agree_with_a_full_search(seed: int) -> None:
    rng = random.Random(seed)
    graph = _random_dag(rng, 30)
    for _ in range(60):
        live = sorted(graph.preds)
        if len(live) < 2:
            break
        keep, other = rng.sample(live, 2)
        want = _acyclic_as_one_by_search(graph, [keep, other])
        assert graph.acyclic_as_one([keep, other]) == want
        if want:
            graph.merge(keep, other)
        assert graph.pos, "an acyclic merge keeps the order"
        for cid, before in graph.preds.items():
            assert all(graph.pos[b] < graph.pos[cid] for b in before)


def test_an_order_dropped_by_a_cycle_is_sorted_again() -> None:
    # 0 -> 1 -> 2: merging 0 and 2 alone closes a cycle through 1; with 1 merged too it opens
    graph = _Graph({0: set(), 1: {0}, 2: {1}, 3: {2}})
    graph.merge(0, 2)
    assert not graph.pos
    graph.merge(0, 1)
    assert graph.acyclic_as_one([0, 3])  # sorted again: 0 (with 1 and 2) before 3
    assert graph.pos[0] < graph.pos[3]
