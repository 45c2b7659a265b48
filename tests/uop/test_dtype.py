"""dtypes: the namespace, vectors and pointers, interning, and the promotion lattice checked
against NumPy (and PyTorch when installed)."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest
from fusegrad.uop import (
    AddrSpace,
    Context,
    DType,
    PtrDType,
    commit_weak,
    dtypes,
    least_upper_dtype,
    least_upper_float,
    promoted_dtype,
    sum_acc_dtype,
    to_dtype,
)
from hypothesis import given, settings
from hypothesis import strategies as st

INTS = [dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64]
UINTS = [dtypes.uint8, dtypes.uint16, dtypes.uint32, dtypes.uint64]
NUMPY_FLOATS = [dtypes.float16, dtypes.float32, dtypes.float64]
# every concrete dtype NumPy has
NUMPY_DTYPES = [dtypes.bool, *INTS, *UINTS, *NUMPY_FLOATS]
STRONG = [*NUMPY_DTYPES, dtypes.bfloat16, dtypes.fp8e4m3, dtypes.fp8e5m2]
ALL_SCALARS = [*STRONG, dtypes.weakint, dtypes.weakfloat]


def to_numpy(dt: DType) -> np.dtype:
    return np.dtype(dt.name)


# -- the namespace ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dt", NUMPY_DTYPES, ids=str)
def test_itemsize_min_max_match_numpy(dt: DType) -> None:
    npdt = to_numpy(dt)
    assert dt.itemsize == npdt.itemsize
    if dt is dtypes.bool:
        assert (dt.min, dt.max) == (False, True)
    elif dtypes.is_int(dt):
        info = np.iinfo(npdt)
        assert (dt.min, dt.max) == (int(info.min), int(info.max))
    else:
        assert (dt.min, dt.max) == (-float("inf"), float("inf"))


def test_exotic_float_sizes_and_finfo() -> None:
    assert [d.itemsize for d in (dtypes.bfloat16, dtypes.fp8e4m3, dtypes.fp8e5m2)] == [2, 1, 1]
    assert dtypes.finfo(dtypes.bfloat16) == (8, 7)
    assert dtypes.finfo(dtypes.fp8e4m3) == (4, 3)
    assert dtypes.finfo(dtypes.float16.vec(2)) == (5, 10)
    with pytest.raises(TypeError, match="not a float"):
        dtypes.finfo(dtypes.int32)


def test_aliases_are_the_same_objects() -> None:
    assert dtypes.half is dtypes.float16
    assert dtypes.float is dtypes.float32
    assert dtypes.double is dtypes.float64
    assert dtypes.int is dtypes.int32
    assert dtypes.long is dtypes.int64
    assert dtypes.uchar is dtypes.uint8
    assert dtypes.index is dtypes.weakint


def test_predicates() -> None:
    assert all(dtypes.is_int(d) and not dtypes.is_float(d) for d in INTS + UINTS)
    assert all(dtypes.is_unsigned(d) for d in UINTS)
    assert not any(dtypes.is_unsigned(d) for d in INTS)
    assert dtypes.is_int(dtypes.weakint) and dtypes.is_float(dtypes.weakfloat)
    assert dtypes.is_float(dtypes.bfloat16) and dtypes.is_float(dtypes.fp8e5m2)
    assert dtypes.is_bool(dtypes.bool.vec(4)) and not dtypes.is_int(dtypes.bool)
    assert dtypes.is_float(dtypes.float32.vec(4))


def test_from_py_and_weak_from_py() -> None:
    assert dtypes.from_py(True) is dtypes.bool
    assert dtypes.from_py(3) is dtypes.int32
    assert dtypes.from_py(3.0) is dtypes.float32
    assert dtypes.from_py([1, 2.0]) is dtypes.float32
    assert dtypes.from_py([[True], [False]]) is dtypes.bool
    assert dtypes.from_py([]) is dtypes.float32
    assert dtypes.weak_from_py(1) is dtypes.weakint
    assert dtypes.weak_from_py(1.0) is dtypes.weakfloat
    assert dtypes.weak_from_py(False) is dtypes.bool
    with pytest.raises(TypeError, match="str"):
        dtypes.from_py("1")


def test_to_dtype_by_name() -> None:
    assert to_dtype("float32") is dtypes.float32
    assert to_dtype("half") is dtypes.float16
    assert to_dtype(dtypes.int8) is dtypes.int8
    with pytest.raises(ValueError, match="unknown dtype name 'float128'"):
        to_dtype("float128")


def test_default_float_and_int_follow_context() -> None:
    assert dtypes.default_float is dtypes.float32
    assert dtypes.default_int is dtypes.int32
    with Context(DEFAULT_FLOAT="float16", DEFAULT_INT="int64"):
        assert dtypes.default_float is dtypes.float16
        assert dtypes.default_int is dtypes.int64
        assert promoted_dtype(dtypes.int8, dtypes.weakfloat) is dtypes.float16
        assert commit_weak(dtypes.weakint) is dtypes.int64
    assert dtypes.default_float is dtypes.float32


def test_default_float_setter_validates() -> None:
    old = dtypes.default_float
    try:
        dtypes.default_float = dtypes.float64
        assert dtypes.default_float is dtypes.float64
        with pytest.raises(TypeError, match="float dtype"):
            dtypes.default_float = dtypes.int32
        with pytest.raises(TypeError, match="int dtype"):
            dtypes.default_int = dtypes.float32
    finally:
        dtypes.default_float = old
    with Context(DEFAULT_FLOAT="int8"), pytest.raises(ValueError, match="DEFAULT_FLOAT='int8'"):
        _ = dtypes.default_float


# -- interning, vectors, pointers ---------------------------------------------------------------------


def test_dtypes_are_interned() -> None:
    assert DType.new(13, 32, "float32", "f") is dtypes.float32
    assert dtypes.float32.vec(4) is dtypes.float32.vec(4)
    assert dtypes.float32.ptr(16) is dtypes.float32.ptr(16)
    assert dtypes.float32.ptr(16) is not dtypes.float32.ptr(16, AddrSpace.LOCAL)


@pytest.mark.parametrize(
    "dt",
    [
        dtypes.float32,
        dtypes.weakint,
        dtypes.bfloat16.vec(8),
        dtypes.int8.ptr(),
        dtypes.float16.ptr(64, AddrSpace.LOCAL),
        dtypes.float32.ptr(4).vec(2),
    ],
    ids=repr,
)
def test_dtype_pickle_round_trip_is_identity(dt: DType) -> None:
    assert pickle.loads(pickle.dumps(dt)) is dt


def test_vec() -> None:
    v = dtypes.float32.vec(4)
    assert (v.count, v.scalar(), v.itemsize, repr(v)) == (
        4,
        dtypes.float32,
        16,
        "dtypes.float32.vec(4)",
    )
    assert dtypes.int8.vec(1) is dtypes.int8
    assert dtypes.void.vec(4) is dtypes.void
    with pytest.raises(ValueError, match="already a vector"):
        v.vec(2)
    with pytest.raises(ValueError, match="count must be >= 1"):
        dtypes.int8.vec(0)


def test_vector_of_a_weak_dtype_stays_weak() -> None:
    # regression: vec() dropped the weak flag
    assert dtypes.weakint.vec(4).weak
    assert not dtypes.int32.vec(4).weak


def test_ptr() -> None:
    p = dtypes.float16.ptr(64, AddrSpace.LOCAL)
    assert isinstance(p, PtrDType)
    assert (p.base, p.size, p.addrspace, p.nbytes) == (dtypes.float16, 64, AddrSpace.LOCAL, 128)
    assert repr(p) == "dtypes.float16.ptr(64, AddrSpace.LOCAL)"
    assert repr(dtypes.float32.ptr()) == "dtypes.float32.ptr(-1)"
    pv = p.vec(4)
    assert (pv.vcount, pv.scalar()) == (4, p)
    assert repr(pv).endswith(".vec(4)")
    with pytest.raises(TypeError, match="no pointers to pointers"):
        p.ptr()
    with pytest.raises(ValueError, match="no known size"):
        _ = dtypes.int8.ptr().nbytes
    with pytest.raises(ValueError, match="already a vector of pointers"):
        pv.vec(2)


def test_all_address_spaces_exist() -> None:
    assert {a.name for a in AddrSpace} == {"GLOBAL", "LOCAL", "REG", "ALU"}


# -- promotion -------------------------------------------------------------------------------------------


def expected_promotion(a: DType, b: DType) -> DType:
    """NumPy's promotion, except where we follow PyTorch on purpose:

    * a float meets an int: the float wins whatever the int's width (NumPy widens int16 +
      float16 to float32 and int32 + float32 to float64 to hold every int exactly);
    * a signed int meets uint64: no integer type holds both, so the result is the weak float,
      which commits to the default float (float32; NumPy says float64).
    """
    if dtypes.uint64 in (a, b) and {a, b} & set(INTS):
        return dtypes.default_float
    float_side = [d for d in (a, b) if dtypes.is_float(d)]
    if len(float_side) == 1:
        return float_side[0]
    return DType_by_numpy(np.promote_types(to_numpy(a), to_numpy(b)))


def DType_by_numpy(npdt: np.dtype) -> DType:
    return to_dtype(npdt.name)


@pytest.mark.parametrize(
    ("a", "b"), list(itertools.combinations_with_replacement(NUMPY_DTYPES, 2)), ids=str
)
def test_promotion_matches_numpy_except_documented_cases(a: DType, b: DType) -> None:
    assert promoted_dtype(a, b) is expected_promotion(a, b)
    if not least_upper_dtype(a, b).weak:
        assert least_upper_dtype(a, b) is promoted_dtype(a, b)


def test_documented_differences_from_numpy() -> None:
    # all of these differ from np.promote_types on purpose
    assert least_upper_dtype(dtypes.int16, dtypes.float16) is dtypes.float16
    assert least_upper_dtype(dtypes.int32, dtypes.float32) is dtypes.float32
    assert least_upper_dtype(dtypes.uint64, dtypes.float16) is dtypes.float16
    # the lattice join of a signed int and uint64 is the weak float, committed by an op
    assert least_upper_dtype(dtypes.int64, dtypes.uint64) is dtypes.weakfloat
    assert least_upper_dtype(dtypes.int8, dtypes.uint64) is dtypes.weakfloat
    assert promoted_dtype(dtypes.int64, dtypes.uint64) is dtypes.float32
    assert np.promote_types(np.int64, np.uint64) == np.float64


def test_promotion_matches_torch_for_every_strong_pair() -> None:
    torch = pytest.importorskip("torch")
    names = {dtypes.fp8e4m3: "float8_e4m3fn", dtypes.fp8e5m2: "float8_e5m2"}
    differences = {}
    for a, b in itertools.combinations_with_replacement(STRONG, 2):
        ta, tb = (getattr(torch, names.get(d, d.name)) for d in (a, b))
        try:
            want = str(torch.promote_types(ta, tb)).removeprefix("torch.")
        except RuntimeError:  # torch refuses some fp8 mixes
            want = "error"
        want = {"float8_e4m3fn": "fp8e4m3", "float8_e5m2": "fp8e5m2"}.get(want, want)
        if want != promoted_dtype(a, b).name:
            differences[(a.name, b.name)] = (want, promoted_dtype(a, b).name)
    # torch refuses to promote fp8 with any other dtype (we rank fp8 as the narrowest floats)
    # and uint16/32/64 with anything: every difference is a pair torch refuses
    for (a, b), (want, have) in differences.items():
        assert want == "error", f"{a} + {b}: torch {want}, fusegrad {have}"
        assert {a, b} & {"uint16", "uint32", "uint64", "fp8e4m3", "fp8e5m2"}
    assert least_upper_dtype(dtypes.fp8e4m3, dtypes.fp8e5m2) is dtypes.float16


def test_exotic_float_promotion() -> None:
    assert least_upper_dtype(dtypes.bfloat16, dtypes.float16) is dtypes.float32
    assert least_upper_dtype(dtypes.bfloat16, dtypes.int64) is dtypes.bfloat16
    assert least_upper_dtype(dtypes.fp8e4m3, dtypes.bfloat16) is dtypes.bfloat16
    assert least_upper_dtype(dtypes.fp8e5m2, dtypes.uint64) is dtypes.fp8e5m2
    assert least_upper_dtype(dtypes.fp8e4m3, dtypes.float64) is dtypes.float64


@pytest.mark.parametrize("dt", STRONG, ids=str)
def test_weak_literals_never_widen_a_strong_dtype(dt: DType) -> None:
    assert least_upper_dtype(dt, dtypes.bool) is dt
    if dt is dtypes.bool:
        assert least_upper_dtype(dt, dtypes.weakint) is dtypes.weakint
        return
    assert least_upper_dtype(dt, dtypes.weakint) is dt
    assert promoted_dtype(dt, dtypes.weakint) is dt
    if dtypes.is_float(dt):
        assert least_upper_dtype(dt, dtypes.weakfloat) is dt
    else:  # an int meets a Python float: the join is weak, the operation computes in float32
        assert least_upper_dtype(dt, dtypes.weakfloat) is dtypes.weakfloat
        assert promoted_dtype(dt, dtypes.weakfloat) is dtypes.default_float


def test_weak_with_weak_stays_weak() -> None:
    assert promoted_dtype(dtypes.weakint, dtypes.weakint) is dtypes.weakint
    assert promoted_dtype(dtypes.weakint, dtypes.weakfloat) is dtypes.weakfloat
    assert promoted_dtype(dtypes.bool, dtypes.weakfloat) is dtypes.weakfloat
    assert promoted_dtype(dtypes.bool.vec(2), dtypes.weakint) is dtypes.weakint
    assert least_upper_dtype(dtypes.bool) is dtypes.bool


def test_least_upper_of_vectors_is_the_scalar_promotion() -> None:
    assert least_upper_dtype(dtypes.int8.vec(4), dtypes.int16) is dtypes.int16


def test_least_upper_rejects_void_pointers_and_nothing() -> None:
    with pytest.raises(ValueError, match="at least one"):
        least_upper_dtype()
    with pytest.raises(TypeError, match="no promotion"):
        least_upper_dtype(dtypes.void, dtypes.int8)
    with pytest.raises(TypeError, match="no promotion"):
        least_upper_dtype(dtypes.float32.ptr(), dtypes.float32)


scalars = st.sampled_from(ALL_SCALARS)


_FP8_PAIRS = {frozenset(p) for p in (dtypes.fp8_ocp, dtypes.fp8_fnuz)}


@settings(deadline=None)  # no timing limit: the machine is shared and noisy
@given(scalars, scalars, scalars)
def test_promotion_is_a_join(a: DType, b: DType, c: DType) -> None:
    ab = least_upper_dtype(a, b)
    assert ab is least_upper_dtype(b, a)
    assert least_upper_dtype(a, a) is a
    # tinygrad's lattice (kept as is) gives the two fp8 formats two minimal upper bounds,
    # float16 and bfloat16; the pick (float16) makes grouping matter with bfloat16 in the mix
    if not any({x, y} in _FP8_PAIRS for x in (a, b, c) for y in (a, b, c)):
        assert least_upper_dtype(ab, c) is least_upper_dtype(a, least_upper_dtype(b, c))
        assert least_upper_dtype(a, b, c) is least_upper_dtype(ab, c)
    # an upper bound: promoting the result with either operand changes nothing
    assert least_upper_dtype(ab, a) is ab


def test_least_upper_float_commit_weak_and_sum_acc_dtype() -> None:
    assert least_upper_float(dtypes.int8) is dtypes.float32
    assert least_upper_float(dtypes.float16) is dtypes.float16
    assert least_upper_float(dtypes.weakfloat) is dtypes.float32
    assert commit_weak(dtypes.weakfloat.vec(2)) is dtypes.float32.vec(2)
    assert commit_weak(dtypes.int8) is dtypes.int8
    assert sum_acc_dtype(dtypes.uint8) is dtypes.uint32
    assert sum_acc_dtype(dtypes.bool) is dtypes.int32
    assert sum_acc_dtype(dtypes.int64) is dtypes.int64
    assert sum_acc_dtype(dtypes.float16) is dtypes.float32
    assert sum_acc_dtype(dtypes.float64) is dtypes.float64
