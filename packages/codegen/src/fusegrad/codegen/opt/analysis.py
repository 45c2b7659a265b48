"""What the optimizer reads off a kernel AST: memory strides of axes, and matmul shapes (for
the heuristics' register blocking and the TC opt)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from fusegrad.codegen.opt.kernel import (
    KernelOptError,
    Opt,
    const_size,
    kernel_axes,
    nodes_of,
    split_axis,
)
from fusegrad.codegen.renderer import Renderer
from fusegrad.uop import AxisType, GroupOp, Ops, UOp, dtypes, exec_alu


def _values_at(expr: UOp, rng: UOp) -> tuple[int, int] | None:
    """``expr`` evaluated with every range at 0, and with ``rng`` at 1 (others at 0); None when
    it reads anything but ranges and constants (a Variable, a load) or an op fails."""
    values: dict[UOp, tuple[Any, Any]] = {}
    for u in expr.toposort():
        if u.op is Ops.CONST:
            values[u] = (u.arg, u.arg)
        elif u.op is Ops.RANGE:
            values[u] = (0, 1 if u is rng else 0)
        elif u.op in GroupOp.ALU or u.op is Ops.CAST:
            args = [values[s] for s in u.src]
            try:
                values[u] = tuple(exec_alu(u.op, u.dtype, [a[i] for a in args]) for i in (0, 1))
            except (ArithmeticError, TypeError, ValueError, NotImplementedError):
                return None
        else:
            return None
    at0, at1 = values[expr]
    if not isinstance(at0, int) or not isinstance(at1, int):
        return None
    return at0, at1


@functools.lru_cache(maxsize=1 << 14)
def stride(idx: UOp, rng: UOp) -> int | None:
    """How far ``idx`` moves when ``rng`` goes up by one (others at 0); None when that is not a
    constant (the index reads a Variable or memory). Evaluated numerically (no simplifying:
    the heuristics ask this for every access and axis of every kernel) and memoized."""
    base = idx.get_idx()
    if rng not in base.ranges:
        return 0
    found = _values_at(base, rng)
    return None if found is None else found[1] - found[0]


def accesses(ast: UOp) -> list[UOp]:
    """The INDEX nodes of the kernel's loads and stores (stores first)."""
    stores = [u.src[0] for u in nodes_of(ast, Ops.STORE)]
    loads = [u.src[0] for u in nodes_of(ast, Ops.LOAD)]
    return stores + loads


def contiguous_in(ast: UOp, rng: UOp) -> int:
    """How many of the kernel's accesses walk memory with stride 1 along ``rng``."""
    return sum(1 for x in accesses(ast) if stride(x.src[1], rng) == 1)


def loads_contiguous_in(ast: UOp, rng: UOp, streamed: UOp | None = None) -> int:
    """How many of the kernel's loads walk memory with stride 1 along ``rng``; with
    ``streamed``, only the loads that move along that axis too (a reduction's operands, not
    the per-output values it is combined with)."""
    idxs = [u.src[0].src[1] for u in nodes_of(ast, Ops.LOAD)]
    if streamed is not None:
        idxs = [x for x in idxs if stride(x, streamed) != 0]
    return sum(1 for x in idxs if stride(x, rng) == 1)


def range_work(value: UOp, rng: UOp) -> int:
    """How many ALU ops of ``value`` outside its memory indices compute from ``rng`` and
    constants alone (an arange's bits in argmax): work each vector lane along ``rng`` repeats,
    while lanes along an output axis share it."""
    index_only: set[UOp] = set()
    for u in value.toposort():
        if u.op is Ops.INDEX:
            index_only.update(*(s.toposort() for s in u.src[1:]))
    pure: set[UOp] = {rng}
    count = 0
    for u in value.toposort():
        from_rng = any(s in pure for s in u.src)
        if u.op in GroupOp.ALU and from_rng and all(s in pure or s.op is Ops.CONST for s in u.src):
            pure.add(u)
            count += u not in index_only
    return count


@dataclass(frozen=True, slots=True)
class MatmulShape:
    """A reduction ``sum_k a[m, k] * b[k, n]``: the ranges of each role and the two factors
    (loads, or expressions of loads)."""

    m: UOp
    n: UOp
    k: UOp
    a: UOp
    b: UOp
    reduce: UOp


def _uncast(x: UOp) -> UOp:
    while x.op is Ops.CAST:
        x = x.src[0]
    return x


def _factors_of_product(value: UOp) -> tuple[UOp, UOp] | None:
    value = _uncast(value)
    if value.op is not Ops.MUL:
        return None
    return _uncast(value.src[0]), _uncast(value.src[1])


def _only_in(x: UOp, y: UOp) -> list[UOp]:
    """Output ranges factor ``x`` uses and factor ``y`` does not."""
    return [
        r for r in x.ranges if r not in y.ranges and r.arg[1] in (AxisType.LOOP, AxisType.GLOBAL)
    ]


def matmul_shape(ast: UOp) -> MatmulShape | None:
    """The kernel's matmul structure, when it is one ADD-reduce of a product of two factors
    with an output axis only the first uses (M), one only the second uses (N), and a reduce
    axis both use (K); None otherwise. A factor is usually a load, but may be any expression
    of loads (a bias added to q, a softmax, a fused activation: MiniLM's kernels)."""
    reduces = nodes_of(ast, Ops.REDUCE)
    if len(reduces) != 1 or reduces[0].arg is not Ops.ADD:
        return None
    red = reduces[0]
    factors = _factors_of_product(red.src[0])
    if factors is None:
        return None
    a, b = factors
    ks = [r for r in red.src[1:] if r in a.ranges and r in b.ranges]
    ms, ns = _only_in(a, b), _only_in(b, a)
    if not ks or not ms or not ns:
        return None
    return MatmulShape(ms[-1], ns[-1], ks[-1], a, b, red)


def operand_stride(factor: UOp, rng: UOp) -> int | None:
    """How far the loads of ``factor`` move along ``rng``: 0 when none moves, the stride when
    every moving load moves by the same constant, else None (``stride`` for expressions)."""
    loads = [u for u in factor.toposort() if u.op is Ops.LOAD]
    found = {stride(ld.src[0].src[1], rng) for ld in loads} - {0}
    if None in found or len(found) > 1:
        return None
    return found.pop() if found else 0


# -- tensor cores ----------------------------------------------------------------------------------


def apply_tensor_core(ast: UOp, opt: Opt, renderer: Renderer) -> UOp:
    """The TC opt: tile a matmul to tensor core ``opt.axis`` of the renderer — N by the core's
    N (workgroup threads), M by its M (vector lanes), K by its K (unrolled). The lowering's
    tensor core stage (``lower/wmma.py``) turns a tile it knows the register layout of into
    WMMA nodes; any other tile runs as ordinary lanes and threads. A reduce axis padded by
    PADTO (its value masked) is a matmul too.

    A core whose ``opts`` has ``"m_threads=<t>"`` (and a target with workgroups) takes M's
    tile as ``t`` threads (LOCAL, the inner part) times ``M / t`` lanes (UPCAST) instead: the
    layout of a warp-wide instruction, and fewer lanes for BEAM's lane budget."""
    cores = renderer.tensor_cores
    if not cores:
        raise KernelOptError(f"{opt}: {renderer!r} declares no tensor cores")
    pick = 0 if opt.axis is None else opt.axis
    if not 0 <= pick < len(cores):
        raise KernelOptError(f"{opt}: no tensor core {pick}, {renderer!r} has {len(cores)}")
    tc = cores[pick]
    shape = matmul_shape(ast) or matmul_shape(_without_padding_mask(ast))
    if shape is None:
        raise KernelOptError(f"{opt}: the kernel is not a matmul-shaped reduction")
    _check_tc_dtypes(opt, shape, tc.dtype_in, tc.dtype_out)
    n, m, k = tc.dims
    threads = AxisType.LOCAL if renderer.has_local else AxisType.UPCAST
    plan = [(shape.n, n, threads), (shape.m, m, AxisType.UPCAST), (shape.k, k, AxisType.UNROLL)]
    for rng, size, _ in plan:
        have = const_size(rng)
        if have is None or have % size != 0:
            raise KernelOptError(f"{opt}: axis {rng.arg[0]} of size {rng.src[0].render()} is not "
                                 f"a multiple of the tensor core's {size}")  # fmt: skip
    m_threads = _m_threads(tc.opts, m) if renderer.has_local else None
    if m_threads is not None:  # M = rest * m + lanes * m_threads + thread
        plan[1:2] = [
            (shape.m, m_threads, AxisType.LOCAL),
            (shape.m, m // m_threads, AxisType.UPCAST),
        ]
    for rng, size, kind in plan:
        current = next(r for r in kernel_axes(ast) if r.arg[0] == rng.arg[0])
        quotient = UOp.const((const_size(current) or 0) // size, dtypes.weakint)
        ast = split_axis(ast, current, size, kind, False, quotient)
    return ast


def _m_threads(opts: tuple[str, ...], m: int) -> int | None:
    """The ``m_threads=<t>`` of a tensor core's ``opts`` (None without one)."""
    for o in opts:
        if o.startswith("m_threads="):
            t = int(o.split("=", 1)[1])
            if t < 1 or m % t:
                raise ValueError(f"tensor core opts: m_threads={t} does not divide M={m}")
            return t
    return None


def _without_padding_mask(ast: UOp) -> UOp:
    """``ast`` with a reduce value ``WHERE(valid, x, 0)`` (a reduce axis padded by PADTO) read
    as ``x``: the same ranges, for finding the matmul's roles (the tensor core stage in
    ``lower/wmma.py`` keeps the mask)."""
    masked = {
        red: red.replace(src=(red.src[0].src[1], *red.src[1:]))
        for red in nodes_of(ast, Ops.REDUCE)
        if red.src[0].op is Ops.WHERE
        and red.src[0].src[2].op is Ops.CONST
        and red.src[0].src[2].arg == 0
    }
    return ast.substitute(masked) if masked else ast


def _check_tc_dtypes(opt: Opt, shape: MatmulShape, dtype_in: object, dtype_out: object) -> None:
    ins = (shape.a.dtype, shape.b.dtype)
    if any(d is not dtype_in for d in ins) or shape.reduce.dtype is not dtype_out:
        raise KernelOptError(f"{opt}: the tensor core takes {dtype_in!r} -> {dtype_out!r}, the "
                             f"matmul has {ins[0]!r} x {ins[1]!r} -> {shape.reduce.dtype!r}")  # fmt: skip
