"""The VIZ page in headless Chromium (Debian's chromium + chromium-driver, driven by
selenium): open the page of a small training step, click to a kernel, step through its
stages, check the drawn nodes and the source panel, save screenshots. Skipped where
chromium, chromedriver or selenium is missing (``tools/dev`` does not require them).

``FUSEGRAD_VIZ_SCREENSHOTS=docs`` also writes the two screenshots docs/viz.md shows."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fusegrad.viz import VizData, VizServer, load
from fusegrad.viz.data import PAGE

webdriver = pytest.importorskip("selenium.webdriver")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
if CHROMIUM is None or DRIVER is None:
    pytest.skip("headless chromium and chromedriver are not installed", allow_module_level=True)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1600,1000"):  # fmt: skip
        opts.add_argument(flag)
    driver = webdriver.Chrome(options=opts, service=webdriver.ChromeService(str(DRIVER)))
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver: Any, cond: Any, timeout: float = 30) -> Any:
    return WebDriverWait(driver, timeout).until(cond)


def _drawn(driver: Any) -> int:
    _wait(driver, lambda d: d.find_element(By.ID, "title").get_attribute("data-drawn"))
    return int(driver.find_element(By.ID, "title").get_attribute("data-drawn"))


def _screenshot(driver: Any, tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    driver.save_screenshot(str(path))
    assert path.stat().st_size > 10_000  # a drawn page, not a blank one
    if os.environ.get("FUSEGRAD_VIZ_SCREENSHOTS") == "docs":
        shutil.copy(path, DOCS / name)


def test_click_to_a_kernel_and_step_through_its_stages(
    browser: Any, server: VizServer, step_viz: VizData, tmp_path: Path
) -> None:
    browser.get(server.url)
    _wait(browser, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
    kernels = browser.find_elements(By.CSS_SELECTOR, ".group-name.kernel")
    listed = [g["name"] for g in step_viz.groups if g["kind"] == "kernel"]
    assert [k.text.rsplit(" (", 1)[0] for k in kernels] == listed
    # pick the kernel with the most lowering stages and click it
    g = max(
        (i for i, grp in enumerate(step_viz.groups) if grp["kind"] == "kernel"),
        key=lambda i: len(step_viz.groups[i]["stages"]),
    )
    group = step_viz.groups[g]
    browser.find_element(By.CSS_SELECTOR, f'.group-name[data-g="{g}"]').click()
    _wait(browser, lambda d: group["stages"][0]["name"] in d.find_element(By.ID, "title").text)
    source = browser.find_element(By.ID, "source").text
    assert group["name"] in source and source == group["info"]["source"].strip()
    assert "PARAM" in browser.find_element(By.ID, "linear").text
    shots = 0
    for s, stage in enumerate(group["stages"]):
        if s:
            browser.find_element(By.ID, "next").click()
        _wait(browser, lambda d, name=stage["name"]: f"/ {name} (" in d.find_element(
            By.ID, "title").text)  # fmt: skip
        _wait(browser, lambda d: "nodes" in d.find_element(By.ID, "title").text)
        expected = step_viz.graph(g, s)
        assert _drawn(browser) == len(expected["nodes"])
        drawn = browser.find_elements(By.CSS_SELECTOR, "#graph .node")
        assert len(drawn) == len(expected["nodes"])
        assert sorted(n.get_attribute("data-op") for n in drawn) == sorted(
            n["op"] for n in expected["nodes"]
        )
        assert len(browser.find_elements(By.CSS_SELECTOR, "#graph .node.new")) == sum(
            n["new"] for n in expected["nodes"]
        )
        rules = browser.find_elements(By.CSS_SELECTOR, "#rules .rule a")
        assert len(rules) == len([st for st in step_viz.stage(g, s)["steps"] if st["source"]])
        if rules and shots == 0:
            assert "/source?path=" in rules[0].get_attribute("href")
            _screenshot(browser, tmp_path, "viz_stage.png")
            shots += 1
    assert shots == 1
    # the input side of the last stage, then a rule's source page
    browser.find_element(By.CSS_SELECTOR, "#side-select option[value=input]").click()
    _wait(browser, lambda d: "| input:" in d.find_element(By.ID, "title").text)
    assert _drawn(browser) == len(step_viz.graph(g, len(group["stages"]) - 1, "input")["nodes"])


def test_search_and_rule_source(
    browser: Any, server: VizServer, step_viz: VizData, tmp_path: Path
) -> None:
    browser.get(server.url)
    _wait(browser, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
    name = next(g["name"] for g in step_viz.groups if g["kind"] == "kernel")
    browser.find_element(By.ID, "search").send_keys(name)
    shown = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".group-name")]
    assert shown and all(name in t for t in shown)
    g = step_viz.search(name)[0]
    s = next(i for i, st in enumerate(step_viz.groups[g]["stages"]) if st["steps"])
    browser.find_element(By.CSS_SELECTOR, f'.group-name[data-g="{g}"]').click()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, f'.stage[data-s="{s}"]'))
    browser.find_element(By.CSS_SELECTOR, f'.stage[data-s="{s}"]').click()
    _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#rules .rule a"))
    _drawn(browser)
    _screenshot(browser, tmp_path, "viz_rules.png")
    href = browser.find_element(By.CSS_SELECTOR, "#rules .rule a").get_attribute("href")
    browser.get(href)
    hit = browser.find_element(By.CSS_SELECTOR, "tr.hit")
    line = int(href.rsplit("line=", 1)[1])
    assert hit.get_attribute("id") == f"L{line}"


def test_minilm_first_call_lists_every_kernel(
    browser: Any, minilm_viz: tuple[VizData, set[str]]
) -> None:
    viz, names = minilm_viz
    with VizServer(viz) as server:
        browser.get(server.url)
        _wait(browser, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
        shown = browser.find_elements(By.CSS_SELECTOR, ".group-name.kernel")
        assert {e.text.rsplit(" (", 1)[0] for e in shown} == names
        shown[-1].click()
        assert _drawn(browser) > 0


def test_100k_node_trace_opens_in_under_3s(browser: Any, big_trace_file: Path) -> None:
    start = time.perf_counter()
    viz = VizData(load(big_trace_file))
    with VizServer(viz) as server:
        browser.get(server.url)
        _wait(browser, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
        browser.find_element(By.CSS_SELECTOR, '.group-name[data-g="0"]').click()
        drawn = _drawn(browser)
        seconds = time.perf_counter() - start
        assert drawn == PAGE
        assert "page 1/" in browser.find_element(By.ID, "title").text
        browser.find_element(By.ID, "page-next").click()
        _wait(browser, lambda d: "page 2/" in d.find_element(By.ID, "title").text)
    assert seconds < 3.0, f"the 100k-node trace took {seconds:.2f} s to open and draw"


def test_timeline_draws_every_profile_span(browser: Any, step_viz: VizData) -> None:
    from fusegrad import Tensor
    from fusegrad.runtime import profiler
    from fusegrad.uop import Context

    before = len(profiler.events())
    with Context(PROFILE=1):
        (Tensor([1.0, 2.0, 3.0]) * 5).sum().numpy()
    spans = [e for e in profiler.events()[before:] if e["ph"] == "X"]
    assert {"kernel", "host"} <= {e["cat"] for e in spans}
    with VizServer(VizData({**step_viz.data, "profile": spans})) as server:
        browser.get(server.url)
        _wait(browser, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
        browser.find_element(By.ID, "timeline-btn").click()
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#timeline-svg rect.span"))
        rects = browser.find_elements(By.CSS_SELECTOR, "#timeline-svg rect.span")
        assert len(rects) == len(spans)
        host = browser.find_elements(By.CSS_SELECTOR, "#timeline-svg rect.span.host")
        assert len(host) == sum(e["cat"] == "host" for e in spans)


def test_timeline_has_a_lane_per_core(browser: Any, step_viz: VizData) -> None:
    """A split kernel's slices: one lane per core, drawn as slice spans."""
    from types import SimpleNamespace

    from fusegrad.runtime import profiler
    from fusegrad.runtime.hcq import ExecCmd

    cmd = ExecCmd(SimpleNamespace(name="E_lanes", spec=None), (), (), (64,), None)
    before = len(profiler.events())
    slices = [(0, 0, 2_000, 6_000), (1, 1, 2_100, 7_000)]
    profiler.record("CPU:compute", cmd, 1_000, 8_000, debug=0, profile=1, slices=slices)
    spans = profiler.events()[before:]
    assert [e["cat"] for e in spans] == ["kernel", "slice", "slice"]
    with VizServer(VizData({**step_viz.data, "profile": spans})) as server:
        browser.get(server.url)
        _wait(browser, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready"))
        browser.find_element(By.ID, "timeline-btn").click()
        _wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#timeline-svg rect.span"))
        assert len(browser.find_elements(By.CSS_SELECTOR, "#timeline-svg rect.span.slice")) == 2
        lanes = [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#timeline-svg text")]
        assert lanes == ["CPU compute", "CPU compute core 0", "CPU compute core 1"]
