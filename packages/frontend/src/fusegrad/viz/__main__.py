"""``python -m fusegrad.viz trace.pkl [--port N]``: serve a saved VIZ trace."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from fusegrad.viz.data import VizData, load
from fusegrad.viz.server import serve_forever


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the trace file named on the command line until Ctrl-C."""
    parser = argparse.ArgumentParser(prog="python -m fusegrad.viz", description=__doc__)
    parser.add_argument("trace", type=Path, help="a trace saved by VIZ (fusegrad_viz.pkl)")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    args = parser.parse_args(argv)
    try:
        data = load(args.trace)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    serve_forever(VizData(data), args.port)
    return 0


if __name__ == "__main__":
    sys.exit(main())
