"""THREEFRY and integer POW decomposed on vectors: a CPU-like target that has uint32/uint64/int32
vectors but neither op keeps the lanes together through the decomposition (the corpus covers
the scalar forms on every target and through the LLVM/C renderers)."""

from __future__ import annotations

import corpus as C
import numpy as np
import pytest
import targets as T
from fusegrad.codegen.lower import to_program
from fusegrad.uop import Ops, dtypes


class VectorIntRenderer(T.CPUTestRenderer):  # type: ignore[misc,name-defined]
    """Integer vectors, no THREEFRY, no POW."""

    suffix = "TESTVECINT"
    vector_widths = {dtypes.uint64: (4,), dtypes.uint32: (4,), dtypes.int32: (4,)}  # noqa: RUF012
    code_for_op = {  # noqa: RUF012
        op: f
        for op, f in T.CPUTestRenderer.code_for_op.items()
        if op not in (Ops.THREEFRY, Ops.POW)
    }


@pytest.mark.parametrize("name", ["threefry", "int_pow_int32"])
def test_decomposed_on_vectors(name: str) -> None:
    c = next(c for c in C.build() if c.name == name)
    ast = C.up(0, 4)(c.ast)
    spec = to_program(ast, VectorIntRenderer())
    ops = {u.op for u in spec.uops}
    assert Ops.THREEFRY not in ops and Ops.POW not in ops
    assert any(u.dtype.count == 4 and u.op in (Ops.XOR, Ops.MUL) for u in spec.uops)
    out = T.run_program(spec, c.inputs)
    np.testing.assert_array_equal(out[0], c.expected[0])
