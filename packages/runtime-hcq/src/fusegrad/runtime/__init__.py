"""fusegrad.runtime: devices, buffers, HCQ queues and signals, and the PYTHON emulator.

Public names: ``run_linear`` (execute a linear program in Python: the executable definition
of every op), ``Memory``, ``bitcast_value``.
"""

from fusegrad.runtime.emulator import Memory, bitcast_value, run_linear

__all__ = ["Memory", "bitcast_value", "run_linear"]
