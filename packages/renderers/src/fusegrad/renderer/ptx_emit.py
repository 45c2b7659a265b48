"""The PTX renderer's register model and its instruction writer.

Every scalar value lives in a virtual register of one of six classes (PTX declares them
``%p<n>``, ``%h<n>``, ``%r<n>``, ``%rd<n>``, ``%f<n>``, ``%fd<n>``; ptxas allocates them):

=============================  ======  ============================================
dtype                          class   in the register
=============================  ======  ============================================
bool                           ``p``   a predicate
int8 .. uint32                 ``r``   32 bits, sign- or zero-extended
int64, uint64                  ``rd``  64 bits
float16, bfloat16, fp8, float  ``f``   a float32 holding a value of the dtype
float64                        ``fd``  64 bits
(scratch for float16 bits)     ``h``   16 bits
=============================  ======  ============================================

Narrow integers are kept extended so comparisons, division and shifts see their value; an
op whose 32-bit result can leave the dtype's range is followed by a re-extension (``wrap``).
float16/bfloat16 (and fp8e4m3/fp8e5m2 on sm_89+, converted by ``cvt ... e4m3x2``) compute
in float32 and round to the dtype after every rounded op (``round_narrow``), as ``exec_alu``
does; exactly as the C renderer, the round trip through float32 is innocuous (24 >= 2 * 11 + 2
significant bits).
"""

from __future__ import annotations

import math
import struct

from fusegrad.uop import DType, dtypes

#: register class -> PTX register type
CLASSES = {"p": ".pred", "h": ".b16", "r": ".b32", "rd": ".b64", "f": ".f32", "fd": ".f64"}
NARROW_FLOATS = (dtypes.float16, dtypes.bfloat16, dtypes.fp8e4m3, dtypes.fp8e5m2)
#: fp8 dtypes: the PTX type of a converted pair, and the code exec_alu gives NaN (no sign)
FP8 = {dtypes.fp8e4m3: ("e4m3x2", 0x7F), dtypes.fp8e5m2: ("e5m2x2", 0x7E)}

_WRAP = {
    dtypes.int8: "cvt.s32.s8 {r}, {r};",
    dtypes.uint8: "and.b32 {r}, {r}, 255;",
    dtypes.int16: "cvt.s32.s16 {r}, {r};",
    dtypes.uint16: "and.b32 {r}, {r}, 65535;",
}


def reg_class(dt: DType) -> str:
    """The register class of one lane of ``dt``."""
    s = dt.scalar()
    if s is dtypes.bool:
        return "p"
    if s is dtypes.float64:
        return "fd"
    if dtypes.is_float(s):
        if s is not dtypes.float32 and s not in NARROW_FLOATS:
            raise NotImplementedError(f"PTX renderer: no register form for {dt!r}")
        return "f"
    return "rd" if s.itemsize == 8 else "r"


def op_type(dt: DType) -> str:
    """The instruction type suffix for arithmetic on ``dt`` (narrow ints as 32-bit)."""
    s = dt.scalar()
    if s is dtypes.float64:
        return "f64"
    if dtypes.is_float(s):
        return "f32"
    width = 64 if s.itemsize == 8 else 32
    return f"{'u' if s in dtypes.uints else 's'}{width}"


def bit_type(dt: DType) -> str:
    """The bit-size type of ``dt``'s register (``b32``/``b64``; ``pred`` for bool)."""
    cls = reg_class(dt)
    return {"p": "pred", "r": "b32", "f": "b32", "rd": "b64", "fd": "b64", "h": "b16"}[cls]


def immediate(dt: DType, v: object) -> str:
    """A PTX immediate of scalar dtype ``dt`` (floats as exact hex bit patterns)."""
    s = dt.scalar()
    if s is dtypes.float64:
        return "0d" + struct.pack(">d", float(v)).hex().upper()  # type: ignore[arg-type]
    if dtypes.is_float(s):
        x = float(v)  # type: ignore[arg-type]
        bits = 0x7FC00000 if math.isnan(x) else struct.unpack(">I", struct.pack(">f", x))[0]
        return f"0f{bits:08X}"
    value = int(v)  # type: ignore[call-overload]
    width = 64 if s.itemsize == 8 else 32
    value &= (1 << width) - 1
    return str(value - (1 << width) if value >> (width - 1) else value)


class Emitter:
    """The instruction list of one kernel and its virtual registers and labels."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.counts = dict.fromkeys(CLASSES, 0)
        self._labels = 0

    def new(self, cls: str) -> str:
        """A fresh register of class ``cls``."""
        n = self.counts[cls]
        self.counts[cls] = n + 1
        return f"%{cls}{n}"

    def reg(self, dt: DType) -> str:
        """A fresh register for one lane of ``dt``."""
        return self.new(reg_class(dt))

    def emit(self, line: str) -> None:
        """Append an instruction (or directive) line."""
        self.lines.append(f"\t{line}")

    def new_label(self, stem: str) -> str:
        """A unique label name."""
        self._labels += 1
        return f"$L_{stem}_{self._labels}"

    def place(self, label: str) -> None:
        """Put ``label`` here."""
        self.lines.append(f"{label}:")

    def declarations(self) -> list[str]:
        """The ``.reg`` declarations of every register used."""
        return [f"\t.reg {CLASSES[c]} %{c}<{n}>;" for c, n in self.counts.items() if n]

    # -- small idioms ------------------------------------------------------------------------

    def wrap(self, dt: DType, r: str) -> str:
        """Re-extend a narrow integer result in ``r`` to its dtype's range (in place)."""
        form = _WRAP.get(dt.scalar())
        if form is not None:
            self.emit(form.format(r=r))
        return r

    def half_bits(self, x: str) -> str:
        """float32 ``x`` -> float16 bits in a 32-bit register: round to nearest even, NaN
        as ``0x7E00`` with ``x``'s sign (``exec_alu``'s NaN)."""
        h, out = self.new("h"), self.new("r")
        self.emit(f"cvt.rn.f16.f32 {h}, {x};")
        self.emit(f"cvt.u32.u16 {out}, {h};")
        return self._nan_bits(x, out, 0x7E00)

    def bfloat_bits(self, x: str) -> str:
        """float32 ``x`` -> bfloat16 bits in a 32-bit register: round to nearest even, NaN
        as ``0x7FC0`` with ``x``'s sign."""
        b, t = self.new("r"), self.new("r")
        self.emit(f"mov.b32 {b}, {x};")
        self.emit(f"shr.u32 {t}, {b}, 16;")
        self.emit(f"and.b32 {t}, {t}, 1;")
        self.emit(f"add.u32 {t}, {t}, 32767;")
        self.emit(f"add.u32 {t}, {t}, {b};")
        self.emit(f"shr.u32 {t}, {t}, 16;")
        return self._nan_bits(x, t, 0x7FC0)

    def _nan_bits(self, x: str, bits: str, quiet: int) -> str:
        p, sign = self.new("p"), self.new("r")
        self.emit(f"setp.nan.f32 {p}, {x}, {x};")
        self.emit(f"mov.b32 {sign}, {x};")
        self.emit(f"shr.u32 {sign}, {sign}, 16;")
        self.emit(f"and.b32 {sign}, {sign}, 32768;")
        self.emit(f"or.b32 {sign}, {sign}, {quiet};")
        self.emit(f"selp.b32 {bits}, {sign}, {bits}, {p};")
        return bits

    def from_half_bits(self, bits: str) -> str:
        """float16 bits (low half of a 32-bit register) -> float32 (exact)."""
        h, out = self.new("h"), self.new("f")
        self.emit(f"cvt.u16.u32 {h}, {bits};")
        self.emit(f"cvt.f32.f16 {out}, {h};")
        return out

    def from_bfloat_bits(self, bits: str) -> str:
        """bfloat16 bits (low half of a 32-bit register) -> float32 (exact)."""
        t, out = self.new("r"), self.new("f")
        self.emit(f"shl.b32 {t}, {bits}, 16;")
        self.emit(f"mov.b32 {out}, {t};")
        return out

    def fp8_bits(self, dt: DType, x: str) -> str:
        """float32 ``x`` -> fp8 bits in a 32-bit register: round to nearest even, saturating
        (infinities too, as exec_alu), NaN as exec_alu's code."""
        kind, nan = FP8[dt.scalar()]
        zero, h, out = self.new("f"), self.new("h"), self.new("r")
        self.emit(f"mov.b32 {zero}, 0f00000000;")
        self.emit(f"cvt.rn.satfinite.{kind}.f32 {h}, {zero}, {x};")  # x: the low byte
        self.emit(f"cvt.u32.u16 {out}, {h};")
        self.emit(f"and.b32 {out}, {out}, 255;")
        p = self.new("p")
        self.emit(f"setp.nan.f32 {p}, {x}, {x};")
        self.emit(f"selp.b32 {out}, {nan}, {out}, {p};")
        return out

    def from_fp8_bits(self, dt: DType, bits: str) -> str:
        """fp8 bits (low byte of a 32-bit register) -> float32 (exact, through float16)."""
        kind = FP8[dt.scalar()][0]
        h, pair, low, high, out = (self.new(c) for c in ("h", "r", "h", "h", "f"))
        self.emit(f"cvt.u16.u32 {h}, {bits};")
        self.emit(f"cvt.rn.f16x2.{kind} {pair}, {h};")
        self.emit(f"mov.b32 {{{low}, {high}}}, {pair};")
        self.emit(f"cvt.f32.f16 {out}, {low};")
        return out

    def narrow_bits(self, dt: DType, x: str) -> str:
        """float32 register ``x`` -> the bits of float16/bfloat16/fp8 ``dt``."""
        if dt.scalar() in FP8:
            return self.fp8_bits(dt, x)
        return self.half_bits(x) if dt.scalar() is dtypes.float16 else self.bfloat_bits(x)

    def from_narrow_bits(self, dt: DType, bits: str) -> str:
        """The bits of float16/bfloat16/fp8 ``dt`` -> its float32 value."""
        if dt.scalar() in FP8:
            return self.from_fp8_bits(dt, bits)
        if dt.scalar() is dtypes.float16:
            return self.from_half_bits(bits)
        return self.from_bfloat_bits(bits)

    def round_narrow(self, dt: DType, x: str) -> str:
        """float32 ``x`` rounded to float16/bfloat16/fp8 ``dt`` (unchanged for others)."""
        if dt.scalar() is dtypes.float16:
            h, out = self.new("h"), self.new("f")
            self.emit(f"cvt.rn.f16.f32 {h}, {x};")
            self.emit(f"cvt.f32.f16 {out}, {h};")
            return out
        if dt.scalar() in NARROW_FLOATS:
            return self.from_narrow_bits(dt, self.narrow_bits(dt, x))
        return x
