"""`native_units`: a lowered model as separate units (one per kernel, one for the entries),
compiled apart (in this process or by forked workers), linked into one engine, and cached per
unit."""

from __future__ import annotations

import re

import numpy as np
import pytest
from xdsl.dialects import llvm
from xdsl.dialects.builtin import StringAttr

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.driver import DEFAULT_PIPELINE, PassManager, compile_module, lower_to_entries
from fusion_compiler.host import JOBS_VARIABLE, compile_jobs
from fusion_compiler.lowering import compile_cache, ir_hash, native_units
from fusion_compiler.lowering.jit import JitModule, host_target_machine
from fusion_compiler.lowering.native_units import (
    compile_units,
    declare_callees,
    is_entry,
    split_units,
)

TWO_KERNELS = """
func.func @main(%x: tensor<64x32xf32>, %w: tensor<32x16xf32>) -> tensor<64x16xf32> {
  %m = graph.matmul %x, %w : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %s = graph.softmax %m {axis = 1 : i64} : (tensor<64x16xf32>) -> tensor<64x16xf32>
  func.return %s : tensor<64x16xf32>
}
"""

ONE_LAYER_CHANGED = TWO_KERNELS.replace("{axis = 1 : i64}", "{axis = 0 : i64}")

TWO_MATMULS = """
func.func @main(%x: tensor<64x32xf32>, %w: tensor<32x16xf32>, %v: tensor<16x8xf32>)
    -> tensor<64x8xf32> {
  %a = graph.matmul %x, %w : (tensor<64x32xf32>, tensor<32x16xf32>) -> tensor<64x16xf32>
  %b = graph.relu %a : tensor<64x16xf32>
  %c = graph.matmul %b, %v : (tensor<64x16xf32>, tensor<16x8xf32>) -> tensor<64x8xf32>
  %d = graph.relu %c : tensor<64x8xf32>
  func.return %d : tensor<64x8xf32>
}
"""
"""Two kernels of one base name: `fused_matmul_relu`, then `fused_matmul_relu_1`."""

FIRST_RELU_A_SIGMOID = TWO_MATMULS.replace("%b = graph.relu", "%b = graph.sigmoid")
"""The first kernel becomes `fused_matmul_sigmoid`, and the second, unchanged, is renamed
`fused_matmul_relu`."""


def _lowered(source: str):
    module = parse_source(make_context(), source, "units.mlir")
    return module, *lower_to_entries(module, DEFAULT_PIPELINE)


def _lower(unit) -> None:
    PassManager("convert-loop-to-llvm", verify="off").run(unit)


def _inputs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((64, 32), np.float32), rng.standard_normal((32, 16), np.float32)


def test_each_kernel_is_a_unit_and_the_entries_come_last():
    _, lowered, kernels = _lowered(TWO_KERNELS)
    units = split_units(lowered)
    assert not list(lowered.ops)  # moved, not copied
    names = [[op.sym_name.data for op in unit.ops] for unit in units]
    assert names == [[name] for name in kernels["main"]] + [["main"]]
    assert all(is_entry(op) for op in units[-1].ops)
    assert not any(is_entry(op) for unit in units[:-1] for op in unit.ops)


def test_the_entry_unit_declares_the_kernels_it_launches():
    _, lowered, kernels = _lowered(TWO_KERNELS)
    entries = split_units(lowered)[-1]
    _lower(entries)
    declare_callees(entries)
    declared = {
        op.sym_name.data: op
        for op in entries.ops
        if isinstance(op, llvm.FuncOp) and not op.body.blocks
    }
    assert set(kernels["main"]) <= set(declared)
    for name in kernels["main"]:
        assert declared[name].linkage.linkage.data == "external"


def test_workers_make_the_same_code_as_this_process(monkeypatch):
    monkeypatch.setattr(native_units, "PARALLEL_MIN_OPS", 0)
    serial = compile_units(split_units(_lowered(TWO_KERNELS)[1]), _lower, jobs=1)
    timings: list[tuple[str, float]] = []
    forked = compile_units(split_units(_lowered(TWO_KERNELS)[1]), _lower, timings, jobs=2)
    assert [u.llvm_ir for u in forked] == [u.llvm_ir for u in serial]
    assert [u.object_code for u in forked] == [u.object_code for u in serial]
    stages = [stage for stage, _ in timings]
    assert stages[:4] == ["convert-loop-to-llvm", "llvm-translate", "llvm-optimize", "llvm-codegen"]
    assert stages[4].startswith("native-units (2 jobs")
    jit = JitModule(forked, host_target_machine())
    x, w = _inputs()
    out = np.empty((64, 16), np.float32)
    jit.call_kernel("matmul", x, w, out)
    np.testing.assert_allclose(out, x.astype(np.float64) @ w, rtol=1e-5, atol=1e-5)


def test_workers_take_units_when_their_work_pays_for_the_fork():
    """An op edit's new kernel (171 ops) and entry unit (435): two workers split them; two
    small units, or a single unit, stay in this process (the fork would cost more than the
    workers take from it)."""
    assert native_units.worth_workers([171, 435])
    assert not native_units.worth_workers([150, 120])
    assert not native_units.worth_workers([5000])
    assert not native_units.worth_workers([])


def test_linked_units_run_the_model(monkeypatch):
    monkeypatch.setattr(native_units, "PARALLEL_MIN_OPS", 0)
    monkeypatch.setenv(JOBS_VARIABLE, "2")
    module = parse_source(make_context(), TWO_KERNELS, "units.mlir")
    forked = compile_module(module, cache=False)
    monkeypatch.setenv(JOBS_VARIABLE, "1")
    serial = compile_module(module, cache=False)
    x, w = _inputs()
    (expected,) = serial.run("main", x, w)
    np.testing.assert_array_equal(forked.run("main", x, w)[0], expected)
    product = x.astype(np.float64) @ w
    reference = np.exp(product - product.max(1, keepdims=True))
    np.testing.assert_allclose(expected, reference / reference.sum(1, keepdims=True), rtol=1e-5)


def test_a_changed_layer_recompiles_only_its_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path))
    compile_module(parse_source(make_context(), TWO_KERNELS, "a.mlir"))
    before = set(tmp_path.glob("*.entry"))
    # the model, two kernels, the entry function, two memo records, and the pattern kinds of
    # the two kernels legalize-ops made (matmul, softmax)
    assert len(before) == 8
    changed = compile_module(parse_source(make_context(), ONE_LAYER_CHANGED, "b.mlir"))
    assert not changed.from_cache
    new = set(tmp_path.glob("*.entry")) - before
    # The new model, the new softmax kernel, its memo record and the entry function (which
    # calls it by its content symbol), and the kind of the new kernel legalize-ops made; the
    # matmul kernel comes from the cache.
    assert len(new) == 5
    again = compile_module(parse_source(make_context(), ONE_LAYER_CHANGED, "b.mlir"))
    assert again.from_cache
    x, w = _inputs()
    np.testing.assert_array_equal(again.run("main", x, w)[0], changed.run("main", x, w)[0])


def test_kernels_renumbered_by_an_edit_come_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(compile_cache.CACHE_VARIABLE, str(tmp_path))
    compile_module(parse_source(make_context(), TWO_MATMULS, "a.mlir"))
    before = set(tmp_path.glob("*.entry"))
    # the model, two kernels, the entry function, two memo records, and the pattern kinds of
    # the four kernels legalize-ops made (a matmul and a relu of each shape)
    assert len(before) == 10
    edited = compile_module(parse_source(make_context(), FIRST_RELU_A_SIGMOID, "b.mlir"))
    assert edited.kernels() == ["fused_matmul_sigmoid", "fused_matmul_relu"]
    # The model, the sigmoid kernel (its memo record, and the kind of the sigmoid kernel
    # legalize-ops made) and the entry function are new; the second kernel, named
    # `fused_matmul_relu_1` before and `fused_matmul_relu` now, is the same unit.
    assert len(set(tmp_path.glob("*.entry")) - before) == 5
    rng = np.random.default_rng(0)
    x, w, v = (rng.standard_normal(s, np.float32) for s in [(64, 32), (32, 16), (16, 8)])
    (out,) = edited.run("main", x, w, v)
    hidden = 1 / (1 + np.exp(-(x.astype(np.float64) @ w)))
    np.testing.assert_allclose(out, np.maximum(hidden @ v, 0), rtol=1e-5, atol=1e-6)


def test_kernels_are_linked_under_content_symbols():
    _, lowered, kernels = _lowered(TWO_MATMULS)
    assert kernels["main"] == ("fused_matmul_relu", "fused_matmul_relu_1")
    units, _, _ = native_units.name_by_content(split_units(lowered), ir_hash.module_hash)
    symbols = [op.sym_name.data for unit in units[:-1] for op in unit.ops]
    assert all(re.fullmatch(r"fused_matmul_relu_[0-9a-f]{16}", s) for s in symbols)
    assert len(set(symbols)) == 2
    calls = [op for op in units[-1].walk() if isinstance(op, loop.CallOp)]
    assert [c.callee.string_value() for c in calls] == symbols


def test_kernels_of_the_same_content_are_compiled_once():
    _, lowered, _ = _lowered(TWO_KERNELS)
    first, second, entry = split_units(lowered)
    twin = first.clone()
    (kernel,) = twin.ops
    kernel.sym_name = StringAttr(kernel.sym_name.data + "_7")
    units, digests, _ = native_units.name_by_content(
        [first, twin, second, entry], ir_hash.module_hash
    )
    assert len(units) == len(digests) == 3
    assert list(units[0].ops)[0].sym_name == list(first.ops)[0].sym_name


@pytest.mark.parametrize("value", ["0", "-1", "two"])
def test_a_bad_job_count_is_refused(monkeypatch, value):
    monkeypatch.setenv(JOBS_VARIABLE, value)
    with pytest.raises(ValueError, match="FUSION_COMPILE_JOBS must be a positive job count"):
        compile_jobs()


def test_entry_units_get_machine_code_at_the_entry_level(monkeypatch):
    """Entries are sequences of launches: their code generator runs at a lower level (see
    `llvm_codegen.ENTRY_CODEGEN_LEVEL`); kernels keep level 3."""
    levels: dict[str, int] = {}
    compile_text = native_units.compile_text

    def noting(text, kernels, target=None, codegen_level=3, timings=None):
        for line in text.splitlines():
            if line.startswith("define void @"):
                levels[line.split('"')[1]] = codegen_level
        return compile_text(text, kernels, target, codegen_level, timings)

    monkeypatch.setattr(native_units, "compile_text", noting)
    compile_units(split_units(_lowered(TWO_KERNELS)[1]), _lower, jobs=1)
    assert levels["main"] == native_units.ENTRY_CODEGEN_LEVEL < 3
    assert levels["matmul"] == levels["softmax"] == 3
