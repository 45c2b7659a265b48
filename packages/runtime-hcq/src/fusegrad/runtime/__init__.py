"""fusegrad.runtime: devices, buffers, HCQ queues and signals, and the PYTHON emulator.

Public names:

* devices: ``Device`` (registry: ``Device["CPU"]``, ``Device.DEFAULT``), ``Compiled`` (the
  device base class), ``CompilerOption``, ``Program``, ``Unavailable``, ``canonicalize``,
  ``parse_dev``, and the built-in devices ``CPUDevice``, ``PythonDevice``, ``NullDevice``,
  ``DiskDevice`` with ``CPUProgram``, ``PythonProgram``, ``PythonRenderer``,
  ``PythonCompiler``, ``load_code``, ``load_shared_object``;
* memory: ``Buffer``, ``BufferSpec``, ``Allocator``, ``LRUAllocator``, ``HostAllocator``,
  ``HostMemory``, ``OutOfMemoryError``;
* HCQ: ``HWQueue``, ``Signal``, ``Ring``, ``RingClosed``, ``RingForked``, ``WorkerPool``, the commands a
  queue holds (``ExecCmd``, ``CopyCmd``, ``SignalCmd``, ``WaitCmd``, ``TimestampCmd``,
  ``Command``), ``HCQGraph`` (a device's batched submission of a fixed command list),
  ``NativeRing`` (the CPU device's compiled ring) and ``NativeGraph`` (its graph);
* the emulator: ``run_linear``, ``Memory``, ``bitcast_value``;
* profiling: ``launch_line``, ``write_trace``, ``profile_events``.
"""

from fusegrad.runtime.version import __version__ as __version__  # first: mismatched sets fail here

# isort: split
from fusegrad.runtime.buffer import Buffer
from fusegrad.runtime.device import (
    Compiled,
    CompilerOption,
    Device,
    DeviceRegistry,
    Program,
    Unavailable,
    canonicalize,
    parse_dev,
)
from fusegrad.runtime.device_cpu import CPUDevice, CPUProgram, load_code, load_shared_object
from fusegrad.runtime.device_disk import DiskDevice
from fusegrad.runtime.device_null import NullDevice
from fusegrad.runtime.device_python import (
    PythonCompiler,
    PythonDevice,
    PythonProgram,
    PythonRenderer,
)
from fusegrad.runtime.emulator import Memory, bitcast_value, run_linear
from fusegrad.runtime.hcq import (
    Command,
    CopyCmd,
    ExecCmd,
    HCQGraph,
    HWQueue,
    Ring,
    RingClosed,
    RingForked,
    Signal,
    SignalCmd,
    TimestampCmd,
    WaitCmd,
    WorkerPool,
)
from fusegrad.runtime.listing import device_report
from fusegrad.runtime.memory import (
    Allocator,
    BufferSpec,
    HostAllocator,
    HostMemory,
    LRUAllocator,
    OutOfMemoryError,
)
from fusegrad.runtime.native import NativeGraph, NativeRing
from fusegrad.runtime.profiler import (
    ProfileDeviceEvent,
    ProfileEvent,
    ProfileGraphEntry,
    ProfileGraphEvent,
    ProfileProgramEvent,
    device_events,
    host_span,
    launch_line,
    watch_graph,
    write_trace,
)
from fusegrad.runtime.profiler import events as profile_events

__all__ = [
    "Allocator",
    "Buffer",
    "BufferSpec",
    "CPUDevice",
    "CPUProgram",
    "Command",
    "Compiled",
    "CompilerOption",
    "CopyCmd",
    "Device",
    "DeviceRegistry",
    "DiskDevice",
    "ExecCmd",
    "HCQGraph",
    "HWQueue",
    "HostAllocator",
    "HostMemory",
    "LRUAllocator",
    "Memory",
    "NativeGraph",
    "NativeRing",
    "NullDevice",
    "OutOfMemoryError",
    "ProfileDeviceEvent",
    "ProfileEvent",
    "ProfileGraphEntry",
    "ProfileGraphEvent",
    "ProfileProgramEvent",
    "Program",
    "PythonCompiler",
    "PythonDevice",
    "PythonProgram",
    "PythonRenderer",
    "Ring",
    "RingClosed",
    "RingForked",
    "Signal",
    "SignalCmd",
    "TimestampCmd",
    "Unavailable",
    "WaitCmd",
    "WorkerPool",
    "bitcast_value",
    "canonicalize",
    "device_events",
    "device_report",
    "host_span",
    "launch_line",
    "load_code",
    "load_shared_object",
    "parse_dev",
    "profile_events",
    "run_linear",
    "watch_graph",
    "write_trace",
]
