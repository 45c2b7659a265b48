"""``Compiled(device, allocator, renderers, runtime, graph=None, arch=None)``: tinygrad's
parameters over fusegrad's (renderer, compiler) options."""

from __future__ import annotations

import numpy as np
import pytest
from fusegrad.runtime import (
    Compiled,
    CompilerOption,
    CPUProgram,
    HCQGraph,
    HostAllocator,
)


def _llvm_classes() -> tuple[type, type]:
    renderers = pytest.importorskip("fusegrad.renderer")
    try:
        import llvmlite  # noqa: F401
    except ImportError:
        pytest.skip("llvmlite is not installed")
    return renderers.LLVMRenderer, renderers.LLVMCompiler


def test_renderer_compiler_class_pairs_are_options_named_after_the_renderer() -> None:
    renderer, compiler = _llvm_classes()
    dev = Compiled("MYCPU", HostAllocator("MYCPU"), [(renderer, compiler)], CPUProgram)
    assert [o.name for o in dev.renderers] == ["LLVM"] and dev.renderers is dev.compilers
    assert dev.compiler_status() == [("LLVM", "ok")]
    assert isinstance(dev.renderer, renderer) and isinstance(dev.compiler, compiler)
    assert dev.select_compiler("llvm")[0] is dev.renderer


def test_instance_pairs_and_options_mix() -> None:
    renderer, compiler = _llvm_classes()
    pair = (renderer(), compiler())
    option = CompilerOption("SECOND", lambda: (renderer(), compiler()))
    dev = Compiled("MYCPU", HostAllocator("MYCPU"), [pair, option], CPUProgram)
    assert [o.name for o in dev.renderers] == ["LLVM", "SECOND"]
    assert dev.renderer is pair[0]


def test_a_renderer_class_alone_is_refused() -> None:
    renderer, _ = _llvm_classes()
    with pytest.raises(TypeError, match=r"renderers\[0\] must be a CompilerOption or a"):
        Compiled("MYCPU", HostAllocator("MYCPU"), [renderer], CPUProgram)


def test_graph_and_arch_are_kept() -> None:
    dev = Compiled("MYCPU", HostAllocator("MYCPU"), [], None, graph=HCQGraph, arch="znver3")
    assert dev.graph is HCQGraph and dev.arch == "znver3"
    plain = Compiled("MYCPU", HostAllocator("MYCPU"), [], None)
    assert plain.graph is None and plain.arch is None


def test_a_device_built_from_pairs_runs_kernels() -> None:
    from fusegrad.renderer.corpus import Builder, alu, end, index, load, rng, store
    from fusegrad.uop import Ops, UOp, dtypes

    renderer, compiler = _llvm_classes()
    dev = Compiled("MYCPU", HostAllocator("MYCPU"), [(renderer, compiler)], CPUProgram)
    p = Builder()
    out, x = p.buffer(dtypes.float32, [0] * 4), p.buffer(dtypes.float32, range(4))
    i = p.add(rng(4))
    p.add(store(index(out, i), alu(Ops.ADD, load(index(x, i)), UOp.const(1.5, dtypes.float32))))
    p.add(end(i))
    try:
        prg = dev.runtime("plus", dev.compile(dev.renderer.render(p.uops, "plus")), None)
        a, b = dev.allocator.alloc(16), dev.allocator.alloc(16)
        dev.allocator._copyin(b, memoryview(np.arange(4, dtype=np.float32).tobytes()))
        dev.exec(prg, [a, b], wait=True)
        got = np.zeros(4, np.float32)
        dev.allocator._copyout(memoryview(got).cast("B"), a)
    finally:
        dev.close()
    np.testing.assert_array_equal(got, np.arange(4, dtype=np.float32) + 1.5)
