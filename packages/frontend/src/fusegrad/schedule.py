"""``fusegrad.schedule``: tinygrad's ``tinygrad.schedule`` module path.

fusegrad's scheduler (tensor graph -> kernel graph: rangeify, realize decisions, fusion,
kernel order, memory planning, the schedule cache) is ``fusegrad.codegen.schedule``; its
public names are re-exported here.

>>> from fusegrad.schedule import get_kernel_graph
>>> callable(get_kernel_graph)
True
"""

from fusegrad.codegen.schedule import *  # noqa: F403 - the re-export is the module's purpose
