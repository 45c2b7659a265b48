"""tinygrad's frontend surface as a user meets it: the module paths (fusegrad.dtype, .helpers,
.device, .nn.state, .renderer), the Context flags, dtypes, autograd semantics, optimizer
device=/fused=, keccak and newton_schulz."""

from __future__ import annotations

import hashlib
import itertools
import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import fusegrad
import numpy as np
import pytest
from fusegrad import Context, Device, GlobalCounters, Tensor, dtypes, nn


@pytest.fixture
def kernels() -> Iterator[None]:
    """Run on the kernel pipeline (compiled kernels, counted launches)."""
    from fusegrad.engine import KernelExecutor, set_executor

    previous = set_executor(KernelExecutor())
    try:
        yield
    finally:
        set_executor(previous)


@pytest.fixture
def training() -> Iterator[None]:
    Tensor.training = True
    try:
        yield
    finally:
        Tensor.training = False


# -- module paths ---------------------------------------------------------------------------------


def test_module_paths_import_as_in_tinygrad() -> None:
    from fusegrad.device import Buffer, Compiled, canonicalize_device, enumerate_devices_str
    from fusegrad.dtype import DTYPES_DICT, ConstFloat, can_lossless_cast, least_upper_dtype
    from fusegrad.helpers import DEBUG, getenv, prod
    from fusegrad.helpers import Context as HContext
    from fusegrad.nn.state import TensorIO, accept_filename, fs_load, fs_store
    from fusegrad.renderer import Renderer

    assert HContext is Context and getenv("FG_SURELY_UNSET_VAR", 7) == 7 and prod((2, 3)) == 6
    assert DEBUG.value == 0 or DEBUG.value > 0
    assert canonicalize_device(("cpu:0", "CPU:1")) == ("CPU", "CPU:1")
    assert any(line.startswith("CPU: available") for line in enumerate_devices_str())
    assert issubclass(type(Device[Device.DEFAULT]), Compiled) and Buffer is not None
    assert DTYPES_DICT["float32"] is dtypes.float32 and "half" not in DTYPES_DICT
    assert ConstFloat(0.0) != ConstFloat(-0.0) and ConstFloat(math.nan) == ConstFloat(math.nan)
    assert can_lossless_cast(dtypes.uint8, dtypes.int16)
    assert not can_lossless_cast(dtypes.int32, dtypes.float32)
    assert can_lossless_cast(dtypes.int16, dtypes.float32)
    assert least_upper_dtype(dtypes.int8, dtypes.uint8) is dtypes.int16
    assert isinstance(Device[Device.DEFAULT].renderer, Renderer)
    assert (TensorIO, accept_filename, fs_load, fs_store) and fusegrad.helpers.prod is prod
    for name in (
        "device",
        "dtype",
        "helpers",
        "nn",
        "renderer",
        "engine",
        "uop",
        "tensor",
        "schedule",
    ):
        assert getattr(fusegrad, name).__name__ == f"fusegrad.{name}"


def test_dtype_module_conversions() -> None:
    from fusegrad.dtype import (
        float_to_bf16,
        float_to_fp8,
        float_to_fp16,
        fp8_to_float,
        from_storage_scalar,
        promo_lattice,
        storage_fmt_for_dtype,
        strong_dtype,
        to_storage_scalar,
        truncate,
        weak_dtype,
    )

    assert float_to_fp8(448.0, dtypes.fp8e4m3) == 0x7E and fp8_to_float(0x7E, dtypes.fp8e4m3) == 448
    assert fp8_to_float(0x7F, dtypes.fp8e4m3fnuz) == 240.0
    assert math.isnan(fp8_to_float(0x80, dtypes.fp8e4m3fnuz))
    assert float_to_fp16(65520.0) == math.inf and float_to_bf16(1.00390625) == 1.0
    assert to_storage_scalar(1.0, dtypes.bfloat16) == 0x3F80
    assert from_storage_scalar(0x3F80, dtypes.bfloat16) == 1.0
    assert (
        storage_fmt_for_dtype(dtypes.fp8e5m2) == "B" and storage_fmt_for_dtype(dtypes.int32) == "i"
    )
    assert truncate[dtypes.uint8](257) == 1 and truncate(dtypes.int8)(128) == -128
    assert (
        strong_dtype(dtypes.weakfloat) is dtypes.float32
        and weak_dtype(dtypes.int8) is dtypes.weakint
    )
    assert promo_lattice[dtypes.int8] == [dtypes.int16]
    with pytest.raises(TypeError, match="fp8"):
        float_to_fp8(1.0, dtypes.float16)


def test_helpers_behave() -> None:
    from fusegrad import helpers as h

    assert h.make_tuple(3, 2) == (3, 3) and h.fully_flatten([[1, [2]], 3]) == [1, 2, 3]
    assert h.get_shape([[1, 2], [3, 4]]) == (2, 2) and h.strides_for_shape((2, 3)) == (3, 1)
    assert h.cdiv(-7, 2) == -3 and h.cmod(-7, 2) == -1 and h.next_power2(5) == 8
    assert h.flat_to_grouped((1, 2, 3, 4)) == ((3, 4), (1, 2)) and h.i2u(8, -1) == 255
    assert h.getbits(0b110100, 2, 4) == 5 and h.polyN(2.0, [1.0, 0.0, -1.0]) == 3.0
    assert h.ansistrip(h.colored("x", "red")) == "x" and h.ansilen(h.colored("ab", "GREEN")) == 2
    assert h.strip_parens("(a+b)") == "a+b" and h.pluralize("kernel", 2) == "2 kernels"
    assert h.to_function_name("r_4(x)") == "r_428x29"
    buf = bytearray(b"abc")
    assert h.to_mv(h.mv_address(memoryview(buf)), 3).tobytes() == b"abc"
    assert list(h.trange(3, disable=True)) == [0, 1, 2]
    assert h.Target.parse("NULL:PTX:sm_80") == h.Target("NULL", "PTX", "sm_80")
    assert h.get_child({"a": [1, {"b": 2}]}, "a.1.b") == 2
    with pytest.raises(ValueError, match="inhomogeneous"):
        h.get_shape([[1], [2, 3]])


def test_fetch_gunzip_and_sha256(tmp_path: Path) -> None:
    import gzip

    from fusegrad.helpers import fetch

    src = tmp_path / "w.gz"
    src.write_bytes(gzip.compress(b"weights"))
    with Context(FUSEGRAD_CACHE_DIR=str(tmp_path / "cache")):
        got = fetch(src.as_uri(), gunzip=True, sha256=hashlib.sha256(b"weights").hexdigest())
        assert got.read_bytes() == b"weights"
        with pytest.raises(ValueError, match="sha256"):
            fetch(src.as_uri(), name="bad", sha256="00" * 32)


# -- Context flags ----------------------------------------------------------------------------


def test_training_is_one_state_with_context() -> None:
    assert not Tensor.training
    with Context(TRAINING=1):
        assert Tensor.training and Tensor([1.0]).training
        out = Tensor.ones(1000).dropout(0.5).numpy()
        assert (out == 0).any()
    assert not Tensor.training and (Tensor.ones(10).dropout(0.5).numpy() == 1).all()
    Tensor.training = True
    try:
        from fusegrad.helpers import TRAINING

        assert TRAINING.value == 1
    finally:
        Tensor.training = False


def test_unknown_context_name_is_an_error_and_tinygrad_names_are_known() -> None:
    with pytest.raises(KeyError, match="NOT_A_FLAG"):
        Context(NOT_A_FLAG=1)
    with Context(
        JIT=0, SPEC=1, IMAGE=0, BEAM=0, NOOPT=0, CACHELEVEL=2, TRAINING=0, FUSE_OPTIM=0, PARALLEL=0
    ):
        pass


def test_check_oob_is_the_index_check() -> None:
    idx = Tensor([0, 5])
    with pytest.raises(IndexError):
        Tensor([1.0, 2.0, 3.0])[idx].numpy()
    with Context(CHECK_OOB=0):
        assert Tensor([1.0, 2.0, 3.0])[Tensor([0, 7])].tolist() == [1.0, 0.0]


def test_emulated_dtypes_forces_emulation_with_equal_results(kernels: None) -> None:
    from fusegrad.codegen.lower.dtype_emulation import emulated_dtypes

    with Context(EMULATED_DTYPES="bfloat16,half"):
        assert emulated_dtypes() == {dtypes.bfloat16, dtypes.float16}
    a = np.linspace(-3, 3, 256).astype(np.float16)  # vectorizable: upcast lanes split
    native = (Tensor(a) * 1.7 + 0.3).numpy()
    with Context(EMULATED_DTYPES="half"):
        emulated = (Tensor(a) * 1.7 + 0.31).numpy()
    want = a * np.float16(1.7) + np.float16(0.31)  # float16 arithmetic: each op rounded
    np.testing.assert_array_equal(emulated, want)
    assert native.dtype == np.float16
    with Context(EMULATED_DTYPES="int32"), pytest.raises(ValueError, match="EMULATED_DTYPES"):
        emulated_dtypes()


def _float16_uops(scale: float, emulated: str) -> int:
    """float16 nodes in the program of a fresh float16 kernel (``scale`` makes it new)."""
    from fusegrad.codegen import to_program
    from fusegrad.uop import Ops

    lin = (Tensor(np.ones(8, np.float16)) * scale).schedule_linear()
    ast = next(u for u in lin.toposort() if u.op is Ops.CALL).src[0]
    with Context(EMULATED_DTYPES=emulated):
        spec = to_program(ast, Device["CPU"].renderer)
    return sum(u.dtype.scalar() is dtypes.float16 for u in spec.uops)


def test_emulated_dtypes_rewrites_the_program() -> None:
    renderer = Device["CPU"].renderer
    if dtypes.float16 not in renderer.supported_dtypes:
        pytest.skip(f"{type(renderer).__name__} emulates float16 on this machine anyway")
    assert _float16_uops(1.0625, "") > 0
    assert _float16_uops(1.1875, "half") == 0  # every float16 value computed as float32


def test_default_float_half_from_the_environment() -> None:
    code = "from fusegrad import Tensor, dtypes; print(Tensor([1.5]).dtype is dtypes.half)"
    out = subprocess.run(
        [sys.executable, "-c", code], env={"DEFAULT_FLOAT": "HALF", "PATH": ""}, capture_output=True,
        text=True, check=True,
    )  # fmt: skip
    assert out.stdout.strip() == "True"


# -- dtypes -----------------------------------------------------------------------------------


def test_dtypes_fields_finfo_and_parameter_names() -> None:
    assert dtypes.fields()["half"] is dtypes.float16 and dtypes.finfo(dtype=dtypes.bfloat16) == (
        8,
        7,
    )
    assert dtypes.is_float(x=dtypes.fp8e5m2fnuz) and dtypes.is_int(x=dtypes.int8)
    assert dtypes.fp8s == dtypes.fp8_ocp + dtypes.fp8_fnuz and dtypes.int16s == (
        dtypes.int16,
        dtypes.uint16,
    )
    assert dtypes.weaks == (dtypes.weakint, dtypes.weakfloat)


@pytest.mark.parametrize("name", ["fp8e4m3fnuz", "fp8e5m2fnuz"])
def test_fnuz_fp8_round_trips_like_pytorch(name: str) -> None:
    torch = pytest.importorskip("torch")
    dt = getattr(dtypes, name)
    tdt = {"fp8e4m3fnuz": torch.float8_e4m3fnuz, "fp8e5m2fnuz": torch.float8_e5m2fnuz}[name]
    vals = np.linspace(-200, 200, 401).astype(np.float32)
    vals = np.concatenate([vals, np.array([0.0, -0.0, 1e-4, -1e-4, 3e-3], np.float32)])
    got = Tensor(vals).cast(dt).cast(dtypes.float32).numpy()
    want = torch.tensor(vals).to(tdt).to(torch.float32).numpy()
    np.testing.assert_array_equal(got, want)
    assert (Tensor(vals).cast(dt).bitcast(dtypes.uint8).numpy() != 0x80).all()  # no -0


def test_promotion_matches_pytorch() -> None:
    torch = pytest.importorskip("torch")
    names = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float16", "bfloat16", "float32", "float64"]  # fmt: skip
    checked = 0
    for a, b in itertools.combinations_with_replacement(names, 2):
        try:
            theirs = torch.promote_types(getattr(torch, a), getattr(torch, b))
        except (RuntimeError, TypeError):
            continue  # PyTorch defines no promotion for some unsigned pairs
        ours = (Tensor([1], dtype=a) + Tensor([1], dtype=b)).dtype
        assert str(theirs) == f"torch.{ours.name}", (a, b)
        checked += 1
    assert checked >= 60
    assert (Tensor([1], dtype=dtypes.int8) * 2.5).dtype is dtypes.float32
    assert (Tensor([1.0], dtype=dtypes.float16) * 2).dtype is dtypes.float16


def test_renderer_capabilities() -> None:
    r = Device[Device.DEFAULT].renderer
    assert r.supported_dtypes() == r.supported_dtypes and dtypes.float32 in r.supported_dtypes()
    assert isinstance(r.has_local, bool) and isinstance(r.shared_max, int) and r.device
    assert r.global_max is None or len(r.global_max) == 3
    assert isinstance(r.tensor_cores, tuple) and (r.local_max is None or len(r.local_max) == 3)


# -- autograd ---------------------------------------------------------------------------------


def test_backward_fills_every_float_tensor_of_the_graph_like_pytorch() -> None:
    torch = pytest.importorskip("torch")
    a_np, b_np = np.array([1.0, 2.0, 3.0], np.float32), np.array([0.5, -1.0, 2.0], np.float32)
    a, b = Tensor(a_np), Tensor(b_np)  # no requires_grad: tinygrad's rule still fills .grad
    frozen = Tensor([2.0, 2.0, 2.0], requires_grad=False)
    ((a * b).exp() * frozen).sum().backward()
    ta, tb = (torch.tensor(x, requires_grad=True) for x in (a_np, b_np))
    ((ta * tb).exp() * 2.0).sum().backward()
    assert a.grad is not None and b.grad is not None and frozen.grad is None
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), tb.grad.numpy(), rtol=1e-6)
    ints = Tensor([1, 2, 3])
    (a * ints).sum().backward()
    assert ints.grad is None


def test_gradient_errors_and_unused_targets() -> None:
    x = Tensor([1.0, 2.0])
    (gy,) = (x * 3).sum().gradient(Tensor([5.0]))
    assert gy.tolist() == [0.0]
    with pytest.raises(RuntimeError, match="scalar outputs"):
        (x * 2).backward()
    with pytest.raises(RuntimeError, match="doesn't match output shape"):
        (x * 2).backward(gradient=Tensor([1.0, 1.0, 1.0]))
    (x * 2).backward(gradient=Tensor([1.0, 0.5]))
    assert x.grad is not None and x.grad.tolist() == [2.0, 1.0]
    w = Tensor([1.0, 1.0]).requires_grad_()
    (w * w).sum().backward()
    assert w.requires_grad and w.grad is not None and w.grad.tolist() == [2.0, 2.0]


# -- optimizers -------------------------------------------------------------------------------


def _two_layer_run(fused: bool, opt_name: str) -> tuple[list[np.ndarray], int]:
    Tensor.manual_seed(3)
    l1, l2 = nn.Linear(4, 8), nn.Linear(8, 2)
    params = [l1.weight, l1.bias, l2.weight, l2.bias]
    opt = getattr(nn.optim, opt_name)(params, lr=0.01, fused=fused)
    x = Tensor(np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32))
    kernels = 0
    for _ in range(3):
        opt.zero_grad()
        l2(l1(x).relu()).square().mean().backward()
        Tensor.realize(*[p.grad for p in params if p.grad is not None])
        GlobalCounters.reset()
        opt.step()
        kernels = GlobalCounters.kernel_count
    return [p.numpy() for p in params], kernels


@pytest.mark.parametrize("opt_name", ["SGD", "Adam", "AdamW"])
def test_fused_optimizer_equals_unfused_in_one_kernel_per_buffer(
    kernels: None, training: None, opt_name: str
) -> None:
    plain, plain_kernels = _two_layer_run(False, opt_name)
    fused, fused_kernels = _two_layer_run(True, opt_name)
    for p, f in zip(plain, fused, strict=True):
        np.testing.assert_allclose(f, p, rtol=1e-5, atol=1e-6)
    # however many parameters: SGD 1 (parameters and momentum in one kernel); Adam 2
    # (parameters, m and v in one kernel, the two bias-correction scalars in another)
    assert fused_kernels == {"SGD": 1, "Adam": 2, "AdamW": 2}[opt_name] < plain_kernels


def test_optimizer_device_and_fused_errors(training: None) -> None:
    w = Tensor([1.0, 2.0], requires_grad=True)
    opt = nn.optim.SGD([w], lr=0.5, device="CPU")
    assert opt.lr.device == "CPU"
    (w * w).sum().backward()
    opt.step()
    assert w.tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match="trust ratio"):
        nn.optim.LAMB([Tensor([1.0], requires_grad=True)], fused=True)
    with pytest.raises(ValueError, match="one dtype"):
        nn.optim.Adam(
            [
                Tensor([1.0], requires_grad=True),
                Tensor([1.0], dtype=dtypes.float16, requires_grad=True),
            ],
            fused=True,
        )
    with Context(FUSE_OPTIM=1):
        assert nn.optim.Adam([Tensor([1.0], requires_grad=True)]).fused


# -- Tensor extras and nn.state ------------------------------------------------------------


def test_keccak_equals_hashlib() -> None:
    msgs = [b"", b"abc", bytes(range(256)) * 2]
    for msg in msgs:
        t = (
            Tensor(np.frombuffer(msg, np.uint8).copy())
            if msg
            else Tensor.empty(0, dtype=dtypes.uint8)
        )
        assert t.keccak().numpy().tobytes() == hashlib.sha3_256(msg).digest()
    rows = Tensor(np.array([[1, 2, 3], [4, 5, 6]], np.uint8))
    got = rows.keccak("sha3_512").numpy()
    assert got.shape == (2, 64) and got[1].tobytes() == hashlib.sha3_512(bytes([4, 5, 6])).digest()
    with pytest.raises(ValueError, match="unknown cfg"):
        rows.keccak("md5")


def test_newton_schulz_orthogonalizes_and_max_shape() -> None:
    g = Tensor(np.random.default_rng(1).standard_normal((3, 5)).astype(np.float32))
    x = g.newton_schulz(10, (3.4445, -4.775, 2.0315)).numpy()
    sv = np.linalg.svd(x, compute_uv=False)
    assert np.all((sv > 0.5) & (sv < 1.3))
    assert g.max_shape == (3, 5) and g.max_numel() == 15


def test_tensor_io_accept_filename_and_content_store(tmp_path: Path) -> None:
    from fusegrad.nn.state import TensorIO, accept_filename, fs_load, fs_store

    f = TensorIO(Tensor(b"hello world"))
    assert f.read(5) == b"hello" and f.seek(-5, 2) == 6 and f.read() == b"world"
    path = tmp_path / "x.bin"
    path.write_bytes(b"\x01\x02\x03")
    size_of = accept_filename(lambda t: (t.device, t.shape))
    assert size_of(str(path)) == (f"DISK:{path}", (3,))
    with Context(FUSEGRAD_CACHE_DIR=str(tmp_path / "cache")):
        data = Tensor(np.arange(10, dtype=np.float32))
        h = fs_store(data)
        assert h.numpy().tobytes() == hashlib.sha3_256(data.numpy().tobytes()).digest()
        back = fs_load(h, 40).bitcast(dtypes.float32)
        assert back.tolist() == data.tolist()
        with pytest.raises(FileNotFoundError):
            fs_load(Tensor(np.zeros(32, np.uint8)), 4)
    with pytest.raises(ValueError, match="1-d uint8"):
        TensorIO(Tensor([1.0]))


# -- DISK tensors -----------------------------------------------------------------------------


def test_disk_tensors_slice_bitcast_assign_and_to_disk(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(bytes(range(16)))
    t = Tensor.empty(16, dtype=dtypes.uint8, device=f"DISK:{path}")
    assert t[2:5].to("CPU").tolist() == [2, 3, 4]
    assert t.reshape(4, 4)[1:3].to("CPU").tolist() == [[4, 5, 6, 7], [8, 9, 10, 11]]
    want = np.frombuffer(bytes(range(4, 12)), np.int32).tolist()
    assert t[4:12].bitcast(dtypes.int32).to("CPU").tolist() == want
    t[0:4].assign(Tensor([9, 8, 7, 6], dtype=dtypes.uint8))
    assert path.read_bytes()[:5] == bytes([9, 8, 7, 6, 4])
    assert t[0:2].to("CPU").tolist() == [9, 8]
    out = tmp_path / "out.bin"
    d = Tensor([1.5, -2.0, 3.25]).to(f"DISK:{out}")
    assert d.device == f"DISK:{out}" and d.dtype is dtypes.float32
    assert np.fromfile(out, np.float32).tolist() == [1.5, -2.0, 3.25]
    assert d[1:].to("CPU").tolist() == [-2.0, 3.25]
    with pytest.raises(RuntimeError, match="not contiguous"):
        t.reshape(4, 4)[:, 1:3].to("CPU")
    with pytest.raises(RuntimeError, match="runs no kernels"):
        (t + 1).to("CPU")


def test_slices_of_loaded_model_files(tmp_path: Path) -> None:
    from fusegrad.nn.state import safe_load, safe_save

    safe_save(
        {"a": Tensor([1.0, 2.0, 3.0, 4.0]), "b": Tensor([7, 8], dtype=dtypes.int16)},
        str(tmp_path / "m.safetensors"),
    )
    loaded = safe_load(str(tmp_path / "m.safetensors"))
    assert loaded["a"][1:3].to("CPU").tolist() == [2.0, 3.0]
    assert loaded["b"].bitcast(dtypes.uint16).to("CPU").tolist() == [7, 8]
    with pytest.raises(RuntimeError, match="read-only window"):
        loaded["a"].assign(Tensor([0.0, 0.0, 0.0, 0.0]))


# -- smaller gaps ---------------------------------------------------------------------------


def test_random_signatures_and_type_errors() -> None:
    with pytest.raises(TypeError, match="must be ints"):
        Tensor.randint(3, low=0.5, high=3)
    with pytest.raises(TypeError, match="int dtype"):
        Tensor.randint(3, low=0, high=3, dtype=dtypes.float32)
    r = Tensor.randint(50, low=2, high=5, dtype=dtypes.int16, device="CPU").numpy()
    assert r.dtype == np.int16 and r.min() >= 2 and r.max() < 5
    assert Tensor.zeros(2, 3).randn_like(dtype=dtypes.float16).dtype is dtypes.float16
    assert Tensor.randn(4, device="CPU", dtype=dtypes.float64).dtype is dtypes.float64
    a, b = Tensor.rand(8, contiguous=False).numpy(), Tensor.rand(8).numpy()
    assert ((a >= 0) & (a < 1)).all() and ((b >= 0) & (b < 1)).all()
    with pytest.raises(RuntimeError, match="1 or 2 dim"):  # PyTorch's rule for 0-d input
        Tensor(1.0).multinomial()


def test_threefry_is_the_generator_behind_rand() -> None:
    from fusegrad.uop import threefry2x32

    x = Tensor(np.arange(4, dtype=np.uint64))
    got = x.threefry(Tensor(np.array([12345], np.uint64))).numpy()
    assert got.tolist() == [threefry2x32(i, 12345) for i in range(4)]


def test_negative_learning_rate_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="Invalid learning rate"):
        nn.optim.SGD([Tensor([1.0], requires_grad=True)], lr=-0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        nn.optim.Adam([Tensor([1.0], requires_grad=True)], lr=-1e-3)


def test_from_url_hash_shard_like_and_image_ops(tmp_path: Path) -> None:
    src = tmp_path / "blob.bin"
    src.write_bytes(bytes(range(10)))
    with Context(FUSEGRAD_CACHE_DIR=str(tmp_path / "cache")):
        t = Tensor.from_url(src.as_uri())
        assert t.device.startswith("DISK:") and t.to("CPU").tolist() == list(range(10))
        assert Tensor.from_url(src.as_uri(), device="CPU").tolist() == list(range(10))
    x = Tensor(np.arange(6, dtype=np.float32))
    assert x.hash().numpy().tobytes() == hashlib.sha3_256(x.numpy().tobytes()).digest()
    multi = Tensor.zeros(4, 2).shard(("CPU", "CPU:1"), axis=0)
    placed = Tensor.ones(4, 2).shard_like(multi)
    assert placed.devices == multi.devices and placed.axis == 0
    assert Tensor.ones(2).shard_like(Tensor.zeros(1, device="CPU:1")).device == "CPU:1"
    a = np.random.default_rng(2).standard_normal((1, 2, 5, 5)).astype(np.float32)
    w = np.random.default_rng(3).standard_normal((3, 2, 3, 3)).astype(np.float32)
    np.testing.assert_allclose(
        Tensor(a).image_conv2d(Tensor(w), padding=1).numpy(),
        Tensor(a).conv2d(Tensor(w), padding=1).numpy(),
    )
    m = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(Tensor(m).image_dot(Tensor(m.T)).numpy(), m @ m.T, rtol=1e-5)


def test_diskcache_helpers(tmp_path: Path) -> None:
    from fusegrad.helpers import diskcache, diskcache_clear, diskcache_get, diskcache_put

    with Context(FUSEGRAD_CACHE_DIR=str(tmp_path)):
        assert diskcache_get("tbl", {"a": 1}) is None
        assert diskcache_put("tbl", {"a": 1}, [1, 2]) == [1, 2]
        assert diskcache_get("tbl", {"a": 1}) == [1, 2]
        calls: list[int] = []

        @diskcache
        def double(x: int) -> int:
            calls.append(x)
            return 2 * x

        assert double(3) == 6 and double(3) == 6 and calls == [3]
        with Context(CACHELEVEL=0):
            assert diskcache_get("tbl", {"a": 1}) is None
        diskcache_clear()
        assert diskcache_get("tbl", {"a": 1}) is None


def test_more_helpers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import ctypes

    from fusegrad import helpers as h

    assert h.unwrap(3) == 3 and h.to_tuple(2) == (2,) and h.get_single_element([5]) == 5
    with pytest.raises(ValueError, match="None"):
        h.unwrap(None)
    with pytest.raises(ValueError, match="one item"):
        h.get_single_element([1, 2])
    assert h.resolve_pool_pads(1, 2) == [1, 1, 1, 1] and h.resolve_pool_pads((1, 2), 2) == [
        2,
        2,
        1,
        1,
    ]
    assert (
        h.floordiv(-7, 2) == -4
        and h.floormod(-7, 2) == 1
        and h.canonicalize_strides((1, 3), (3, 1)) == (0, 1)
    )
    assert h.lo32(0x1_0000_0002) == 2 and h.hi32(0x1_0000_0002) == 1
    assert h.data64(0x1_0000_0002) == (1, 2) and h.data64_le(0x1_0000_0002) == (2, 1)
    assert h.to_be32(0x01020304) == 0x04030201 and h.to_be64(1) == 1 << 56
    assert h.pad_bytes(b"abc", 4) == b"abc\x00"
    buf = bytearray(b"xyz")
    assert bytes(h.from_mv(memoryview(buf))) == b"xyz" and h.flat_mv(memoryview(buf)).nbytes == 3
    arr = h.to_char_p_p([b"ab", b"cd"])
    assert ctypes.cast(arr[1], ctypes.c_char_p).value == b"cd"
    assert h.ansistrip(h.colorize_float(0.5)).strip() == "0.50x" and h.ansipad("ab", 4) == "ab  "
    with Context(NO_COLOR=1):
        assert h.colored("x", "red") == "x"
    assert h.word_wrap("a" * 10, 4) == "aaaa\naaaa\naa" and h.size_to_str(1500) == "1.50 KB"
    assert h.time_to_str(0.5).strip() == "500.00ms"


def test_process_and_timing_helpers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import gc

    from fusegrad import helpers as h

    (tmp_path / "f.txt").write_text("a\nb\n")
    assert h.lines(tmp_path / "f.txt") == ["a", "b"]
    h.stderr_log("logged")
    assert "logged" in capsys.readouterr().err
    assert h.fromimport("math", "pi") > 3 and h.system("echo hi") == "hi"
    with pytest.raises(KeyError):
        h.panic(KeyError, "k")
    assert h.wait_cond(lambda: True)
    with pytest.raises(TimeoutError):
        h.wait_cond(lambda: False, timeout_ms=5)
    assert h.select_by_name(["cpu", "gpu"], str, "GPU", "no device") == ["gpu"]
    with pytest.raises(RuntimeError, match="no device"):
        h.select_by_name(["cpu"], str, "tpu", "no device")
    assert h.select_first_inited([lambda: 1 / 0, lambda: 7], "none worked") == 7
    assert h.suppress_finalizing(lambda: 4)() == 4
    with h.disable_gc():
        assert not gc.isenabled()
    assert gc.isenabled() and h.perf_counter_us() > 0
    with h.Timing("took ", enabled=True):
        pass
    assert "took" in capsys.readouterr().out
    with h.Profiling(enabled=False):
        pass
    bar = h.tqdm(range(3), desc="x", disable=True)
    assert list(bar) == [0, 1, 2] and bar.n == 3
    assert next(h.count(5, 2)) == 5 and h.temp("f18").endswith("f18")


def test_device_compiler_takes_tinygrads_cachekey() -> None:
    from fusegrad.device import Compiler

    assert Compiler("mine").cache_key == "mine" and Compiler(cache_key="k").cache_key == "k"


def test_mixin_module_path_is_the_ops_shared_by_tensor_and_uop() -> None:
    import fusegrad
    from fusegrad.mixin import ElementwiseMixin, MovementMixin, ReduceMixin

    assert fusegrad.mixin.MovementMixin is MovementMixin
    for cls in (ElementwiseMixin, MovementMixin, ReduceMixin):
        assert issubclass(fusegrad.Tensor, cls) and issubclass(fusegrad.UOp, cls)


@pytest.mark.kernels  # the engine's loaded kernels: the real kernel pipeline
def test_emulated_dtypes_applies_to_a_kernel_compiled_before() -> None:
    """The program caches key on EMULATED_DTYPES: a kernel compiled natively is compiled again
    (emulated) when the setting changes, in to_program and in the engine's loaded kernels."""
    from fusegrad.codegen import to_program
    from fusegrad.engine import programs
    from fusegrad.uop import Ops

    renderer = Device["CPU"].renderer
    if dtypes.float16 not in renderer.supported_dtypes:
        pytest.skip(f"{type(renderer).__name__} emulates float16 on this machine anyway")
    x = Tensor(np.full(8, 1.5, np.float16)) * 1.4375
    ast = next(u for u in x.schedule_linear().toposort() if u.op is Ops.CALL).src[0]

    def float16_nodes() -> int:
        return sum(u.dtype.scalar() is dtypes.float16 for u in to_program(ast, renderer).uops)

    assert float16_nodes() > 0
    with Context(EMULATED_DTYPES="half"):
        assert float16_nodes() == 0
    assert float16_nodes() > 0
    native = (Tensor(np.full(8, 1.5, np.float16)) * 1.4375).numpy()
    with Context(EMULATED_DTYPES="half"):
        emulated = (Tensor(np.full(8, 1.5, np.float16)) * 1.4375).numpy()
    np.testing.assert_array_equal(native, emulated)
    by_ast: dict[object, set[object]] = {}
    for kernel_ast, _, knobs in programs._KERNELS:
        by_ast.setdefault(kernel_ast, set()).add(knobs[2])
    assert {"", "half"} in by_ast.values()  # one kernel loaded under both settings


def test_bitcast_between_bool_and_bytes(tmp_path: Path) -> None:
    # a bool is stored as one byte (0 or 1): a byte bitcast to bool is True when nonzero, a bool
    # bitcast to a byte is 0 or 1 (safetensors stores bool tensors as bytes and loads them so)
    raw = np.array([0, 1, 2, 255, 0, 1, 0, 7], np.uint8)
    flags = (Tensor(raw) + 0).bitcast(dtypes.bool)
    assert flags.tolist() == (raw != 0).tolist()
    b = np.array([True, False, True, True, False])
    assert (Tensor(b) | False).bitcast(dtypes.uint8).tolist() == [1, 0, 1, 1, 0]
    assert (Tensor(b) | False).bitcast(dtypes.int8).tolist() == [1, 0, 1, 1, 0]
    path = tmp_path / "flags.safetensors"
    nn.state.safe_save({"mask": Tensor(b)}, str(path))
    assert nn.state.safe_load(str(path))["mask"].to("CPU").tolist() == b.tolist()
