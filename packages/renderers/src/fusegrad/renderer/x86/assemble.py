"""From allocated machine IR to a function: frame, prologue/epilogue, label resolution, the
constant pool, and the listing text that is the renderer's output.

The frame (rsp-relative, below the saved registers): the register arguments stored at entry
(8 bytes each), then the spill slots. Arguments past the sixth are read where the caller
left them, above the return address. Every jump is a rel32 and every pool operand a
rip-relative disp32, so one pass measures the code and a second fills in the offsets.

The listing has one line per instruction — offset, machine code in hex, assembly — and the
pool after the code; ``X86Compiler`` reads the bytes back from it (``code_of``).
"""

from __future__ import annotations

import functools
import re
import struct
from dataclasses import dataclass

from fusegrad.renderer.x86.context import Selection, frame_slot
from fusegrad.renderer.x86.encode import Fixup, encode
from fusegrad.renderer.x86.isa import ARG_REGS, CALLEE_SAVED, RSP, Imm, Inst, Mem
from fusegrad.renderer.x86.listing import format_inst
from fusegrad.renderer.x86.regalloc import linear_scan, rewrite

_POOL_ALIGN = 32
#: registers one instruction can borrow for spilled operands (``regalloc.rewrite``)
_BORROW_SLOTS = 4


#: placed frame slots, per frame (kernels of one program share frame shapes)
_PLACED: dict[tuple[Frame, Mem], Mem] = {}
_PLACED_MAX = 1 << 16


@dataclass(frozen=True, slots=True)
class Frame:
    """Where the frame slots are, once the saved registers and spills are known: the
    register arguments (8 bytes each), the spill slots (``slot`` bytes: a whole ymm, or zmm
    with AVX-512), a slot for moving vector lanes (``vtemp``) and the borrowed registers'."""

    nargs: int
    spills: int
    saved: int
    slot: int = 32

    @property
    def _args(self) -> int:
        return 8 * min(self.nargs, len(ARG_REGS))

    @property
    def size(self) -> int:
        raw = self._args + self.slot * (self.spills + 1 + _BORROW_SLOTS)
        return raw + (8 if (raw + 8 * self.saved + 8) % 16 else 0)  # keep rsp 16-aligned

    def place(self, m: Mem) -> Mem:
        """The rsp-relative memory of frame slot ``m``."""
        assert m.frame is not None
        placed = _PLACED.get((self, m))
        if placed is None:
            if len(_PLACED) > _PLACED_MAX:
                _PLACED.clear()
            placed = _PLACED[(self, m)] = self._place(m)
        return placed

    def _place(self, m: Mem) -> Mem:
        assert m.frame is not None
        kind, n = m.frame
        spills = self._args + self.slot * self.spills
        if kind == "spill":
            return Mem(base=RSP, disp=self._args + self.slot * n)
        if kind == "vtemp":
            return Mem(base=RSP, disp=spills + n)
        if kind == "borrow":
            return Mem(base=RSP, disp=spills + self.slot * (1 + n))
        if n < len(ARG_REGS):
            return Mem(base=RSP, disp=8 * n)
        return Mem(base=RSP, disp=self.size + 8 * self.saved + 8 + 8 * (n - len(ARG_REGS)))


def function(sel: Selection, nargs: int) -> list[Inst]:
    """The whole function: prologue, the allocated body, epilogue."""
    alloc = linear_scan(sel.code, 64 if sel.wide else 32)
    saved = sorted(alloc.used & CALLEE_SAVED, key=lambda r: r.num)
    frame = Frame(nargs, len(alloc.spills), len(saved), alloc.vector_bytes)
    placed: dict[Mem, Mem] = {}  # this function's slots (no Frame hashing per operand)

    def place(m: Mem) -> Mem:
        where = placed.get(m)
        if where is None:
            where = placed[m] = frame.place(m)
        return where

    body = rewrite(sel.code, alloc, place)
    head = [Inst("push", (r,)) for r in saved]
    tail = [Inst("vzeroupper")] + [Inst("pop", (r,)) for r in reversed(saved)] + [Inst("ret")]
    if frame.size:
        head.append(Inst("sub", (RSP, Imm(frame.size))))
        tail.insert(1, Inst("add", (RSP, Imm(frame.size))))
    head += [
        Inst("store", (Mem(base=RSP, disp=8 * k), ARG_REGS[k]))
        for k in range(min(nargs, len(ARG_REGS)))
    ]
    return head + body + tail


@dataclass(frozen=True, slots=True)
class Assembled:
    """Machine code (code then constant pool) and its listing."""

    code: bytes
    listing: str


@functools.lru_cache(maxsize=1 << 15)
def _encoded(inst: Inst) -> tuple[bytes, Fixup | None]:
    """(bytes, fix-up) of one instruction. Cached: a kernel repeats instructions (reloads,
    spill stores, loop tests), and so do the kernels of one program."""
    if inst.op == "label":
        return b"", None
    return encode(inst)


def clear_caches() -> None:
    """Forget cached instruction encodings, listing text, placed frame slots and recent
    listings, so the next kernel compiles cold (compile-time measurements)."""
    from fusegrad.renderer.x86.listing import clear_listing_caches

    _encoded.cache_clear()
    frame_slot.cache_clear()
    _PLACED.clear()
    _RECENT.clear()
    clear_listing_caches()


#: the machine code of the latest listings, so compiling a listing just rendered skips
#: reading it back (``code_of``)
_RECENT: dict[str, tuple[str, bytes]] = {}
_RECENT_MAX = 64


def assemble(name: str, sel: Selection, nargs: int, listing: bool = True) -> Assembled:
    """Lay out, encode and list the function of ``sel``. ``listing``: one line per
    instruction with its assembly; else the code in one line of hex (all ``code_of`` needs,
    without formatting every instruction)."""
    insts = function(sel, nargs)
    encoded = [_encoded(i) for i in insts]
    labels: dict[str, int] = {}
    offsets: list[int] = []
    fixups: list[tuple[int, int, Fixup]] = []
    pos = 0
    for inst, (raw, fix) in zip(insts, encoded, strict=True):
        offsets.append(pos)
        if not raw:
            labels[inst.args[0].name] = pos  # type: ignore[union-attr,index]
        elif fix is not None:
            fixups.append((pos, pos + len(raw), fix))
        pos += len(raw)
    pool_start = at = -(-pos // _POOL_ALIGN) * _POOL_ALIGN
    for entry, label in sel.pool.items():  # 32-byte entries, 64 for a zmm vector
        labels[label] = at
        at += len(entry)
    code = bytearray(b"".join(raw for raw, _ in encoded))
    for at, end, fix in fixups:  # rel32 = target - end of the instruction
        struct.pack_into("<i", code, at + fix.offset, labels[fix.label] - end)
    if sel.pool:
        code += b"\xcc" * (pool_start - len(code))
        code += b"".join(sel.pool)
    if listing:
        text = _listing(name, insts, [*offsets, pos], code, pool_start, sel.pool)
    else:
        text = _compact(name, len(insts), code)
    out = Assembled(bytes(code), text)
    if len(_RECENT) >= _RECENT_MAX:
        del _RECENT[next(iter(_RECENT))]
    _RECENT[out.listing] = (name, out.code)
    return out


def _compact(name: str, count: int, code: bytearray) -> str:
    """The listing without assembly: the header, then all the bytes in one line."""
    return (
        f"; fusegrad x86-64 kernel {name}\n"
        f"; {count} instructions, {len(code)} bytes with the constant pool "
        "(DEBUG=4 or X86Renderer(listing=True) lists them)\n"
        f"{name}:\n{0:6x}: {code.hex()}\n"
    )


def _listing(
    name: str,
    insts: list[Inst],
    offsets: list[int],
    code: bytearray,
    pool_start: int,
    pool: dict[bytes, str],
) -> str:
    """One line per instruction (offset, bytes in hex, assembly), then the pool;
    ``offsets``: of each instruction, then of the end of the code."""
    lines = [f"; fusegrad x86-64 kernel {name}", f"{name}:"]
    for inst, at, end in zip(insts, offsets, offsets[1:], strict=False):
        text = format_inst(inst)
        if at == end:  # a label
            lines.append(text)
            continue
        lines.append(f"{at:6x}: {code[at:end].hex():<30} {text}")
    if pool:
        end = offsets[-1]
        lines.append(f"{end:6x}: {'cc' * (pool_start - end):<30} ; padding")
        at = pool_start
        for entry, label in pool.items():
            lines.append(f"{label}:")
            lines.append(f"{at:6x}: {entry.hex()} ; {_describe(entry)}")
            at += len(entry)
    return "\n".join(lines) + "\n"


def _describe(entry: bytes) -> str:
    f32 = struct.unpack_from("<f", entry)[0]
    f64 = struct.unpack_from("<d", entry)[0]
    return f"f32 {f32!r} / f64 {f64!r}"


_CODE_LINE = re.compile(r"^\s*([0-9a-f]+): ([0-9a-f]*)(?:\s|$)")
_HEADER = re.compile(r"^; fusegrad x86-64 kernel ([A-Za-z_][A-Za-z0-9_]*)$")


class ListingError(ValueError):
    """A listing that is not the x86 renderer's output."""


def code_of(listing: str) -> tuple[str, bytes]:
    """(function name, machine code) read back from a listing."""
    recent = _RECENT.get(listing)
    if recent is not None:
        return recent
    lines = listing.splitlines()
    head = _HEADER.match(lines[0]) if lines else None
    if head is None:
        raise ListingError(
            "not an x86 listing: the first line must be '; fusegrad x86-64 kernel NAME'"
        )
    code = bytearray()
    for n, line in enumerate(lines[1:], 2):
        m = _CODE_LINE.match(line)
        if m is None:
            continue
        if int(m.group(1), 16) != len(code):
            raise ListingError(f"line {n}: offset {m.group(1)} but {len(code):x} bytes precede it")
        code += bytes.fromhex(m.group(2))
    return head.group(1), bytes(code)
