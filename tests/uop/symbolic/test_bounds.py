"""Range analysis (vmin/vmax) for every ALU op: exact values for the cases below, and
soundness (every value a node takes lies within its bounds) by exhaustive evaluation."""

from __future__ import annotations

import itertools
import math

import pytest
from fusegrad.uop import Invalid, UOp, dtypes, sym_infer

x = UOp.variable("x", 0, 10)
z = UOp.variable("z", -5, 5)
d = UOp.variable("d", -3, 3)
i8 = UOp.variable("i8", 100, 127, dtypes.int8)
u8 = UOp.variable("u8", 0, 255, dtypes.uint8)
f = UOp.variable("f", -2.0, 3.0, dtypes.float32)

BOUNDS = [
    ("x+z", lambda: x + z, -5, 15),
    ("x-z", lambda: x - z, -5, 15),
    ("x*z", lambda: x * z, -50, 50),
    ("-z", lambda: -z, -5, 5),
    ("x//3", lambda: x // 3, 0, 3),
    ("z//3", lambda: z // 3, -2, 1),
    ("z.cdiv(3)", lambda: z.cdiv(3), -1, 1),
    ("x//d", lambda: x // d, -10, 10),  # d may be 0: x//0 is 0
    ("x%3", lambda: x % 3, 0, 2),
    ("z%3", lambda: z % 3, 0, 2),
    ("z%-3", lambda: z % -3, -2, 0),
    ("z.cmod(3)", lambda: z.cmod(3), -2, 2),
    ("x.cmod(3)", lambda: x.cmod(3), 0, 2),
    ("x%0", lambda: x % UOp.const(0, dtypes.weakint), 0, 0),
    ("x.cmod(0)", lambda: x.cmod(0), 0, 0),
    ("max(x,z)", lambda: x.maximum(z), 0, 10),
    ("x<z", lambda: x < z, False, True),
    ("x<11", lambda: x < 11, True, True),
    ("x!=11", lambda: x.ne(11), True, True),
    ("x==11", lambda: x.eq(11), False, False),
    ("x&z", lambda: x & z, 0, 10),
    ("z&z", lambda: z & (z - 1), -8, 7),
    ("x|3", lambda: x | 3, 3, 15),
    ("z|1", lambda: z | 1, -8, 7),
    ("x^5", lambda: x ^ 5, 0, 15),
    ("x<<2", lambda: x << 2, 0, 40),
    ("z>>1", lambda: z >> 1, -3, 2),
    ("x<<z", lambda: x << z, 0, 320),  # a negative shift gives 0
    ("z>>d", lambda: z >> d, -5, 5),
    ("where", lambda: (x < 5).where(z, x + 20), -5, 30),
    ("valid", lambda: x.valid((x > 2) & (x < 7)), 3, 6),
    ("range", lambda: UOp.range(16, 0), 0, 15),
    ("i8+1 wraps", lambda: i8 + 1, -128, 127),
    ("i8-100 fits", lambda: i8 - 100, 0, 27),
    ("u8-1 wraps", lambda: u8 - 1, 0, 255),
    ("u8//16", lambda: u8 // 16, 0, 15),
    ("cast wraps", lambda: (x * 30).cast(dtypes.int8), -128, 127),
    ("cast fits", lambda: (x * 10).cast(dtypes.int8), 0, 100),
    ("cast to bool", lambda: (x + 1).cast(dtypes.bool), True, True),
    ("bool to int", lambda: (x < 5).cast(dtypes.int32), 0, 1),
    ("int to float", lambda: x.cast(dtypes.float16), 0.0, 10.0),
    ("float add", lambda: f + 1.0, -1.0, 4.0),
    ("float mul", lambda: f * f, -6.0, 9.0),
    ("float to int: NaN gives int32 min", lambda: f.cast(dtypes.int32), -(2**31), 3),
    ("float < is not True when NaN is possible", lambda: f < 4.0, False, True),
    ("Invalid is empty", UOp.invalid, 2**63 - 1, -(2**63)),
]


@pytest.mark.parametrize(("name", "build", "lo", "hi"), BOUNDS, ids=[b[0] for b in BOUNDS])
def test_bounds_of(name: str, build: object, lo: object, hi: object) -> None:
    u = build()  # type: ignore[operator]
    assert (u.vmin, u.vmax) == (lo, hi)


def _values(u: UOp) -> list[dict[str, int]]:
    variables = u.variables()
    ranges = [range(v.arg[1], v.arg[2] + 1) for v in variables]
    return [
        {v.arg[0]: val for v, val in zip(variables, point, strict=True)}
        for point in itertools.product(*ranges)
    ]


@pytest.mark.parametrize(
    ("name", "build"), [(b[0], b[1]) for b in BOUNDS[:40] if "range" not in b[0]],
    ids=[b[0] for b in BOUNDS[:40] if "range" not in b[0]],
)  # fmt: skip
def test_bounds_are_sound_by_exhaustive_evaluation(name: str, build: object) -> None:
    u = build()  # type: ignore[operator]
    for values in _values(u):
        v = sym_infer(u, values)
        if v is not Invalid:
            assert u.vmin <= v <= u.vmax, (values, v)


def test_float_cast_bounds_include_the_nan_value() -> None:
    g = UOp.variable("g", -2.0, 3.0, dtypes.float32)
    nan_source = (g / g).cast(dtypes.int32)  # 0/0 is NaN -> int64 min wrapped to 0
    assert nan_source.vmin <= sym_infer(nan_source, {"g": 0.0}) <= nan_source.vmax
    assert math.isnan(sym_infer(g / g, {"g": 0.0}))
