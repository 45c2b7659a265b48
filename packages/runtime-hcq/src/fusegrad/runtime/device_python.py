"""The PYTHON device: kernels are linear programs run by the emulator (``run_linear``).

The renderer serializes the linear program, the compiler is the identity, and a program is
the emulator over host memory — slow, exact, and available everywhere.
"""

from __future__ import annotations

import base64
import pickle
from collections.abc import Sequence
from typing import Any, ClassVar

from fusegrad.codegen import Compiler, ProgramSpec, Renderer
from fusegrad.runtime.device import Compiled, CompilerOption, Program
from fusegrad.runtime.emulator import run_linear
from fusegrad.runtime.memory import HostAllocator
from fusegrad.uop import GroupOp, Ops, UOp


def _op_name(*args: Any) -> str:
    return "native"


class PythonRenderer(Renderer):
    """Renders a linear program as its pickled UOps (base64 text); every op is native."""

    device = "PYTHON"
    suffix = "PY"
    has_local = True
    has_shared = True
    has_threads = True
    max_threads = 4
    code_for_op: ClassVar[dict[Ops, Any]] = {op: _op_name for op in GroupOp.ALU}

    def render(self, uops: list[UOp], name: str | None = None) -> str:
        """The program, pickled and base64-encoded (UOps pickle flat, no recursion)."""
        return base64.b64encode(pickle.dumps(list(uops))).decode()


class PythonCompiler(Compiler):
    """Nothing to compile: the binary is the pickled program."""

    def compile(self, src: str) -> bytes:
        """The decoded program bytes."""
        return base64.b64decode(src)


class PythonProgram(Program):
    """A linear program run by the emulator; one call runs the whole launch (all cores)."""

    def __init__(self, name: str, lib: bytes, spec: ProgramSpec | None = None) -> None:
        super().__init__(name, lib, spec)
        self.uops: list[UOp] = pickle.loads(lib)
        self.var_names = [
            str(u.arg[0]) for u in self.uops if u.op is Ops.PARAM and isinstance(u.arg, tuple)
        ]

    def slices(self, vals: Sequence[int]) -> int:
        """The emulator runs every core itself."""
        return 1

    def __call__(
        self,
        bufs: Sequence[Any],
        vals: Sequence[int],
        global_size: Sequence[int],
        local_size: Sequence[int] | None,
        core: int = 0,
    ) -> None:
        views = [getattr(b, "view", b) for b in bufs]
        var_vals = dict(zip(self.var_names, vals, strict=True))
        run_linear(self.uops, views, var_vals, global_size, local_size)


def python_compiler() -> CompilerOption:
    """The PYTHON renderer/compiler pair."""
    return CompilerOption("PY", lambda: (PythonRenderer(), PythonCompiler()))


class PythonDevice(Compiled):
    """Host memory and the emulator."""

    def __init__(self, device: str = "PYTHON") -> None:
        super().__init__(device, HostAllocator(device), [python_compiler()], PythonProgram)
