"""VIZ: a local web page showing every recorded rewrite stage, kernel and launch.

``VIZ=1 python script.py`` records every graph-changing stage (``fusegrad.uop.viztrace``);
at exit the trace is saved (``VIZ_PATH``, default ``fusegrad_viz.pkl`` in the temp folder)
and served on 127.0.0.1 at a random port printed on stderr, until Ctrl-C. ``VIZ=-1`` saves
without serving. ``python -m fusegrad.viz trace.pkl`` serves a saved trace. See docs/viz.md.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from fusegrad.runtime import profile_events
from fusegrad.uop import VIZ
from fusegrad.uop.viztrace import Trace
from fusegrad.viz.data import VizData, export, load, save
from fusegrad.viz.server import VizServer, serve_forever

__all__ = ["VizData", "VizServer", "at_exit", "export", "load", "save", "serve_forever",
           "trace_path"]  # fmt: skip


def trace_path() -> Path:
    """Where VIZ saves its trace at exit."""
    custom = os.environ.get("VIZ_PATH")
    return Path(custom) if custom else Path(tempfile.gettempdir()) / "fusegrad_viz.pkl"


def at_exit(trace: Trace) -> None:
    """Save ``trace`` (with the profile events, if any) and, for ``VIZ>=1``, serve it."""
    if not trace.groups:
        return
    data = export(trace, profile_events())
    path = save(data, trace_path())
    print(f"fusegrad VIZ: trace saved to {path}", file=sys.stderr, flush=True)
    if VIZ.value >= 1:
        serve_forever(VizData(data))
