"""fusegrad.codegen.schedule: the scheduler, tensor graph -> kernel graph.

``get_kernel_graph(sink)`` turns the tensor-level graph the frontend builds into a
``KernelGraph``: a LINEAR of CALLs (kernel AST + buffers + bound Variables, or copies) in
execution order, the buffer view each output now lives in, and the buffers to allocate
(intermediates memory-planned into per-device arenas). See ``graph.py`` for the forms.

>>> from fusegrad.uop import UOp, dtypes
>>> a = UOp.new_buffer("CPU", 16, dtypes.float32).reshape((4, 4))
>>> b = UOp.new_buffer("CPU", 16, dtypes.float32).reshape((4, 4))
>>> kg = get_kernel_graph(UOp.sink(((a + b) * a).maximum(0.0)))
>>> len(kg.kernels), kg.kernels[0].src[0].arg.name
(1, 'E_4_4')
"""

from fusegrad.codegen.schedule.cache import ScheduleCache, structure_key, target_key
from fusegrad.codegen.schedule.graph import KernelGraph, ScheduleTemplate, summary
from fusegrad.codegen.schedule.memory import ALIGN, MemoryPlan, plan_memory
from fusegrad.codegen.schedule.pipeline import (
    MAX_KERNEL_BUFFERS,
    SCHEDULE_STAGES,
    ScheduleLookup,
    get_kernel_graph,
    lookup_schedule,
    schedule_cache,
)
from fusegrad.codegen.schedule.rangeify import ScheduleError, pm_rangeify
from fusegrad.codegen.schedule.realize import Kind, find_realizes, pm_prepare

__all__ = [
    "ALIGN",
    "MAX_KERNEL_BUFFERS",
    "SCHEDULE_STAGES",
    "KernelGraph",
    "Kind",
    "MemoryPlan",
    "ScheduleCache",
    "ScheduleError",
    "ScheduleLookup",
    "ScheduleTemplate",
    "find_realizes",
    "get_kernel_graph",
    "lookup_schedule",
    "plan_memory",
    "pm_prepare",
    "pm_rangeify",
    "schedule_cache",
    "structure_key",
    "summary",
    "target_key",
]
