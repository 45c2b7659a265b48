"""Build, check and smoke-test the release artifacts of the five packages (``tools/dev release``).

1. ``python -m build`` makes an sdist of each package and the wheel from that sdist (so the
   sdist is known to build), without build isolation: the dev venv's hatchling builds.
2. ``twine check --strict`` checks every artifact's metadata and README rendering.
3. Each install set goes into a fresh venv from the wheels (third-party dependencies from the
   package index): uop-core alone; codegen with uop-core; all five. A smoke test runs in each,
   from a folder outside the checkout, and checks the set's versions and what is (not)
   importable.

Usage: ``tools/dev release [--out DIR]`` (default ``dist/``; the folder is emptied first).
Leaves ``DIR/dist`` (the artifacts) and ``DIR/venv-uop``, ``DIR/venv-codegen``,
``DIR/venv-all`` (the install sets), which tests/packaging reuses.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {  # directory under packages/ -> distribution name, bottom layer first
    "uop-core": "fusegrad-uop",
    "codegen": "fusegrad-codegen",
    "renderers": "fusegrad-renderers",
    "runtime-hcq": "fusegrad-runtime",
    "frontend": "fusegrad",
}
MODULES = {
    "uop-core": "fusegrad.uop",
    "codegen": "fusegrad.codegen",
    "renderers": "fusegrad.renderer",
    "runtime-hcq": "fusegrad.runtime",
    "frontend": "fusegrad",
}

CHECK_VERSIONS = """
import importlib, importlib.metadata as m
for dist, module in {pairs!r}:
    got = importlib.import_module(module).__version__
    assert got == m.version(dist), (module, got, m.version(dist))
    print(f"  {{module}} {{got}} from {{importlib.import_module(module).__file__}}")
for module in {absent!r}:
    try:
        importlib.import_module(module)
    except ImportError:
        print(f"  {{module}}: not installed, as expected")
    else:
        raise AssertionError(f"{{module}} is importable but not part of this set")
"""

SMOKE = {
    "uop": """
from fusegrad.uop import UOp
x = UOp.variable("x", 0, 15)
flat = x * 4 + 2
assert flat.render() == "x*4+2" and (flat.vmin, flat.vmax) == (2, 62)
assert ((x * 4 + 3) // 4).simplify() is x
print("  uop: x*4+2 ranges over [2, 62]; (x*4+3)//4 simplifies to x")
""",
    "codegen": """
from fusegrad.codegen import STAGES, Renderer, beam_search, to_program
assert STAGES and callable(to_program) and callable(beam_search) and Renderer
print(f"  codegen: {len(STAGES)} lowering stages, Renderer/to_program/beam_search import")
""",
    "all": """
from fusegrad import Device, Tensor
a = Tensor([[1.0, 2.0], [3.0, 4.0]])
got = ((a @ a).relu() + 1).sum(axis=1).tolist()
assert got == [19.0, 39.0], got
print(f"  all: (a@a).relu()+1 summed per row on {Device.DEFAULT}: {got}")
""",
}

SETS = {  # name -> (packages installed, modules that must not import)
    "uop": (["uop-core"], ["fusegrad.codegen", "numpy"]),
    "codegen": (["uop-core", "codegen"], ["fusegrad.renderer", "fusegrad.runtime"]),
    "all": (list(PACKAGES), []),
}


def clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME"}}
    env.pop("VIRTUAL_ENV", None)
    env["PYTHONNOUSERSITE"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def run(args: list[str | Path], cwd: Path) -> str:
    """Run a command; exit with its output when it fails. Returns its stdout."""
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(
            f"release: `{' '.join(str(a) for a in args)}` exited {done.returncode}\n"
            f"{done.stdout}{done.stderr}"
        )
    return done.stdout


def step(title: str) -> float:
    print(f"== {title}", flush=True)
    return time.perf_counter()


def done(start: float) -> None:
    print(f"   ({time.perf_counter() - start:.1f} s)", flush=True)


def build(out: Path) -> dict[str, list[Path]]:
    start = step("build: sdist, then the wheel from it (python -m build --no-isolation)")
    artifacts: dict[str, list[Path]] = {}
    for directory, dist in PACKAGES.items():
        run(
            [
                sys.executable,
                "-m",
                "build",
                "--no-isolation",
                "--outdir",
                out,
                ROOT / "packages" / directory,
            ],
            out,
        )
        stem = dist.replace("-", "_")
        found = sorted(out.glob(f"{stem}-*.whl")) + sorted(out.glob(f"{stem}-*.tar.gz"))
        if len(found) != 2:
            sys.exit(f"release: expected one wheel and one sdist of {dist}, found {found}")
        artifacts[directory] = found
        print(f"   {dist}: {', '.join(p.name for p in found)}")
    done(start)
    return artifacts


def twine_check(out: Path) -> None:
    start = step("twine check --strict")
    files = sorted(out.glob("*.whl")) + sorted(out.glob("*.tar.gz"))
    for line in run(
        [sys.executable, "-m", "twine", "--no-color", "check", "--strict", *files], out
    ).splitlines():
        print(f"   {line.strip()}")
    done(start)


def install_set(out: Path, name: str, wheels: list[Path]) -> Path:
    """A fresh venv ``out/venv-name`` with ``wheels`` (and their dependencies); its python."""
    venv = out / f"venv-{name}"
    run([sys.executable, "-m", "venv", "--without-pip", venv], out)
    python = venv / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", python, "install", "-q", *wheels], out)
    return python


def smoke(out: Path, artifacts: dict[str, list[Path]]) -> None:
    for name, (directories, absent) in SETS.items():
        start = step(
            f"install set '{name}' ({' + '.join(directories)}) into a fresh venv, smoke test"
        )
        python = install_set(out, name, [artifacts[d][0] for d in directories])
        pairs = [(PACKAGES[d], MODULES[d]) for d in directories]
        code = CHECK_VERSIONS.format(pairs=pairs, absent=absent) + SMOKE[name]
        print(run([python, "-c", textwrap.dedent(code)], out), end="")
        done(start)


def main() -> None:
    parser = argparse.ArgumentParser(prog="tools/dev release", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--out", type=Path, default=ROOT / "dist", help="output folder (emptied first)"
    )
    out = parser.parse_args().out.resolve()
    if out == ROOT or ROOT.is_relative_to(out):
        sys.exit(f"release: refusing to empty {out}")
    shutil.rmtree(out, ignore_errors=True)
    (out / "dist").mkdir(parents=True)
    begin = time.perf_counter()
    artifacts = build(out / "dist")
    twine_check(out / "dist")
    smoke(out, artifacts)
    print(
        f"release: 5 wheels + 5 sdists in {out / 'dist'}, 3 install sets pass "
        f"({time.perf_counter() - begin:.0f} s)"
    )


if __name__ == "__main__":
    main()
