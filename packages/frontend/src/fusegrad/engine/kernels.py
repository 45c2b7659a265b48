"""The kernel executor: scheduler -> to_program -> runtime queues (issue 10, step 5)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fusegrad.uop import UOp


class KernelExecutor:
    """Runs tensor graphs through the scheduler, the lowering pipeline and the runtime."""

    name = "kernels"

    def realize(self, targets: Sequence[UOp]) -> list[UOp]:
        """Not available until the scheduler, lowering pipeline and runtime land."""
        raise NotImplementedError(
            "realize: the kernel pipeline (fusegrad.codegen schedule/to_program, "
            "fusegrad.runtime) is not available yet"
        )

    def read(self, buf: UOp) -> np.ndarray[Any, Any]:
        """Not available until the runtime lands."""
        raise NotImplementedError("read: the runtime is not available yet")
