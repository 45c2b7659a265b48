"""Map parallel axes to hardware ids.

On targets with workgroups (``has_local``) GLOBAL ranges become ``SPECIAL gidx0..2`` (the
workgroup id, innermost axis first) and LOCAL/GROUP_REDUCE ranges ``SPECIAL lidx0..2`` (the
thread within it); on CPUs with threads (``has_threads``) a THREAD range becomes ``SPECIAL
core``. More axes than the hardware has ids are folded into the last id and unflattened
with ``//`` and ``%``. The launch dimensions go into the context for the ProgramSpec.

Where that grid (or workgroup) exceeds the target's ``global_max`` (``local_max``) in some
dimension (CUDA: 65535 blocks in y and z), the axes are packed again, innermost first, into
the dimensions in order, each taking axes while their product fits its limit; an axis that
does not fit the room left is split by its largest divisor that does (the rest goes on in
the next dimension). A grid that cannot be packed exactly raises ValueError.
"""

from __future__ import annotations

from fusegrad.codegen.lower.context import LowerContext, sorted_ranges
from fusegrad.codegen.lower.walk import nodes, rebuild
from fusegrad.uop import AxisType, Ops, UOp, dtypes, prod


def _ids(ranges: list[UOp], names: list[str]) -> tuple[dict[UOp, UOp], list[UOp]]:
    """SPECIALs for ``ranges`` (outermost first) named ``names`` from the innermost out; extra
    outer ranges share the last name. Returns the replacement of each range and the sizes."""
    inner_first = list(reversed(ranges))
    own, shared = inner_first[: len(names) - 1], inner_first[len(names) - 1 :]
    mapping: dict[UOp, UOp] = {}
    sizes: list[UOp] = []
    for rng, name in zip(own, names, strict=False):
        mapping[rng] = UOp.special(rng.src[0], name)
        sizes.append(rng.src[0])
    if shared:
        size = _product([r.src[0] for r in shared])
        folded = UOp.special(size, names[len(own)])
        sizes.append(folded.src[0])
        stride: UOp | int = 1
        for rng in shared:  # innermost first: the fastest-varying part of the folded id
            mapping[rng] = (folded // stride) % rng.src[0] if len(shared) > 1 else folded
            stride = rng.src[0] * stride
    return mapping, sizes


def _fits(sizes: list[UOp], limits: tuple[int, ...]) -> bool:
    """Every constant size is within its limit (symbolic sizes are not known to exceed)."""
    return all(
        x.op is not Ops.CONST or int(x.arg) <= limit
        for x, limit in zip(sizes, limits, strict=False)
    )


def _largest_divisor(n: int, most: int) -> int:
    """The largest divisor of ``n`` that is at least 2 and at most ``most``; 1 when none."""
    best, d = 1, 1
    while d * d <= n:
        if n % d == 0:
            for x in (d, n // d):
                if 2 <= x <= most:
                    best = max(best, x)
        d += 1
    return best


Piece = tuple[UOp, int, int]  # (range, size of this part, its place value in the range)


def _packed_ids(
    ranges: list[UOp], names: list[str], limits: tuple[int, ...]
) -> tuple[dict[UOp, UOp], list[UOp]]:
    """``ranges`` (outermost first, constant sizes) packed innermost first into ids ``names``
    within ``limits`` (see the module docstring)."""
    sizes = [r.src[0] for r in ranges]
    if any(x.op is not Ops.CONST for x in sizes):
        raise ValueError(f"lower: launch sizes {[x.render() for x in sizes]} exceed {limits}")
    dims: list[list[Piece]] = [[] for _ in names]
    used, d = [1] * len(names), 0
    for rng in reversed(ranges):
        left, place = int(rng.src[0].arg), 1
        while True:
            if d >= len(names):
                shown = [int(x.arg) for x in sizes]
                raise ValueError(f"lower: launch sizes {shown} do not fit the limits {limits}")
            room = limits[d] // used[d]
            if left <= room:
                dims[d].append((rng, left, place))
                used[d] *= left
                break
            part = _largest_divisor(left, room)
            if part > 1:
                dims[d].append((rng, part, place))
                used[d] *= part
                left, place = left // part, place * part
            d += 1
    last = max(i for i, pieces in enumerate(dims) if pieces) if any(dims) else 0
    mapping: dict[UOp, UOp] = {}
    for name, pieces, total in zip(names, dims, used, strict=True):
        if not pieces:
            continue
        hw = UOp.special(UOp.const(total, dtypes.weakint), name)
        below = 1
        for i, (rng, size, place) in enumerate(pieces):
            digit: UOp = hw // below if below > 1 else hw
            digit = digit % size if i < len(pieces) - 1 else digit
            term: UOp = digit * place if place > 1 else digit
            mapping[rng] = mapping[rng] + term if rng in mapping else term
            below *= size
    return mapping, [UOp.const(used[i], dtypes.weakint) for i in range(last + 1)]


def _fitted_ids(
    ranges: list[UOp], names: list[str], limits: tuple[int, ...] | None
) -> tuple[dict[UOp, UOp], list[UOp]]:
    """``_ids``, or the ranges packed within ``limits`` where ``_ids``' sizes exceed them."""
    mapping, sizes = _ids(ranges, names)
    if limits is None or _fits(sizes, limits):
        return mapping, sizes
    return _packed_ids(ranges, names, limits)


def _product(sizes: list[UOp]) -> UOp:
    """The product of loop sizes (folded when they are all constants)."""
    if all(x.op is Ops.CONST for x in sizes):
        return UOp.const(prod(x.arg for x in sizes), sizes[0].dtype)
    out = sizes[0]
    for x in sizes[1:]:
        out = out * x
    return out


def _of_type(ranges: list[UOp], kinds: tuple[AxisType, ...]) -> list[UOp]:
    return sorted_ranges([u for u in ranges if u.arg[1] in kinds])


def _gpu_ids(ranges: list[UOp], ctx: LowerContext) -> dict[UOp, UOp]:
    globals_ = _of_type(ranges, (AxisType.GLOBAL,))
    locals_ = _of_type(ranges, (AxisType.LOCAL, AxisType.GROUP_REDUCE))
    r = ctx.renderer
    gmap, gsizes = (
        _fitted_ids(globals_, ["gidx0", "gidx1", "gidx2"], r.global_max) if globals_ else ({}, [])
    )
    lmap, lsizes = (
        _fitted_ids(locals_, ["lidx0", "lidx1", "lidx2"], r.local_max) if locals_ else ({}, [])
    )
    ctx.global_size = [_size(s) for s in gsizes] + [1] * (3 - len(gsizes))
    ctx.local_size = [_size(s) for s in lsizes] + [1] * (3 - len(lsizes))
    return {**gmap, **lmap}


def _cpu_ids(ranges: list[UOp], ctx: LowerContext) -> dict[UOp, UOp]:
    threads = _of_type(ranges, (AxisType.THREAD,))
    if not threads:
        return {}
    mapping, sizes = _ids(threads, ["core"])
    ctx.global_size = [_size(sizes[0]), 1, 1]
    return mapping


def _size(x: UOp) -> object:
    simple = x.simplify()
    return simple.arg if simple.op is Ops.CONST else simple


def _drop_closed(x: UOp) -> UOp | None:
    """END over ranges that became hardware ids: close only the remaining loops."""
    keep = tuple(s for s in x.src[1:] if s.op is Ops.RANGE)
    if len(keep) == len(x.src) - 1:
        return None
    return x.replace(src=(x.src[0], *keep)) if keep else x.src[0]


def map_hardware_ids(sink: UOp, ctx: LowerContext) -> UOp:
    """The stage: parallel RANGEs -> SPECIAL ids, launch sizes into ``ctx``."""
    r = ctx.renderer
    ranges = [u for u in nodes(sink) if u.op is Ops.RANGE]
    mapping = (
        _gpu_ids(ranges, ctx) if r.has_local else _cpu_ids(ranges, ctx) if r.has_threads else {}
    )
    if not mapping:
        return sink

    def to_ids(u: UOp) -> UOp | None:
        if u.op is Ops.END:
            return _drop_closed(u)
        return mapping.get(u)

    return rebuild(sink, to_ids)
