"""The VIZ server and its data: routes, errors, paging, a saved trace, a 100k-node trace."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from fusegrad.viz import VizData, VizServer, load, save
from fusegrad.viz.data import PAGE


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as r:
        return json.loads(r.read())


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


def test_bound_to_localhost_on_a_free_port(server: VizServer) -> None:
    host, port = server.httpd.server_address[:2]
    assert host == "127.0.0.1" and port != 0
    page = urllib.request.urlopen(server.url, timeout=30).read().decode()
    assert '<script src="/app.js">' in page


def test_groups_stages_and_graph(server: VizServer, step_viz: VizData) -> None:
    groups = _get(server.url + "api/groups")
    kernels = [i for i, g in enumerate(groups) if g["kind"] == "kernel"]
    assert len(kernels) >= 3 and any(g["kind"] == "schedule" for g in groups)
    g = kernels[0]
    stages = groups[g]["stages"]
    assert stages[-1]["name"] == "if blocks"
    for s in range(len(stages)):
        graph = _get(server.url + f"api/graph?g={g}&s={s}")
        ids = {n["id"] for n in graph["nodes"]}
        assert len(ids) == graph["total"] <= PAGE
        assert all(u in ids and v in ids for u, v in graph["edges"])
        # a node's row is below each of its users'
        y = {n["id"]: n["y"] for n in graph["nodes"]}
        assert all(y[v] > y[u] for u, v in graph["edges"])
    changed = [s for s in range(len(stages)) if stages[s]["steps"]]
    st = _get(server.url + f"api/stage?g={g}&s={changed[0]}")
    assert st["n_steps"] == len(st["steps"]) > 0
    path, _, line = st["steps"][0]["source"].rpartition(":")
    assert Path(path).is_file() and int(line) > 0
    assert st["info"]["source"] and st["info"]["linear"]


def test_source_route_serves_only_rule_files(server: VizServer, step_viz: VizData) -> None:
    path = sorted(step_viz.sources)[0]
    page = urllib.request.urlopen(server.url + f"source?path={path}&line=3", timeout=30).read()
    assert b'id="L3" class="hit"' in page
    assert _status(server.url + "source?path=/etc/passwd&line=1") == 400


@pytest.mark.parametrize(
    "query",
    ["api/graph?g=0", "api/graph?g=999&s=0", "api/graph?g=0&s=0&side=sideways",
     "api/graph?g=0&s=0&page=99", "api/stage?g=x&s=0"],
)  # fmt: skip
def test_bad_queries_are_400(server: VizServer, query: str) -> None:
    assert _status(server.url + query) == 400


def test_search_by_kernel_name(step_viz: VizData) -> None:
    name = next(g["name"] for g in step_viz.groups if g["kind"] == "kernel")
    hits = step_viz.search(name.upper())
    assert hits and all(name.lower() in step_viz.groups[i]["name"].lower() for i in hits)
    assert step_viz.search("no such kernel") == []


def test_saved_trace_roundtrip_and_bad_file(tmp_path: Path, step_viz: VizData) -> None:
    path = save(step_viz.data, tmp_path / "t.pkl")
    assert VizData(load(path)).listing() == step_viz.listing()
    bad = tmp_path / "bad.pkl"
    bad.write_text("not a trace")
    with pytest.raises(ValueError, match="cannot read trace"):
        load(bad)
    out = subprocess.run(
        [sys.executable, "-m", "fusegrad.viz", str(bad)], capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert out.returncode == 2 and "cannot read trace" in out.stderr


def test_module_serves_a_saved_trace(tmp_path: Path, step_viz: VizData) -> None:
    path = save(step_viz.data, tmp_path / "t.pkl")
    with subprocess.Popen(
        [sys.executable, "-m", "fusegrad.viz", str(path)], stderr=subprocess.PIPE, text=True
    ) as proc:
        try:
            assert proc.stderr is not None
            line = proc.stderr.readline()
            assert "http://127.0.0.1:" in line
            url = line.split()[2]
            assert len(_get(url + "api/groups")) == len(step_viz.groups)
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def test_100k_node_trace_opens_in_under_3s(big_trace_file: Path) -> None:
    path = big_trace_file
    start = time.perf_counter()
    viz = VizData(load(path))
    with VizServer(viz) as server:
        groups = _get(server.url + "api/groups")
        _get(server.url + "api/stage?g=0&s=0")
        graph = _get(server.url + "api/graph?g=0&s=0")
    seconds = time.perf_counter() - start
    assert graph["total"] > 100_000 and len(graph["nodes"]) == PAGE
    assert graph["pages"] == -(-graph["total"] // PAGE) and groups[0]["stages"][0]["steps"] > 0
    assert seconds < 3.0, f"opening took {seconds:.2f} s"
