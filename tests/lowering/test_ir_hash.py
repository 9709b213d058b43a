"""`ir_hash.module_hash`: the structural hash the compile cache keys are made of tells apart
every two modules the generic printer tells apart, and no two it prints the same."""

from __future__ import annotations

import numpy as np
import pytest

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.driver import DEFAULT_PIPELINE, lower_to_entries
from fusion_compiler.lowering.ir_hash import module_hash, printed_module_hash, renamed_hash

SOURCE = """
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %b = graph.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  %a = graph.add %m, %b : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %s = graph.softmax %a {axis = 1 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %s : tensor<4x3xf32>
}
"""

VARIANTS = {
    "a constant's element": SOURCE.replace("3.0]", "3.5]"),
    "a property": SOURCE.replace("axis = 1", "axis = -1"),
    "an op": SOURCE.replace("graph.add %m, %b", "graph.sub %m, %b"),
    "the operand order": SOURCE.replace("graph.add %m, %b", "graph.add %b, %m").replace(
        "(tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>",
        "(tensor<3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>",
    ),
    "a name": SOURCE.replace("@main", "@other"),
}


def _parse(text: str):
    return parse_source(make_context(), text, "hash.mlir")


def test_a_module_and_its_reparsed_print_hash_the_same():
    module = _parse(SOURCE)
    again = _parse(str(module))
    assert module_hash(module) == module_hash(again) == module_hash(module.clone())


@pytest.mark.parametrize("change", list(VARIANTS), ids=list(VARIANTS))
def test_every_change_changes_the_hash(change):
    before, after = _parse(SOURCE), _parse(VARIANTS[change])
    assert printed_module_hash(before) != printed_module_hash(after)
    assert module_hash(before) != module_hash(after)


def test_without_weights_only_the_constants_elements_are_left_out():
    before, after = _parse(SOURCE), _parse(VARIANTS["a constant's element"])
    assert module_hash(before, weights=False) == module_hash(after, weights=False)
    shape = _parse(
        SOURCE.replace("[1.0, 2.0, 3.0]", "[1.0, 2.0, 3.0, 4.0]")
        .replace("tensor<3xf32>", "tensor<4xf32>")
        .replace("tensor<8x3xf32>", "tensor<8x4xf32>")
        .replace("tensor<4x3xf32>", "tensor<4x4xf32>")
    )
    assert module_hash(before, weights=False) != module_hash(shape, weights=False)


def test_lowered_modules_hash_as_their_prints_do():
    low, _ = lower_to_entries(_parse(SOURCE), DEFAULT_PIPELINE)
    other, _ = lower_to_entries(_parse(VARIANTS["an op"]), DEFAULT_PIPELINE)
    same, _ = lower_to_entries(_parse(SOURCE), DEFAULT_PIPELINE)
    assert module_hash(low) == module_hash(same)
    assert module_hash(low) != module_hash(other)
    assert (printed_module_hash(low) == printed_module_hash(other)) == (
        module_hash(low) == module_hash(other)
    )
    assert np.all([len(module_hash(m)) == 64 for m in (low, other)])


@pytest.mark.parametrize(
    ("first", "second"),
    [(("0.0", "f32"), ("-0.0", "f32")), (("1", "i32"), ("1", "i64"))],
    ids=["signed zeros", "integer types"],
)
def test_attributes_that_print_apart_hash_apart_in_one_process(first, second):
    """Attribute texts are shared by every hash of the process (keyed by the attribute):
    attributes that print differently must not share one, whichever is hashed first."""

    def module(value: str, type_: str):
        return _parse(
            "func.func @f() -> " + type_ + " {\n"
            f"  %c = arith.constant {value} : {type_}\n"
            f"  func.return %c : {type_}\n"
            "}\n"
        )

    a, b = module(*first), module(*second)
    assert printed_module_hash(a) != printed_module_hash(b)
    hashes = [module_hash(a), module_hash(b), module_hash(a), module_hash(b)]
    assert hashes[0] == hashes[2] != hashes[1] == hashes[3]


def test_a_renamed_hash_leaves_the_name_out_and_puts_it_back():
    (main,) = _parse(SOURCE).ops
    (other,) = _parse(VARIANTS["a name"]).ops
    assert module_hash(main) != module_hash(other)
    assert renamed_hash(main, "_") == renamed_hash(other, "_")
    assert renamed_hash(main, "_") != renamed_hash(main, "other")
    assert (main.sym_name.data, other.sym_name.data) == ("main", "other")
    (changed,) = _parse(VARIANTS["an op"]).ops
    assert renamed_hash(changed, "_") != renamed_hash(main, "_")
