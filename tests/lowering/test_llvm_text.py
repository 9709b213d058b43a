"""`llvm_text`: the `llvm` dialect printed as LLVM IR, what `llvm_codegen` parses and
`fusion-opt -t llvm` prints. Checked here: the spellings LLVM requires (exact floats, `i1`
constants, phis fed by the branches that come later, a variadic callee's type, globals and
declarations), that LLVM parses and verifies the text, that the loop metadata sits on the
back edges it is given, and that an op it does not know is named."""

from __future__ import annotations

import llvmlite.binding as llvm
import pytest
from xdsl.dialects import llvm as llvm_dialect
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region
from xdsl.parser import Parser

from fusion_compiler.lowering.jit import host_target_machine
from fusion_compiler.lowering.llvm_text import LLVMTextError, module_text
from fusion_compiler.lowering.llvm_text_values import scalar_text
from fusion_compiler.lowering.vector_loops import apply_loop_hints, force_vector_loops

MODULE = r"""
builtin.module {
  llvm.mlir.global internal constant @table(dense<[1, 2, 3]> : tensor<3xi64>) {addr_space = 0 : i32} : !llvm.array<3 x i64>
  llvm.mlir.global internal constant @greeting("hi\0A") {addr_space = 0 : i32} : !llvm.array<3 x i8>
  llvm.mlir.global external @counter(7 : i32) {addr_space = 0 : i32} : i32
  llvm.mlir.global external @__fusion_num_threads(0 : i32) {addr_space = 0 : i32} : i32
  llvm.func @printf(!llvm.ptr, ...) -> i32
  llvm.func @f(%p: !llvm.ptr {llvm.noalias, llvm.nocapture}, %x: f32, %n: i64) -> f32 {
    %one = llvm.mlir.constant(1) : i64
    %tenth = llvm.mlir.constant(0.1 : f32) : f32
    %t = llvm.mlir.constant(true) : i1
    %neg = llvm.fneg %x : f32
    %s = llvm.fadd %neg, %tenth {fastmathFlags = #llvm.fastmath<contract>} : f32
    %c = llvm.fcmp "olt" %s, %x : f32
    %both = llvm.and %c, %t : i1
    %m = llvm.select %both, %s, %x : i1, f32
    %q = llvm.udiv exact %n, %one : i64
    %w = llvm.trunc %q : i64 to i32
    %z = llvm.zext nneg %w : i32 to i64
    %e = llvm.sitofp %z : i64 to f32
    %a = llvm.alloca %one x f32 {alignment = 64 : i64} : (i64) -> !llvm.ptr
    %g = llvm.getelementptr inbounds %p[%n, 2] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.array<4 x f32>
    llvm.store %e, %g {alignment = 4 : i64} : f32, !llvm.ptr
    %l = llvm.load %g {alignment = 4 : i64} : !llvm.ptr -> f32
    %r = llvm.call_intrinsic "llvm.fma.f32"(%l, %m, %x) : (f32, f32, f32) -> f32
    %fmt = llvm.mlir.addressof @greeting : !llvm.ptr
    %printed = llvm.call @printf(%fmt, %n) vararg(!llvm.func<i32 (ptr, ...)>) : (!llvm.ptr, i64) -> i32
    llvm.br ^loop(%one : i64)
  ^loop(%i: i64):
    %more = llvm.icmp "ult" %i, %n : i64
    llvm.cond_br %more, ^body, ^done
  ^body:
    %next = llvm.add %i, %one overflow<nsw> : i64
    llvm.br ^loop(%next : i64)
  ^done:
    llvm.return %r : f32
  }
}
"""


@pytest.fixture
def module(ctx) -> ModuleOp:
    parsed = Parser(ctx, MODULE).parse_module()
    parsed.verify()
    return parsed


def _parsed(text: str) -> llvm.ModuleRef:
    parsed = llvm.parse_assembly(text)
    parsed.verify()
    return parsed


def test_every_construct_is_spelled_as_llvm_expects(module):
    text = module_text(module, declared_globals={"__fusion_num_threads"})
    _parsed(text)
    lines = [line.strip() for line in text.splitlines()]
    for expected in (
        '@"table" = internal constant [3 x i64] [i64 1, i64 2, i64 3]',
        '@"greeting" = internal constant [3 x i8] c"hi\\0A"',
        '@"counter" = global i32 7',  # (external linkage is the default spelling)
        '@"__fusion_num_threads" = external global i32',  # (declared: another unit's)
        'declare i32 @"printf"(ptr, ...)',
        'define float @"f"(ptr captures(none) noalias %a0, float %a1, i64 %a2)',
        "%v2 = fadd contract float %v1, 0x3FB99999A0000000",  # (0.1 rounded to f32)
        "%v4 = and i1 %v3, true",
        "%v6 = udiv exact i64 %a2, 1",
        "%v8 = zext nneg i32 %v7 to i64",
        "%v10 = alloca float, i64 1, align 64",
        "%v11 = getelementptr inbounds [4 x float], ptr %a0, i64 %a2, i32 2",
        "store float %v9, ptr %v11, align 4",
        '%v13 = call float @"llvm.fma.f32"(float %v12, float %v5, float %a1)',
        '%v14 = call ccc i32 (ptr, ...) @"printf"(ptr @"greeting", i64 %a2)',
        '%v0 = phi i64 [1, %"block"], [%v16, %"body"]',  # (%v16: defined below the phi)
        'declare float @"llvm.fma.f32"(float, float, float)',
    ):
        assert expected in lines, expected


def test_f32_constants_are_exact():
    from xdsl.dialects.builtin import f32, f64

    assert scalar_text(f32, 0.1) == "0x3FB99999A0000000"  # the f32 nearest 0.1, as an f64
    assert scalar_text(f64, 0.1) == "0x3FB999999999999A"
    assert scalar_text(f32, float("inf")) == "0x7FF0000000000000"


def test_loop_metadata_sits_on_the_back_edges_given(module):
    function = next(
        op for op in module.ops if isinstance(op, llvm_dialect.FuncOp) and op.body.blocks
    )
    back_edge = list(function.body.blocks)[2].last_op
    properties = (("llvm.loop.unroll.disable",), ("llvm.loop.vectorize.width", 8))
    text = module_text(module, loop_properties={back_edge: properties})
    _parsed(text)
    assert 'br label %"loop", !llvm.loop !2' in text
    assert "!2 = distinct !{!2, !0, !1}" in text
    assert '!0 = !{!"llvm.loop.unroll.disable"}' in text
    assert '!1 = !{!"llvm.loop.vectorize.width", i32 8}' in text


def test_block_labels_are_unique_whatever_the_hints():
    from fusion_compiler.lowering.llvm_text import _block_labels

    blocks = [Block() for _ in range(4)]
    for block, hint in zip(blocks, ["loop", "loop", "loop.1", None], strict=True):
        block.name_hint = hint
    assert list(_block_labels(blocks).values()) == ['"loop"', '"loop.1"', '"loop.1.1"', '"block"']


def test_the_text_is_the_same_in_every_run(module, ctx):
    again = Parser(ctx, MODULE).parse_module()
    assert module_text(module) == module_text(again)


def test_an_op_it_does_not_translate_is_named():
    from xdsl.dialects import arith
    from xdsl.dialects.builtin import IntegerAttr, i64

    block = Block()
    block.add_ops([arith.ConstantOp(IntegerAttr(1, i64)), llvm_dialect.ReturnOp()])
    function = llvm_dialect.FuncOp("g", llvm_dialect.LLVMFunctionType([]), body=Region(block))
    with pytest.raises(LLVMTextError, match="'arith.constant' is not translated"):
        module_text(ModuleOp([function]))


VECTOR_OPS = r"""
builtin.module {
  llvm.func @g(%x: f32, %v: vector<8xf32>, %p: !llvm.ptr, %m: vector<8xi1>, %i: i32) -> f32 {
    %a = "llvm.intr.fabs"(%x) : (f32) -> f32
    %b = "llvm.intr.pow"(%a, %x) : (f32, f32) -> f32
    %c = "llvm.intr.sqrt"(%v) : (vector<8xf32>) -> vector<8xf32>
    %d = "llvm.intr.vector.reduce.fadd"(%b, %c) <{fastmathFlags = #llvm.fastmath<reassoc>}> : (f32, vector<8xf32>) -> f32
    "llvm.intr.masked.store"(%c, %p, %m) <{alignment = 4 : i32}> : (vector<8xf32>, !llvm.ptr, vector<8xi1>) -> ()
    %e = "llvm.insertelement"(%v, %d, %i) : (vector<8xf32>, f32, i32) -> vector<8xf32>
    %f = "llvm.shufflevector"(%e, %e) <{mask = array<i32: 7, 6, 5, 4, 3, 2, 1, 0>}> : (vector<8xf32>, vector<8xf32>) -> vector<8xf32>
    %u = "llvm.mlir.undef"() : () -> !llvm.struct<(f32, i32)>
    %s = "llvm.insertvalue"(%u, %d) <{position = array<i64: 0>}> : (!llvm.struct<(f32, i32)>, f32) -> !llvm.struct<(f32, i32)>
    %g = "llvm.extractvalue"(%s) <{position = array<i64: 0>}> : (!llvm.struct<(f32, i32)>) -> f32
    %h = "llvm.intr.fma"(%g, %g, %g) : (f32, f32, f32) -> f32
    "llvm.inline_asm"() <{asm_string = "nop", constraints = "", has_side_effects}> : () -> ()
    llvm.return %h : f32
  }
}
"""
"""The ops xDSL's translation knew that the lowering does not make (for `fusion-opt -t llvm`
on other `llvm` dialect input): intrinsics mangled by their types, as LLVM names them."""


def test_the_other_ops_of_the_llvm_dialect_are_translated(ctx):
    module = Parser(ctx, VECTOR_OPS).parse_module()
    module.verify()
    text = module_text(module)
    _parsed(text)
    lines = [line.strip() for line in text.splitlines()]
    for expected in (
        '%v0 = call float @"llvm.fabs.f32"(float %a0)',
        '%v2 = call <8 x float> @"llvm.sqrt.v8f32"(<8 x float> %a1)',
        '%v3 = call reassoc float @"llvm.vector.reduce.fadd.v8f32"(float %v1, <8 x float> %v2)',
        'call void @"llvm.masked.store.v8f32.p0"(<8 x float> %v2, ptr %a2, i32 4, <8 x i1> %a3)',
        "%v4 = insertelement <8 x float> %a1, float %v3, i32 %a4",
        "%v6 = insertvalue {float, i32} undef, float %v3, 0",
        "%v7 = extractvalue {float, i32} %v6, 0",
        'call void asm sideeffect "nop", ""()',
        'declare void @"llvm.masked.store.v8f32.p0"(<8 x float>, ptr, i32, <8 x i1>)',
    ):
        assert expected in lines, expected


def test_a_lowered_kernel_parses_with_its_loop_hints(lower, elementwise):
    """What `llvm_codegen` does with a kernel of a parallel loop around a vectorized one."""
    text = elementwise(
        "add", (256, 96), 2, "%r = arith.addf %x0, %x1 : f32", inner_kind="vectorized"
    )
    text = text.replace("to %n0 step %c1 {", "to %n0 step %c1 parallel {")
    module = lower(text, parallel_threshold=0)
    hints = force_vector_loops(module, {"add": 8, "add_par0": 8, "add_par0_body": 8}, 8)
    assert len(hints) == 1
    machine = host_target_machine()
    llvm_ir = module_text(
        module,
        triple=machine.triple,
        data_layout=str(machine.target_data),
        loop_properties=hints | apply_loop_hints(module),
        declared_globals={"__fusion_num_threads"},
    )
    parsed = _parsed(llvm_ir)
    assert parsed.get_function("add_par0_body").linkage == llvm.Linkage.internal
    assert "llvm.loop.vectorize.enable" in llvm_ir
