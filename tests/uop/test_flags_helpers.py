"""Knobs (ContextVar, Context, getenv) and the small helpers, plus the doctests of every
uop-core module this suite covers."""

from __future__ import annotations

import doctest
import importlib
import os
import subprocess
import sys

import pytest
from fusegrad.uop import (
    DEBUG,
    Context,
    ContextVar,
    all_int,
    all_same,
    argfix,
    argsort,
    ceildiv,
    dedup,
    flatten,
    getenv,
    merge_dicts,
    partition,
    prod,
    round_down,
    round_up,
)


def test_context_overrides_and_restores() -> None:
    before = DEBUG.value
    with Context(DEBUG=4):
        assert DEBUG.value == 4 and DEBUG >= 3 and DEBUG > 3 and not DEBUG < 4 and DEBUG <= 4
        with Context(DEBUG=1):
            assert DEBUG.value == 1
        assert DEBUG.value == 4
    assert DEBUG.value == before


def test_context_restores_after_an_exception() -> None:
    before = DEBUG.value
    with pytest.raises(RuntimeError), Context(DEBUG=5):
        raise RuntimeError
    assert DEBUG.value == before


def test_context_as_a_decorator_is_reentrant() -> None:
    @Context(DEBUG=2)
    def nested(depth: int) -> list[int]:
        seen = [DEBUG.value]
        if depth:
            with Context(DEBUG=7):
                seen += nested(depth - 1)
            seen.append(DEBUG.value)
        return seen

    assert nested(2) == [2, 2, 2, 2, 2]
    assert DEBUG.value == 0


def test_context_rejects_unknown_names() -> None:
    with pytest.raises(KeyError, match="unknown setting\\(s\\) \\['NOT_A_KNOB'\\]"):
        Context(NOT_A_KNOB=1)


def test_contextvar_is_declared_once_per_name() -> None:
    a = ContextVar("FUSEGRAD_TEST_KNOB", 3)
    b = ContextVar("FUSEGRAD_TEST_KNOB", 99)
    assert a is b and b.value == 3
    assert repr(a) == "ContextVar('FUSEGRAD_TEST_KNOB', 3)"
    assert bool(ContextVar("FUSEGRAD_TEST_ZERO", 0)) is False


KNOB_FROM_ENV = """
from fusegrad.uop import ContextVar, DEBUG, getenv
print(DEBUG.value, ContextVar("FUSEGRAD_TEST_STR", "a").value, getenv("FUSEGRAD_TEST_FLAG", False))
"""


def test_knobs_read_the_environment_with_the_default_type() -> None:
    env = {**os.environ, "DEBUG": "3", "FUSEGRAD_TEST_STR": "xyz", "FUSEGRAD_TEST_FLAG": "0"}
    done = subprocess.run(
        [sys.executable, "-c", KNOB_FROM_ENV],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    # regression: a bool default parsed "0" with bool("0"), which is True
    assert done.stdout.split() == ["3", "xyz", "False"], done.stderr


def test_getenv_converts_to_the_default_type(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUSEGRAD_TEST_INT", "12")
    monkeypatch.setenv("FUSEGRAD_TEST_BOOL", "1")
    getenv.cache_clear()
    try:
        assert getenv("FUSEGRAD_TEST_INT", 0) == 12
        assert getenv("FUSEGRAD_TEST_BOOL", False) is True
        assert getenv("FUSEGRAD_TEST_UNSET", 7) == 7
        assert getenv("FUSEGRAD_TEST_INT", "") == "12"
    finally:
        getenv.cache_clear()


# -- helpers ---------------------------------------------------------------------------------------------


def test_helpers() -> None:
    assert prod([2, 3, 4]) == 24 and prod([]) == 1 and prod([], start=5) == 5
    assert dedup([3, 1, 3, 2, 1]) == [3, 1, 2]
    assert all_same([1, 1, 1]) and not all_same([1, 2]) and all_same([])
    assert all_int([1, 2]) and not all_int([1, True]) and not all_int([1.0])
    assert flatten([[1, 2], [], [3]]) == [1, 2, 3]
    assert argsort([30, 10, 20]) == [1, 2, 0]
    assert argsort([1, 1, 0]) == [2, 0, 1]  # stable
    assert argfix(1, 2) == (1, 2) and argfix((1, 2)) == (1, 2) and argfix([1, 2]) == (1, 2)
    assert partition([1, 2, 3, 4], lambda v: v % 2 == 0) == ([2, 4], [1, 3])
    assert [ceildiv(a, 3) for a in (-4, -3, 0, 1, 3, 4)] == [-1, -1, 0, 1, 1, 2]
    assert round_up(10, 4) == 12 and round_up(12, 4) == 12
    assert round_down(10, 4) == 8
    assert merge_dicts([{"a": 1}, {"b": 2}, {"a": 1}]) == {"a": 1, "b": 2}
    with pytest.raises(ValueError, match="key 'a' has two values, 1 and 2"):
        merge_dicts([{"a": 1}, {"a": 2}])


def test_helpers_work_on_symbolic_values() -> None:
    from fusegrad.uop import UOp, sym_infer

    n = UOp.variable("n", 1, 100)
    assert sym_infer(ceildiv(n, 4), {"n": 9}) == 3
    assert sym_infer(round_up(n, 8), {"n": 9}) == 16
    assert sym_infer(prod([n, n, 2]), {"n": 3}) == 18


# -- doctests ---------------------------------------------------------------------------------------------

MODULES = [
    "dtype",
    "flags",
    "helpers",
    "pattern",
    "alu",
    "uop",
    "rewrite",
    "render",
    "ops",
    "shape",
    "kernelinfo",
    "exported_rules",
    "tracking",
    "views",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(f"fusegrad.uop.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
