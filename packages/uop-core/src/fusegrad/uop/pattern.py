"""The pattern language: ``UPat`` describes a shape of UOp graph, ``PatternMatcher`` is an
ordered table of ``(UPat, rewrite function)`` rules dispatched by op.

>>> from fusegrad.uop import UOp, UPat, PatternMatcher, dtypes
>>> pm = PatternMatcher([(UPat.var("x") + 0, lambda x: x)])   # x + 0 -> x
>>> v = UOp.variable("v", 0, 10)
>>> pm.rewrite(v + 0) is v
True
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import keyword
import marshal
import types
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from fusegrad.uop.dtype import ConstType, DType
from fusegrad.uop.helpers import argfix
from fusegrad.uop.mixin import OpMixin
from fusegrad.uop.opcodes import GroupOp, Ops
from fusegrad.uop.uop import UOp

Store = dict[str, UOp]
RewriteFn = Callable[..., UOp | None]


class UPat(OpMixin):
    """A pattern over UOps.

    * ``op``: an op or a set of ops (None: any op)
    * ``dtype``: a dtype or a set (matched against the dtype and its scalar; None: any)
    * ``src``: None (any sources), a tuple (in order), a list (any permutation: commutative),
      or a single UPat (every source matches it)
    * ``arg``: the arg must equal this (None: any)
    * ``name``: capture the matched UOp under this name; a name used twice must bind the same
      node in both places
    * ``allow_any_len``: a tuple ``src`` matches the first sources, more may follow
    * ``custom_early_reject``: ops that must all appear among the node's sources (checked
      first; default: the single ops of a tuple/list ``src``)
    * ``location``: ``(file, line)`` of the rule, for debugging output
    * ``is_any``: match when any pattern of ``src`` matches (what ``UPat.any`` builds)
    * ``tag``: the node's tag must equal this (None: any tag)

    Like tinygrad's, a UPat has the op mixin ``UOp`` and ``Tensor`` have: its methods build
    the pattern of the graph the same method builds on a UOp (``UPat.var("x").exp2()``,
    ``x.reshape(2, 3)``, ``x + 1``, ``x.cast(dtypes.int)``, ``c.where(a, b)``...). A pattern
    has no shape, device or single dtype: a method that needs one raises a TypeError saying so.
    """

    __slots__ = (
        "_alternatives",
        "_compiled",
        "_src_orders",
        "allow_any_len",
        "arg",
        "custom_reject",
        "dtype",
        "early_reject",
        "location",
        "name",
        "op",
        "src",
        "tag",
    )

    def __init__(  # noqa: PLR0917 (tinygrad's signature)
        self,
        op: Ops | Iterable[Ops] | None = None,
        dtype: DType | Iterable[DType] | None = None,
        src: UPat | tuple[UPat, ...] | list[UPat] | None = None,
        arg: Any = None,
        name: str | None = None,
        allow_any_len: bool = False,
        custom_early_reject: Iterable[Ops] | None = None,
        location: tuple[str, int] | None = None,
        is_any: bool = False,
        tag: Any = None,
    ) -> None:
        if is_any:
            if not isinstance(src, (tuple, list)) or op is not None:
                raise ValueError("UPat(is_any=True) needs src= a tuple of UPats and no op")
            alternatives = UPat.any(*src)
            op, src = alternatives.op, None
        self.op: frozenset[Ops] | None = (
            None if op is None else frozenset((op,) if isinstance(op, Ops) else op)
        )
        dts = None if dtype is None else frozenset((dtype,) if isinstance(dtype, DType) else dtype)
        self.dtype: frozenset[DType] | None = dts  # type: ignore[assignment]  # a set of dtypes
        self.arg = arg
        self.name = name
        self.allow_any_len = allow_any_len
        self.location = location
        self.tag = tag
        self.src: tuple[UPat, ...] | list[UPat] | UPat | None = src
        self._alternatives: tuple[UPat, ...] | None = alternatives._alternatives if is_any else None
        # compiled matchers of this pattern, by kind (see ``compiled``), built on first use
        self._compiled: dict[str, Callable[..., Any]] = {}
        # a commutative source list matches in every order: list them once, here
        self._src_orders = tuple(itertools.permutations(src)) if isinstance(src, list) else ()
        # ops that must appear among the sources: a set test rejects most nodes cheaply
        required = src if isinstance(src, (tuple, list)) else ()
        self.custom_reject = custom_early_reject is not None
        self.early_reject: frozenset[Ops] = (
            frozenset(custom_early_reject)
            if custom_early_reject is not None
            else frozenset(
                next(iter(p.op)) for p in required if p.op is not None and len(p.op) == 1
            )
        )

    # -- constructors -----------------------------------------------------------------------
    @staticmethod
    def var(  # type: ignore[override]  # tinygrad's UPat.var, not the mixin's variance
        name: str | None = None, dtype: DType | Iterable[DType] | None = None
    ) -> UPat:
        """Any UOp (of ``dtype``), captured as ``name``."""
        return UPat(dtype=dtype, name=name)

    @staticmethod
    def cvar(
        name: str | None = None,
        dtype: DType | Iterable[DType] | None = None,
        arg: Any = None,
        vec: bool = True,
    ) -> UPat:
        """A constant (scalar, or vector too when ``vec``) of value ``arg`` (None: any),
        captured as ``name``."""
        ops = (Ops.CONST, Ops.VCONST) if vec else (Ops.CONST,)
        return UPat(ops, dtype, src=(), arg=arg, name=name)

    @staticmethod
    def const(b: ConstType, dtype: DType | Iterable[DType] | None = None) -> UPat:
        """The constant ``b`` (of ``dtype``)."""
        return UPat(Ops.CONST, dtype, src=(), arg=b)

    @staticmethod
    def any(*src: UPat) -> UPat:  # type: ignore[override]  # tinygrad's, not the reduce
        """Matches when any of ``src`` matches (first match wins, all are tried)."""
        pats = src
        p = UPat()
        p._alternatives = pats
        ops: set[Ops] = set()
        for sub in pats:
            if sub.op is None:
                return p
            ops |= sub.op
        p.op = frozenset(ops)
        return p

    def named(self, name: str) -> UPat:
        """This pattern capturing its match as ``name``."""
        p = self._copy()
        p.name = name
        return p

    def _copy(self) -> UPat:
        p = UPat(self.op, self.dtype, self.src, self.arg, self.name, self.allow_any_len,
                 self.early_reject, self.location, tag=self.tag)  # fmt: skip
        p._alternatives = self._alternatives
        return p

    # -- math that reads like the IR ----------------------------------------------------------
    def alu(self, op: Ops, *src: UPat | ConstType) -> UPat:
        """The pattern ``op(self, *src)``; commutative ops match either operand order."""
        pats = [self, *(_as_upat(s, self.dtype) for s in src)]
        srcs: tuple[UPat, ...] | list[UPat] = (
            list(pats) if op in GroupOp.Commutative else tuple(pats)
        )
        return UPat(op, src=srcs)

    def __add__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.ADD, x)

    def __radd__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.ADD, x)

    def __mul__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.MUL, x)

    def __rmul__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.MUL, x)

    def __sub__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.SUB, x)

    def __floordiv__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.FLOORDIV, x)

    def __mod__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.FLOORMOD, x)

    def __truediv__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.FDIV, x)

    def cdiv(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.CDIV, x)

    def cmod(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.CMOD, x)

    def __lt__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.CMPLT, x)

    def __gt__(self, x: UPat | ConstType) -> UPat:
        return _as_upat(x, self.dtype).alu(Ops.CMPLT, self)

    def eq(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.CMPEQ, x)

    def ne(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.CMPNE, x)

    def __and__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.AND, x)

    def __rand__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.AND, x)

    def __or__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.OR, x)

    def __ror__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.OR, x)

    def __xor__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.XOR, x)

    def __rxor__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.XOR, x)

    def __lshift__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.SHL, x)

    def __rshift__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.SHR, x)

    def __neg__(self) -> UPat:
        return UPat(Ops.NEG, src=(self,))

    def maximum(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.MAX, x)

    def where(self, x: UPat | ConstType, y: UPat | ConstType) -> UPat:
        return self.alu(Ops.WHERE, x, y)

    def logical_not(self) -> UPat:
        return self.ne(True)

    def cast(self, dtype: DType | Iterable[DType] | None = None, **kwargs: Any) -> UPat:
        """The pattern ``CAST(self)`` (``kwargs``: more UPat fields, e.g. ``name``)."""
        return UPat(Ops.CAST, dtype, (self,), **kwargs)

    def bitcast(self, dtype: DType | Iterable[DType] | None = None) -> UPat:
        return UPat(Ops.BITCAST, dtype, (self,))

    def reciprocal(self) -> UPat:
        return UPat(Ops.RECIPROCAL, src=(self,))

    def trunc(self) -> UPat:
        return UPat(Ops.TRUNC, src=(self,))

    # -- the IR forms of the mixin's int/comparison methods (what they build on a kernel-level
    # UOp, where the mixin itself would ask for a dtype) ----------------------------------------
    def __le__(self, x: UPat | ConstType) -> UPat:
        return _as_upat(x, self.dtype).alu(Ops.CMPLT, self).logical_not()

    def __ge__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.CMPLT, x).logical_not()

    def __pow__(self, x: UPat | ConstType) -> UPat:
        return self.alu(Ops.POW, x)

    def __rpow__(self, x: ConstType) -> UPat:
        return _as_upat(x, self.dtype).alu(Ops.POW, self)

    def __rsub__(self, x: ConstType) -> UPat:
        return _as_upat(x, self.dtype).alu(Ops.SUB, self)

    def __rtruediv__(self, x: ConstType) -> UPat:
        return _as_upat(x, self.dtype).alu(Ops.FDIV, self)

    def __rfloordiv__(self, x: ConstType) -> UPat:
        return _as_upat(x, self.dtype).alu(Ops.FLOORDIV, self)

    def __rmod__(self, x: ConstType) -> UPat:
        return _as_upat(x, self.dtype).alu(Ops.FLOORMOD, self)

    def _binary(self, op: Ops, x: UPat | ConstType, reverse: bool) -> UPat:
        return _as_upat(x, self.dtype).alu(op, self) if reverse else self.alu(op, x)

    def minimum(self, x: UPat | ConstType) -> UPat:
        return -((-self).maximum(-_as_upat(x, self.dtype)))

    def bitwise_and(self, x: UPat | ConstType, reverse: bool = False) -> UPat:
        return self._binary(Ops.AND, x, reverse)

    def bitwise_or(self, x: UPat | ConstType, reverse: bool = False) -> UPat:
        return self._binary(Ops.OR, x, reverse)

    def bitwise_xor(self, x: UPat | ConstType, reverse: bool = False) -> UPat:
        return self._binary(Ops.XOR, x, reverse)

    def lshift(self, x: UPat | ConstType, reverse: bool = False) -> UPat:
        return self._binary(Ops.SHL, x, reverse)

    def rshift(self, x: UPat | ConstType, reverse: bool = False) -> UPat:
        return self._binary(Ops.SHR, x, reverse)

    def idiv(self, x: UPat | ConstType, reverse: bool = False) -> UPat:
        return self._binary(Ops.CDIV, x, reverse)

    def mod(self, x: UPat | ConstType, reverse: bool = False) -> UPat:
        return self._binary(Ops.FLOORMOD, x, reverse)

    def __matmul__(self, x: UPat) -> UPat:
        return self.matmul(x)

    def const_like(self, b: ConstType, dtype: DType | None = None) -> UPat:
        """The constant ``b`` (of ``dtype``; None: any dtype)."""
        return UPat.const(b, dtype)

    def ufix(self, x: UPat | ConstType) -> UPat:
        """``x`` as a pattern: a Python value is the constant ``x``."""
        return _as_upat(x, self.dtype)

    # -- IR nodes over this pattern (tinygrad's UPat builders) ---------------------------------
    def f(self, op: Ops, **kwargs: Any) -> UPat:
        """The pattern ``op(self)`` (``kwargs``: more UPat fields)."""
        return UPat(op, src=(self,), **kwargs)

    def after(self, *src: UPat, **kwargs: Any) -> UPat:
        return UPat(Ops.AFTER, src=(self, *src), **kwargs)

    def index(self, *srcs: UPat | ConstType, **kwargs: Any) -> UPat:
        return UPat(Ops.INDEX, src=(self, *(_as_upat(x, None) for x in srcs)), **kwargs)

    def load(self, *src: UPat, **kwargs: Any) -> UPat:
        return UPat(Ops.LOAD, src=(self, *src), **kwargs)

    def store(self, *src: UPat | ConstType, **kwargs: Any) -> UPat:
        return UPat(Ops.STORE, src=(self, *(_as_upat(x, None) for x in src)), **kwargs)

    def end(self, *src: UPat, **kwargs: Any) -> UPat:
        return UPat(Ops.END, src=(self, *src), **kwargs)

    def reduce(self, *src: UPat, **kwargs: Any) -> UPat:
        return UPat(Ops.REDUCE, src=(self, *src), **kwargs)

    def sink(self, *srcs: UPat, **kwargs: Any) -> UPat:
        return UPat(Ops.SINK, src=(self, *srcs), **kwargs)

    def contiguous(self, **kwargs: Any) -> UPat:
        return UPat(Ops.CONTIGUOUS, src=(self,), **kwargs)

    def contiguous_backward(self) -> UPat:
        return UPat(Ops.CONTIGUOUS_BACKWARD, src=(self,))

    def detach(self) -> UPat:
        return UPat(Ops.DETACH, src=(self,))

    def broadcast(self, **kwargs: Any) -> UPat:
        """A VECTORIZE of copies of this pattern, any width (what ``UOp.broadcast`` builds)."""
        return UPat(Ops.VECTORIZE, src=self, **kwargs)

    def or_casted(self, name: str | None = None) -> UPat:
        """This pattern, or a CAST of it (captured as ``name``)."""
        return UPat.any(
            self if name is None else self.named(name), UPat(Ops.CAST, name=name, src=(self,))
        )

    def or_after(self, name: str | None = None) -> UPat:
        """This pattern, or an AFTER over it (captured as ``name``)."""
        return UPat.any(
            self if name is None else self.named(name),
            UPat(Ops.AFTER, name=name, src=(self,), allow_any_len=True),
        )

    @property
    def is_any(self) -> bool:
        """Whether this pattern matches when any of its alternatives does (``UPat.any``)."""
        return self._alternatives is not None

    def match_dtype(self, uop: UOp) -> bool:
        """Whether ``uop``'s dtype (or its scalar) is one this pattern allows."""
        return self.dtype is None or uop.dtype in self.dtype or uop.dtype.scalar() in self.dtype

    def match_tag(self, uop: UOp) -> bool:
        """Whether ``uop``'s tag is the one this pattern asks for (None: any tag)."""
        return self.tag is None or uop.tag == self.tag

    # -- movement: the node with its arg, as on a UOp (no shape to check against) -------------
    def reshape(self, shape: Any, *args: Any) -> UPat:
        return self._mop(Ops.RESHAPE, argfix(shape, *args))

    def permute(self, order: Any, *args: Any) -> UPat:
        return self._mop(Ops.PERMUTE, argfix(order, *args))

    def expand(self, shape: Any, *args: Any) -> UPat:
        return self._mop(Ops.EXPAND, argfix(shape, *args))

    def pad(self, padding: Any, mode: str = "constant", value: float = 0.0) -> UPat:
        """The zero-pad node with ``padding`` as (before, after) pairs per dim."""
        pairs = tuple(padding)
        if mode != "constant" or value != 0.0 or not all(isinstance(p, tuple) for p in pairs):
            raise TypeError(
                "UPat.pad: a pattern pads with zeros and (before, after) pairs per dim only "
                f"(a pattern has no shape to place the rest), got {padding!r}, mode={mode!r}"
            )
        return self._mop(Ops.PAD, pairs)

    def shrink(self, arg: Any) -> UPat:
        """The shrink node with ``arg`` as (start, end) pairs per dim."""
        pairs = tuple(arg)
        if not all(isinstance(p, tuple) for p in pairs):
            raise TypeError(f"UPat.shrink: (start, end) pairs per dim only, got {arg!r}")
        return self._mop(Ops.SHRINK, pairs)

    # -- the op mixin's primitives for patterns ------------------------------------------------
    @property
    def uop(self) -> UPat:  # type: ignore[override]
        return self

    @property
    def shape(self) -> tuple[Any, ...]:
        raise TypeError("a UPat has no shape: a pattern matches nodes of any shape")

    @property
    def ndim(self) -> int:
        raise TypeError("a UPat has no ndim: a pattern matches nodes of any shape")

    @property
    def device(self) -> Any:
        raise TypeError("a UPat has no device: a pattern matches nodes on any device")

    def _wrap(self, uop: Any, *parents: Any) -> UPat:
        return uop  # type: ignore[no-any-return]

    def _wrap_const(self, uop: Any) -> UPat:
        return uop  # type: ignore[no-any-return]

    def _mop(self, op: Ops, arg: Any) -> UPat:
        return UPat(op, src=(self,), arg=arg)

    def _apply(self, op: Ops, *others: Any, dtype: DType | None = None) -> UPat:
        return (
            UPat(op, dtype, src=(self, *others))
            if op not in GroupOp.Commutative
            else (UPat(op, dtype, src=[self, *others]))
        )

    def _operand(self, x: Any) -> UPat:
        return _as_upat(x, None)

    def _promoted(self, *xs: Any, reverse: bool = False) -> list[UPat]:
        pats = [self, *(_as_upat(x, None) for x in xs)]
        return pats[::-1] if reverse else pats

    def _broadcast_to(self, shape: Any) -> UPat:
        return self

    def _const(self, value: Any, dtype: DType | None = None, shape: Any = None) -> UPat:
        return UPat.const(value, dtype)

    def _to_float(self) -> UPat:
        return self  # a pattern has no dtype to convert from: the op's pattern alone

    __hash__ = object.__hash__
    __eq__ = object.__eq__
    __ne__ = object.__ne__

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        # generated code does not pickle: leave the compiled matchers out, they compile again
        state = {k: getattr(self, k) for k in self.__slots__ if k != "_compiled"}
        return None, state

    def __setstate__(self, state: tuple[None, dict[str, Any]]) -> None:
        for k, v in state[1].items():
            object.__setattr__(self, k, v)
        self._compiled = {}

    def __repr__(self) -> str:
        ops = "any" if self.op is None else "|".join(sorted(o.name for o in self.op))
        parts = [ops]
        if self.name:
            parts.append(f"name={self.name!r}")
        if self.arg is not None:
            parts.append(f"arg={self.arg!r}")
        if self.src is not None:
            parts.append(f"src={self.src!r}")
        return f"UPat({', '.join(parts)})"

    # -- matching -----------------------------------------------------------------------------
    def match(self, uop: UOp, store: Store) -> list[Store]:
        """Every way ``uop`` matches this pattern, each as the captures extended from
        ``store`` (empty list: no match), in a fixed order (see ``match_interpreted``)."""
        if store:
            return self.match_interpreted(uop, store)
        return self.compiled("stores")(uop)  # type: ignore[no-any-return]

    def match_interpreted(self, uop: UOp, store: Store) -> list[Store]:
        """``match`` by walking the pattern: the reference the compiled matchers follow.

        The order of the matches: a commutative source list tries its orders as
        ``itertools.permutations`` lists them, alternatives in their order, and within one
        order the first source's ways to match vary slowest."""
        if self._alternatives is None:
            if self.op is not None and uop.op not in self.op:
                return []  # the common rejection, checked before any call
            if (
                self.dtype is not None or self.arg is not None or self.tag is not None
            ) and not self._node_matches(uop):
                return []
        if self.name is not None:
            prev = store.get(self.name)
            if prev is None:
                store = {**store, self.name: uop}
            elif prev is not uop:
                return []  # the same name must capture the same node
        if self._alternatives is not None:
            return [m for p in self._alternatives for m in p.match_interpreted(uop, store)]
        return self._match_src(uop, store)

    def compiled(self, kind: str) -> Callable[..., Any]:
        """This pattern's matcher as generated Python (built once per kind, then cached).

        * ``"stores"``: ``f(uop) -> list[Store]``, what ``match(uop, {})`` returns;
        * ``"call"`` / ``"call_ctx"``: ``f(uop, ctx, fn) -> UOp | None``, calling the rule
          ``fn`` on each match in order (with ``ctx=`` for ``"call_ctx"``) and returning its
          first result that is neither None nor ``uop``. The root's op is not checked: the
          matcher calls it only for the ops of this pattern.
        """
        fn = self._compiled.get(kind)
        if fn is None:
            fn = self._compiled[kind] = compile_upat(self, kind)
        return fn

    def _node_matches(self, uop: UOp) -> bool:
        if (
            self.dtype is not None
            and uop.dtype not in self.dtype
            and uop.dtype.scalar() not in self.dtype
        ):
            return False
        if self.tag is not None and not _arg_equal(uop.tag, self.tag):
            return False
        return self.arg is None or _arg_equal(uop.arg, self.arg)

    def _match_src(self, uop: UOp, store: Store) -> list[Store]:
        src = self.src
        if src is None:
            return [store]
        if isinstance(src, UPat):
            return _match_seq([src] * len(uop.src), uop.src, [store])
        n = len(src)
        if len(uop.src) != n and not (self.allow_any_len and len(uop.src) >= n):
            return []
        if isinstance(src, list):
            return [
                m
                for order in self._src_orders
                if _ops_fit(order, uop.src)
                for m in _match_seq(order, uop.src, [store])
            ]
        return _match_seq(src, uop.src, [store]) if _ops_fit(src, uop.src) else []


def _arg_equal(have: Any, want: Any) -> bool:
    # constants compare by value, but a bool pattern only matches bools (True == 1 in Python)
    if isinstance(want, bool) != isinstance(have, bool):
        return False
    return bool(have == want)


def _ops_fit(pats: Sequence[UPat], srcs: tuple[UOp, ...]) -> bool:
    """A cheap first look: every source has an op its pattern allows (most orders of a
    commutative pattern fail here, before any capture is built)."""
    for pat, uop in zip(pats, srcs, strict=False):  # noqa: SIM110 (all() over a generator is slower)
        if pat.op is not None and uop.op not in pat.op:
            return False
    return True


def _match_seq(pats: Sequence[UPat], srcs: tuple[UOp, ...], stores: list[Store]) -> list[Store]:
    for pat, uop in zip(pats, srcs, strict=False):
        # the common case first: one way to match so far
        one = len(stores) == 1
        stores = (
            pat.match_interpreted(uop, stores[0])
            if one
            else [m for st in stores for m in pat.match_interpreted(uop, st)]
        )
        if not stores:
            return []
    return stores


def _guarded(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """The mixin method ``fn`` on a pattern: a method that reads a shape, a device or a single
    dtype (which a pattern lacks) raises a TypeError naming itself."""

    def method(self: UPat, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except (AttributeError, TypeError, KeyError) as e:
            raise TypeError(
                f"UPat.{name} needs a shape, device or dtype, which a pattern doesn't have "
                f"(build the pattern from UPat.var/UPat.cvar and the IR ops instead): {e}"
            ) from e

    method.__name__ = name
    method.__qualname__ = f"UPat.{name}"
    method.__doc__ = fn.__doc__
    method.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return method


def _creator(name: str, fn: Any) -> classmethod[Any, Any, Any]:
    """A mixin classmethod (rand, arange, ...) on UPat: patterns aren't created that way."""

    def method(cls: type, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"UPat.{name} creates a tensor value; a pattern is built from UPat.var, "
            "UPat.cvar and UPat(op, ...)"
        )

    method.__name__ = name
    method.__doc__ = fn.__doc__
    method.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return classmethod(method)


def _no_pattern(name: str, like: Callable[..., Any]) -> Any:
    """A UOp/Tensor method that means nothing on a pattern: it raises, naming itself
    (``like``: a function with the method's parameters, for its signature)."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"UPat.{name} reads values, shapes or buffers, which a pattern doesn't have"
        )

    method.__name__ = name
    method.__signature__ = inspect.signature(like)  # type: ignore[attr-defined]
    return method


# the parameters of tinygrad's value-reading methods, for the signatures of UPat's
def _sig_allclose(self: Any, other: Any, rtol: float = 1e-05, atol: float = 1e-08,
                  equal_nan: bool = False) -> Any: ...  # fmt: skip
def _sig_gradient(self: Any, *targets: Any, gradient: Any = None) -> Any: ...
def _sig_image_conv2d(self: Any, weight: Any, bias: Any = None, groups: int = 1, stride: int = 1,
                      dilation: int = 1, padding: int = 0, dtype: Any = None) -> Any: ...  # fmt: skip
def _sig_image_dot(self: Any, w: Any, dtype: Any = None) -> Any: ...
def _sig_keccak(self: Any, cfg: Any = "sha3_256") -> Any: ...
def _sig_newton_schulz(self: Any, steps: int, params: Any, eps: float = 1e-07) -> Any: ...
def _sig_size(self: Any, dim: int | None = None) -> Any: ...
def _sig_self(self: Any) -> Any: ...
def _sig_kwargs(self: Any, **kwargs: Any) -> Any: ...


_CREATORS = ("arange", "empty", "eye", "full", "invalids", "linspace", "ones", "zeros")
_NOT_ON_PATTERNS: dict[str, Callable[..., Any]] = {
    "allclose": _sig_allclose, "data": _sig_self, "empty_like": UOp.empty_like,
    "full_like": UOp.full_like, "gradient": _sig_gradient, "hash": _sig_self,
    "image_conv2d": _sig_image_conv2d, "image_dot": _sig_image_dot, "item": _sig_self,
    "keccak": _sig_keccak, "max_numel": _sig_self, "max_shape": _sig_self,
    "newton_schulz": _sig_newton_schulz, "ones_like": _sig_kwargs, "size": _sig_size,
    "zeros_like": _sig_kwargs,
}  # fmt: skip


def _guard_mixin_methods() -> None:
    """Give UPat guarded copies of the mixin methods it doesn't define itself."""
    own = set(UPat.__dict__)
    for klass in OpMixin.__mro__:
        for name, value in list(vars(klass).items()):
            if name in own or name in {"__slots__", "__module__", "__doc__", "__qualname__"}:
                continue
            own.add(name)
            if isinstance(value, classmethod):
                setattr(UPat, name, _creator(name, value.__func__))
            elif isinstance(value, staticmethod) or not callable(value):
                if isinstance(value, property) and value.fget is not None:
                    setattr(UPat, name, property(_guarded(name, value.fget)))
            elif inspect.isfunction(value) and (not name.startswith("__") or name in _DUNDERS):
                setattr(UPat, name, _guarded(name, value))
    _add_unsupported(own)


def _add_unsupported(own: set[str]) -> None:
    """The creation classmethods and value-reading methods of UOp, raising on UPat."""
    for name in _CREATORS:
        if name not in own:
            setattr(UPat, name, _creator(name, getattr(UOp, name).__func__))
    for name, like in _NOT_ON_PATTERNS.items():
        if name not in own:
            setattr(UPat, name, _no_pattern(name, like))


_DUNDERS = frozenset(
    {"__getitem__", "__iter__", "__le__", "__ge__", "__pow__", "__rpow__", "__invert__",
     "__rsub__", "__rtruediv__"}
)  # fmt: skip


def _as_upat(x: UPat | ConstType, dtype: frozenset[DType] | None) -> UPat:
    if isinstance(x, UPat):
        return x
    return UPat.const(x, None)


_guard_mixin_methods()


# -- compiling patterns to Python -----------------------------------------------------------------
#
# A UPat becomes one Python function: the op, dtype and arg checks of each node are inlined as
# conditions, sources are unpacked once and matched by position, and a capture is a local
# variable (a name met again is an identity test). A commutative source list and UPat.any
# are unrolled: each order (each alternative) is its own block of nested ifs, and a failed
# block falls through to the next one, so the matches come out in the interpreter's order.
# The code after a node is generated inside that node's block (continuation style), so that
# every way to match the rest is tried for every way to match the node.

_MAX_LEAVES = 64  # more ways to match than this (nested commutative lists): interpret instead


class _Unsupported(Exception):
    """A pattern the compiler leaves to the interpreter."""


Bound = dict[str, str]  # capture name -> the local variable holding it
Continuation = Callable[[Bound, int], None]


class _Codegen:
    """The source lines and the constants (globals) of one compiled pattern."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.lines: list[str] = []
        self.env: dict[str, Any] = {"_arg_equal": _arg_equal}
        self.count = 0
        self.leaves = 0

    def fresh(self, prefix: str) -> str:
        self.count += 1
        return f"{prefix}{self.count}"

    def constant(self, value: Any) -> str:
        name = self.fresh("k")
        self.env[name] = value
        return name

    def emit(self, depth: int, line: str) -> None:
        self.lines.append("    " * depth + line)

    def open(self, conds: list[str], depth: int) -> int:
        """An ``if`` over ``conds`` (none: no if); the depth of its body."""
        if not conds:
            return depth
        self.emit(depth, f"if {' and '.join(conds)}:")
        return depth + 1

    # -- conditions ----------------------------------------------------------------------------
    def op_cond(self, ops: frozenset[Ops], var: str) -> str:
        if len(ops) == 1:
            return f"{var}.op is {self.constant(next(iter(ops)))}"
        return f"{var}.op in {self.constant(ops)}"

    def arg_cond(self, want: Any, var: str) -> str:
        if want is True or want is False:
            return f"{var}.arg is {want}"  # a bool pattern matches only bools
        if type(want) in (int, float, str):
            return f"({var}.arg.__class__ is not bool and {var}.arg == {self.constant(want)})"
        return f"_arg_equal({var}.arg, {self.constant(want)})"

    def node_conds(self, pat: UPat, var: str, check_op: bool) -> list[str]:
        conds = []
        if check_op and pat.op is not None:
            conds.append(self.op_cond(pat.op, var))
        if pat.dtype is not None:
            k = self.constant(pat.dtype)
            conds.append(f"({var}.dtype in {k} or {var}.dtype.scalar() in {k})")
        if pat.arg is not None:
            conds.append(self.arg_cond(pat.arg, var))
        if pat.tag is not None:
            conds.append(f"_arg_equal({var}.tag, {self.constant(pat.tag)})")
        return conds

    def bind(self, name: str | None, var: str, bound: Bound, conds: list[str]) -> Bound:
        if name is None:
            return bound
        if name in bound:
            conds.append(f"{var} is {bound[name]}")  # the same name, the same node
            return bound
        if not name.isidentifier() or keyword.iskeyword(name) or name == "ctx":
            raise _Unsupported(f"capture name {name!r}")
        return {**bound, name: var}

    # -- patterns ------------------------------------------------------------------------------
    def node(
        self, pat: UPat, var: str, bound: Bound, depth: int, then: Continuation, check_op: bool
    ) -> None:
        """Match ``pat`` against the UOp in ``var``; ``then`` emits what follows a match."""
        if pat._alternatives is not None:
            conds: list[str] = []
            bound = self.bind(pat.name, var, bound, conds)
            depth = self.open(conds, depth)
            for alt in pat._alternatives:
                self.node(alt, var, bound, depth, then, True)
            return
        conds = self.node_conds(pat, var, check_op)
        bound = self.bind(pat.name, var, bound, conds)
        if pat.src is None:
            then(bound, self.open(conds, depth))
            return
        if isinstance(pat.src, UPat):
            raise _Unsupported("a repeated src pattern")
        self.sources(pat, var, bound, depth, then, conds)

    def sources(
        self, pat: UPat, var: str, bound: Bound, depth: int, then: Continuation, conds: list[str]
    ) -> None:
        pats = pat.src
        assert isinstance(pats, (tuple, list))
        n, src = len(pats), self.fresh("s")
        if n == 0 and not pat.allow_any_len:
            conds.append(f"not {var}.src")
        elif n > 0:
            conds.append(f"len({src} := {var}.src) {'>=' if pat.allow_any_len else '=='} {n}")
        depth = self.open(conds, depth)
        names = [self.fresh("u") for _ in range(n)]
        if n and not pat.allow_any_len:
            self.emit(depth, f"{', '.join(names)}, = {src}")
        for i, name in enumerate(names if pat.allow_any_len else ()):
            self.emit(depth, f"{name} = {src}[{i}]")
        orders = pat._src_orders if isinstance(pats, list) else (pats,)
        for order in orders:
            # every source's op first: most orders of a commutative list fail here
            pairs = list(zip(order, names, strict=True))
            ops = [self.op_cond(p.op, u) for p, u in pairs if p.op is not None]
            self.sequence(pairs, bound, self.open(ops, depth), then)

    def sequence(
        self, pairs: list[tuple[UPat, str]], bound: Bound, depth: int, then: Continuation
    ) -> None:
        if not pairs:
            then(bound, depth)
            return
        (pat, var), rest = pairs[0], pairs[1:]

        def after(b: Bound, d: int) -> None:
            self.sequence(rest, b, d, then)

        self.node(pat, var, bound, depth, after, False)

    # -- what a match does -----------------------------------------------------------------------
    def leaf(self, bound: Bound, depth: int) -> None:
        self.leaves += 1
        if self.leaves > _MAX_LEAVES:
            raise _Unsupported("too many ways to match")
        if self.kind == "stores":
            items = ", ".join(f"{name!r}: {var}" for name, var in bound.items())
            self.emit(depth, f"out.append({{{items}}})")
            return
        args = [f"{name}={var}" for name, var in bound.items()]
        if self.kind == "call_ctx":
            args.insert(0, "ctx=ctx")
        self.emit(depth, f"r = fn({', '.join(args)})")
        self.emit(depth, "if r is not None and r is not uop:")
        self.emit(depth + 1, "return r")


_COMPILED_KINDS = {"stores": ("uop", "out = []", "out"), "call": ("uop, ctx, fn", "", "None")}
_COMPILED_KINDS["call_ctx"] = _COMPILED_KINDS["call"]


def compile_upat(pat: UPat, kind: str) -> Callable[..., Any]:
    """``pat`` as a generated Python function of the given kind (see ``UPat.compiled``); a
    pattern the generator does not handle (a repeated ``src=UPat``) gets a function that runs
    the interpreter."""
    params, prologue, result = _COMPILED_KINDS[kind]
    gen = _Codegen(kind)
    try:
        gen.node(pat, "uop", {}, 1, gen.leaf, kind == "stores")
        body = ([f"    {prologue}"] if prologue else []) + gen.lines + [f"    return {result}"]
        source = "\n".join([f"def match({params}):", *body])
        code = compile(source, f"<UPat {pat!r:.60}>", "exec")
    except (_Unsupported, SyntaxError, RecursionError):  # SyntaxError: nested too deep
        return _interpreted(pat, kind)
    namespace = dict(gen.env)
    exec(code, namespace)
    match: Callable[..., Any] = namespace["match"]
    match.__doc__ = source  # for debugging: the generated code
    return match


def _interpreted(pat: UPat, kind: str) -> Callable[..., Any]:
    if kind == "stores":
        return lambda uop: pat.match_interpreted(uop, {})
    wants_ctx = kind == "call_ctx"

    def match(uop: UOp, ctx: Any, fn: RewriteFn) -> UOp | None:
        for captures in pat.match_interpreted(uop, {}):
            ret = fn(ctx=ctx, **captures) if wants_ctx else fn(**captures)
            if ret is not None and ret is not uop:
                return ret
        return None

    return match


# -- the matcher ----------------------------------------------------------------------------------


def _rebuild_function(
    code: bytes, module: str, name: str, defaults: Any, cells: tuple[Any, ...]
) -> Any:
    """Unpickle a lambda/closure: its code from marshal, globals from its module."""
    glob = importlib.import_module(module).__dict__
    closure = tuple(types.CellType(c) for c in cells) if cells else None
    return types.FunctionType(marshal.loads(code), glob, name, defaults, closure)


def _picklable(fn: Any, outer: frozenset[int] = frozenset()) -> Any:
    """``fn`` itself when pickle can find it by name, else a rebuildable description (also
    for the lambdas and local functions it closes over)."""
    qual = getattr(fn, "__qualname__", "")
    if not isinstance(fn, types.FunctionType) or (
        "<lambda>" not in qual and "<locals>" not in qual
    ):
        return fn
    if id(fn) in outer:  # a local function closing over itself: pickle reports it
        return fn
    inner = outer | {id(fn)}
    cells = tuple(_picklable(c.cell_contents, inner) for c in fn.__closure__ or ())
    code = marshal.dumps(fn.__code__)
    return _FunctionRecipe(code, fn.__module__, fn.__name__, fn.__defaults__, cells)


class _FunctionRecipe:
    def __init__(
        self, code: bytes, module: str, name: str, defaults: Any, cells: tuple[Any, ...]
    ) -> None:
        self.args = (code, module, name, defaults, cells)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_rebuild_function, self.args)


def _wants_ctx(fn: Callable[..., Any]) -> bool:
    try:
        return "ctx" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


MatchEntry = tuple[UPat, RewriteFn, frozenset[Ops], bool]
CompiledRule = tuple[Callable[[UOp, Any, RewriteFn], UOp | None], RewriteFn]


def _rejecting(match: Callable[..., Any], required: frozenset[Ops]) -> Callable[..., Any]:
    """``match`` run only on nodes whose sources include every op of ``required``."""

    def gated(uop: UOp, ctx: Any, fn: RewriteFn) -> UOp | None:
        if not required <= {s.op for s in uop.src}:
            return None
        ret: UOp | None = match(uop, ctx, fn)
        return ret

    return gated


class RuleTable(dict[Ops, tuple[CompiledRule, ...]]):
    """op -> the compiled rules for that op, in order (empty: no rule); an op's rules are
    compiled the first time a node of that op is looked up."""

    def __init__(self, pdict: dict[Ops, list[MatchEntry]], compiled: bool = True) -> None:
        super().__init__()
        self.pdict = pdict
        self.compiled = compiled

    def __missing__(self, op: Ops) -> tuple[CompiledRule, ...]:
        entries = self.pdict.get(op, ())
        rules = tuple(
            (
                pat.compiled(kind) if self.compiled else _interpreted(pat, kind),
                fn,
            )
            for pat, fn, _, wants_ctx in entries
            for kind in ("call_ctx" if wants_ctx else "call",)
        )
        rules = tuple(
            (_rejecting(match, pat.early_reject) if pat.custom_reject else match, fn)
            for (match, fn), (pat, _, _, _) in zip(rules, entries, strict=True)
        )
        self[op] = rules
        return rules

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (RuleTable, (self.pdict, self.compiled))  # generated code does not pickle


class PatternMatcher:
    """An ordered table of rewrite rules. ``rewrite(uop)`` returns the result of the first rule
    whose pattern matches and whose function returns a UOp (None when none does).

    A rule function receives the captures as keyword arguments, and ``ctx`` too if it has a
    parameter of that name. Tables combine with ``+`` (left rules first).

    Matching runs each pattern's generated Python (``UPat.compiled``); ``rules[op]`` lists
    them for an op (the rewrite engine reads it to skip nodes no rule is about).
    """

    def __init__(self, patterns: Sequence[tuple[UPat, RewriteFn]], compiled: bool = True) -> None:
        self.compiled = compiled
        self.patterns: list[tuple[UPat, RewriteFn]] = list(patterns)
        self.pdict: dict[Ops, list[MatchEntry]] = {}
        for pat, fn in self.patterns:
            if not isinstance(pat, UPat):
                raise TypeError(f"PatternMatcher: expected a UPat, got {type(pat).__name__}")
            entry = (pat, fn, pat.early_reject, _wants_ctx(fn))
            for op in pat.op if pat.op is not None else Ops:
                self.pdict.setdefault(op, []).append(entry)
        self.rules = RuleTable(self.pdict, compiled)

    def __add__(self, more: PatternMatcher) -> PatternMatcher:
        return PatternMatcher(self.patterns + more.patterns, self.compiled and more.compiled)

    def __len__(self) -> int:
        return len(self.patterns)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        patterns = [(p, _picklable(f)) for p, f in self.patterns]
        return (_rebuild_matcher, (patterns, self.compiled))

    def rewrite(self, uop: UOp, ctx: Any = None) -> UOp | None:
        """The first rule's result for ``uop``, or None."""
        for match, fn in self.rules[uop.op]:
            ret = match(uop, ctx, fn)
            if ret is not None:
                return ret
        return None

    def rewrite_interpreted(self, uop: UOp, ctx: Any = None) -> UOp | None:
        """``rewrite`` through the interpreted matcher (the reference; for tests)."""
        entries = self.pdict.get(uop.op)
        if not entries:
            return None
        src_ops = {s.op for s in uop.src}
        for pat, fn, early_reject, wants_ctx in entries:
            if early_reject and not early_reject <= src_ops:
                continue
            for captures in pat.match_interpreted(uop, {}):
                ret = fn(ctx=ctx, **captures) if wants_ctx else fn(**captures)
                if ret is not None and ret is not uop:
                    return ret
        return None

    def rewrite_traced(
        self, uop: UOp, ctx: Any, on_match: Callable[[UPat, RewriteFn, UOp, UOp], None]
    ) -> UOp | None:
        """``rewrite`` that reports the rule that fired (for DEBUG/VIZ/TRACK_MATCH_STATS)."""
        rules = self.rules[uop.op]
        for (match, fn), (pat, _, _, _) in zip(rules, self.pdict.get(uop.op, ()), strict=True):
            ret = match(uop, ctx, fn)
            if ret is not None:
                on_match(pat, fn, uop, ret)
                return ret
        return None


def _rebuild_matcher(patterns: list[tuple[UPat, Any]], compiled: bool = True) -> PatternMatcher:
    return PatternMatcher(patterns, compiled)


def rule_name(fn: Callable[..., Any]) -> str:
    """A readable name for a rule function: ``file:line`` of its definition."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return repr(fn)
    return f"{code.co_filename.rsplit('/', 1)[-1]}:{code.co_firstlineno}"


def deconstruct_function(fxn: Callable[..., Any]) -> tuple[Any, ...]:
    """``fxn`` as the parts ``types.FunctionType`` rebuilds it from: (code, the globals its
    code and nested code read, name, defaults, closure). ``types.FunctionType(*parts)`` is a
    function equal in behaviour, independent of the module it came from (tinygrad uses it to
    ship rewrite functions for process replay).

    >>> import types
    >>> k = 3
    >>> parts = deconstruct_function(lambda x: x * k)
    >>> types.FunctionType(*parts)(2)
    6
    """
    if not isinstance(fxn, types.FunctionType):
        raise TypeError(
            f"deconstruct_function: expected a Python function, got {type(fxn).__name__}"
        )
    names: set[str] = set()
    codes = [fxn.__code__]
    while codes:
        code = codes.pop()
        names.update(code.co_names)
        codes.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    used = {k: v for k, v in fxn.__globals__.items() if k in names}
    used["__builtins__"] = fxn.__globals__.get("__builtins__", __builtins__)
    return fxn.__code__, used, fxn.__name__, fxn.__defaults__, fxn.__closure__


def upat_interpret(p: UPat, fxn: Callable[..., Any]) -> Callable[..., Any]:
    """The rule ``(p, fxn)`` as one function ``match(uop, ctx=None)`` that matches by walking
    the pattern (no generated code): ``fxn``'s result for the first capture it accepts, else
    None."""
    match = _interpreted(p, "call_ctx" if _wants_ctx(fxn) else "call")

    def interpret(uop: UOp, ctx: Any = None) -> UOp | None:
        ret: UOp | None = match(uop, ctx, fxn)
        return ret

    return interpret


def upat_deferred_compile(p: UPat, fxn: Callable[..., Any], entry: list[Any]) -> Callable[..., Any]:
    """The rule ``(p, fxn)`` as a function ``match(uop, ctx=None)`` compiled on its first
    call: that call generates ``p``'s matcher, stores the compiled function in ``entry`` in
    place of this one (its last item), and matches; later calls through ``entry[-1]`` run the
    compiled code directly."""

    def deferred(uop: UOp, ctx: Any = None) -> UOp | None:
        compiled = p.compiled("call_ctx" if _wants_ctx(fxn) else "call")

        def run(u: UOp, c: Any = None) -> UOp | None:
            ret: UOp | None = compiled(u, c, fxn)
            return ret

        entry[-1] = run
        return run(uop, ctx)

    return deferred
