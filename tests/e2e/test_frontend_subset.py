"""A curated subset of tests/frontend, run here on the real kernel pipeline.

tests/frontend runs every Tensor method on the NumPy reference interpreter. The tests named in
``SUBSET`` are imported from those modules and collected again in this module, where the e2e
conftest installs the kernel executor: the same assertions, now against generated, compiled
and launched kernels (default device). The whole frontend suite can be run this way with the
``frontend_on_kernels`` plugin (see that module); this subset keeps the default run short
(conv2d, reduction/matmul/conv gradients and randn statistics are left to test_numerics.py and
test_training.py, which cover them in fewer kernels).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

FRONTEND = Path(__file__).resolve().parents[1] / "frontend"
if str(FRONTEND) not in sys.path:
    sys.path.insert(0, str(FRONTEND))  # the frontend tests import ``reference``

SUBSET: dict[str, tuple[str, ...]] = {
    "test_elementwise": (
        "test_binary_bool",
        "test_division_modes_and_remainders",
        "test_integer_division_by_zero_gives_zero",
        "test_float_division_by_zero_is_ieee",
        "test_weak_scalar_promotion",
        "test_float16_plus_python_float_stays_float16",
        "test_where_masked_fill_clamp",
        "test_shifts_and_bitwise",
        "test_pow_edge_cases_match_torch",
        "test_unary_special_values_match_torch",
    ),
    "test_reduce": (
        "test_sum_and_max_dtypes",
        "test_sum_with_dtype_accumulates_there",
        "test_empty_reductions_follow_torch",
        "test_var_std",
        "test_softmax_family",
        "test_argmax_argmin_first_occurrence",
    ),
    "test_movement": (
        "test_numpy_roundtrip_every_dtype",
        "test_casts",
        "test_creation",
        "test_arange",
        "test_reshape_view_expand_permute",
        "test_pad_modes",
        "test_cat_stack_split_chunk",
        "test_repeat_roll_unfold_meshgrid",
    ),
    "test_indexing": (
        "test_getitem_matches_numpy",
        "test_getitem_with_tensor_indices_and_bool_mask",
        "test_setitem_with_tensor_value",
        "test_setitem_casts_and_broadcasts_and_chains",
        "test_gather_and_scatter_vs_torch",
        "test_one_hot_masked_select_nonzero",
    ),
    "test_nn": (
        "test_matmul_shapes",
        "test_layernorm_batchnorm",
        "test_scaled_dot_product_attention",
    ),
    "test_autograd": (
        "test_binary_grads_with_broadcast",
        "test_movement_grads",
        "test_where_and_indexing_grads",
        "test_setitem_grad_flows_to_value_and_rest",
    ),
    "test_random": (
        "test_same_seed_same_numbers",
        "test_rand_uniform_statistics",
    ),
}


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"e2e_frontend_{name}", FRONTEND / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _collect() -> dict[str, Any]:
    """``<module>__<test>`` -> the frontend test function (with its parametrize marks)."""
    found: dict[str, Any] = {}
    for module_name, tests in SUBSET.items():
        module = _load(module_name)
        short = module_name.removeprefix("test_")
        for test in tests:
            found[f"test_{short}__{test.removeprefix('test_')}"] = getattr(module, test)
    return found


globals().update(_collect())
