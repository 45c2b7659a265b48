"""GlobalCounters: what the engine has run since the last reset."""

from __future__ import annotations

from typing import ClassVar


class GlobalCounters:
    """Process-wide totals: kernels launched, ALU ops and bytes they moved, time they took."""

    kernel_count: ClassVar[int] = 0
    global_ops: ClassVar[int] = 0
    global_mem: ClassVar[int] = 0
    time_sum_s: ClassVar[float] = 0.0
    mem_used: ClassVar[int] = 0

    @staticmethod
    def reset() -> None:
        """Zero every counter except ``mem_used`` (memory still allocated)."""
        GlobalCounters.kernel_count = 0
        GlobalCounters.global_ops = 0
        GlobalCounters.global_mem = 0
        GlobalCounters.time_sum_s = 0.0
