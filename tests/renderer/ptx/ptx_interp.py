"""A small PTX interpreter for the instruction subset the PTX renderer emits, written from the
PTX ISA's definitions (not from ``exec_alu``), so running the conformance corpus through it
checks the renderer's instruction sequences against the emulator without a GPU.

The ISA facts it encodes, where they differ from ``exec_alu``'s definitions (the renderer
must bridge each one):

* integer ``div``/``rem`` by zero are unspecified: the interpreter raises;
* ``shl``/``shr`` take an unsigned 32-bit amount and clamp it to the register width;
* ``cvt.rzi`` float -> int saturates to the destination range and gives 0 for NaN;
* float arithmetic is IEEE round-to-nearest-even without flushing subnormals, and produces
  the canonical NaN (``0x7FFFFFFF``, ``0x7FFF`` for f16, ``0x7FF...F`` for f64);
* ``cvt.f32.f16`` and friends give the canonical NaN too (payloads are not kept).

Registers hold raw bits (a predicate holds 0/1). Memory: each buffer is a bytearray at its
own address range; an access outside every buffer raises ``IndexError``. Threads of a block
run one after another up to each ``bar.sync`` (all of them must reach it).

``mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}.{f16,bf16}.f32`` (and ``m16n8k8``, the
same layout with K = 8) is warp-collective: a
thread that reaches it waits until all 32 threads of its warp (consecutive linear thread ids)
wait at the same instruction, then the product runs for the warp at once, with the fragment
layout of the PTX ISA (``groupID = lane >> 2``, ``threadID_in_group = lane % 4``; in a
``.b32`` register of two 16-bit elements, the lower-numbered one is the low half). The
products are summed exactly and rounded once to float32 (the hardware's order of additions
is unspecified; results agree within float32 accumulation error).
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

_WIDTH = {"8": 8, "16": 16, "32": 32, "64": 64}
_MASK = {w: (1 << w) - 1 for w in (8, 16, 32, 64)}
_CANONICAL_NAN = {16: 0x7FFF, 32: 0x7FFFFFFF, 64: 0x7FFFFFFFFFFFFFFF}


# -- values ---------------------------------------------------------------------------------------


def _width(t: str) -> int:
    return 1 if t == "pred" else _WIDTH[t[1:]]


def _signed(bits: int, w: int) -> int:
    bits &= _MASK[w]
    return bits - (1 << w) if bits >> (w - 1) else bits


def _value(bits: int, t: str) -> Any:
    """Raw bits -> the Python value of type ``t`` (ints, or a float for f16/f32/f64)."""
    w = _width(t)
    if t[0] == "f":
        fmt = {16: "<e", 32: "<f", 64: "<d"}[w]
        return struct.unpack(fmt, (bits & _MASK[w]).to_bytes(w // 8, "little"))[0]
    if t[0] == "s":
        return _signed(bits, w)
    return bits & _MASK[w] if t != "pred" else bits & 1


def _float_bits(x: float, w: int) -> int:
    """A float value (already representable at width ``w``) -> bits; NaN is canonical."""
    if math.isnan(x):
        return _CANONICAL_NAN[w]
    fmt = {16: "<e", 32: "<f", 64: "<d"}[w]
    return int.from_bytes(struct.pack(fmt, x), "little")


def _round_float(x: float, w: int) -> float:
    """Round a double to width ``w`` (nearest even; overflow to inf)."""
    if w == 64 or math.isnan(x) or math.isinf(x):
        return x
    with np.errstate(over="ignore"):
        return float(np.float32(x) if w == 32 else np.float16(x))


def _round_exact(x: Fraction, w: int) -> float:
    """An exact nonzero rational rounded once to float width ``w`` (32 or 64)."""
    p, emin, emax = (24, -126, 127) if w == 32 else (53, -1022, 1023)
    sign, mag = (-1.0 if x < 0 else 1.0), abs(x)
    e = mag.numerator.bit_length() - mag.denominator.bit_length()
    if Fraction(2) ** e > mag:
        e -= 1
    q = max(e, emin) - p + 1
    scaled = mag / Fraction(2) ** q
    n, rest = divmod(scaled.numerator, scaled.denominator)
    twice = 2 * rest
    if twice > scaled.denominator or (twice == scaled.denominator and n & 1):
        n += 1
    if n * Fraction(2) ** q >= Fraction(2) ** (emax + 1):
        return sign * math.inf
    return sign * math.ldexp(float(n), q)


def _fma(a: float, b: float, c: float, w: int) -> float:
    if not all(math.isfinite(v) for v in (a, b, c)):
        return a * b + c  # inf and NaN: no rounding involved
    total = Fraction(a) * Fraction(b) + Fraction(c)
    if total == 0:
        product_negative = math.copysign(1, a) * math.copysign(1, b) < 0
        both_negative = product_negative and math.copysign(1, c) < 0
        product_zero = a == 0 or b == 0
        return -0.0 if both_negative and product_zero and c == 0 else 0.0
    return _round_exact(total, w)


# -- the machine ---------------------------------------------------------------------------------


@dataclass
class Memory:
    """Named regions of one state space at fixed addresses."""

    regions: list[tuple[int, bytearray, str]] = field(default_factory=list)
    next_base: int = 0x1000

    def add(self, data: bytearray, name: str) -> int:
        base = self.next_base
        self.regions.append((base, data, name))
        self.next_base = base + ((len(data) + 0xFFFF) & ~0xFFF) + 0x10000
        return base

    def locate(self, addr: int, size: int, align: int) -> tuple[bytearray, int]:
        if addr % align:
            raise ValueError(f"PTX: misaligned {size}-byte access at {addr:#x} (align {align})")
        for base, data, name in self.regions:
            if base <= addr < base + len(data) + 1:
                off = addr - base
                if off + size > len(data):
                    raise IndexError(f"PTX: access {off}..{off + size} out of bounds of {name}")
                return data, off
        raise IndexError(f"PTX: address {addr:#x} is in no buffer")


@dataclass
class Thread:
    """One thread: registers, its ids, its .local memory."""

    tid: tuple[int, int, int]
    ctaid: tuple[int, int, int]
    ntid: tuple[int, int, int]
    nctaid: tuple[int, int, int]
    regs: dict[str, int] = field(default_factory=dict)
    local_mem: Memory = field(default_factory=Memory)
    pc: int = 0
    done: bool = False
    waiting: bool = False  # at a warp-collective instruction (mma.sync), not yet executed


_SPECIAL = re.compile(r"%(tid|ctaid|ntid|nctaid)\.([xyz])")
_ADDRESS = re.compile(r"\[([%\w$]+)(?:\+(-?\d+))?\]")


@dataclass
class Kernel:
    """A parsed kernel: parameters, .shared/.local declarations, instructions, labels."""

    name: str
    params: list[tuple[str, str]]
    shared: dict[str, int]
    local: dict[str, int]
    code: list[tuple[str | None, bool, str, list[str]]]
    labels: dict[str, int]


def _split_operands(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse(src: str) -> Kernel:
    """Parse the renderer's PTX module (one entry)."""
    m = re.search(r"\.entry (\w+)\((.*?)\)", src, re.S)
    assert m is not None, "no .entry"
    params = re.findall(r"\.param \.(\w+) (\w+)", m.group(2))
    body = src[src.index("{", m.end()) + 1 : src.rindex("}")]
    shared = {n: int(s) for n, s in re.findall(r"\.shared \.align \d+ \.b8 (\w+)\[(\d+)\]", body)}
    local = {n: int(s) for n, s in re.findall(r"\.local \.align \d+ \.b8 (\w+)\[(\d+)\]", body)}
    code: list[tuple[str | None, bool, str, list[str]]] = []
    labels: dict[str, int] = {}
    for raw in body.splitlines():
        line = raw.strip()
        if not line or line.startswith("."):
            continue
        if line.endswith(":"):
            labels[line[:-1]] = len(code)
            continue
        guard, negate = None, False
        if line.startswith("@"):
            g, line = line.split(None, 1)
            negate = g.startswith("@!")
            guard = g[2:] if negate else g[1:]
        line = line.rstrip(";")
        opcode, _, rest = line.partition(" ")
        code.append((guard, negate, opcode, _split_operands(rest)))
    return Kernel(m.group(1), params, shared, local, code, labels)


class Machine:
    """Runs one kernel launch over buffers."""

    def __init__(self, kernel: Kernel, buffers: Sequence[bytearray], scalars: Sequence[int]):
        self.k = kernel
        self.glob = Memory()
        self.param_values: dict[str, int] = {}
        bufs, vals = iter(buffers), iter(scalars)
        for t, name in kernel.params:
            if t == "u64":
                data = next(bufs)
                self.param_values[name] = self.glob.add(data, name)
            else:
                self.param_values[name] = next(vals) & _MASK[32]

    def launch(
        self,
        grid: Sequence[int],
        block: Sequence[int],
        only: Sequence[tuple[int, int, int]] | None = None,
    ) -> None:
        """Run every block of ``grid`` (or only the blocks ``only``, for huge grids)."""
        g = (*grid, 1, 1, 1)[:3]
        b = (*block, 1, 1, 1)[:3]
        if only is not None:
            for ctaid in only:
                if not all(0 <= c < n for c, n in zip(ctaid, g, strict=True)):
                    raise ValueError(f"PTX: block {ctaid} is outside the grid {g}")
                self._block(ctaid, g, b)
            return
        for bz in range(g[2]):
            for by in range(g[1]):
                for bx in range(g[0]):
                    self._block((bx, by, bz), g, b)

    def _block(self, ctaid: Any, grid: Any, block: Any) -> None:
        self.shared = Memory()
        self.shared_base = {n: self.shared.add(bytearray(s), n) for n, s in self.k.shared.items()}
        threads = [
            Thread((x, y, z), ctaid, block, grid)
            for z in range(block[2])
            for y in range(block[1])
            for x in range(block[0])
        ]
        for t in threads:  # each thread's own .local arrays
            for n, s in self.k.local.items():
                t.regs[f"__sym_{n}"] = t.local_mem.add(bytearray(s), n)
        while not all(t.done for t in threads):
            for t in threads:
                if not t.waiting:
                    self._run_to_barrier(t)
            self._warp_collectives(threads, block)

    def _warp_collectives(self, threads: list[Thread], block: Sequence[int]) -> None:
        """Run the mma.sync of every warp whose threads all wait at it."""
        warps: dict[int, list[Thread]] = {}
        for t in threads:
            lin = t.tid[0] + t.tid[1] * block[0] + t.tid[2] * block[0] * block[1]
            warps.setdefault(lin // 32, []).append(t)
        ran, waiting_any = False, False
        for warp in warps.values():
            waiting = [t for t in warp if t.waiting]
            if not waiting:
                continue
            waiting_any = True
            if len(waiting) != len([t for t in warp if not t.done]):
                continue  # the others are still on their way (past a bar.sync)
            if len(waiting) != 32 or len({t.pc for t in waiting}) != 1:
                raise RuntimeError("PTX: mma.sync reached by part of a warp or at different places")
            _mma(self, waiting)
            for t in waiting:
                t.waiting, t.pc = False, t.pc + 1
            ran = True
        if waiting_any and not ran and all(t.waiting or t.done for t in threads):
            raise RuntimeError("PTX: every thread waits at an mma.sync no warp can run")

    def _run_to_barrier(self, t: Thread) -> None:
        steps = 0
        while not t.done:
            guard, negate, opcode, ops = self.k.code[t.pc]
            t.pc += 1
            if guard is not None and bool(t.regs[guard]) == negate:
                continue
            if opcode == "bar.sync":
                return
            if opcode.startswith("mma."):
                t.pc -= 1
                t.waiting = True
                return
            self._execute(t, opcode, ops)
            steps += 1
            if steps > 5_000_000:
                raise RuntimeError("PTX: runaway kernel")

    # -- operands ---------------------------------------------------------------------------

    def read(self, t: Thread, op: str, typ: str) -> int:
        w = _width(typ)
        if op.startswith("%"):
            sm = _SPECIAL.fullmatch(op)
            if sm:
                return getattr(t, sm.group(1))["xyz".index(sm.group(2))]
            return t.regs[op] & (_MASK[w] if w > 1 else 1)
        if op.startswith("0f"):
            return int(op[2:], 16)
        if op.startswith("0d"):
            return int(op[2:], 16)
        if op in self.shared_base:
            return self.shared_base[op]
        if f"__sym_{op}" in t.regs:
            return t.regs[f"__sym_{op}"]
        return int(op, 0) & (_MASK[w] if w > 1 else 1)

    def write(self, t: Thread, op: str, bits: int) -> None:
        t.regs[op] = bits

    def address(self, t: Thread, op: str) -> int:
        m = _ADDRESS.fullmatch(op)
        assert m is not None, op
        base = m.group(1)
        if base in self.param_values:
            return self.param_values[base]
        return (t.regs[base] + int(m.group(2) or 0)) & _MASK[64]

    # -- execution --------------------------------------------------------------------------

    def _execute(self, t: Thread, opcode: str, ops: list[str]) -> None:
        parts = opcode.split(".")
        handler = _HANDLERS.get(parts[0])
        if handler is None:
            raise NotImplementedError(f"PTX interpreter: {opcode}")
        handler(self, t, parts[1:], ops)


# -- instruction semantics -----------------------------------------------------------------------

Handler = Callable[[Machine, Thread, list[str], list[str]], None]


def _type_of(mods: list[str]) -> str:
    return mods[-1]


def _int_result(value: int, typ: str) -> int:
    return value & _MASK[_width(typ)]


def _float_result(x: float, typ: str) -> int:
    w = _width(typ)
    return _float_bits(_round_float(x, w), w)


def _arith(fn_int: Callable[..., int], fn_float: Callable[..., float]) -> Handler:
    def run(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
        typ = _type_of(mods)
        args = [_value(m.read(t, o, typ), typ) for o in ops[1:]]
        if typ[0] == "f":
            with np.errstate(all="ignore"):
                m.write(t, ops[0], _float_result(fn_float(*args, _width(typ)), typ))
        else:
            m.write(t, ops[0], _int_result(fn_int(*args), typ))

    return run


def _div_int(a: int, b: int) -> int:
    if b == 0:
        raise ZeroDivisionError("PTX: integer division by zero is unspecified")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _rem_int(a: int, b: int) -> int:
    return a - b * _div_int(a, b)


def _fdiv(a: float, b: float, w: int) -> float:
    dt = np.float32 if w == 32 else np.float64
    return float(dt(a) / dt(b))


def _fsqrt(a: float, w: int) -> float:
    dt = np.float32 if w == 32 else np.float64
    return float(np.sqrt(dt(a)))


def _frcp(a: float, w: int) -> float:
    return _fdiv(1.0, a, w)


def _fmul(a: float, b: float, w: int) -> float:
    dt = np.float32 if w == 32 else np.float64
    return float(dt(a) * dt(b))


def _fadd(a: float, b: float, w: int) -> float:
    dt = np.float32 if w == 32 else np.float64
    return float(dt(a) + dt(b))


def _fsub(a: float, b: float, w: int) -> float:
    dt = np.float32 if w == 32 else np.float64
    return float(dt(a) - dt(b))


def _no_float(*args: Any) -> float:
    raise NotImplementedError("PTX interpreter: no float form")


def _mul(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
    typ = _type_of(mods)
    if "wide" in mods:
        a, b = (_value(m.read(t, o, typ), typ) for o in ops[1:])
        m.write(t, ops[0], _int_result(a * b, typ[0] + "64"))
        return
    _arith(lambda a, b: a * b, _fmul)(m, t, mods, ops)


def _mad(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
    typ = _type_of(mods)
    a, b, c = (_value(m.read(t, o, typ), typ) for o in ops[1:])
    m.write(t, ops[0], _int_result(a * b + c, typ))


def _fma_handler(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
    typ = _type_of(mods)
    a, b, c = (_value(m.read(t, o, typ), typ) for o in ops[1:])
    m.write(t, ops[0], _float_bits(_fma(a, b, c, _width(typ)), _width(typ)))


def _neg(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
    typ = _type_of(mods)
    w = _width(typ)
    bits = m.read(t, ops[1], typ)
    if typ[0] == "f":  # flips the sign bit, NaN too
        m.write(t, ops[0], bits ^ (1 << (w - 1)))
    else:
        m.write(t, ops[0], (-bits) & _MASK[w])


def _minmax(pick: Callable[[int, int], int]) -> Handler:
    def run(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
        typ = _type_of(mods)
        if typ[0] == "f":
            raise NotImplementedError("PTX interpreter: float min/max")
        a, b = (_value(m.read(t, o, typ), typ) for o in ops[1:])
        m.write(t, ops[0], _int_result(pick(a, b), typ))

    return run


def _bitwise(fn: Callable[[int, int], int]) -> Handler:
    def run(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
        typ = _type_of(mods)
        a, b = (m.read(t, o, typ) for o in ops[1:])
        m.write(t, ops[0], fn(a, b) & (_MASK[_width(typ)] if typ != "pred" else 1))

    return run


def _not(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
    typ = _type_of(mods)
    a = m.read(t, ops[1], typ)
    m.write(t, ops[0], (~a) & (_MASK[_width(typ)] if typ != "pred" else 1))


def _shift(left: bool) -> Handler:
    def run(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
        typ = _type_of(mods)
        w = _width(typ)
        amount = min(m.read(t, ops[2], "u32"), w)
        if left:
            m.write(t, ops[0], (m.read(t, ops[1], typ) << amount) & _MASK[w])
            return
        a = _value(m.read(t, ops[1], typ), typ if typ[0] != "b" else "u" + typ[1:])
        m.write(t, ops[0], (a >> amount) & _MASK[w])

    return run


def _compare(cmp: str, a: Any, b: Any, is_float: bool) -> bool:
    unordered = is_float and (math.isnan(a) or math.isnan(b))
    table = {
        "lt": lambda: a < b,
        "le": lambda: a <= b,
        "gt": lambda: a > b,
        "ge": lambda: a >= b,
        "eq": lambda: a == b,
        "ne": lambda: a != b,
    }
    if cmp == "nan":
        return unordered
    if cmp.endswith("u") and cmp != "nu":
        return unordered or table[cmp[:-1]]()
    return not unordered and table[cmp]()


def _setp(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
    typ = mods[-1]
    a, b = (_value(m.read(t, o, typ), typ) for o in ops[1:3])
    result = _compare(mods[0], a, b, typ[0] == "f")
    if len(mods) == 3:  # .cmp.boolop.type p, a, b, c
        c = bool(m.read(t, ops[3], "pred"))
        result = {"and": result and c, "or": result or c, "xor": result != c}[mods[1]]
    m.write(t, ops[0], int(result))


def _selp(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
    typ = _type_of(mods)
    pick = ops[1] if m.read(t, ops[3], "pred") else ops[2]
    m.write(t, ops[0], m.read(t, pick, typ))


def _mov(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
    typ = _type_of(mods)
    if ops[1].startswith("{"):  # pack, the first part in the low bits
        srcs = [x.strip() for x in ops[1].strip("{}").split(",")]
        width = _width(typ) // len(srcs)
        packed = 0
        for i, x in enumerate(srcs):
            packed |= (m.read(t, x, f"b{width}") & _MASK[width]) << (i * width)
        m.write(t, ops[0], packed)
        return
    value = m.read(t, ops[1], typ)
    if not ops[0].startswith("{"):
        m.write(t, ops[0], value)
        return
    parts = [d.strip() for d in ops[0].strip("{}").split(",")]  # unpack, low part first
    width = _width(typ) // len(parts)
    for i, d in enumerate(parts):
        m.write(t, d, (value >> (i * width)) & _MASK[width])


def _cvta(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
    m.write(t, ops[0], m.read(t, ops[1], "u64"))


_ISA_INT_LIMITS = {w: (-(1 << (w - 1)), (1 << (w - 1)) - 1) for w in (8, 16, 32, 64)}


def _float_to_int(x: float, typ: str) -> int:
    """cvt.rzi to an integer type: truncate, saturate, NaN -> 0."""
    if math.isnan(x):
        return 0
    w = _width(typ)
    lo, hi = _ISA_INT_LIMITS[w] if typ[0] == "s" else (0, _MASK[w])
    if math.isinf(x):
        return _int_result(hi if x > 0 else lo, typ)
    return _int_result(max(lo, min(hi, math.trunc(x))), typ)


def _cvt_float_to_float(x: float, dst: str, mods: list[str]) -> int:
    w = _width(dst)
    if "rzi" in mods:  # round to an integral value, toward zero
        return _float_bits(float(math.trunc(x)) if math.isfinite(x) else x, w)
    return _float_bits(_round_float(x, w), w)


# fp8 formats: exponent bits, mantissa bits, bias, largest finite value
_FP8 = {"e4m3x2": (4, 3, 7, 448.0), "e5m2x2": (5, 2, 15, 57344.0)}


def _fp8_code(value: float, kind: str) -> int:
    """The code of a finite, non-negative ``value`` on the fp8 grid."""
    _exp_bits, man_bits, bias, _ = _FP8[kind]
    if value < 2.0 ** (1 - bias):  # subnormal: exponent field 0
        return int(value / 2.0 ** (1 - bias - man_bits))
    e = math.frexp(value)[1] - 1
    return ((e + bias) << man_bits) | int((value / 2.0**e - 1) * 2**man_bits)


def fp8_encode(x: float, kind: str) -> int:
    """cvt.rn.satfinite to fp8: nearest even; beyond the largest finite value (infinities
    too) the largest finite value with the sign; NaN 0x7F."""
    if math.isnan(x):
        return 0x7F
    _exp_bits, man_bits, bias, largest = _FP8[kind]
    sign, a = (0x80 if math.copysign(1.0, x) < 0 else 0), abs(x)
    if a == 0:
        return sign
    if math.isinf(a):
        return sign | _fp8_code(largest, kind)
    e = max(math.frexp(a)[1] - 1, 1 - bias)
    quantum = 2.0 ** (e - man_bits)
    rounded = round(a / quantum) * quantum  # round() is nearest-even
    return sign | _fp8_code(min(rounded, largest), kind)


def fp8_decode(code: int, kind: str) -> float:
    """The value of an fp8 code (e4m3: only S.1111.111 is NaN; e5m2: IEEE-like)."""
    exp_bits, man_bits, bias, _ = _FP8[kind]
    sign = -1.0 if code & 0x80 else 1.0
    e, m = (code >> man_bits) & ((1 << exp_bits) - 1), code & ((1 << man_bits) - 1)
    if kind == "e4m3x2" and e == 15 and m == 7:
        return math.nan
    if kind == "e5m2x2" and e == 31:
        return math.nan if m else sign * math.inf
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - man_bits)
    return sign * (1 + m / 2**man_bits) * 2.0 ** (e - bias)


def _cvt_fp8(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
    kind = next(k for k in _FP8 if k in mods)
    if mods[-1] == "f32":  # d (16 bits) = {a -> high byte, b -> low byte}
        high, low = (fp8_encode(_value(m.read(t, o, "f32"), "f32"), kind) for o in ops[1:3])
        m.write(t, ops[0], (high << 8) | low)
        return
    pair = m.read(t, ops[1], "b16")  # f16x2 from two fp8: low byte -> low half
    halves = [_float_bits(fp8_decode((pair >> s) & 0xFF, kind), 16) for s in (0, 8)]
    m.write(t, ops[0], halves[0] | (halves[1] << 16))


def _cvt(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
    if any(k in mods for k in _FP8):
        _cvt_fp8(m, t, mods, ops)
        return
    dst, src = mods[-2], mods[-1]
    if dst == "bf16" and src == "f32":  # round to nearest even; NaN canonical
        m.write(t, ops[0], _bf16_bits(m.read(t, ops[1], "b32")))
        return
    raw = m.read(t, ops[1], src)
    if src[0] == "f" and dst[0] == "f":
        m.write(t, ops[0], _cvt_float_to_float(_value(raw, src), dst, mods))
    elif src[0] == "f":
        m.write(t, ops[0], _float_to_int(_value(raw, src), dst))
    elif dst[0] == "f":
        m.write(
            t, ops[0], _float_bits(_round_exact_int(_value(raw, src), _width(dst)), _width(dst))
        )
    else:  # extend by the source type's signedness, then keep the destination's bits
        value = _value(raw, src)
        w = max(_width(dst), 32)
        m.write(t, ops[0], value & _MASK[w])


def _bf16_bits(f32: int) -> int:
    """float32 bits -> bfloat16 bits, rounded to nearest even (NaN: 0x7FFF)."""
    if (f32 >> 23) & 0xFF == 0xFF and f32 & 0x7FFFFF:
        return 0x7FFF
    return ((f32 + 0x7FFF + ((f32 >> 16) & 1)) >> 16) & 0xFFFF


def _half_value(bits: int, kind: str) -> float:
    """A 16-bit element of an mma fragment as a Python float."""
    if kind == "bf16":
        return float(_value((bits & 0xFFFF) << 16, "f32"))
    return float(_value(bits, "f16"))


def _mma(m: Machine, warp: list[Thread]) -> None:
    """mma.sync m16n8k16 (m16n8k8) .row.col, f32 accumulators, f16/bf16 inputs, for one warp
    (lanes in linear thread order). D[16x8] = A[16xK] @ B[Kx8] + C."""
    first = warp[0]
    _guard, _neg, opcode, ops = m.k.code[first.pc]
    mods = opcode.split(".")
    shape = mods[3]
    if mods[1:3] != ["sync", "aligned"] or shape not in ("m16n8k16", "m16n8k8"):
        raise NotImplementedError(f"PTX interpreter: {opcode}")
    if mods[4:6] != ["row", "col"] or mods[6] != "f32":
        raise NotImplementedError(f"PTX interpreter: {opcode}")
    kind, depth = mods[7], 16 if shape == "m16n8k16" else 8
    regs = [[x.strip() for x in o.strip("{}").split(",")] for o in ops]
    d, a, b, c = regs
    big_a = [[0.0] * depth for _ in range(16)]
    big_b = [[0.0] * 8 for _ in range(depth)]
    acc = [[0.0] * 8 for _ in range(16)]
    for lane, t in enumerate(warp):
        group, tig = lane >> 2, lane % 4
        for i in range(depth // 2):
            bits = m.read(t, a[i // 2], "b32") >> (16 * (i % 2))
            row = group + 8 * ((i >> 1) & 1)
            col = tig * 2 + (i & 1) + 8 * (i >> 2)
            big_a[row][col] = _half_value(bits & 0xFFFF, kind)
        for i in range(depth // 4):
            bits = m.read(t, b[i // 2], "b32") >> (16 * (i % 2))
            big_b[tig * 2 + (i & 1) + 8 * (i >> 1)][group] = _half_value(bits & 0xFFFF, kind)
        for i in range(4):
            acc[group + 8 * (i >> 1)][tig * 2 + (i & 1)] = _value(m.read(t, c[i], "f32"), "f32")
    for lane, t in enumerate(warp):
        group, tig = lane >> 2, lane % 4
        for i in range(4):
            row, col = group + 8 * (i >> 1), tig * 2 + (i & 1)
            terms = [big_a[row][k] * big_b[k][col] for k in range(depth)] + [acc[row][col]]
            finite = all(math.isfinite(x) for x in terms)
            total = float(sum(Fraction(x) for x in terms)) if finite else sum(terms)
            m.write(t, d[i], _float_bits(_round_float(total, 32), 32))


def _round_exact_int(v: int, w: int) -> float:
    if v == 0:
        return 0.0
    if w == 16:
        return float(np.float16(_round_exact(Fraction(v), 32)))  # exact for the ints used
    return _round_exact(Fraction(v), w)


_ALIGN_TYPES = {"v2": 2, "v4": 4}


def _memory(m: Machine, t: Thread, space: str) -> Memory:
    if space == "global":
        return m.glob
    if space == "shared":
        return m.shared
    return t.local_mem


def _access(mods: list[str]) -> tuple[str, int, str]:
    space = mods[0]
    lanes = _ALIGN_TYPES.get(mods[1], 1)
    return space, lanes, mods[-1]


def _ld(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
    space, lanes, typ = _access(mods)
    if space == "param":
        m.write(t, ops[0], m.param_values[ops[1][1:-1]])
        return
    size = _width(typ) // 8
    mem, addr = _memory(m, t, space), m.address(t, ops[1])
    data, off = mem.locate(addr, size * lanes, size * lanes)
    dests = [d.strip() for d in ops[0].strip("{}").split(",")]
    for k, d in enumerate(dests):
        chunk = int.from_bytes(data[off + k * size : off + (k + 1) * size], "little")
        if typ[0] == "s":  # sign-extend into the (wider) register
            chunk = _signed(chunk, size * 8) & _MASK[64]
        m.write(t, d, chunk)


def _st(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
    space, lanes, typ = _access(mods)
    size = _width(typ) // 8
    mem, addr = _memory(m, t, space), m.address(t, ops[0])
    data, off = mem.locate(addr, size * lanes, size * lanes)
    srcs = [s.strip() for s in ops[1].strip("{}").split(",")]
    for k, s in enumerate(srcs):
        bits = m.read(t, s, "b64") & _MASK[size * 8]
        data[off + k * size : off + (k + 1) * size] = bits.to_bytes(size, "little")


def _bra(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
    t.pc = m.k.labels[ops[0]]


def _ret(m: Machine, t: Thread, mods: list[str], ops: list[str]) -> None:
    t.done = True


_HANDLERS: dict[str, Handler] = {
    "add": _arith(lambda a, b: a + b, _fadd),
    "sub": _arith(lambda a, b: a - b, _fsub),
    "mul": _mul,
    "div": _arith(_div_int, _fdiv),
    "rem": _arith(_rem_int, _no_float),
    "mad": _mad,
    "fma": _fma_handler,
    "neg": _neg,
    "max": _minmax(max),
    "min": _minmax(min),
    "and": _bitwise(lambda a, b: a & b),
    "or": _bitwise(lambda a, b: a | b),
    "xor": _bitwise(lambda a, b: a ^ b),
    "not": _not,
    "shl": _shift(True),
    "shr": _shift(False),
    "rcp": _arith(lambda a: 1 // a, _frcp),
    "sqrt": _arith(lambda a: a, _fsqrt),
    "setp": _setp,
    "selp": _selp,
    "mov": _mov,
    "cvta": _cvta,
    "cvt": _cvt,
    "ld": _ld,
    "st": _st,
    "bra": _bra,
    "ret": _ret,
}


def run_ptx(
    src: str,
    buffers: Sequence[bytearray],
    scalars: Sequence[int] = (),
    grid: Sequence[int] = (1, 1, 1),
    block: Sequence[int] = (1, 1, 1),
    only: Sequence[tuple[int, int, int]] | None = None,
) -> None:
    """Run the kernel in ``src`` over ``buffers`` (in parameter order) in place; with
    ``only``, just those blocks of the grid."""
    Machine(parse(src), buffers, scalars).launch(grid, block, only)
