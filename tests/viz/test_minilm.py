"""A VIZ trace of MiniLM's first call lists every kernel that call compiled."""

from __future__ import annotations

import json
import urllib.request

from fusegrad.viz import VizData, VizServer


def test_every_kernel_of_minilm_first_call_is_listed(
    minilm_viz: tuple[VizData, set[str]],
) -> None:
    viz, names = minilm_viz
    assert len(names) >= 10
    with VizServer(viz) as server, urllib.request.urlopen(server.url + "api/groups") as r:
        groups = json.loads(r.read())
    listed = [g for g in groups if g["kind"] == "kernel"]
    assert {g["name"] for g in listed} == names
    assert all(g["stages"] and g["stages"][-1]["name"] == "if blocks" for g in listed)
    assert any(g["kind"] == "schedule" for g in groups)
