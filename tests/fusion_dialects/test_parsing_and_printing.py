"""The parser and printer's shortcuts for a model's repeated spellings give what xDSL gives.

`LocatedParser` reads again the text of a flat attribute dictionary, a short dense literal or
a static tensor type it parsed before in the file, and reads `dense_resource<handle> : type`
off the text; `ModulePrinter` writes tensor types from kept texts. Each is checked against
xDSL's own parser and printer on text that repeats every spelling.
"""

from __future__ import annotations

from io import StringIO

import pytest
from xdsl.dialects.builtin import DenseResourceAttr, IntegerAttr, ModuleOp, i64
from xdsl.parser import Parser
from xdsl.printer import Printer

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import CompileError, LocatedParser, parse_source
from fusion_compiler.dialects.printing import ModulePrinter
from fusion_compiler.dialects.resources import isolated_resources

CONV = (
    "{strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, "
    "dilation = array<i64: 1, 1>, groups = 1 : i64}"
)
X = "tensor<1x4x8x8xf32>"

SOURCE = f"""
func.func @main(%x: {X}) -> {X} {{
  %w = graph.constant dense_resource<w> : tensor<4x4x1x1xf32>
  %v = graph.constant dense_resource<w> : tensor<4x4x1x1xf32>
  %u = graph.constant dense_resource<u.1$> : tensor<4x4x1x1xf32>
  %a = graph.conv2d %x, %w {CONV} : ({X}, tensor<4x4x1x1xf32>) -> {X}
  %b = graph.conv2d %a, %v {CONV} : ({X}, tensor<4x4x1x1xf32>) -> {X}
  %c = graph.conv2d %b, %u {{strides = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64}} : ({X}, tensor<4x4x1x1xf32>) -> {X}
  %s = graph.constant dense<1.000000e+00> : tensor<4xf32>
  %t = graph.constant dense<1.000000e+00> : tensor<4xf32>
  %m = graph.constant dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %n = graph.constant dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>
  %d = graph.batch_norm %c, %s, %t, %m, %n {{epsilon = 1.000000e-05 : f32}} : ({X}, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> {X}
  %e = graph.batch_norm %d, %s, %t, %m, %n {{epsilon = 1.000000e-05 : f32}} : ({X}, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> {X}
  func.return %e : {X}
}}
"""


def _parsed(parser_class: type[Parser], text: str = SOURCE) -> ModuleOp:
    with isolated_resources():
        return parser_class(make_context(), text, "model.mlir").parse_module()


def _printed(module: ModuleOp, printer_class: type[Printer], generic: bool) -> str:
    stream = StringIO()
    printer_class(stream=stream, print_generic_format=generic).print_op(module)
    return stream.getvalue()


@pytest.mark.parametrize("generic", [False, True], ids=["custom", "generic"])
def test_repeated_spellings_parse_as_xdsl_parses_them(generic):
    ours, xdsls = _parsed(LocatedParser), _parsed(Parser)
    assert _printed(ours, Printer, generic) == _printed(xdsls, Printer, generic)
    handles = [op.properties["value"] for op in ours.walk() if op.name == "graph.constant"]
    assert [h.resource_handle.data for h in handles if isinstance(h, DenseResourceAttr)] == [
        "w",
        "w",
        "u.1$",
    ]


def test_each_op_gets_its_own_attribute_dictionary():
    """A dictionary read again is a copy: changing one op's attributes leaves the other's."""
    module = _parsed(LocatedParser, SOURCE.replace("{epsilon", "{tag = 1 : i64, epsilon"))
    first, second = [op for op in module.walk() if op.name == "graph.batch_norm"]
    assert first.attributes == second.attributes and "tag" in first.attributes
    first.attributes["tag"] = IntegerAttr(2, i64)
    assert second.attributes["tag"] == IntegerAttr(1, i64)


def test_a_dense_resource_of_a_type_that_is_not_shaped_is_an_error_at_its_place():
    text = SOURCE.replace("dense_resource<u.1$> : tensor<4x4x1x1xf32>", "dense_resource<u> : i32")
    with pytest.raises(
        CompileError, match="dense resource should have a shaped type, got: i32"
    ) as err:
        parse_source(make_context(), text, "model.mlir")
    assert err.value.format().startswith("model.mlir:6:3: error:")  # (as xDSL reports it)


@pytest.mark.parametrize("generic", [False, True], ids=["custom", "generic"])
def test_the_module_printer_writes_what_xdsls_printer_writes(generic):
    module = _parsed(Parser)
    assert _printed(module, ModulePrinter, generic) == _printed(module, Printer, generic)


def _constant_module(literal: str, typ: str) -> str:
    """A function returning `graph.constant dense<literal> : typ`."""
    return f"""func.func @main() -> {typ} {{
      %c = graph.constant dense<{literal}> : {typ}
      func.return %c : {typ}
    }}"""


def _constant_bytes(text: str) -> bytes:
    """The data of the one `graph.constant` of the module `text`."""
    module = parse_source(make_context(), text, "constant.mlir")
    (constant,) = [op for op in module.walk() if op.name == "graph.constant"]
    return constant.value.data.data


@pytest.mark.parametrize(
    ("literal", "element"),
    [
        ("2.5", b"\x00\x00\x20\x40"),
        ("-7", (-7).to_bytes(8, "little", signed=True)),
        ("true", b"\xff"),
    ],
)
def test_a_large_splat_keeps_its_one_value(literal, element):
    """A splat of more than `LARGE_SPLAT` elements holds one element, as the importer keeps a
    splat: xDSL repeats it in a Python list of every element, and `tensor<2147483648xf32>`
    took 24 GB (found by bench/fuzz.py lit-mutants, session 63: the kernel's OOM killer ended
    fusion-opt). It prints as the same splat; a small one is parsed as xDSL parses it."""
    from fusion_compiler.dialects.diagnostics import LARGE_SPLAT

    kind = {"2.5": "f32", "-7": "i64", "true": "i1"}[literal]
    large = f"tensor<2048x{LARGE_SPLAT // 1024}x{kind}>"
    text = _constant_module(literal, large)
    assert _constant_bytes(text) == element
    module = parse_source(make_context(), text, "splat.mlir")
    assert f"dense<{'2.500000e+00' if literal == '2.5' else literal}> : {large}" in str(module)
    assert _constant_bytes(_constant_module(literal, f"tensor<4x{kind}>")) == element * 4


@pytest.mark.parametrize(
    ("literal", "kind", "element"),
    [
        ("0xFF800000", "f32", b"\x00\x00\x80\xff"),  # -inf
        ("[0x7fc00000, 1.0]", "f32", b"\x00\x00\xc0\x7f\x00\x00\x80\x3f"),  # NaN, 1
        ("0xFFF0000000000000", "f64", b"\x00" * 6 + b"\xf0\xff"),
        ("0xFC00", "f16", b"\x00\xfc"),
        ("0x10", "i32", b"\x10\x00\x00\x00"),  # (an integer's value, as before)
    ],
)
def test_a_hexadecimal_float_element_is_its_bits(literal, kind, element):
    """MLIR reads a hexadecimal integer in a float dense literal as the element's bits, and
    xDSL prints a float with no decimal spelling that way (-inf: `0xff800000`); xDSL 0.75 read
    it back as the integer's value, 4.3e9 (found by `bench/fuzz.py onnx-graphs`, seed 54720:
    a dilated max pool's -inf padding, through `fusion-import`'s file)."""
    text = _constant_module(literal, f"tensor<{2 if literal.startswith('[') else 1}x{kind}>")
    assert _constant_bytes(text) == element
    stream = StringIO()
    ModulePrinter(stream=stream).print_op(parse_source(make_context(), text, "hex.mlir"))
    assert _constant_bytes(stream.getvalue()) == element  # (printed, read back: the same bits)


def test_a_hexadecimal_float_element_too_wide_for_its_type_is_an_error():
    text = 'builtin.module {\n%c = "graph.constant"() <{value = dense<0x1FF800000> : tensor<2xf32>}> : () -> tensor<2xf32>\n}'
    with pytest.raises(CompileError, match="does not fit f32"):
        parse_source(make_context(), text, "wide.mlir")
