"""Movement: reshape, permute, expand, pad (all modes), shrink, flip, and what is built from
them (cat, stack, split, repeat, roll, unfold, triu/tril, rearrange...), for ``UOp`` and
``Tensor`` alike (see ``fusegrad.uop.mixin.base`` for the primitives they use).

>>> from fusegrad.uop import UOp, dtypes
>>> x = UOp.new_buffer("CPU", 6, dtypes.float32).reshape(2, -1)
>>> x.shape, x.pad((1, 1), mode="reflect").shape, x.T.shape
((2, 3), (2, 5), (3, 2))
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Self, TypeAlias

from fusegrad.uop.dtype import dtypes, least_upper_dtype
from fusegrad.uop.helpers import argfix, prod
from fusegrad.uop.mixin.base import OpMixinBase
from fusegrad.uop.mixin.create import index_uop
from fusegrad.uop.opcodes import Ops

if TYPE_CHECKING:
    from fusegrad.uop.uop import sint

PadArg: TypeAlias = "Sequence[int] | Sequence[tuple[sint, sint] | None]"


def _index_dtype(n: sint) -> Any:
    return dtypes.int32 if isinstance(n, int) and n < 2**31 else dtypes.int64


def _fmt(shape: Sequence[Any]) -> str:
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _infer_shape(old: tuple[sint, ...], new: tuple[Any, ...]) -> tuple[sint, ...]:
    new = tuple(old[i] if s is None else s for i, s in enumerate(new))
    if sum(1 for s in new if isinstance(s, int) and s == -1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if any(isinstance(s, int) and s < -1 for s in new):
        raise RuntimeError(f"invalid shape dimension in {_fmt(new)}")
    total = prod(old)
    if -1 in [s for s in new if isinstance(s, int)]:
        known = prod(s for s in new if not (isinstance(s, int) and s == -1))
        if isinstance(known, int) and isinstance(total, int) and (known == 0 or total % known):
            raise RuntimeError(f"shape '{_fmt(new)}' is invalid for input of size {total}")
        new = tuple(total // known if isinstance(s, int) and s == -1 else s for s in new)
    size = prod(new)
    if isinstance(size, int) and isinstance(total, int) and size != total:
        raise RuntimeError(f"shape '{_fmt(new)}' is invalid for input of size {total}")
    return new


def _normalize_padding(ndim: int, padding: PadArg) -> list[tuple[sint, sint]]:
    """Padding given per dim as pairs/None, or flat PyTorch-style (last dim first)."""
    items = list(padding)
    if all(isinstance(p, int) for p in items):
        if len(items) % 2 or len(items) // 2 > ndim:
            raise RuntimeError(
                f"Padding length must be divisible by 2 and at most {2 * ndim}, got {len(items)}"
            )
        pairs: list[tuple[sint, sint]] = [(0, 0)] * ndim
        for i in range(len(items) // 2):
            pairs[ndim - 1 - i] = (items[2 * i], items[2 * i + 1])  # type: ignore[assignment]
        return pairs
    if len(items) != ndim:
        raise RuntimeError(f"pad: {len(items)} pairs for a tensor with {ndim} dims")
    return [(0, 0) if p is None else (p[0], p[1]) for p in items]  # type: ignore[index]


class MovementMixin(OpMixinBase):
    """Movement methods (mixed into UOp and Tensor)."""

    __slots__ = ()

    def reshape(self, shape: Any, *args: Any) -> Self:
        """The same elements in a new shape (-1 inferred, None keeps the dim)."""
        new = _infer_shape(self.shape, argfix(shape, *args))
        return self._wrap(self.uop._mop(Ops.RESHAPE, new))

    def view(self, shape: Any, *args: Any) -> Self:
        """Alias of reshape."""
        return self.reshape(shape, *args)

    def expand(self, shape: Any, *args: Any) -> Self:
        """Size-1 dims broadcast to ``shape`` (-1 keeps a dim; new leading dims allowed)."""
        new = argfix(shape, *args)
        if len(new) < self.ndim:
            raise RuntimeError(
                f"expand: the number of sizes provided ({len(new)}) must be greater or equal to "
                f"the number of dimensions in the tensor ({self.ndim})"
            )
        old = (1,) * (len(new) - self.ndim) + self.shape
        target = tuple(
            o if isinstance(n, int) and n == -1 else n for o, n in zip(old, new, strict=True)
        )
        for i, (o, n) in enumerate(zip(old, target, strict=True)):
            if not (o is n or o in (n, 1)):
                raise RuntimeError(
                    f"The expanded size of the tensor ({n}) must match the existing size ({o}) at "
                    f"non-singleton dimension {i}. Target sizes: {_fmt(new)}. Tensor sizes: {_fmt(self.shape)}"
                )
        return self._wrap(self.uop._mop(Ops.RESHAPE, old)._mop(Ops.EXPAND, target))

    def permute(self, order: Any, *args: Any) -> Self:
        """Dims reordered: new dim i is old dim order[i]."""
        raw = argfix(order, *args)
        if len(raw) != self.ndim:
            raise RuntimeError(
                f"permute: number of dims don't match, input.dim() = {self.ndim} is not equal "
                f"to len(dims) = {len(raw)}"
            )
        axes = tuple(self._axis(a) for a in raw)
        if len(set(axes)) != len(axes):
            raise RuntimeError(f"permute: repeated dim in {raw}")
        return self._wrap(self.uop._mop(Ops.PERMUTE, axes))

    def transpose(self, dim0: int = 1, dim1: int = 0) -> Self:
        """Swap two dims."""
        order = list(range(self.ndim))
        a, b = self._axis(dim0), self._axis(dim1)
        order[a], order[b] = order[b], order[a]
        return self.permute(order)

    def flip(self, axis: Any, *args: Any) -> Self:
        """Reversed along the given dims (a dim given twice is an error, as in PyTorch)."""
        given = [self._axis(a) for a in argfix(axis, *args)]
        axes = set(given)
        if len(axes) != len(given):
            dup = next(a for a in given if given.count(a) > 1)
            raise RuntimeError(f"dim {dup} appears multiple times in the list of dims")
        return self._wrap(self.uop._mop(Ops.FLIP, tuple(i in axes for i in range(self.ndim))))

    def shrink(self, arg: Sequence[tuple[sint, sint] | None]) -> Self:
        """The window [start, end) per dim (None keeps the dim)."""
        if len(arg) != self.ndim:
            raise RuntimeError(f"shrink: {len(arg)} windows for a tensor with {self.ndim} dims")
        bounds = [(0, s) if a is None else a for a, s in zip(arg, self.shape, strict=True)]
        for (lo, hi), s in zip(bounds, self.shape, strict=True):
            if all(isinstance(v, int) for v in (lo, hi, s)) and not 0 <= lo <= hi <= s:
                raise RuntimeError(f"shrink: window {tuple(bounds)} doesn't fit in {self.shape}")
        return self._wrap(self.uop._mop(Ops.SHRINK, tuple((lo, hi) for lo, hi in bounds)))

    def _pad_zero(self, pairs: Sequence[tuple[sint, sint]]) -> Self:
        if 0 in self.shape:  # nothing to pad but zeros: a constant (no empty buffer to read)
            shape = tuple(s + b + a for s, (b, a) in zip(self.shape, pairs, strict=True))
            from fusegrad.uop.uop import UOp

            return self._wrap(UOp.const(0, self.dtype, self.device, shape))
        return self._wrap(self.uop._mop(Ops.PAD, tuple((b, a) for b, a in pairs)))

    def pad(self, padding: PadArg, mode: str = "constant", value: float = 0.0) -> Self:
        """Pad each dim; negative amounts crop. Modes: constant, reflect, replicate, circular."""
        pairs = _normalize_padding(self.ndim, padding)
        if mode not in ("constant", "reflect", "replicate", "circular"):
            raise NotImplementedError(f"pad: unsupported mode {mode!r}")
        for axis, ((b, a), s) in enumerate(zip(pairs, self.shape, strict=True)):
            if isinstance(s, int) and -min(b, 0) - min(a, 0) > s:
                raise ValueError(
                    f"pad: padding ({b}, {a}) crops more than the size {s} of dim {axis}"
                )
        # (a symbolic size plus 0 would be a new node: n + 0 is not n)
        crop = [
            (-min(b, 0), s if min(a, 0) == 0 else s + min(a, 0))
            for (b, a), s in zip(pairs, self.shape, strict=True)
        ]
        x = (
            self.shrink(crop)
            if any(b != 0 or e is not s for (b, e), s in zip(crop, self.shape, strict=True))
            else self
        )
        grow = [(max(b, 0), max(a, 0)) for b, a in pairs]
        if mode == "constant":
            return x._pad_constant(grow, value)
        for axis, (before, after) in enumerate(grow):
            if before or after:
                x = x._pad_axis(axis, int(before), int(after), mode)
        return x

    def _pad_constant(self, grow: Sequence[tuple[sint, sint]], value: float) -> Self:
        if all(b == 0 and a == 0 for b, a in grow):
            return self
        out = self._pad_zero(grow)
        if value == 0:
            return out
        mask = self._const(True, dtypes.bool)._pad_zero(grow)
        return mask.where(out, self._const(value, out.dtype, out.shape))

    def _pad_axis(self, axis: int, before: int, after: int, mode: str) -> Self:
        n = self.shape[axis]
        limit = n - 1 if mode == "reflect" else n
        if mode != "replicate" and (before > limit or after > limit):
            raise RuntimeError(
                f"pad: {mode} padding ({before}, {after}) must be less than the input size {n} in dim {axis}"
            )
        if n == 0:
            raise RuntimeError(f"pad: {mode} padding of an empty dim {axis}")
        parts = [self._pad_piece(axis, before, mode, left=True), self,
                 self._pad_piece(axis, after, mode, left=False)]  # fmt: skip
        return parts[0].cat(*parts[1:], dim=axis)

    def _pad_piece(self, axis: int, amount: int, mode: str, left: bool) -> Self:
        n = int(self.shape[axis])
        if mode == "reflect":
            lo, hi = (1, amount + 1) if left else (n - 1 - amount, n - 1)
            return self._window(axis, lo, hi).flip(axis)
        if mode == "replicate":
            edge = self._window(axis, 0, 1) if left else self._window(axis, n - 1, n)
            shape = list(self.shape)
            shape[axis] = amount
            return edge.expand(shape)
        return self._window(axis, n - amount, n) if left else self._window(axis, 0, amount)

    def _window(self, axis: int, lo: sint, hi: sint) -> Self:
        """Elements ``lo..hi-1`` along ``axis`` (all of the other axes)."""
        return self.shrink([(lo, hi) if i == axis else None for i in range(self.ndim)])

    def squeeze(self, dim: int | Sequence[int] | None = None) -> Self:
        """Drop dims of size 1 (all, or those given that have size 1)."""
        axes = set(range(self.ndim)) if dim is None else set(self._axes(dim))
        keep = [
            s for i, s in enumerate(self.shape) if not (i in axes and isinstance(s, int) and s == 1)
        ]
        return self.reshape(tuple(keep))

    def unsqueeze(self, dim: int) -> Self:
        """A new size-1 dim at ``dim``."""
        axis = self._axis(dim, self.ndim + 1)
        shape = list(self.shape)
        shape.insert(axis, 1)
        return self.reshape(tuple(shape))

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Self:
        """Dims start_dim..end_dim merged into one."""
        if self.ndim == 0:
            return self.reshape((1,))
        start, end = self._axis(start_dim), self._axis(end_dim)
        if start > end:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        shape = self.shape
        return self.reshape((*shape[:start], prod(shape[start : end + 1]), *shape[end + 1 :]))

    def unflatten(self, dim: int, sizes: Sequence[int]) -> Self:
        """Dim ``dim`` split into ``sizes`` (one may be -1)."""
        axis = self._axis(dim)
        inner = _infer_shape((self.shape[axis],), tuple(sizes))
        return self.reshape((*self.shape[:axis], *inner, *self.shape[axis + 1 :]))

    def pad_to(self, shape: Any, *args: Any, value: float = 0) -> Self:
        """Pad with ``value`` at the end of each dim up to ``shape`` (None keeps)."""
        new = argfix(shape, *args)
        return self.pad(
            [(0, 0) if n is None else (0, n - s) for s, n in zip(self.shape, new, strict=True)],
            value=value,
        )

    def shrink_to(self, shape: Any, *args: Any) -> Self:
        """Crop at the end of each dim down to ``shape`` (None keeps)."""
        new = argfix(shape, *args)
        return self.shrink([None if n is None else (0, n) for n in new])

    def cat(self, *args: Self, dim: int = 0) -> Self:
        """Concatenate along ``dim``."""
        tensors = [self, *args]
        for i, t in enumerate(tensors):
            if t.ndim == 0:
                raise RuntimeError(
                    f"zero-dimensional tensor (at position {i}) cannot be concatenated"
                )
        axis = self._axis(dim)
        for i, t in enumerate(tensors[1:], 1):
            if t.ndim != self.ndim or any(
                a != b
                for j, (a, b) in enumerate(zip(t.shape, self.shape, strict=True))
                if j != axis
            ):
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {axis}. Expected {_fmt(self.shape)} "
                    f"but got {_fmt(t.shape)} for tensor number {i} in the list."
                )
        dt = least_upper_dtype(*(t.dtype for t in tensors))
        if len(tensors) > 1:  # empty pieces add nothing (and -0.0 survives a sum only alone)
            kept = [
                t for t in tensors if not (isinstance(t.shape[axis], int) and t.shape[axis] == 0)
            ]
            tensors = kept or tensors[:1]
        total = sum(t.shape[axis] for t in tensors)
        offset: sint = 0
        out: Self | None = None
        for t in tensors:
            pads = [
                (offset, total - offset - t.shape[axis]) if i == axis else (0, 0)
                for i in range(self.ndim)
            ]
            piece = t.cast(dt)._pad_zero(pads)
            offset = offset + t.shape[axis]
            if out is None:
                out = piece
                continue
            # select, not add: exact for -0.0 (and any value) from either side
            region = piece._const(True, dtypes.bool, t.shape)._pad_zero(pads)
            out = region.where(piece, out)
        assert out is not None
        return out

    def stack(self, *args: Self, dim: int = 0) -> Self:
        """Join along a new dim ``dim``."""
        tensors = [self, *args]
        for i, t in enumerate(tensors[1:], 1):
            if t.shape != self.shape:
                raise RuntimeError(
                    f"stack expects each tensor to be equal size, but got {_fmt(self.shape)} at "
                    f"entry 0 and {_fmt(t.shape)} at entry {i}"
                )
        axis = self._axis(dim, self.ndim + 1)
        parts = [t.unsqueeze(axis) for t in tensors]
        return parts[0].cat(*parts[1:], dim=axis)

    def split(self, sizes: int | Sequence[int], dim: int = 0) -> tuple[Self, ...]:
        """Pieces of ``sizes`` along ``dim`` (an int: pieces of that size, the last smaller)."""
        axis = self._axis(dim)
        n = int(self.shape[axis])
        if isinstance(sizes, int):
            if sizes <= 0:
                raise RuntimeError(
                    f"split expects split_size be positive, but got split_size={sizes}"
                )
            sizes = [min(sizes, n - i) for i in range(0, max(n, 1), sizes)] if n else [0]
        if sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                f"dimension {axis}), but got split_sizes={list(sizes)}"
            )
        out, start = [], 0
        for s in sizes:
            out.append(
                self.shrink([(start, start + s) if i == axis else None for i in range(self.ndim)])
            )
            start += s
        return tuple(out)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Self, ...]:
        """At most ``chunks`` pieces of ceil(n/chunks) along ``dim``."""
        if chunks <= 0:
            raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
        n = int(self.shape[self._axis(dim)])
        size = max(1, -(-n // chunks))
        return self.split(size, dim)

    def repeat(self, repeats: Any, *args: Any) -> Self:
        """Tile: dim i repeated repeats[i] times (PyTorch's repeat)."""
        reps = argfix(repeats, *args)
        if any(isinstance(r, int) and r < 0 for r in reps):
            raise ValueError(f"repeat: repeats must be >= 0, got {tuple(reps)}")
        if len(reps) < self.ndim:
            raise RuntimeError(
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
            )
        base = self.reshape((1,) * (len(reps) - self.ndim) + self.shape)
        inter = [d for s in base.shape for d in (1, s)]
        big = [d for r, s in zip(reps, base.shape, strict=True) for d in (r, s)]
        return (
            base.reshape(inter)
            .expand(big)
            .reshape([r * s for r, s in zip(reps, base.shape, strict=True)])
        )

    def repeat_interleave(self, repeats: int, dim: int | None = None) -> Self:
        """Each element repeated ``repeats`` times along ``dim`` (flattened when None)."""
        x = self.flatten() if dim is None else self
        axis = 0 if dim is None else x._axis(dim)
        shape = list(x.shape)
        expanded = x.unsqueeze(axis + 1).expand((*shape[: axis + 1], repeats, *shape[axis + 1 :]))
        return expanded.flatten(axis, axis + 1)

    def roll(self, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None) -> Self:
        """Elements shifted cyclically along ``dims`` (flattened when None)."""
        if dims is None:
            return self.flatten().roll(shifts, 0).reshape(self.shape)
        sh = (shifts,) if isinstance(shifts, int) else tuple(shifts)
        ds = (dims,) if isinstance(dims, int) else tuple(dims)
        if len(sh) != len(ds):
            raise RuntimeError(f"roll: shifts {sh} and dims {ds} differ in length")
        x = self
        for s, d in zip(sh, ds, strict=True):
            axis = x._axis(d)
            n = int(x.shape[axis])
            k = s % n if n else 0
            if k:
                a, b = x.split([n - k, k], axis)
                x = b.cat(a, dim=axis)
        return x

    def _strided(self, axis: int, start: sint, count: sint, step: int) -> Self:
        """Elements start, start+step, ... (``count`` of them) along ``axis``; step >= 1."""
        if isinstance(count, int) and count == 0:
            return self.shrink([(0, 0) if i == axis else None for i in range(self.ndim)])
        if step == 1:
            end = count if isinstance(start, int) and start == 0 else start + count
            return self.shrink([(start, end) if i == axis else None for i in range(self.ndim)])
        n = int(self.shape[axis])
        end = min(n, start + count * step)
        x = self.shrink([(start, end) if i == axis else None for i in range(self.ndim)])
        x = x.pad(
            [(0, count * step - (end - start)) if i == axis else None for i in range(self.ndim)]
        )
        shape = list(x.shape)
        x = x.reshape((*shape[:axis], count, step, *shape[axis + 1 :]))
        x = x.shrink([(0, 1) if i == axis + 1 else None for i in range(x.ndim)])
        return x.reshape((*shape[:axis], count, *shape[axis + 1 :]))

    def unfold(self, dim: int, size: int, step: int) -> Self:
        """Sliding windows of ``size`` every ``step`` along ``dim`` (a new last dim)."""
        axis = self._axis(dim)
        n = int(self.shape[axis])
        if size > n or size < 0 or step <= 0:
            raise RuntimeError(
                f"unfold: size {size} / step {step} invalid for dim {axis} of size {n}"
            )
        count = (n - size) // step + 1
        windows = [self._strided(axis, k, count, step) for k in range(size)]
        if not windows:
            shape = list(self.shape)
            shape[axis] = count
            return self._const(0, shape=(*shape, 0))
        return windows[0].stack(*windows[1:], dim=-1)

    def meshgrid(self, *args: Self, indexing: str = "ij") -> tuple[Self, ...]:
        """Coordinate grids of 1-d tensors ("ij" or "xy" indexing)."""
        if indexing not in ("ij", "xy"):
            raise RuntimeError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
        tensors = [self, *args]
        if indexing == "xy" and len(tensors) >= 2:
            tensors[0], tensors[1] = tensors[1], tensors[0]
        shape = tuple(t.numel() for t in tensors)
        grids = []
        for i, t in enumerate(tensors):
            view = [1] * len(tensors)
            view[i] = -1
            grids.append(t.reshape(view).expand(shape))
        if indexing == "xy" and len(grids) >= 2:
            grids[0], grids[1] = grids[1], grids[0]
        return tuple(grids)

    def diagonal(self, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Self:
        """The diagonal of dims dim1, dim2 (moved to the last dim)."""
        a, b = self._axis(dim1), self._axis(dim2)
        rest = [i for i in range(self.ndim) if i not in (a, b)]
        x = self.permute((*rest, a, b))
        n, m = int(x.shape[-2]), int(x.shape[-1])
        lo_r, lo_c = (0, offset) if offset >= 0 else (-offset, 0)
        k = max(0, min(n - lo_r, m - lo_c))
        x = x.shrink(
            [
                *([None] * len(rest)),
                (min(lo_r, n), min(lo_r, n) + k),
                (min(lo_c, m), min(lo_c, m) + k),
            ]
        )
        flat = x.flatten(-2) if k else x.reshape((*x.shape[:-2], 0))
        return flat._strided(flat.ndim - 1, 0, k, k + 1) if k else flat

    def diag(self, diagonal: int = 0) -> Self:
        """1-d: a square matrix with it on the diagonal; 2-d: its diagonal."""
        if self.ndim == 2:
            return self.diagonal(diagonal)
        if self.ndim != 1:
            raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.ndim}D")
        n = int(self.shape[0]) + abs(diagonal)
        vals = (
            self.pad([(diagonal, 0) if diagonal >= 0 else (0, -diagonal)])
            .reshape(1, n)
            .expand(n, n)
        )
        rows, cols = self._grid(n, n)
        diff = cols._apply(Ops.SUB, rows)
        return diff.eq(diff._const(diagonal)).where(vals, self._const(0, shape=(n, n)))

    def _grid(self, n: sint, m: sint) -> tuple[Self, Self]:
        """The row and the column index of every element of an (n, m) matrix (default int)."""
        index = [
            self._wrap_const(index_uop(int(k), _index_dtype(k), self.device)).cast(
                dtypes.default_int
            )
            for k in (n, m)
        ]
        return index[0].reshape(n, 1).expand(n, m), index[1].reshape(1, m).expand(n, m)

    def _tri(self, diagonal: int, upper: bool) -> Self:
        if self.ndim < 2:
            raise RuntimeError(
                f"{'triu' if upper else 'tril'}: input tensor must have at least 2 dimensions"
            )
        n, m = self.shape[-2], self.shape[-1]
        rows, cols = self._grid(n, m)
        shifted = rows._apply(Ops.ADD, rows._const(diagonal))
        # zeros where the element is outside: col < row + diagonal (upper), col > it (lower)
        pair = (cols, shifted) if upper else (shifted, cols)
        outside = pair[0]._apply(Ops.CMPLT, pair[1], dtype=dtypes.bool)
        if self.ndim > 2:
            outside = outside.reshape((1,) * (self.ndim - 2) + (n, m)).expand(self.shape)
        return outside.where(self._const(0), self)

    def triu(self, diagonal: int = 0) -> Self:
        """Upper triangle (elements with col - row >= diagonal), zeros elsewhere."""
        return self._tri(diagonal, True)

    def tril(self, diagonal: int = 0) -> Self:
        """Lower triangle (elements with col - row <= diagonal), zeros elsewhere."""
        return self._tri(diagonal, False)

    def rearrange(self, formula: str, **sizes: int) -> Self:
        """einops-style rearrange: ``"b c (h w) -> b (c h) w"``, with sizes by name."""
        lhs, _, rhs = formula.partition("->")
        if not _:
            raise ValueError(f"rearrange: formula {formula!r} has no '->'")
        left, right = _parse_groups(lhs, self.ndim), _parse_groups(rhs, None)
        left = _expand_ellipsis(left, self.ndim)
        if len(left) != self.ndim:
            raise ValueError(
                f"rearrange: {lhs.strip()!r} names {len(left)} dims, the tensor has {self.ndim}"
            )
        names, split_shape = _split_sizes(left, self.shape, sizes)
        x = self.reshape(split_shape)
        right = [[n for n in g if n != "1"] for g in _expand_ellipsis(right, None, names)]
        flat_right = [n for g in right for n in g]
        if sorted(flat_right) != sorted(n for n in names if n != "1"):
            raise ValueError(f"rearrange: {rhs.strip()!r} doesn't use the names of {lhs.strip()!r}")
        keep = [i for i, n in enumerate(names) if n != "1"]
        x = x.reshape([split_shape[i] for i in keep])
        kept = [names[i] for i in keep]
        x = x.permute([kept.index(n) for n in flat_right]) if flat_right else x
        dims = dict(zip(kept, [split_shape[i] for i in keep], strict=True))
        return x.reshape([prod(dims[n] for n in g) for g in right])


def _parse_groups(side: str, ndim: int | None) -> list[list[str]]:
    tokens = re.findall(r"\(|\)|\.\.\.|[A-Za-z_][A-Za-z0-9_]*|\d+", side)
    groups: list[list[str]] = []
    current: list[str] | None = None
    for tok in tokens:
        if tok == "(":
            current = []
        elif tok == ")":
            if current is None:
                raise ValueError(f"rearrange: unbalanced ')' in {side!r}")
            groups.append(current)
            current = None
        elif current is not None:
            current.append(tok)
        else:
            groups.append([tok])
    return groups


def _expand_ellipsis(
    groups: list[list[str]], ndim: int | None, names: list[str] | None = None
) -> list[list[str]]:
    """``...`` replaced by one name per dim it covers (a group of its own, or inside a group)."""
    if not any("..." in g for g in groups):
        return groups
    if ndim is not None:
        count = ndim - sum(1 for g in groups if g != ["..."])
    else:
        count = sum(1 for n in names or [] if n.startswith("..."))
    ell = [f"...{k}" for k in range(count)]
    out: list[list[str]] = []
    for g in groups:
        if g == ["..."]:
            out.extend([n] for n in ell)
        else:
            out.append([m for n in g for m in (ell if n == "..." else [n])])
    return out


def _split_sizes(
    groups: list[list[str]], shape: tuple[sint, ...], sizes: dict[str, int]
) -> tuple[list[str], list[sint]]:
    names: list[str] = []
    out: list[sint] = []
    for group, total in zip(groups, shape, strict=True):
        known = {n: (1 if n == "1" else sizes.get(n)) for n in group}
        unknown = [n for n, v in known.items() if v is None]
        if len(unknown) > 1:
            raise ValueError(
                f"rearrange: can't infer sizes of {unknown} in a group of size {total}"
            )
        rest = prod(v for v in known.values() if v is not None)
        for n in group:
            names.append(n)
            out.append(known[n] if known[n] is not None else total // rest)  # type: ignore[arg-type]
        if prod(out[-len(group) :]) != total and group:
            raise ValueError(f"rearrange: sizes {sizes} don't divide a dim of size {total}")
    return names, out
