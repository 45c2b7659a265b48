"""Map parallel axes to hardware ids.

On targets with workgroups (``has_local``) GLOBAL ranges become ``SPECIAL gidx0..2`` (the
workgroup id, innermost axis first) and LOCAL/GROUP_REDUCE ranges ``SPECIAL lidx0..2`` (the
thread within it); on CPUs with threads (``has_threads``) a THREAD range becomes ``SPECIAL
core``. More axes than the hardware has ids are folded into the last id and unflattened
with ``//`` and ``%``. The launch dimensions go into the context for the ProgramSpec.
"""

from __future__ import annotations

from fusegrad.codegen.lower.context import LowerContext, sorted_ranges
from fusegrad.codegen.lower.walk import nodes, rebuild
from fusegrad.uop import AxisType, Ops, UOp, prod


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
    gmap, gsizes = _ids(globals_, ["gidx0", "gidx1", "gidx2"]) if globals_ else ({}, [])
    lmap, lsizes = _ids(locals_, ["lidx0", "lidx1", "lidx2"]) if locals_ else ({}, [])
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
