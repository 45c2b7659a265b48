"""Reverse-mode gradients of UOp graphs: the rules as a pattern table over tensor-level UOps,
and the accumulation over a graph (``UOp.gradient`` and the frontend's autograd use it).

A rule receives the gradient of its node (``ctx``, same shape and dtype as the node) and
returns one gradient per source (None: no gradient flows there).

>>> from fusegrad.uop import UOp, dtypes
>>> x = UOp.new_buffer("CPU", 3, dtypes.float32)
>>> y = (x * x).sum()
>>> g = compute_gradient(y, y.const_like(1.0), {x})[x]
>>> g.shape
(3,)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from fusegrad.uop.dtype import dtypes
from fusegrad.uop.opcodes import Ops
from fusegrad.uop.pattern import PatternMatcher, UPat
from fusegrad.uop.uop import UOp

__all__ = ["CustomGradient", "GradientRule", "compute_gradient", "pm_gradient", "with_gradient"]

_LN2 = math.log(2)


def _c(like: UOp, value: Any) -> UOp:
    """A constant shaped and typed like ``like``."""
    return like.const_like(value)


def _sum_to(g: UOp, shape: tuple[Any, ...]) -> UOp:
    """Sum ``g`` over the dims that ``shape`` broadcasts (size 1 there)."""
    axes = tuple(i for i, (a, b) in enumerate(zip(shape, g.shape, strict=True)) if a != b)
    if not axes:
        return g
    wide = dtypes.float32 if g.dtype in (dtypes.float16, dtypes.bfloat16) else g.dtype
    return g.cast(wide).r(Ops.ADD, axes).cast(g.dtype)


def _expand_to(g: UOp, shape: tuple[Any, ...]) -> UOp:
    return g.expand(shape) if g.shape != tuple(shape) else g


def _max_grad(ctx: UOp, a: UOp, b: UOp) -> tuple[UOp, UOp]:
    zero, half = _c(ctx, 0), ctx * _c(ctx, 0.5)
    tie = a.eq(b)
    return (b < a).where(ctx, tie.where(half, zero)), (a < b).where(ctx, tie.where(half, zero))


def _pow_grad(ctx: UOp, ret: UOp, a: UOp, b: UOp) -> tuple[UOp, UOp]:
    zero = _c(ctx, 0)
    da = b.eq(zero).where(zero, ctx * b * UOp(Ops.POW, a.dtype, (a, b - _c(b, 1))))
    log_a = UOp(Ops.LOG2, a.dtype, (a,)) * _c(a, _LN2)
    db = (a.eq(zero) & (zero < b) | a.eq(zero) & b.eq(zero)).where(zero, ctx * ret * log_a)
    return da, db


def _reduce_grad(ctx: UOp, ret: UOp, x: UOp) -> tuple[UOp]:
    op = ret.arg[0]
    g = _expand_to(ctx, x.shape)
    if op is Ops.ADD:
        return (g,)
    full = _expand_to(ret, x.shape)
    if op is Ops.MAX:
        hit = x.eq(full)
        one, zero = _c(x, 1), _c(x, 0)
        mask = hit.where(one, zero)
        count = _expand_to(mask.r(Ops.ADD, ret.arg[1]), x.shape)
        return (g * mask / count,)
    zero, one = _c(x, 0), _c(x, 1)
    is_zero = x.eq(zero)
    nonzero_prod = _expand_to(is_zero.where(one, x).r(Ops.MUL, ret.arg[1]), x.shape)
    zero_count = _expand_to(is_zero.where(one, zero).r(Ops.ADD, ret.arg[1]), x.shape)
    others = is_zero.where(
        zero_count.eq(one).where(nonzero_prod, zero), full / is_zero.where(one, x)
    )
    return (g * others,)


def _permute_grad(ctx: UOp, ret: UOp) -> tuple[UOp]:
    inverse = [0] * len(ret.arg)
    for i, p in enumerate(ret.arg):
        inverse[p] = i
    return (ctx.permute(tuple(inverse)),)


def _pad_grad(ctx: UOp, ret: UOp, x: UOp) -> tuple[UOp]:
    return (ctx.shrink(tuple((b, b + s) for (b, _), s in zip(ret.arg, x.shape, strict=True))),)


def _shrink_grad(ctx: UOp, ret: UOp, x: UOp) -> tuple[UOp]:
    return (ctx.pad(tuple((s, n - e) for (s, e), n in zip(ret.arg, x.shape, strict=True))),)


def _cast_grad(ctx: UOp, x: UOp) -> tuple[UOp | None]:
    return (ctx.cast(x.dtype) if dtypes.is_float(x.dtype) else None,)


def _copy_grad(ctx: UOp, ret: UOp, x: UOp) -> tuple[UOp, None]:
    return (UOp(Ops.COPY, ctx.dtype, (ctx, UOp(Ops.DEVICE, arg=x.device))), None)


_NO_GRAD_OPS = (
    Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ, Ops.AND, Ops.OR, Ops.XOR, Ops.SHL, Ops.SHR, Ops.CDIV,
    Ops.CMOD, Ops.FLOORDIV, Ops.FLOORMOD, Ops.TRUNC, Ops.THREEFRY, Ops.DETACH, Ops.BITCAST,
)  # fmt: skip


def _none(ret: UOp) -> tuple[None, ...]:
    return (None,) * len(ret.src)


_rules: list[tuple[UPat, Any]] = [
    (UPat(Ops.CAST, src=(UPat.var("x"),)), _cast_grad),  # d cast(x) = cast back (floats only)
    (UPat(Ops.RECIPROCAL, name="ret"), lambda ctx, ret: (-ctx * ret * ret,)),  # d(1/x) = -1/x^2
    (
        UPat(Ops.SIN, src=(UPat.var("x"),)),
        lambda ctx, x: (ctx * (_c(x, math.pi / 2) - x).sin(),),
    ),  # d sin = cos
    (
        UPat(Ops.LOG2, src=(UPat.var("x"),)),
        lambda ctx, x: (ctx / (x * _c(x, _LN2)),),
    ),  # d log2 x = 1/(x ln2)
    (UPat(Ops.EXP2, name="ret"), lambda ctx, ret: (ctx * ret * _c(ret, _LN2),)),  # d 2^x = 2^x ln2
    (
        UPat(Ops.SQRT, name="ret"),
        lambda ctx, ret: (ctx / (ret * _c(ret, 2)),),
    ),  # d sqrt x = 1/(2 sqrt x)
    (UPat(Ops.NEG), lambda ctx: (-ctx,)),  # d(-x) = -1
    (UPat(Ops.ADD), lambda ctx: (ctx, ctx)),  # d(a+b) = 1, 1
    (UPat(Ops.SUB), lambda ctx: (ctx, -ctx)),  # d(a-b) = 1, -1
    (
        UPat(Ops.MUL, src=(UPat.var("a"), UPat.var("b"))),
        lambda ctx, a, b: (ctx * b, ctx * a),
    ),  # d(ab) = b, a
    (
        UPat(Ops.FDIV, src=(UPat.var("a"), UPat.var("b"))),
        lambda ctx, a, b: (ctx / b, -ctx * a / (b * b)),
    ),  # d(a/b)
    (UPat(Ops.MAX, src=(UPat.var("a"), UPat.var("b"))), _max_grad),  # ties split evenly
    (
        UPat(Ops.POW, name="ret", src=(UPat.var("a"), UPat.var("b"))),
        _pow_grad,
    ),  # PyTorch's zeros at a == 0
    (
        UPat(Ops.WHERE, src=(UPat.var("c"), UPat(), UPat())),
        lambda ctx, c: (None, c.where(ctx, _c(ctx, 0)), c.where(_c(ctx, 0), ctx)),
    ),  # select
    (UPat(Ops.REDUCE_AXIS, name="ret", src=(UPat.var("x"),)), _reduce_grad),  # sum/prod/max
    (
        UPat(Ops.RESHAPE, src=(UPat.var("x"),)),
        lambda ctx, x: (ctx.reshape(x.shape),),
    ),  # reshape back
    (UPat(Ops.PERMUTE, name="ret"), _permute_grad),  # inverse permutation
    (
        UPat(Ops.EXPAND, src=(UPat.var("x"),)),
        lambda ctx, x: (_sum_to(ctx, x.shape),),
    ),  # sum the broadcast dims
    (UPat(Ops.PAD, name="ret", src=(UPat.var("x"),)), _pad_grad),  # crop the padding
    (UPat(Ops.SHRINK, name="ret", src=(UPat.var("x"),)), _shrink_grad),  # pad back with zeros
    (
        UPat(Ops.FLIP, name="ret"),
        lambda ctx, ret: (ctx.flip([i for i, f in enumerate(ret.arg) if f]),),
    ),  # flip back
    (UPat(Ops.CONTIGUOUS), lambda ctx: (ctx,)),  # identity
    (
        UPat(Ops.CONTIGUOUS_BACKWARD),
        lambda ctx: (UOp(Ops.CONTIGUOUS, ctx.dtype, (ctx,)),),
    ),  # realize the grad
    (UPat(Ops.COPY, name="ret", src=(UPat.var("x"), UPat())), _copy_grad),  # copy back
    (
        UPat(Ops.AFTER, src=(UPat(), UPat(Ops.STORE)), allow_any_len=True),
        lambda ctx: (None, ctx),
    ),  # an assign's value is what it stored
    (UPat(Ops.STORE), lambda ctx: (None, ctx)),  # to the stored value, not the old one
    (UPat(_NO_GRAD_OPS, name="ret"), _none),  # not differentiable
]
pm_gradient = PatternMatcher(cast(Any, _rules))


GradientRule = Callable[[UOp, UOp, tuple[UOp, ...], tuple[bool, ...]], Sequence[UOp | None]]
"""A custom gradient: ``rule(grad, value, inputs, wanted)`` gives one gradient (or None) per
input; ``wanted[i]`` says whether backward uses input i's (None is fine where it doesn't)."""


@dataclass(frozen=True, eq=False)
class CustomGradient:
    """The arg of a custom-gradient node ``CONTIGUOUS_BACKWARD(value, *inputs)``: its value is
    ``value`` (the scheduler drops the node), and backward sends ``rule(grad, value, inputs,
    wanted)`` to ``inputs`` instead of differentiating ``value``'s graph. Compared by identity, so one
    rule object made once per traced function keeps the schedule cache warm across calls."""

    rule: GradientRule
    name: str = "custom"


def with_gradient(value: UOp, inputs: Sequence[UOp], gradient: CustomGradient) -> UOp:
    """``value`` whose gradient w.r.t. ``inputs`` is ``gradient.rule`` (see CustomGradient)."""
    return UOp(Ops.CONTIGUOUS_BACKWARD, value.dtype, (value, *inputs), gradient)


def _custom_gradient(u: UOp, g: UOp, on_path: set[UOp]) -> tuple[UOp | None, ...]:
    """The sources' gradients of a custom-gradient node, checked against the inputs."""
    rule = cast(CustomGradient, u.arg)
    inputs = u.src[1:]
    grads = tuple(rule.rule(g, u.src[0], inputs, tuple(x in on_path for x in inputs)))
    if len(grads) != len(inputs):
        raise ValueError(
            f"{rule.name}: the gradient function gave {len(grads)} gradients for "
            f"{len(inputs)} inputs"
        )
    for i, (x, gx) in enumerate(zip(inputs, grads, strict=True)):
        if gx is not None and tuple(gx.shape) != tuple(x.shape):
            raise ValueError(
                f"{rule.name}: gradient {i} has shape {tuple(gx.shape)}, its input {tuple(x.shape)}"
            )
    return (
        None,
        *(None if gx is None else gx.cast(x.dtype) for x, gx in zip(inputs, grads, strict=True)),
    )


def compute_gradient(root: UOp, root_grad: UOp, targets: set[UOp]) -> dict[UOp, UOp]:
    """Gradients of ``root`` (seeded with ``root_grad``) w.r.t. each target reached."""
    order = root.toposort()
    on_path: set[UOp] = set()
    for u in order:
        if u in targets or any(s in on_path for s in u.src):
            on_path.add(u)
    grads: dict[UOp, UOp] = {root: root_grad}
    for u in reversed(order):
        g = grads.get(u)
        if g is None or (u in targets and not u.src):
            continue
        if not any(s in on_path for s in u.src):
            continue
        if u.op is Ops.CONTIGUOUS_BACKWARD and isinstance(u.arg, CustomGradient):
            result: Any = _custom_gradient(u, g, on_path)
        else:
            result = pm_gradient.rewrite(u, ctx=g)
        if result is None:
            raise NotImplementedError(f"no gradient rule for {u.op!r}")
        for s, sg in zip(u.src, cast(tuple[Any, ...], result), strict=False):
            if sg is None or s not in on_path:
                continue
            grads[s] = sg if s not in grads else grads[s] + sg
    return {t: grads[t] for t in targets if t in grads}
