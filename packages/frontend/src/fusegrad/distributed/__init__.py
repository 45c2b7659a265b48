"""fusegrad.distributed: data-parallel training across processes and hosts over MPI.

Run a script with ``mpiexec -n N python train.py``; in it::

    from fusegrad import distributed as dist
    dist.init()                                  # join the world, pick this rank's device
    dist.all_reduce(t, op="mean")                # in place on every rank
    opt = dist.DistributedOptimizer(Adam(get_parameters(net), lr=1e-3))

Needs mpi4py and an MPI library (``pip install 'fusegrad[mpi]'`` installs mpi4py and the
mpich wheel, which brings ``mpiexec``). This module imports without them; calls that need MPI
raise ImportError saying what to install. See docs/distributed.md.
"""

from fusegrad.distributed.checkpoint import load, load_sharded, save, save_sharded
from fusegrad.distributed.collectives import all_gather, all_reduce, broadcast, reduce_scatter
from fusegrad.distributed.data_parallel import (
    BUCKET_BYTES,
    Bucket,
    DistributedOptimizer,
    broadcast_parameters,
    plan_buckets,
)
from fusegrad.distributed.world import (
    DistributedTimeoutError,
    abort,
    barrier,
    device,
    init,
    install_abort_hook,
    is_initialized,
    local_rank,
    rank,
    rank_device,
    threads_per_rank,
    world_size,
)

__all__ = [
    "BUCKET_BYTES",
    "Bucket",
    "DistributedOptimizer",
    "DistributedTimeoutError",
    "abort",
    "all_gather",
    "all_reduce",
    "barrier",
    "broadcast",
    "broadcast_parameters",
    "device",
    "init",
    "install_abort_hook",
    "is_initialized",
    "load",
    "load_sharded",
    "local_rank",
    "plan_buckets",
    "rank",
    "rank_device",
    "reduce_scatter",
    "save",
    "save_sharded",
    "threads_per_rank",
    "world_size",
]
