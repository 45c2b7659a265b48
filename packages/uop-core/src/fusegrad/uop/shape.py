"""Shapes of tensor-level UOps: inference per op and validation of movement-op arguments.

Sizes are ``sint``: a Python int or a symbolic UOp. Elementwise ops broadcast their sources'
shapes with NumPy's rules; movement ops check their arguments when they are built, so a
bad reshape fails at the call that made it, naming the shapes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fusegrad.uop.helpers import prod
from fusegrad.uop.opcodes import GroupOp, Ops

if TYPE_CHECKING:
    from fusegrad.uop.uop import UOp, sint

Shape = tuple[Any, ...]


def _same(a: Any, b: Any) -> bool:
    return a is b or (isinstance(a, int) and isinstance(b, int) and a == b)


def broadcast_shapes(*shapes: Shape) -> Shape:
    """NumPy broadcasting of several shapes; raises ValueError naming them if impossible."""
    ndim = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out: list[Any] = []
    for dims in zip(*padded, strict=True):
        sizes = [d for d in dims if not (isinstance(d, int) and d == 1)]
        if not sizes:
            out.append(1)
            continue
        if not all(_same(sizes[0], d) for d in sizes[1:]):
            raise ValueError(
                f"shapes {' and '.join(str(tuple(s)) for s in shapes)} don't broadcast"
            )
        out.append(sizes[0])
    return tuple(out)


def _from_src(u: UOp) -> Shape | None:
    return u.src[0].st_shape if u.src else None


def _elementwise(u: UOp) -> Shape | None:
    shapes = [s.st_shape for s in u.src if s.st_shape is not None]
    if not shapes:
        return None
    if all(s == shapes[0] for s in shapes[1:]):
        return shapes[0]
    return broadcast_shapes(*shapes)


def _permute(u: UOp) -> Shape | None:
    src = u.src[0].st_shape
    return None if src is None else tuple(src[i] for i in u.arg)


def _plus(a: Any, b: Any) -> Any:
    # size arithmetic that leaves a symbolic size alone when the other side is 0, so a pad or
    # shrink that doesn't touch a symbolic axis keeps it the same node (n, not n+0)
    if isinstance(b, int) and b == 0:
        return a
    if isinstance(a, int) and a == 0:
        return b
    return a + b


def _pad(u: UOp) -> Shape | None:
    src = u.src[0].st_shape
    if src is None:
        return None
    return tuple(_plus(_plus(s, b), a) for s, (b, a) in zip(src, u.arg, strict=True))


def _shrink(u: UOp) -> Shape | None:
    return tuple(e if isinstance(s, int) and s == 0 else e - s for s, e in u.arg)


def _reduce_axis(u: UOp) -> Shape | None:
    src = u.src[0].st_shape
    if src is None:
        return None
    axes = u.arg[1]
    return tuple(1 if i in axes else s for i, s in enumerate(src))


def _buffer(u: UOp) -> Shape | None:
    return (u.arg,)


def _const(u: UOp) -> Shape | None:
    return () if u.src else None


def _scalar(u: UOp) -> Shape | None:
    return ()


def _bitcast(u: UOp) -> Shape | None:
    src = u.src[0].st_shape
    if src is None or not src:
        return src
    old, new = u.src[0].dtype.itemsize, u.dtype.itemsize
    if old == new:
        return src
    return (*src[:-1], (src[-1] * old) // new)


SHAPE_RULES: dict[Ops, Callable[[UOp], Shape | None]] = {
    Ops.BUFFER: _buffer,
    Ops.CONST: _const,
    Ops.DEFINE_VAR: _scalar,
    Ops.RESHAPE: lambda u: u.arg,
    Ops.EXPAND: lambda u: u.arg,
    Ops.PERMUTE: _permute,
    Ops.PAD: _pad,
    Ops.SHRINK: _shrink,
    Ops.FLIP: _from_src,
    Ops.REDUCE_AXIS: _reduce_axis,
    Ops.BITCAST: _bitcast,
    Ops.CAST: _from_src,
    Ops.CONTIGUOUS: _from_src,
    Ops.CONTIGUOUS_BACKWARD: _from_src,
    Ops.DETACH: _from_src,
    Ops.COPY: _from_src,
    Ops.AFTER: _from_src,
    Ops.ASSIGN: _from_src,
    Ops.MULTI: _from_src,
    **{op: _elementwise for op in GroupOp.ALU},
}


def infer_shape(u: UOp) -> Shape | None:
    """The shape of a tensor-level node, or None for nodes that have none."""
    rule = SHAPE_RULES.get(u.op)
    return rule(u) if rule is not None else None


# -- movement-op argument checks ------------------------------------------------------------------


def _check_reshape(shape: Shape, arg: Shape) -> None:
    if any(isinstance(s, int) and s < 0 for s in arg):
        raise ValueError(f"reshape: negative size in {arg}")
    old, new = prod(shape), prod(arg)
    if isinstance(old, int) and isinstance(new, int) and old != new:
        raise ValueError(
            f"reshape: can't reshape {shape} ({old} elements) to {arg} ({new} elements)"
        )


def _check_permute(shape: Shape, arg: Shape) -> None:
    if sorted(arg) != list(range(len(shape))):
        raise ValueError(f"permute: {arg} is not a permutation of the {len(shape)} axes of {shape}")


def _check_expand(shape: Shape, arg: Shape) -> None:
    if len(arg) != len(shape):
        raise ValueError(f"expand: {shape} and {arg} differ in length")
    for old, new in zip(shape, arg, strict=True):
        if not (_same(old, new) or (isinstance(old, int) and old == 1)):
            raise ValueError(f"expand: can't expand {shape} to {arg}")


def _check_pad(shape: Shape, arg: Shape) -> None:
    if len(arg) != len(shape):
        raise ValueError(f"pad: {len(arg)} pairs for {len(shape)} axes of {shape}")
    if any(isinstance(x, int) and x < 0 for pair in arg for x in pair):
        raise ValueError(f"pad: negative padding {arg}")


def _check_shrink(shape: Shape, arg: Shape) -> None:
    if len(arg) != len(shape):
        raise ValueError(f"shrink: {len(arg)} pairs for {len(shape)} axes of {shape}")
    for size, (start, end) in zip(shape, arg, strict=True):
        ints = all(isinstance(x, int) for x in (size, start, end))
        if ints and not 0 <= start <= end <= size:
            raise ValueError(f"shrink: window {arg} doesn't fit in {shape}")


def _check_flip(shape: Shape, arg: Shape) -> None:
    if len(arg) != len(shape):
        raise ValueError(f"flip: {len(arg)} flags for {len(shape)} axes of {shape}")


_CHECKS: dict[Ops, Callable[[Shape, Shape], None]] = {
    Ops.RESHAPE: _check_reshape,
    Ops.PERMUTE: _check_permute,
    Ops.EXPAND: _check_expand,
    Ops.PAD: _check_pad,
    Ops.SHRINK: _check_shrink,
    Ops.FLIP: _check_flip,
}


def _is_noop(shape: Shape, op: Ops, arg: Shape) -> bool:
    if op in (Ops.RESHAPE, Ops.EXPAND):
        return len(arg) == len(shape) and all(_same(a, b) for a, b in zip(arg, shape, strict=True))
    if op is Ops.PERMUTE:
        return tuple(arg) == tuple(range(len(shape)))
    if op is Ops.PAD:
        return all(isinstance(x, int) and x == 0 for pair in arg for x in pair)
    if op is Ops.SHRINK:
        return all(
            isinstance(s, int) and s == 0 and _same(e, size)
            for (s, e), size in zip(arg, shape, strict=True)
        )
    return not any(arg)  # FLIP


def check_movement(u: UOp, op: Ops, arg: Shape) -> UOp | None:
    """Validate a movement op on ``u``; returns ``u`` itself when the op changes nothing."""
    shape = u.shape
    _CHECKS[op](shape, arg)
    return u if _is_noop(shape, op, arg) else None


def shape_to_uops(shape: tuple[sint, ...]) -> tuple[UOp, ...]:
    """A shape as UOps (for symbolic arithmetic on every dim)."""
    from fusegrad.uop.uop import sint_to_uop

    return tuple(sint_to_uop(s) for s in shape)


def shape_to_shape_arg(arg: tuple[sint, ...]) -> UOp:
    """A shape as one vector UOp of ``weakint`` lanes, one per dim: a vector constant when
    every size is an int, else a VECTORIZE of the sizes (symbolic ones stay UOps); a 1-d
    shape is its size as a scalar. ``()`` has no vector form (``ValueError``).

    >>> from fusegrad.uop import UOp
    >>> shape_to_shape_arg((2, 3)).arg
    (2, 3)
    >>> n = UOp.variable("n", 1, 8)
    >>> shape_to_shape_arg((n, 4)).op
    Ops.VECTORIZE
    """
    from fusegrad.uop.dtype import dtypes
    from fusegrad.uop.uop import UOp

    if not arg:
        raise ValueError("shape_to_shape_arg: a 0-d shape () has no vector form")
    if all(isinstance(s, int) for s in arg):
        if len(arg) == 1:
            return UOp.const(int(arg[0]), dtypes.weakint)
        return UOp.vconst(arg, dtypes.weakint.vec(len(arg)))
    dims = shape_to_uops(arg)
    if len(dims) == 1:
        return dims[0]
    return UOp(Ops.VECTORIZE, dtypes.weakint.vec(len(dims)), dims)
