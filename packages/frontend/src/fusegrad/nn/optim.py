"""Optimizers: SGD, LARS, Muon (one momentum family), Adam, AdamW, LAMB (one moment family),
and OptimizerGroup.

``step()`` realizes the update; ``schedule_step()`` only builds it (the new parameter values
are written into the parameters' buffers in place) and returns the tensors to realize, so a
caller can realize them together with other work. Parameters without a gradient are skipped,
like PyTorch.

``fused=True`` (default: the ``FUSE_OPTIM`` setting) puts every parameter into one flat buffer
(each parameter becomes a view of it) and runs the whole update — parameters and optimizer
state — as one flat elementwise computation: one kernel per flat buffer written (SGD: one,
Adam: parameters, m, v and the two bias-correction scalars), however many parameters.
It needs parameters of one dtype on one device and an elementwise update (SGD, Adam, AdamW;
not LAMB's or LARS's layer-wise trust ratio, nor Muon's per-matrix orthogonalization), and a
parameter without a gradient is stepped with a zero gradient instead of skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fusegrad.engine import buffer_of, strip_assigns
from fusegrad.nn.layers import fresh
from fusegrad.tensor import Tensor
from fusegrad.tensor.convert import canonical_device
from fusegrad.tensor.flags import FUSE_OPTIM
from fusegrad.uop import dtypes, prod


def _dedup(tensors: Sequence[Tensor]) -> list[Tensor]:
    seen: set[int] = set()
    out = []
    for t in tensors:
        if id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


def write(t: Tensor, value: Tensor) -> None:
    """Make ``t`` hold ``value``: in place into its buffer, or into a new one when ``t`` has
    none yet. Tensors that need grad keep their graph in ``assign``; here the update is data,
    so the write happens with ``requires_grad`` lifted for the moment."""
    keep = t.requires_grad
    t.requires_grad = None
    try:
        if buffer_of(strip_assigns(t.uop)) is None:
            t.uop = fresh(value.cast(t.dtype)).uop
        else:
            t.assign(value.detach())
    finally:
        t.requires_grad = keep


class Optimizer:
    """The base: parameters (tensors that need grad), buffers (tensors realized with each
    step, e.g. BatchNorm's running statistics) and the learning rate as a tensor (assign to
    ``opt.lr`` to schedule it)."""

    def __init__(
        self,
        params: list[Tensor],
        lr: float | Tensor,
        device: str | None = None,
        fused: Any = FUSE_OPTIM,
    ) -> None:
        if not isinstance(lr, Tensor) and lr < 0:
            raise ValueError(f"Invalid learning rate: {lr} (must be >= 0)")
        for x in params:
            if x.requires_grad is None:
                x.requires_grad_(True)
        self.params: list[Tensor] = _dedup([x for x in params if x.requires_grad])
        if not self.params:
            raise ValueError("optimizer got an empty parameter list")
        self.device = canonical_device(device) if device is not None else self.params[0].device
        self.buffers: list[Tensor] = _dedup([x for x in params if not x.requires_grad])
        self.fused = bool(fused)
        self._flat: Tensor | None = self._fuse() if self.fused else None
        if isinstance(lr, Tensor):
            self.lr = lr
        else:
            self.lr = Tensor([lr], requires_grad=False, device=self.device, dtype=dtypes.float32)

    def _fuse(self) -> Tensor:
        """Move every parameter into one flat buffer; each parameter becomes a view of it."""
        dts = {p.dtype for p in self.params}
        devs = {p.device for p in self.params}
        if len(dts) != 1 or len(devs) != 1:
            raise ValueError(
                f"fused optimizer: parameters must share one dtype and device, got dtypes "
                f"{sorted(d.name for d in dts)} on devices {sorted(devs)}"
            )
        flat = fresh(Tensor.cat(*(p.detach().flatten() for p in self.params)))
        flat.realize()
        offset = 0
        for p in self.params:
            n = int(prod(p.shape))
            p.uop = flat[offset : offset + n].reshape(p.shape).uop
            offset += n
        return flat

    def _new_state(self) -> list[Tensor]:
        """One zero tensor per parameter (optimizer state), realized; fused: one flat one."""
        shapes = [self._flat.shape] if self._flat is not None else [p.shape for p in self.params]
        dt, dev = self.params[0].dtype, self.params[0].device
        state = [fresh(Tensor.zeros(*shape, dtype=dt, device=dev)) for shape in shapes]
        if state:
            Tensor.realize(*state)
        return state

    def _scalar_lr(self) -> Tensor:
        lr = self.lr.reshape(())
        return lr if lr.device == self.params[0].device else lr.to(self.params[0].device)

    def zero_grad(self) -> None:
        """Forget the gradients (the next backward starts from zero)."""
        for p in self.params:
            p.grad = None

    def step(self) -> None:
        """Update the parameters from their ``.grad`` (realized now)."""
        Tensor.realize(*self.schedule_step())

    def schedule_step(self) -> list[Tensor]:
        """Build the update without realizing it; returns the tensors to realize."""
        if not Tensor.training:
            raise RuntimeError(
                "Tensor.training=False: set Tensor.training = True to use the optimizer"
            )
        if self._flat is not None:
            return self._fused_step()
        live = [
            (i, p.detach(), p.grad.detach())
            for i, p in enumerate(self.params)
            if p.grad is not None
        ]
        new_values, extra = self._step(live)
        for (i, _, _), value in zip(live, new_values, strict=True):
            write(self.params[i], value)
        return [*extra, *self.params, *self.buffers]

    def _fused_step(self) -> list[Tensor]:
        assert self._flat is not None
        grads = [p.grad if p.grad is not None else p.zeros_like() for p in self.params]
        g = Tensor.cat(*(x.detach().flatten().cast(self._flat.dtype) for x in grads))
        (value,), extra = self._step([(0, self._flat.detach(), g)])
        write(self._flat, value)
        return [*extra, self._flat, *self.buffers]

    def _step(self, live: list[tuple[int, Tensor, Tensor]]) -> tuple[list[Tensor], list[Tensor]]:
        """New values of the parameters ``live`` (state index, value, gradient), and state
        tensors to realize."""
        raise NotImplementedError


class OptimizerGroup(Optimizer):
    """Several optimizers stepped together (e.g. Muon for matrices, Adam for the rest)."""

    def __init__(self, *optimizers: Optimizer) -> None:
        self.optimizers = optimizers
        self.params = [p for o in optimizers for p in o.params]
        self.buffers = [b for o in optimizers for b in o.buffers]

    def __getitem__(self, i: int) -> Optimizer:
        return self.optimizers[i]

    def zero_grad(self) -> None:
        """zero_grad of every optimizer."""
        for o in self.optimizers:
            o.zero_grad()

    def schedule_step(self) -> list[Tensor]:
        """schedule_step of every optimizer."""
        return [t for o in self.optimizers for t in o.schedule_step()]


def newton_schulz(
    g: Tensor, steps: int, coefficients: tuple[float, ...], eps: float = 1e-7
) -> Tensor:
    """Approximately orthogonalize the matrix ``g`` (Muon): X = G / ||G||_F, then ``steps``
    times X = sum_i c_i (X X^T)^i X."""
    if g.ndim != 2:
        raise ValueError(f"newton_schulz: expected a matrix, got shape {g.shape}")
    if g.shape[0] > g.shape[1]:
        return newton_schulz(g.transpose(), steps, coefficients, eps).transpose()
    x = g / (g.square().sum().sqrt() + eps)
    for _ in range(steps):
        gram = x @ x.transpose()
        term, total = x, x * coefficients[0]
        for c in coefficients[1:]:
            term = gram @ term
            total = total + c * term
        x = total
    return x


class LARS(Optimizer):
    """SGD with momentum and a layer-wise trust ratio (You et al., 2017); also the engine of
    ``SGD`` (``tcoef=0``) and ``Muon`` (``ns_steps > 0``)."""

    def __init__(  # noqa: PLR0917 (tinygrad's positional signature)
        self,
        params: list[Tensor],
        lr: float | Tensor = 0.001,
        momentum: float = 0.9,
        weight_decay: float = 1e-4,
        ns_steps: int = 0,
        ns_coefficients: tuple[float, ...] | None = None,
        nesterov: bool = False,
        classic: bool = True,
        pre_wd: bool = True,
        tcoef: float = 0.001,
        device: str | None = None,
        fused: Any = FUSE_OPTIM,
    ) -> None:
        if fused and (tcoef or ns_steps):
            raise ValueError(
                "fused optimizer: LARS's trust ratio (tcoef) and Muon's Newton-Schulz steps "
                "work per parameter; use fused=False"
            )
        super().__init__(params, lr, device, fused)
        self.momentum, self.wd, self.nesterov = momentum, weight_decay, nesterov
        self.ns_steps, self.ns_coefficients = ns_steps, ns_coefficients or (3.4445, -4.775, 2.0315)
        self.classic, self.pre_wd, self.tcoef = classic, pre_wd, tcoef
        self.b = self._new_state() if momentum else []

    def _trust_ratio(self, t: Tensor, g: Tensor) -> Tensor | float:
        if self.tcoef == 0:
            return 1.0
        w_norm, g_norm = t.square().sum().sqrt(), g.square().sum().sqrt()
        ratio = self.tcoef * w_norm / (g_norm + self.wd * w_norm)
        return (w_norm > 0).where((g_norm > 0).where(ratio, 1.0), 1.0)

    def _update(self, i: int, t: Tensor, g: Tensor, lr: Tensor) -> Tensor:
        r = self._trust_ratio(t, g)
        if self.pre_wd and self.wd > 0:
            g = g + self.wd * t
        if self.classic:
            g = g * r * lr
        if self.momentum:
            self.b[i].assign(self.momentum * self.b[i] + g)
            g = g + self.momentum * self.b[i] if self.nesterov else self.b[i]
        if self.ns_steps:
            shape = g.shape
            g = newton_schulz(g.reshape(int(shape[0]), -1), self.ns_steps, self.ns_coefficients)
            g = g.reshape(shape)
        if not self.pre_wd and self.wd > 0:
            t = t * (1.0 - self.wd * lr)
        if not self.classic:
            g = g * r * lr
        return (t - g).cast(t.dtype)

    def _step(self, live: list[tuple[int, Tensor, Tensor]]) -> tuple[list[Tensor], list[Tensor]]:
        lr = self._scalar_lr()
        return [self._update(i, t, g, lr) for i, t, g in live], list(self.b)


def SGD(
    params: list[Tensor],
    lr: float | Tensor = 0.001,
    momentum: float = 0.0,
    weight_decay: float = 0.0,
    nesterov: bool = False,
    classic: bool = False,
    device: str | None = None,
    fused: Any = FUSE_OPTIM,
) -> LARS:
    """Stochastic gradient descent with momentum, Nesterov momentum and weight decay (PyTorch's
    update: b = momentum * b + g; p -= lr * b)."""
    return LARS(
        params, lr, momentum, weight_decay, 0, None, nesterov, classic, True, 0.0, device, fused
    )


def Muon(  # noqa: PLR0917 (tinygrad's positional signature)
    params: list[Tensor],
    lr: float | Tensor = 0.02,
    momentum: float = 0.95,
    weight_decay: float = 0.0,
    ns_steps: int = 5,
    ns_coefficients: tuple[float, ...] = (3.4445, -4.775, 2.0315),
    nesterov: bool = True,
    device: str | None = None,
    fused: Any = FUSE_OPTIM,
) -> LARS:
    """Momentum orthogonalized by Newton-Schulz iterations (for matrix parameters), with
    decoupled weight decay."""
    return LARS(
        params, lr, momentum, weight_decay, ns_steps, ns_coefficients, nesterov,
        classic=False, pre_wd=False, tcoef=0.0, device=device, fused=fused,
    )  # fmt: skip


class LAMB(Optimizer):
    """Adam moments with a layer-wise trust ratio (You et al., 2019); with ``adam=True`` it is
    Adam with decoupled weight decay (AdamW)."""

    def __init__(  # noqa: PLR0917 (tinygrad's positional signature)
        self,
        params: list[Tensor],
        lr: float | Tensor = 0.001,
        b1: float = 0.9,
        b2: float = 0.999,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        adam: bool = False,
        device: str | None = None,
        fused: Any = FUSE_OPTIM,
    ) -> None:
        if fused and not adam:
            raise ValueError(
                "fused optimizer: LAMB's trust ratio works per parameter; use fused=False"
            )
        super().__init__(params, lr, device, fused)
        self.b1, self.b2, self.eps, self.wd, self.adam = b1, b2, eps, weight_decay, adam
        self.b1_t = fresh(Tensor.ones(1, dtype=dtypes.float32, device=self.params[0].device))
        self.b2_t = fresh(Tensor.ones(1, dtype=dtypes.float32, device=self.params[0].device))
        self.m = self._new_state()
        self.v = self._new_state()

    def _update(self, i: int, t: Tensor, g: Tensor, lr: Tensor) -> Tensor:
        self.m[i].assign(self.b1 * self.m[i] + (1.0 - self.b1) * g)
        self.v[i].assign(self.b2 * self.v[i] + (1.0 - self.b2) * (g * g))
        m_hat = self.m[i] / (1.0 - self.b1_t.reshape(()))
        v_hat = self.v[i] / (1.0 - self.b2_t.reshape(()))
        up = m_hat / (v_hat.sqrt() + self.eps) + self.wd * t
        r: Tensor | float = 1.0
        if not self.adam:
            w_norm, up_norm = t.square().sum().sqrt(), up.square().sum().sqrt()
            r = (w_norm > 0).where((up_norm > 0).where(w_norm / up_norm, 1.0), 1.0)
        return (t - lr * r * up).cast(t.dtype)

    def _step(self, live: list[tuple[int, Tensor, Tensor]]) -> tuple[list[Tensor], list[Tensor]]:
        self.b1_t.assign(self.b1_t * self.b1)
        self.b2_t.assign(self.b2_t * self.b2)
        lr = self._scalar_lr()
        out = [self._update(i, t, g, lr) for i, t, g in live]
        return out, [self.b1_t, self.b2_t, *self.m, *self.v]


def Adam(
    params: list[Tensor],
    lr: float | Tensor = 0.001,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    device: str | None = None,
    fused: Any = FUSE_OPTIM,
) -> LAMB:
    """Adam (Kingma & Ba) with bias-corrected moments."""
    return LAMB(params, lr, b1, b2, eps, 0.0, adam=True, device=device, fused=fused)


def AdamW(
    params: list[Tensor],
    lr: float | Tensor = 0.001,
    b1: float = 0.9,
    b2: float = 0.999,
    eps: float = 1e-8,
    weight_decay: float = 0.01,
    device: str | None = None,
    fused: Any = FUSE_OPTIM,
) -> LAMB:
    """Adam with decoupled weight decay (Loshchilov & Hutter)."""
    return LAMB(params, lr, b1, b2, eps, weight_decay, adam=True, device=device, fused=fused)
