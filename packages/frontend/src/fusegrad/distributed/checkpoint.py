"""Checkpoints for distributed runs, in safetensors files.

* ``save(state, path)``: rank 0 writes one file (the ranks hold the same values in data
  parallelism); ``load(path)``: every rank reads it.
* ``save_sharded(state, directory)``: every rank writes its slice of every tensor (rows along
  axis 0) to ``rank-RRRRR-of-NNNNN.safetensors`` and rank 0 writes ``index.json`` naming, for
  each tensor, its shape, dtype and which file holds which rows. With ``replicated=False``
  the tensors a rank passes *are* its slices (a model larger than one host: no rank holds a
  whole tensor). ``load_sharded(directory)`` assembles whole tensors from any number of
  processes, MPI or not (it reads files only).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from fusegrad.distributed.world import barrier, comm, rank, world_size
from fusegrad.nn.state import safe_load, safe_save
from fusegrad.tensor import Tensor
from fusegrad.uop import DType, dtypes

INDEX = "index.json"
_FORMAT = "fusegrad.distributed sharded checkpoint 1"


def save(state: Mapping[str, Tensor], path: str | os.PathLike[str], root: int = 0) -> None:
    """Rank ``root`` writes ``state`` to the safetensors file ``path``; every rank returns
    once the file is complete."""
    if rank() == root:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        safe_save(dict(state), path)
    barrier()


def load(path: str | os.PathLike[str], device: str | None = None) -> dict[str, Tensor]:
    """The tensors of a safetensors checkpoint, on ``device`` (default: the default device),
    realized (every rank reads the file)."""
    loaded = safe_load(os.fspath(path))
    out = {k: v.to(device).contiguous() for k, v in loaded.items()}
    if out:
        Tensor.realize(*out.values())
    return out


def _rows(total: int, r: int, n: int) -> tuple[int, int]:
    return total * r // n, total * (r + 1) // n


def _shard_name(r: int, n: int) -> str:
    return f"rank-{r:05d}-of-{n:05d}.safetensors"


def save_sharded(
    state: Mapping[str, Tensor], directory: str | os.PathLike[str], replicated: bool = True
) -> None:
    """Every rank writes its rows of every tensor, rank 0 the index (see the module
    docstring). ``replicated``: every rank passes whole tensors (each stores an equal share
    of rows); False: each passes its own slices, concatenated in rank order on load."""
    folder = Path(directory)
    r, n = rank(), world_size()
    if r == 0:
        folder.mkdir(parents=True, exist_ok=True)
    barrier()
    mine: dict[str, Tensor] = {}
    spans: dict[str, tuple[int, int]] = {}
    for name, t in state.items():
        if t.ndim == 0:
            if r == 0:
                mine[name] = t
            continue
        rows = int(t.shape[0])
        begin, end = _rows(rows, r, n) if replicated else (0, rows)
        spans[name] = (end - begin, int(rows))
        if end > begin:
            mine[name] = t[begin:end]
    safe_save(mine, folder / _shard_name(r, n))
    every = comm().allgather(
        {k: (v[0], list(state[k].shape), repr(state[k].dtype)) for k, v in spans.items()}
    )
    if r == 0:
        _write_index(folder, state, every, replicated)
    barrier()


def _write_index(
    folder: Path, state: Mapping[str, Tensor], every: list[dict[str, Any]], replicated: bool
) -> None:
    n = len(every)
    tensors: dict[str, Any] = {}
    for name, t in state.items():
        if t.ndim == 0:
            whole = [{"file": _shard_name(0, n), "rows": None}]
            tensors[name] = {"shape": [], "dtype": repr(t.dtype), "parts": whole}
            continue
        counts = [int(rank_spans[name][0]) for rank_spans in every]
        _check_same(name, [rank_spans[name] for rank_spans in every], replicated)
        parts: list[dict[str, Any]] = []
        start = 0
        for q, count in enumerate(counts):
            if count:
                parts.append({"file": _shard_name(q, n), "rows": [start, start + count]})
            start += count
        shape = [start, *[int(s) for s in t.shape[1:]]]
        tensors[name] = {"shape": shape, "dtype": repr(t.dtype), "parts": parts}
    index = {"format": _FORMAT, "world_size": n, "tensors": tensors}
    (folder / INDEX).write_text(json.dumps(index, indent=1))


def _check_same(name: str, seen: list[tuple[int, list[int], str]], replicated: bool) -> None:
    """Every rank's tensor ``name`` must agree in dtype and trailing shape (and whole shape
    when replicated)."""
    first = seen[0]
    for q, (_, shape, dtype) in enumerate(seen):
        same = shape == first[1] if replicated else shape[1:] == first[1][1:]
        if dtype != first[2] or not same:
            raise ValueError(
                f"save_sharded: {name!r} differs across ranks: rank 0 has {first[2]} "
                f"{tuple(first[1])}, rank {q} has {dtype} {tuple(shape)}"
            )


def _dtype(name: str) -> DType:
    """The dtype written as ``repr`` in an index (``dtypes.float32``)."""
    found = getattr(dtypes, name.removeprefix("dtypes."), None)
    if not isinstance(found, DType):
        raise ValueError(f"load_sharded: unknown dtype {name!r} in the index")
    return found


def load_sharded(directory: str | os.PathLike[str], device: str | None = None) -> dict[str, Tensor]:
    """Whole tensors assembled from a sharded checkpoint's files (see ``save_sharded``),
    realized on ``device``. Needs no MPI: any number of processes can load it."""
    folder = Path(directory)
    index_path = folder / INDEX
    if not index_path.exists():
        raise FileNotFoundError(f"load_sharded: no {INDEX} in {folder}")
    index = json.loads(index_path.read_text())
    if index.get("format") != _FORMAT:
        raise ValueError(f"load_sharded: {index_path} is not a sharded checkpoint index")
    files: dict[str, dict[str, Tensor]] = {}
    out: dict[str, Tensor] = {}
    for name, entry in index["tensors"].items():
        pieces = []
        for part in entry["parts"]:
            if part["file"] not in files:
                files[part["file"]] = safe_load(str(folder / part["file"]))
            pieces.append(files[part["file"]][name].to(device))
        if not pieces:  # no rows anywhere: an empty tensor
            out[name] = Tensor.zeros(*entry["shape"], dtype=_dtype(entry["dtype"]), device=device)
            continue
        whole = pieces[0].cat(*pieces[1:]) if len(pieces) > 1 else pieces[0]
        if list(whole.shape) != entry["shape"]:
            raise ValueError(
                f"load_sharded: {name!r} assembles to {tuple(whole.shape)}, "
                f"the index says {tuple(entry['shape'])}"
            )
        out[name] = whole.contiguous()
    if out:
        Tensor.realize(*out.values())
    return out
