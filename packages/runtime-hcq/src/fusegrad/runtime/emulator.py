"""The PYTHON emulator: runs a linear program (``fusegrad.codegen.spec``) in pure Python.

It is the executable definition of what a linear program means, so it favours being exactly
right over being fast:

* every ALU op goes through ``fusegrad.uop.exec_alu`` and every BITCAST through
  ``fusegrad.uop.bitcast``, so values have their dtype's exact semantics (wrap-around ints,
  float16/bfloat16/fp8 rounding, the NaN rules);
* memory is bytes: a buffer slot is anything with the buffer protocol (``bytearray``,
  ``memoryview``, a NumPy array), read and written with the dtype's little-endian layout;
* GPU launches run every workgroup and every local thread. Threads run as a SIMT machine:
  all lanes of a batch of workgroups execute one instruction after another in lockstep with
  an active-lane mask, so ``BARRIER`` is satisfied by construction and divergent ``IF`` and
  loops with per-lane trip counts are exact;
* an access outside a buffer raises ``IndexError`` naming the buffer, the index and its size.

>>> from fusegrad.uop import UOp, Ops, dtypes
>>> buf = UOp.param(0, dtypes.int32.ptr(4))
>>> n = UOp.const(4, dtypes.int32)
>>> i = UOp(Ops.SPECIAL, dtypes.int32, (n,), "gidx0")
>>> idx, square = buf.index(i), i * i
>>> mem = bytearray(16)
>>> run_linear([buf, n, i, idx, square, idx.store(square)], [mem], global_size=(4, 1, 1))
>>> list(memoryview(mem).cast("i"))
[0, 1, 4, 9]
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fusegrad.uop import (
    DType,
    GroupOp,
    Ops,
    PtrDType,
    UOp,
    bitcast,
    dtypes,
    exec_alu,
    prod,
    sym_infer,
)

# -- typed memory --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Codec:
    """How one scalar dtype sits in memory: a struct format for its raw bits, and the
    conversions between a value and those raw bits."""

    fmt: str
    to_raw: Callable[[Any], Any]
    from_raw: Callable[[Any], Any]


def _via_bits(dt: DType, raw_dt: DType) -> _Codec:
    assert raw_dt.fmt is not None
    return _Codec(raw_dt.fmt, lambda v: bitcast(v, dt, raw_dt), lambda r: bitcast(r, raw_dt, dt))


@functools.cache
def _codec(dt: DType) -> _Codec:
    """The codec of scalar dtype ``dt``; values are converted to ``dt`` before storing."""
    if dt is dtypes.bfloat16:
        return _via_bits(dt, dtypes.uint16)
    if dt in dtypes.fp8s:
        return _via_bits(dt, dtypes.uint8)
    if dt.fmt is None or dt.weak:
        raise TypeError(f"PYTHON emulator: no memory layout for {dt!r}")
    conv = _truncate_fn(dt)
    return _Codec(dt.fmt, conv, _identity if dt is not dtypes.bool else bool)


def _identity(x: Any) -> Any:
    return x


def _truncate_fn(dt: DType) -> Callable[[Any], Any]:
    return lambda v: exec_alu(Ops.CAST, dt, [v])


@functools.cache
def _struct(fmt: str, count: int) -> struct.Struct:
    return struct.Struct(f"<{count}{fmt}")


class Memory:
    """A typed window on bytes: a buffer slot, a workgroup's local array or a thread's
    registers. ``name`` says which in error messages."""

    __slots__ = ("name", "nbytes", "view")

    def __init__(self, name: str, data: Any) -> None:
        self.name = name
        self.view = memoryview(data).cast("B")
        self.nbytes = self.view.nbytes

    def _check(self, dt: DType, idx: int, count: int) -> int:
        size = self.nbytes // dt.itemsize
        if idx < 0 or idx + count > size:
            what = f"index {idx}" if count == 1 else f"indices {idx}..{idx + count - 1}"
            raise IndexError(
                f"PYTHON emulator: {what} out of bounds for {self.name} "
                f"({size} elements of {dt.name}, {self.nbytes} bytes)"
            )
        return idx * dt.itemsize

    def load(self, dt: DType, idx: int, count: int = 1) -> Any:
        """``count`` consecutive elements of scalar dtype ``dt`` from element ``idx`` (a scalar
        for one element, else a tuple)."""
        offset = self._check(dt, idx, count)
        codec = _codec(dt)
        raw = _struct(codec.fmt, count).unpack_from(self.view, offset)
        vals = tuple(codec.from_raw(r) for r in raw)
        return vals[0] if count == 1 else vals

    def store(self, dt: DType, idx: int, values: Sequence[Any]) -> None:
        """Write ``values`` (elements of scalar dtype ``dt``) from element ``idx`` on."""
        offset = self._check(dt, idx, len(values))
        codec = _codec(dt)
        raw = [codec.to_raw(v) for v in values]
        _struct(codec.fmt, len(raw)).pack_into(self.view, offset, *raw)


# -- the launch -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Lane:
    """Where one thread sits in the launch."""

    group: tuple[int, int, int]
    local: tuple[int, int, int]
    core: int
    workgroup: int  # index of its workgroup within the batch


@dataclass(slots=True)
class _Warp:
    """The lockstep machine state of one batch of workgroups."""

    uops: Sequence[UOp]
    lanes: list[_Lane]
    bufs: Sequence[Memory]
    var_vals: Mapping[str, int]
    local_size: tuple[int, int, int]
    workgroups: int
    jumps: dict[int, int]
    values: dict[UOp, list[Any]] = field(default_factory=dict)
    active: list[int] = field(default_factory=list)
    masks: list[list[int]] = field(default_factory=list)

    def out(self, u: UOp) -> list[Any]:
        """The per-lane value list of ``u``, created on first write."""
        vals = self.values.get(u)
        if vals is None:
            vals = self.values[u] = [None] * len(self.lanes)
        return vals


Handler = Callable[[_Warp, int], int]


def _uniform(st: _Warp, pc: int, value: Any) -> int:
    st.values[st.uops[pc]] = [value] * len(st.lanes)
    return pc + 1


def _param(st: _Warp, pc: int) -> int:
    u = st.uops[pc]
    if isinstance(u.dtype, PtrDType):
        if not 0 <= u.arg < len(st.bufs):
            raise IndexError(f"PYTHON emulator: buffer slot {u.arg} not given ({len(st.bufs)})")
        return _uniform(st, pc, st.bufs[u.arg])
    name, lo, hi = u.arg[:3]  # a 4th item is multiple_of
    if name not in st.var_vals:
        raise ValueError(f"PYTHON emulator: no value for variable {name!r}")
    val = st.var_vals[name]
    if not lo <= val <= hi:
        raise ValueError(f"PYTHON emulator: variable {name}={val} outside [{lo}, {hi}]")
    return _uniform(st, pc, exec_alu(Ops.CAST, u.dtype, [val]))


def _define_local(st: _Warp, pc: int) -> int:
    u = st.uops[pc]
    dt = u.dtype
    assert isinstance(dt, PtrDType)
    mems = [
        Memory(f"local {u.arg!r} of workgroup {w}", bytearray(dt.size * dt.base.itemsize))
        for w in range(st.workgroups)
    ]
    st.values[u] = [mems[lane.workgroup] for lane in st.lanes]
    return pc + 1


def _define_reg(st: _Warp, pc: int) -> int:
    u = st.uops[pc]
    dt = u.dtype
    assert isinstance(dt, PtrDType)
    nbytes = dt.size * dt.base.itemsize
    st.values[u] = [Memory(f"register {u.arg!r}", bytearray(nbytes)) for _ in st.lanes]
    return pc + 1


def _special_value(lane: _Lane, name: str, local_size: tuple[int, int, int]) -> int:
    if name == "core":
        return lane.core
    axis = int(name[-1])
    if name.startswith("gidx"):
        return lane.group[axis]
    if name.startswith("lidx"):
        return lane.local[axis]
    if name.startswith("idx"):
        return lane.group[axis] * local_size[axis] + lane.local[axis]
    raise ValueError(f"PYTHON emulator: unknown SPECIAL {name!r}")


def _special(st: _Warp, pc: int) -> int:
    u = st.uops[pc]
    st.values[u] = [_special_value(lane, u.arg, st.local_size) for lane in st.lanes]
    return pc + 1


def _range(st: _Warp, pc: int) -> int:
    u = st.uops[pc]
    out, ends = st.out(u), st.values[u.src[0]]
    for lane in st.active:
        out[lane] = 0
    st.masks.append(st.active)
    st.active = [lane for lane in st.active if ends[lane] > 0]
    if st.active:
        return pc + 1
    st.active = st.masks.pop()
    return st.jumps[pc] + 1


def _end(st: _Warp, pc: int) -> int:
    rng = next(s for s in st.uops[pc].src if s.op is Ops.RANGE)
    counters, ends = st.values[rng], st.values[rng.src[0]]
    for lane in st.active:
        counters[lane] += 1
    going = [lane for lane in st.active if counters[lane] < ends[lane]]
    if going:
        st.active = going
        return st.jumps[pc] + 1
    st.active = st.masks.pop()
    return pc + 1


def _if(st: _Warp, pc: int) -> int:
    conds = st.values[st.uops[pc].src[0]]
    st.masks.append(st.active)
    st.active = [lane for lane in st.active if conds[lane]]
    if st.active:
        return pc + 1
    st.active = st.masks.pop()
    return st.jumps[pc] + 1


def _endif(st: _Warp, pc: int) -> int:
    st.active = st.masks.pop()
    return pc + 1


def _index(st: _Warp, pc: int) -> int:
    u = st.uops[pc]
    out = st.out(u)
    ptrs, idxs = st.values[u.src[0]], st.values[u.src[1]]
    gates = st.values[u.src[2]] if len(u.src) == 3 else None
    for lane in st.active:
        out[lane] = (ptrs[lane], idxs[lane], True if gates is None else gates[lane])
    return pc + 1


def _lanes_of(value: Any, count: int) -> tuple[Any, ...]:
    return value if isinstance(value, tuple) else (value,) * count


def _load_one(ptr: tuple[Memory, Any, Any], dt: DType, alt: Any) -> Any:
    mem, idx, gate = ptr
    scalar, count = dt.scalar(), dt.count
    if not isinstance(idx, tuple) and not isinstance(gate, tuple):
        return mem.load(scalar, idx, count) if gate else alt
    idxs = idx if isinstance(idx, tuple) else tuple(idx + i for i in range(count))
    gates, alts = _lanes_of(gate, count), _lanes_of(alt, count)
    vals = tuple(mem.load(scalar, i) if g else a for i, g, a in zip(idxs, gates, alts, strict=True))
    return vals if count > 1 else vals[0]


def _load(st: _Warp, pc: int) -> int:
    u = st.uops[pc]
    out, ptrs = st.out(u), st.values[u.src[0]]
    alts = st.values[u.src[1]] if len(u.src) == 2 else None
    for lane in st.active:
        out[lane] = _load_one(ptrs[lane], u.dtype, None if alts is None else alts[lane])
    return pc + 1


def _store_one(ptr: tuple[Memory, Any, Any], dt: DType, value: Any) -> None:
    mem, idx, gate = ptr
    scalar, count = dt.scalar(), dt.count
    vals = value if isinstance(value, tuple) else (value,)
    if not isinstance(idx, tuple) and not isinstance(gate, tuple):
        if gate:
            mem.store(scalar, idx, vals)
        return
    idxs = idx if isinstance(idx, tuple) else tuple(idx + i for i in range(count))
    for i, g, v in zip(idxs, _lanes_of(gate, count), vals, strict=True):
        if g:
            mem.store(scalar, i, (v,))


def _store(st: _Warp, pc: int) -> int:
    u = st.uops[pc]
    ptrs, vals = st.values[u.src[0]], st.values[u.src[1]]
    for lane in st.active:
        _store_one(ptrs[lane], u.src[1].dtype, vals[lane])
    return pc + 1


def _alu_one(op: Ops, dt: DType, operands: list[Any]) -> Any:
    if dt.count == 1:
        return exec_alu(op, dt, operands)
    scalar = dt.scalar()
    cols = [_lanes_of(x, dt.count) for x in operands]
    return tuple(exec_alu(op, scalar, list(elems)) for elems in zip(*cols, strict=True))


def _alu(st: _Warp, pc: int) -> int:
    u = st.uops[pc]
    out, srcs = st.out(u), [st.values[s] for s in u.src]
    for lane in st.active:
        out[lane] = _alu_one(u.op, u.dtype, [s[lane] for s in srcs])
    return pc + 1


def _cast(st: _Warp, pc: int) -> int:
    u = st.uops[pc]
    out, src, scalar = st.out(u), st.values[u.src[0]], u.dtype.scalar()
    for lane in st.active:
        v = src[lane]
        out[lane] = (
            tuple(exec_alu(Ops.CAST, scalar, [x]) for x in v)
            if isinstance(v, tuple)
            else exec_alu(Ops.CAST, scalar, [v])
        )
    return pc + 1


def _raw_bytes(value: Any, dt: DType) -> bytes:
    vals = value if isinstance(value, tuple) else (value,)
    codec = _codec(dt.scalar())
    return _struct(codec.fmt, len(vals)).pack(*(codec.to_raw(v) for v in vals))


def _from_bytes(raw: bytes, dt: DType) -> Any:
    codec = _codec(dt.scalar())
    vals = tuple(codec.from_raw(r) for r in _struct(codec.fmt, dt.count).unpack(raw))
    return vals if dt.count > 1 else vals[0]


def bitcast_value(value: Any, src: DType, dst: DType) -> Any:
    """The bits of ``value`` (of scalar or vector dtype ``src``) read as ``dst``; the two may
    have different element counts when their total sizes agree (``half.vec(2)`` <-> uint32)."""
    if src.itemsize != dst.itemsize:
        raise ValueError(f"BITCAST: sizes differ, {src!r} ({src.itemsize} bytes) -> {dst!r}")
    if src.count == dst.count == 1:
        return bitcast(value, src, dst)
    return _from_bytes(_raw_bytes(value, src), dst)


def _bitcast(st: _Warp, pc: int) -> int:
    u = st.uops[pc]
    out, src = st.out(u), st.values[u.src[0]]
    for lane in st.active:
        out[lane] = bitcast_value(src[lane], u.src[0].dtype, u.dtype)
    return pc + 1


def _vectorize(st: _Warp, pc: int) -> int:
    u = st.uops[pc]
    out, srcs = st.out(u), [st.values[s] for s in u.src]
    for lane in st.active:
        out[lane] = tuple(s[lane] for s in srcs)
    return pc + 1


def _gep(st: _Warp, pc: int) -> int:
    u = st.uops[pc]
    out, src, picks = st.out(u), st.values[u.src[0]], u.arg
    for lane in st.active:
        v = _lanes_of(src[lane], u.src[0].dtype.count)
        out[lane] = v[picks[0]] if len(picks) == 1 else tuple(v[i] for i in picks)
    return pc + 1


def _after(st: _Warp, pc: int) -> int:
    u = st.uops[pc]
    st.values[u] = st.values[u.src[0]]
    return pc + 1


def _unsupported(st: _Warp, pc: int) -> int:
    u = st.uops[pc]
    raise NotImplementedError(f"PYTHON emulator: {u.op!r} is not a linear-program op (#{pc})")


_HANDLERS: dict[Ops, Handler] = {
    Ops.PARAM: _param,
    Ops.DEFINE_LOCAL: _define_local,
    Ops.DEFINE_REG: _define_reg,
    Ops.CONST: lambda st, pc: _uniform(st, pc, st.uops[pc].arg),
    Ops.VCONST: lambda st, pc: _uniform(st, pc, tuple(st.uops[pc].arg)),
    Ops.SPECIAL: _special,
    Ops.RANGE: _range,
    Ops.END: _end,
    Ops.IF: _if,
    Ops.ENDIF: _endif,
    Ops.BARRIER: lambda st, pc: pc + 1,  # lockstep lanes: every store before it is done
    Ops.INDEX: _index,
    Ops.LOAD: _load,
    Ops.STORE: _store,
    Ops.CAST: _cast,
    Ops.BITCAST: _bitcast,
    Ops.VECTORIZE: _vectorize,
    Ops.GEP: _gep,
    Ops.AFTER: _after,  # the same pointer, ordered after an effect (a later read of a REG)
    **{op: _alu for op in GroupOp.ALU},
}


# -- the program ----------------------------------------------------------------------------------


def _jump_table(uops: Sequence[UOp]) -> dict[int, int]:
    """RANGE <-> END and IF <-> ENDIF positions, both directions."""
    pos = {u: i for i, u in enumerate(uops)}
    jumps: dict[int, int] = {}
    for i, u in enumerate(uops):
        opener = None
        if u.op is Ops.END:
            opener = next((s for s in u.src if s.op is Ops.RANGE), None)
        elif u.op is Ops.ENDIF:
            opener = u.src[0]
        if opener is None:
            continue
        if opener not in pos:
            raise ValueError(f"PYTHON emulator: {u.op!r} #{i} closes a node not in the program")
        jumps[i], jumps[pos[opener]] = pos[opener], i
    return jumps


def _pad3(size: Sequence[int] | None) -> tuple[int, int, int]:
    dims = [int(x) for x in (size or ())] + [1, 1, 1]
    if any(d < 0 for d in dims):
        raise ValueError(f"PYTHON emulator: negative launch size {tuple(size or ())}")
    return dims[0], dims[1], dims[2]


def _unflatten(i: int, dims: tuple[int, int, int]) -> tuple[int, int, int]:
    return i % dims[0], (i // dims[0]) % dims[1], i // (dims[0] * dims[1])


def _core_count(uops: Sequence[UOp], var_vals: Mapping[str, int]) -> int:
    cores = [u for u in uops if u.op is Ops.SPECIAL and u.arg == "core"]
    if not cores:
        return 1
    return int(sym_infer(cores[0].src[0], var_vals))


def _as_memory(bufs: Sequence[Any]) -> list[Memory]:
    return [
        b if isinstance(b, Memory) else Memory(f"buffer slot {i}", b) for i, b in enumerate(bufs)
    ]


#: lanes run together in one lockstep batch (whole workgroups; at least one workgroup)
BATCH_LANES = 2048


def run_linear(
    uops: Sequence[UOp],
    bufs: Sequence[Any],
    var_vals: Mapping[str, int] | None = None,
    global_size: Sequence[int] | None = (1, 1, 1),
    local_size: Sequence[int] | None = None,
    cores: int | None = None,
) -> None:
    """Execute linear program ``uops`` over ``bufs`` (one buffer-protocol object per slot).

    ``var_vals`` gives each scalar Variable PARAM its value by name. ``global_size`` counts
    workgroups per axis and ``local_size`` threads per workgroup (GPU style: ``gidx`` is the
    workgroup id, ``lidx`` the id within it, ``idx`` the flat global id). A THREAD-split
    kernel (SPECIAL ``core``) runs every core id in ``[0, cores)``; ``cores`` defaults to the
    SPECIAL's size. A program with both ``gidx`` ids and ``core`` splits its grid over the
    cores: core c runs the c-th of ``cores`` blocks of ceil(workgroups / cores) consecutive
    workgroups (flat index, gidx0 fastest), as the NIR renderer's split over CPU cores does.
    """
    vals = dict(var_vals or {})
    gs, ls = _pad3(global_size), _pad3(local_size)
    ncores = _core_count(uops, vals) if cores is None else cores
    threads, total = prod(ls), prod(gs)
    if threads == 0 or total == 0 or ncores == 0:
        return
    shared = ncores > 1 and any(u.op is Ops.SPECIAL and str(u.arg).startswith("gidx") for u in uops)
    if shared:
        block = -(-total // ncores)
        work = [(g, g // block) for g in range(total)]
    else:
        work = [(w % total, w // total) for w in range(total * ncores)]
    per_batch = max(1, BATCH_LANES // threads)
    mems, jumps = _as_memory(bufs), _jump_table(uops)
    for first in range(0, len(work), per_batch):
        wgs = work[first : first + per_batch]
        lanes = [
            _Lane(_unflatten(g, gs), _unflatten(t, ls), core, i)
            for i, (g, core) in enumerate(wgs)
            for t in range(threads)
        ]
        warp = _Warp(uops, lanes, mems, vals, ls, len(wgs), jumps)
        _execute(warp)


def _execute(st: _Warp) -> None:
    st.active = list(range(len(st.lanes)))
    pc, n = 0, len(st.uops)
    while pc < n:
        handler = _HANDLERS.get(st.uops[pc].op, _unsupported)
        pc = handler(st, pc)
