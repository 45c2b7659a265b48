"""fusegrad.engine: realizes lazy tensor graphs (scheduler -> programs -> device queues).

Public names: ``realize_uops``, ``to_numpy``, ``GlobalCounters``, ``Executor``,
``set_executor``, ``get_executor``, ``HOST`` (host arrays backing buffers), ``REALIZED``;
the kernel pipeline: ``KernelExecutor`` (the default executor), ``synchronize`` (wait for
submitted work), ``runtime_buffer`` (the device ``Buffer`` behind a BUFFER UOp),
``clear_kernels`` (drop the loaded-kernel cache); the launch plan every path runs:
``LaunchPlan`` (steps over buffer slots, ``engine.plan``), ``run_plan``, ``PlanJoiner``
(a TinyJit capture's plans joined into one).
"""

from fusegrad.engine.buffers import runtime_buffer
from fusegrad.engine.counters import GlobalCounters
from fusegrad.engine.executor import Executor, get_executor, set_executor
from fusegrad.engine.host import (
    HOST,
    decode_floats,
    encode_floats,
    from_numpy_dtype,
    has_numpy_type,
    storage_dtype,
)
from fusegrad.engine.kernels import KernelExecutor
from fusegrad.engine.launch import synchronize
from fusegrad.engine.plan import LaunchPlan, PlanJoiner, run_plan
from fusegrad.engine.programs import clear_kernels
from fusegrad.engine.realize import (
    REALIZED,
    buffer_of,
    has_assign,
    is_buffer_view,
    performed_assigns,
    read_buffer,
    realize_one,
    realize_uops,
    strip_assigns,
    to_numpy,
)

__all__ = [
    "HOST",
    "REALIZED",
    "Executor",
    "GlobalCounters",
    "KernelExecutor",
    "LaunchPlan",
    "PlanJoiner",
    "buffer_of",
    "clear_kernels",
    "decode_floats",
    "encode_floats",
    "from_numpy_dtype",
    "get_executor",
    "has_assign",
    "has_numpy_type",
    "is_buffer_view",
    "performed_assigns",
    "read_buffer",
    "realize_one",
    "realize_uops",
    "run_plan",
    "runtime_buffer",
    "set_executor",
    "storage_dtype",
    "strip_assigns",
    "synchronize",
    "to_numpy",
]
