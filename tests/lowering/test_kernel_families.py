"""Kernel families (`kernel_families`, `unit_template`): kernels that differ only in integers
are compiled once, as one function that reads those integers from a table; each member
computes what it computed alone, bit for bit.

Code is made for an SSE target (`FUSION_TARGET_CPU`/`FUSION_TARGET_FEATURES`), so what
schedule-kernels makes of the kernels, and so which of them form a family, is the same on
every x86 host."""

from __future__ import annotations

import platform
import re

import numpy as np
import pytest

from fusion_compiler.api import parse
from fusion_compiler.driver import DEFAULT_PIPELINE
from fusion_compiler.host import JOBS_VARIABLE
from fusion_compiler.lowering import llvm_codegen, native_units
from fusion_compiler.lowering.compiled_model import compile_module
from fusion_compiler.lowering.ir_hash import module_hash
from fusion_compiler.lowering.jit import (
    TARGET_CPU_VARIABLE,
    TARGET_FEATURES_VARIABLE,
    KernelSignature,
    NativeUnit,
    distinct_units,
)
from fusion_compiler.lowering.kernel_families import family_groups, family_key
from fusion_compiler.lowering.llvm_text import module_text
from fusion_compiler.lowering.native_units import FAMILIES_VARIABLE, split_units
from fusion_compiler.lowering.unit_template import render_plain, structure_key

pytestmark = pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64"), reason="an x86 CPU name and features"
)

SSE = ("x86-64-v2", "+sse4.2,+popcnt,-avx,-avx2,-fma,-avx512f")

CHANNELS = (288, 320, 352, 384)
"""Input channels of four 1x1 convolutions, 32 apart as densenet's dense layers' (64 + 32 l);
enough of them that every member packs its weights into a buffer on the heap (smaller ones
pack onto the stack, a buffer of the member's size, which a family does not open)."""

SIDE = 28
OUT = 32


def _convolutions(channels: tuple[int, ...]) -> str:
    """A function of 1x1 convolutions + relu, one per input channel count: the same kernel
    but for its reduction's extent and its weights' row stride."""
    args, lines, results = [], [], []
    for i, c in enumerate(channels):
        x, w = f"tensor<1x{c}x{SIDE}x{SIDE}xf32>", f"tensor<{OUT}x{c}x1x1xf32>"
        y = f"tensor<1x{OUT}x{SIDE}x{SIDE}xf32>"
        args += [f"%x{i}: {x}", f"%w{i}: {w}"]
        lines.append(
            f'  %c{i} = "graph.conv2d"(%x{i}, %w{i}) <{{strides = array<i64: 1, 1>, '
            f"padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}}>"
            f" : ({x}, {w}) -> {y}"
        )
        lines.append(f'  %r{i} = "graph.relu"(%c{i}) : ({y}) -> {y}')
        results.append((f"%r{i}", y))
    names = ", ".join(name for name, _ in results)
    types = ", ".join(t for _, t in results)
    return (
        f"func.func @main({', '.join(args)}) -> ({types}) {{\n"
        + "\n".join(lines)
        + f"\n  func.return {names} : {types}\n}}\n"
    )


def _inputs(channels: tuple[int, ...]) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    arrays = []
    for c in channels:
        arrays.append(rng.standard_normal((1, c, SIDE, SIDE), np.float32))
        arrays.append(rng.standard_normal((OUT, c, 1, 1), np.float32))
    return arrays


def _reference(arrays: list[np.ndarray]) -> list[np.ndarray]:
    out = []
    for x, w in zip(arrays[::2], arrays[1::2], strict=True):
        y = np.einsum("oc,chw->ohw", w[:, :, 0, 0].astype(np.float64), x[0].astype(np.float64))
        out.append(np.maximum(y, 0)[None].astype(np.float32))
    return out


@pytest.fixture
def sse(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TARGET_CPU_VARIABLE, SSE[0])
    monkeypatch.setenv(TARGET_FEATURES_VARIABLE, SSE[1])


def _families(model) -> list[str]:
    return sorted(
        set(re.findall(r'define [^@\n]*@"?([a-z0-9_]+_family_[0-9a-f]{16})', model.llvm_ir))
    )


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_kernels_that_differ_in_extents_share_one_function(sse, monkeypatch, jobs):
    monkeypatch.setenv(JOBS_VARIABLE, jobs)
    arrays = _inputs(CHANNELS)
    model = compile_module(parse(_convolutions(CHANNELS)), DEFAULT_PIPELINE, cache=False)
    assert len(_families(model)) == 1
    results = model.run("main", *arrays)
    for result, expected in zip(results, _reference(arrays), strict=True):
        # float32 sums of at most 384 unit-variance products against float64 ones: errors
        # of a few 1e-6 on results of magnitude ~20
        np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-4)

    monkeypatch.setenv(FAMILIES_VARIABLE, "0")
    alone = compile_module(parse(_convolutions(CHANNELS)), DEFAULT_PIPELINE, cache=False)
    assert not _families(alone)
    for a, b in zip(results, alone.run("main", *arrays), strict=True):
        np.testing.assert_array_equal(a, b)


def test_the_schedule_workers_form_the_family_too(sse, monkeypatch, tmp_path):
    """Kernels scheduled by worker processes are prepared there and compiled together
    (`schedule_workers`): the same family, the same bits as a serial compile."""
    from fusion_compiler.lowering import schedule_workers

    arrays = _inputs(CHANNELS)
    monkeypatch.setenv(JOBS_VARIABLE, "1")
    serial = compile_module(parse(_convolutions(CHANNELS)), DEFAULT_PIPELINE, cache=False)
    monkeypatch.setenv(JOBS_VARIABLE, "2")
    monkeypatch.setattr(schedule_workers, "SCHEDULE_PARALLEL_MIN_OPS", 0)
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path))  # (the memo runs with the cache)
    stages: list[tuple[str, float]] = []
    workers = compile_module(parse(_convolutions(CHANNELS)), DEFAULT_PIPELINE, timings=stages)
    assert any(stage.startswith("kernel workers") for stage, _ in stages)
    assert _families(workers) == _families(serial) and len(_families(serial)) == 1
    for a, b in zip(serial.run("main", *arrays), workers.run("main", *arrays), strict=True):
        np.testing.assert_array_equal(a, b)


def test_fewer_kernels_than_a_family_needs_are_compiled_alone(sse):
    few = CHANNELS[: native_units.FAMILY_MIN_MEMBERS - 1]
    model = compile_module(parse(_convolutions(few)), DEFAULT_PIPELINE, cache=False)
    assert not _families(model)


def test_a_cached_family_links_beside_new_kernels(sse, monkeypatch, tmp_path):
    """An edit keeps three members (their units: the family's, from the cache) and makes one
    new kernel: the family unit, loaded once per member, is linked once."""
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path))
    compile_module(parse(_convolutions(CHANNELS)), DEFAULT_PIPELINE)
    edited = (*CHANNELS[:3], 416)
    model = compile_module(parse(_convolutions(edited)), DEFAULT_PIPELINE)
    arrays = _inputs(edited)
    for result, expected in zip(model.run("main", *arrays), _reference(arrays), strict=True):
        np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-4)


def test_a_family_unit_is_stored_once_and_its_members_name_it(sse, monkeypatch, tmp_path):
    from fusion_compiler.lowering.compile_cache import read_meta

    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path))
    compile_module(parse(_convolutions(CHANNELS)), DEFAULT_PIPELINE)
    metas = [read_meta(tmp_path, path.stem) for path in tmp_path.glob("*.entry")]
    named = [meta["family"] for meta in metas if meta and "family" in meta]
    assert len(named) == len(CHANNELS) and len(set(named)) == 1
    assert (tmp_path / f"{named[0]}.entry").exists()
    again = compile_module(parse(_convolutions(CHANNELS)), DEFAULT_PIPELINE)
    assert again.from_cache
    arrays = _inputs(CHANNELS)
    for result, expected in zip(again.run("main", *arrays), _reference(arrays), strict=True):
        np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-4)


def _kernel_units(source: str) -> list:
    from fusion_compiler.dialects.context import make_context
    from fusion_compiler.dialects.diagnostics import parse_source
    from fusion_compiler.driver import PassManager, lower_to_entries

    module = parse_source(make_context(), source, "families.mlir")
    lowered, _ = lower_to_entries(module, DEFAULT_PIPELINE)
    named, _, _ = native_units.name_by_content(split_units(lowered), module_hash)
    units = [u for u in named if not any(native_units.is_entry(op) for op in u.ops)]
    for unit in units:
        PassManager("convert-loop-to-llvm", verify="off").run(unit)
    return units


def test_a_template_prints_the_unit_as_module_text_does(sse):
    """`render_plain` of a template is what LLVM gets for a kernel compiled alone, byte for
    byte (parallel bodies, addresses through arrays, intrinsics)."""
    target = llvm_codegen.CodegenTarget.host()
    machine = target.machine()
    for unit in _kernel_units(_convolutions(CHANNELS)):
        template = llvm_codegen.llvm_ir_template(unit, target, machine)
        assert render_plain(template) == llvm_codegen.llvm_ir_text(unit, target, machine)
        assert "GOMP_parallel" in render_plain(template)  # (the outlined path is exercised)


def test_the_family_key_leaves_integers_out_and_keeps_divisors(sse):
    target = llvm_codegen.CodegenTarget.host()
    machine = target.machine()
    templates = [
        llvm_codegen.llvm_ir_template(unit, target, machine)
        for unit in _kernel_units(_convolutions(CHANNELS))
    ]
    assert len({structure_key(t) for t in templates}) == 1
    assert family_groups([family_key(t) for t in templates]) == [[0, 1, 2, 3]]
    assert len({render_plain(t) for t in templates}) == 4  # (the kernels do differ)
    divisor = templates[0].hole("i64", 7, 0, fixed=True)
    other = templates[1].hole("i64", 8, 0, fixed=True)
    templates[0].lines.append(f"  %x = udiv i64 %y, {divisor}")
    templates[1].lines.append(f"  %x = udiv i64 %y, {other}")
    assert structure_key(templates[0]) != structure_key(templates[1])


def _unit(code: bytes, *kernels: str) -> NativeUnit:
    return NativeUnit("", code, {k: KernelSignature((), ()) for k in kernels})


def test_a_family_unit_is_linked_once():
    family = _unit(b"family", "a", "b", "c", "d")
    again = _unit(b"family", "a", "b", "c", "d")  # (the same unit, from another member's entry)
    other = _unit(b"other", "e")
    assert distinct_units([family, again, other]) == (family, other)


def test_a_member_compiled_in_two_families_links(sse, monkeypatch, tmp_path):
    """Kernels 320 and 352 are members of a first family (288-384) and, compiled again
    without the cache, of a second one (320-448): the two units both define them (`weak_odr`)
    and link into one engine."""
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path))
    first = compile_module(parse(_convolutions(CHANNELS)), DEFAULT_PIPELINE)
    second = compile_module(
        parse(_convolutions((320, 352, 416, 448))), DEFAULT_PIPELINE, cache=False
    )
    from fusion_compiler.lowering.jit import JitModule, host_target_machine

    units = [*first._jit.units, *second._jit.units]
    jit = JitModule(units, host_target_machine())
    assert _families(first) and _families(second) and _families(first) != _families(second)
    shared = {k for k in set(first._jit.kernels) & set(second._jit.kernels) if "conv" in k}
    assert len(shared) == 2  # the 320- and 352-channel convolutions
    for name in shared:
        assert jit.function_address(name)


def test_module_text_is_unchanged_by_templates():
    """`module_text` (`fusion-opt -t llvm`) prints no markers."""
    (unit, *_) = _kernel_units(_convolutions(CHANNELS[:1]))
    assert "\x00" not in module_text(unit)
