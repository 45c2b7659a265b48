# mypy: disable-error-code="misc"
# (mixins annotate ``self: Tensor``: the class they are mixed into, which mypy calls "misc")
"""Tensor methods tinygrad has beyond the op groups: ``keccak`` (SHA-3 on the device),
``newton_schulz``, the symbolic-shape bounds ``max_shape`` / ``max_numel``, Tensor-level
function bodies (``as_param``, ``call``, ``callify``, ``is_param_``; see
``fusegrad.function``), and DISK tensors as tinygrad has them.

DISK tensors (``Tensor.empty(n, dtype=dtypes.uint8, device="DISK:/path")``, ``safe_load``'s
tensors) are byte ranges of a file. Slicing a contiguous range, reshaping and ``bitcast``
stay views of the file; ``to(device)`` reads exactly that range; ``assign`` into such a view
writes the bytes into the file (at once); ``to("DISK:/path")`` writes a tensor's bytes into a
file (created or extended) and returns the file's DISK tensor. Anything that would compute
on a DISK tensor raises RuntimeError: a file runs no kernels.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from fusegrad.tensor.core import TensorCore
from fusegrad.uop import DType, Ops, UOp, dtypes, prod

if TYPE_CHECKING:
    from fusegrad.tensor.multi import MultiTensor
    from fusegrad.tensor.tensor import Tensor

# Keccak-f[1600]: round constants, and for each lane (x + 5 y) its rotation and the lane the
# rho-pi step moves it to
_RC = (
    0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000,
    0x000000000000808B, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
    0x000000000000008A, 0x0000000000000088, 0x0000000080008009, 0x000000008000000A,
    0x000000008000808B, 0x800000000000008B, 0x8000000000008089, 0x8000000000008003,
    0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
    0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
)  # fmt: skip
_ROT = (
    0, 1, 62, 28, 27,
    36, 44, 6, 55, 20,
    3, 10, 43, 25, 39,
    41, 45, 15, 21, 8,
    18, 2, 61, 56, 14,
)  # fmt: skip


def _rho_pi_sources() -> list[int]:
    """For each destination lane, the lane rho-pi takes it from: B[y, 2x + 3y] = A[x, y]."""
    src = [0] * 25
    for x in range(5):
        for y in range(5):
            src[y + 5 * ((2 * x + 3 * y) % 5)] = x + 5 * y
    return src


_PI_SRC = _rho_pi_sources()
# name -> (domain-separation suffix byte, rate in bytes, output bytes)
_KECCAK_CONFIGS = {
    "sha3_224": (0x06, 144, 28),
    "sha3_256": (0x06, 136, 32),
    "sha3_384": (0x06, 104, 48),
    "sha3_512": (0x06, 72, 64),
    "keccak_256": (0x01, 136, 32),
    "keccak_512": (0x01, 72, 64),
}


def _keccak_config(cfg: str | tuple[int, int]) -> tuple[int, int, int]:
    if isinstance(cfg, str):
        if cfg not in _KECCAK_CONFIGS:
            raise ValueError(f"keccak: unknown cfg {cfg!r}; known: {sorted(_KECCAK_CONFIGS)}")
        return _KECCAK_CONFIGS[cfg]
    suffix, rate = cfg
    if not (0 < rate < 200 and rate % 8 == 0) or not 0 < suffix < 256:
        raise ValueError(f"keccak: cfg (suffix, rate) needs 0 < rate < 200, rate % 8 == 0: {cfg}")
    return suffix, rate, (200 - rate) // 2


def _rotl(a: Tensor, r: Tensor, r_inv: Tensor) -> Tensor:
    """Rotate each uint64 lane left by ``r`` (``r_inv`` = (64 - r) % 64; a 0 rotation stays
    a | a)."""
    return (a << r) | (a >> r_inv)


def _roll5(t: Tensor, k: int) -> Tensor:
    """``t[..., (i - k) % 5]`` along the last axis of size 5."""
    k %= 5
    return t if k == 0 else t[..., 5 - k :].cat(t[..., : 5 - k], dim=-1)


def _keccak_round(state: Tensor, rc: Tensor, consts: tuple[Tensor, ...]) -> Tensor:
    """One Keccak-f[1600] round over ``state`` (batch, 25) uint64."""
    rot, rot_inv, one, sixty_three = consts
    a = state.reshape(-1, 5, 5)  # [y][x]
    c = a[:, 0] ^ a[:, 1] ^ a[:, 2] ^ a[:, 3] ^ a[:, 4]
    d = _roll5(c, 1) ^ _rotl(_roll5(c, -1), one, sixty_three)
    a = (a ^ d.unsqueeze(1)).reshape(-1, 25)
    b = _rotl(a, rot, rot_inv)[:, _PI_SRC].reshape(-1, 5, 5)
    a = b ^ (~_roll5(b, -1) & _roll5(b, -2))
    return a.reshape(-1, 25) ^ rc


def _disk_view(u: UOp) -> tuple[str, int, DType, tuple[int, ...]] | None:
    """(file path, byte offset, dtype, shape) of a view of a DISK buffer: reshapes, bitcasts
    and shrinks that keep the bytes contiguous. None when ``u`` is not on a DISK buffer;
    RuntimeError when it is but is not such a view."""
    chain: list[UOp] = []
    while u.op in (Ops.RESHAPE, Ops.SHRINK, Ops.BITCAST):
        chain.append(u)
        u = u.src[0]
    if u.op is not Ops.BUFFER or not str(u.src[1].arg).startswith("DISK:"):
        return None
    offset, dtype = 0, u.dtype
    shape: tuple[int, ...] = (int(u.arg),)
    for v in reversed(chain):
        if v.op is Ops.RESHAPE:
            shape = tuple(int(s) for s in v.arg)
        elif v.op is Ops.BITCAST:
            shape = (
                (*shape[:-1], shape[-1] * dtype.itemsize // v.dtype.itemsize) if shape else shape
            )
            dtype = v.dtype
        else:
            offset += _contiguous_shrink(shape, v.arg) * dtype.itemsize
            shape = tuple(int(e) - int(b) for b, e in v.arg)
    return str(u.src[1].arg)[5:], offset, dtype, shape


def _contiguous_shrink(shape: tuple[int, ...], arg: tuple[tuple[Any, Any], ...]) -> int:
    """The element offset of a shrink that keeps a row-major range contiguous."""
    cut = [i for i, ((b, e), n) in enumerate(zip(arg, shape, strict=True)) if (b, e) != (0, n)]
    if cut and any(e - b != 1 for b, e in arg[: cut[0]]):
        raise RuntimeError(f"DISK tensors: the slice {arg} of shape {shape} is not contiguous")
    if cut and any(
        (b, e) != (0, n) for (b, e), n in zip(arg[cut[0] + 1 :], shape[cut[0] + 1 :], strict=True)
    ):
        raise RuntimeError(f"DISK tensors: the slice {arg} of shape {shape} is not contiguous")
    strides = [int(prod(shape[i + 1 :])) for i in range(len(shape))]
    return sum(int(b) * st for (b, _), st in zip(arg, strides, strict=True))


def _host_window(u: UOp) -> Any:
    """The host array mapping the DISK buffer under view ``u`` (file readers make these), or
    None for a DISK buffer that is the whole file from byte 0."""
    from fusegrad.engine import HOST

    while u.op in (Ops.RESHAPE, Ops.SHRINK, Ops.BITCAST):
        u = u.src[0]
    return HOST.get(u) if u.op is Ops.BUFFER else None


def _check_file_extent(path: str, window: Any, offset: int, nbytes: int) -> None:
    """``OSError`` when the bytes to read are past the file's end *now*: a file truncated
    after it was mapped would kill the interpreter with SIGBUS when the mapping is read.
    ``offset`` is within ``window`` (a host array over a file mapping) when there is one."""
    start = offset
    mapping = window.base.obj if isinstance(getattr(window, "base", None), memoryview) else None
    if isinstance(mapping, mmap.mmap):
        have = mapping.size()  # the mapped file's size now (fstat of the mapping's own fd)
        start += window.ctypes.data - np.frombuffer(mapping, np.uint8).ctypes.data
    else:
        have = os.path.getsize(path)
    if start + nbytes > have:
        raise OSError(
            f"DISK:{path}: bytes [{start}, {start + nbytes}) are past the end of the file"
            f" ({have} bytes; truncated after it was opened?)"
        )


def check_disk_read(u: UOp, device: str) -> None:
    """``OSError`` when reading tensor UOp ``u`` on DISK ``device`` would touch bytes past its
    file's end (see ``_check_file_extent``); nothing for other devices."""
    if not device.startswith("DISK:"):
        return
    try:
        view = _disk_view(u)
    except RuntimeError:  # not a plain window of the file: whatever reads it says so
        return
    if view is None:
        return
    path, offset, dtype, shape = view
    nbytes = int(prod(shape)) * dtype.itemsize
    _check_file_extent(path, _host_window(u), offset, nbytes)


def _disk_or_raise(t: Tensor) -> tuple[str, int, DType, tuple[int, ...]]:
    view = _disk_view(t.uop)
    if view is None:
        raise RuntimeError(
            f"DISK tensors: a {t.uop.op!r} of a file can't be computed (a file runs no kernels); "
            "slice, reshape or bitcast it, then .to() another device"
        )
    return view


class ExtraMixin:
    """keccak, newton_schulz, max_shape/max_numel (mixed into Tensor)."""

    @overload
    def to(self: Tensor, device: str | None) -> Tensor: ...
    @overload
    def to(self: Tensor, device: tuple[str, ...] | list[str]) -> MultiTensor: ...
    def to(self: Tensor, device: Any) -> Any:
        """This tensor on ``device`` (see ``TensorCore.to``); DISK tensors as in tinygrad."""
        target = device if isinstance(device, str) else None
        if target is not None and target.upper().startswith("DISK:"):
            return self._to_disk(target)
        if not self.device.startswith("DISK:") or isinstance(device, (tuple, list)):
            return super().to(device)
        path, offset, dtype, shape = _disk_or_raise(self)
        nbytes = int(prod(shape)) * dtype.itemsize
        window = _host_window(self.uop)
        _check_file_extent(path, window, offset, nbytes)
        if window is not None:  # a file window already mapped (safe_load, torch_load...)
            raw = window.view(np.uint8)[offset : offset + nbytes].copy()
        else:
            raw = np.fromfile(path, dtype=np.uint8, count=nbytes, offset=offset)
        if raw.size != nbytes:
            raise ValueError(f"DISK:{path}: {nbytes} bytes at {offset} run past the file's end")
        out = type(self)(raw, device=device)
        out = out.bitcast(dtype) if dtype is not dtypes.uint8 else out
        return out.reshape(shape)

    def _to_disk(self: Tensor, device: str) -> Tensor:
        from fusegrad.tensor.convert import canonical_device

        dev = canonical_device(device)
        data = self if self.dtype is dtypes.uint8 else self.contiguous().bitcast(dtypes.uint8)
        raw = data.flatten().to("CPU").numpy() if data.ndim else data.reshape(1).to("CPU").numpy()
        path = dev[5:]
        with open(path, "r+b" if os.path.exists(path) else "wb") as f:
            f.write(raw.tobytes())
        disk = type(self).empty(raw.size, dtype=dtypes.uint8, device=dev)
        view = disk.bitcast(self.dtype) if self.dtype is not dtypes.uint8 else disk
        return view.reshape(self.shape)

    def assign(self: Tensor, x: Any) -> Tensor:
        """Write ``x`` into this tensor (see ``TensorCore.assign``); into a DISK tensor the
        bytes are written into the file at once."""
        if not self.device.startswith("DISK:"):
            return super().assign(x)
        path, offset, dtype, _ = _disk_or_raise(self)
        if _host_window(self.uop) is not None:
            raise RuntimeError(
                f"assign: this tensor is a read-only window of DISK:{path} (a loaded model "
                "file); assign into a DISK tensor made with Tensor.empty(..., device='DISK:...')"
            )
        value = self._operand(x)
        value = value._broadcast_to(self.shape) if value.shape != self.shape else value
        value = value.to("CPU") if value.device.startswith("DISK") else value
        value = value.cast(dtype).contiguous()
        raw = (value if dtype is dtypes.uint8 else value.bitcast(dtypes.uint8)).flatten()
        with open(path, "r+b") as f:
            f.seek(offset)
            f.write(raw.to("CPU").numpy().tobytes())
        return self

    @classmethod
    def from_url(cls: type[Tensor], url: str, gunzip: bool = False, **kwargs: Any) -> Tensor:
        """The bytes at ``url`` (downloaded once into the cache, ``gunzip`` to inflate) as a
        1-d uint8 tensor on the file's DISK device, or on ``device=`` when given."""
        from fusegrad.helpers import fetch

        path = fetch(url, gunzip=gunzip)
        device = kwargs.pop("device", None)
        if kwargs:
            raise TypeError(f"from_url: unexpected arguments {sorted(kwargs)}")
        size = os.path.getsize(path)
        disk = cls.empty(size, dtype=dtypes.uint8, device=f"DISK:{os.path.abspath(path)}")
        return disk if device is None else disk.to(device)

    def hash(self: Tensor) -> Tensor:
        """The SHA3-256 of this tensor's bytes (row-major), computed on its device: a
        32-byte uint8 tensor (what ``nn.state.fs_store`` files the bytes under)."""
        data = self if self.dtype is dtypes.uint8 else self.contiguous().bitcast(dtypes.uint8)
        return data.flatten().keccak("sha3_256")

    def shard_like(self: Tensor, y: Any) -> Any:
        """This tensor placed like ``y``: split over the same devices along the same axis
        when ``y`` is a MultiTensor, else on ``y``'s device."""
        from fusegrad.tensor.multi import MultiTensor

        if isinstance(y, MultiTensor):
            return self.shard(y.devices, y.axis)
        return self.to(y.device)

    def image_dot(self: Tensor, w: Tensor, dtype: Any = None) -> Tensor:
        """``dot`` (tinygrad's image-layout variant; fusegrad has no image dtypes, so it is
        the ordinary matmul with the same result)."""
        return self.dot(w, dtype=dtype)

    def image_conv2d(
        self: Tensor,
        weight: Tensor,
        bias: Tensor | None = None,
        groups: int = 1,
        stride: Any = 1,
        dilation: Any = 1,
        padding: Any = 0,
        dtype: Any = None,
    ) -> Tensor:
        """``conv2d`` (tinygrad's image-layout variant; fusegrad has no image dtypes, so it
        is the ordinary convolution with the same result)."""
        return self.conv2d(weight, bias, groups, stride, dilation, padding, dtype=dtype)

    def keccak(self: Tensor, cfg: str | tuple[int, int] = "sha3_256") -> Tensor:
        """The Keccak/SHA-3 hash of the bytes of each row, computed on the tensor's device:
        a uint8 tensor of shape (rows..., digest bytes). ``cfg`` is ``"sha3_256"`` (default),
        ``"sha3_224"``, ``"sha3_384"``, ``"sha3_512"``, ``"keccak_256"``, ``"keccak_512"``, or
        ``(suffix, rate)``: the domain-separation byte and the rate in bytes.
        """
        suffix, rate, out_bytes = _keccak_config(cfg)
        data = self if self.dtype is dtypes.uint8 else self.contiguous().bitcast(dtypes.uint8)
        if data.ndim == 0:
            data = data.reshape(1)
        batch = tuple(int(s) for s in data.shape[:-1])
        n = int(data.shape[-1])
        rows = int(prod(batch))
        data = data.reshape(rows, n)
        blocks = n // rate + 1
        pad = np.zeros(blocks * rate - n, np.uint8)
        pad[0] ^= suffix
        pad[-1] ^= 0x80
        tail = type(self)(pad, device=self.device).reshape(1, -1).expand(rows, -1)
        words = data.cat(tail, dim=1).contiguous().bitcast(dtypes.uint64).realize()
        consts = self._keccak_consts()
        u64 = {"dtype": dtypes.uint64, "device": self.device}
        zeros = type(self).zeros(rows, 25 - rate // 8, **u64)
        state = type(self).zeros(rows, 25, **u64)
        for blk in range(blocks):
            lanes = words[:, blk * rate // 8 : (blk + 1) * rate // 8].cat(zeros, dim=1)
            state = (state ^ lanes).contiguous()
            for rc in _RC:
                rc_lanes = np.zeros(25, np.uint64)
                rc_lanes[0] = rc
                rc_t = type(self)(rc_lanes, device=self.device)
                state = _keccak_round(state, rc_t, consts).contiguous().realize()
        digest = state.bitcast(dtypes.uint8)[:, :out_bytes]
        return digest.reshape(*batch, out_bytes)

    def _keccak_consts(self: Tensor) -> tuple[Tensor, ...]:
        rot = np.array(_ROT, np.uint64)
        rot_inv = (64 - rot) % 64
        one, sixty_three = np.full(5, 1, np.uint64), np.full(5, 63, np.uint64)
        make = type(self)
        return tuple(make(v, device=self.device) for v in (rot, rot_inv, one, sixty_three))

    def newton_schulz(
        self: Tensor, steps: int, params: tuple[float, ...], eps: float = 1e-7
    ) -> Tensor:
        """Approximately orthogonalize this matrix (Muon's step): X = G / (||G||_F + eps),
        then ``steps`` times X = sum_i params[i] (X X^T)^i X (transposed for a tall matrix).
        """
        from fusegrad.nn.optim import newton_schulz

        return newton_schulz(self, steps, tuple(params), eps)

    @property
    def max_shape(self: Tensor) -> tuple[int, ...]:
        """The shape with every symbolic dimension at its largest value."""
        return tuple(int(s.vmax) if isinstance(s, UOp) else int(s) for s in self.shape)

    def max_numel(self: Tensor) -> int:
        """The number of elements at ``max_shape``."""
        return int(prod(self.max_shape))

    # -- function bodies ---------------------------------------------------------------------

    def as_param(self: Tensor, slot: int) -> Tensor:
        """Parameter ``slot`` of a function body: a placeholder with this tensor's shape,
        dtype and device (its value is not read). A graph built on placeholders is a body
        that ``call`` applies to tensors:

        >>> from fusegrad import Tensor
        >>> a, b = Tensor([1.0, 2.0]), Tensor([3.0, 4.0])
        >>> body = a.as_param(0) * 2 + b.as_param(1)
        >>> a.call(b, fxn=body).tolist()
        [5.0, 8.0]
        """
        from fusegrad.function import param

        return type(self)(param(slot, self.dtype, tuple(self.shape), self.device))

    def is_param_(self: Tensor, is_param: bool = True) -> Tensor:
        """Mark this tensor as a parameter (in place): a ``function`` body may read it without
        taking it as an argument even with ``allow_implicit=False``."""
        self.is_param = bool(is_param)
        return self

    def call(
        self: Tensor,
        *lst: Tensor,
        fxn: Tensor | UOp,
        grad_fxn: Callable[..., Any] | None = None,
    ) -> Tensor:
        """The function body ``fxn`` (a graph over ``as_param`` placeholders) applied to this
        tensor (parameter 0) and ``lst`` (parameters 1...). Lazy and differentiable;
        ``grad_fxn(grad, *tensors)`` replaces the body's gradient: it returns one gradient
        (Tensor or None) per tensor given."""
        from fusegrad.function import apply_body, call_gradient
        from fusegrad.tensor.autograd import with_gradient

        body = fxn.uop if isinstance(fxn, TensorCore) else fxn
        if not isinstance(body, UOp):
            raise TypeError(f"call: fxn must be a Tensor or UOp, got {type(fxn).__name__}")
        args = (self, *lst)
        out = apply_body(body, args)
        if grad_fxn is not None:
            out = with_gradient(out, [a.uop for a in args], call_gradient(grad_fxn, len(args)))
        return self._wrap(out, *lst)

    def callify(self: Tensor, *lst: Tensor) -> Tensor:
        """This tensor as a ``call`` of a function body: the graph with ``lst`` (parameters
        0...) and then every buffer it reads (the next parameters) replaced by placeholders.
        The value is the same; equal graphs over other buffers give the same body."""
        from fusegrad.function import param

        stops = {t.uop for t in lst}
        nodes = self.uop.toposort(lambda u: u not in stops)
        if any(u.op in (Ops.STORE, Ops.AFTER) for u in nodes):
            raise ValueError(
                "callify: the graph writes into a buffer (an assign); realize it first"
            )
        buffers = [u for u in nodes if u.op is Ops.BUFFER and u not in stops]
        make = type(self)
        args = [*lst, *(make(b) for b in buffers)]
        mapping = {a.uop: param(i, a.dtype, tuple(a.shape), a.device) for i, a in enumerate(args)}
        body = self.uop.substitute(mapping)
        if not args:
            return self._wrap(body)
        return args[0].call(*args[1:], fxn=body)
