"""`fusion_compiler.lowering.jit`: compilation for the host, generated code, and checked kernel calls."""

from __future__ import annotations

import gc
import re

import llvmlite.binding as llvm
import numpy as np
import pytest
from xdsl.parser import Parser

from fusion_compiler.lowering import KernelCallError, compile_llvm_module
from fusion_compiler.lowering.jit import CodegenTarget
from fusion_compiler.lowering.llvm_codegen import optimized_llvm_module
from fusion_compiler.lowering.llvm_text import module_text
from fusion_compiler.lowering.math_to_llvm import EXPANDED_MATH_ATTR
from fusion_compiler.lowering.vector_loops import force_vector_loops, vector_lanes

ADD_SHAPE = (64, 40)
"""The kernel LLVM's cost model left scalar on AMD Zen 3 (AVX2) before `vectorized` loops were
forced: 40 columns."""

ADD_BODY = "%r = arith.addf %x0, %x1 : f32"

OTHER_HOSTS = [
    pytest.param(CodegenTarget("znver3", "+avx,+avx2,+fma"), 8, "ymm", id="zen3-avx2"),
    pytest.param(CodegenTarget("x86-64-v2", "+sse4.2"), 4, "xmm", id="x86-64-v2-sse"),
    pytest.param(
        CodegenTarget("skylake-avx512", "+avx,+avx2,+fma,+avx512f"), 8, "ymm", id="avx512"
    ),
]
"""CPUs whose code is generated (not run) to show that the guarantee holds on each: the lane
count forced on `vectorized` loops and the registers their vector code uses."""


@pytest.fixture(scope="module")
def add_module(jit, elementwise):
    return jit(elementwise("add", ADD_SHAPE, 2, ADD_BODY, inner_kind="vectorized"))


def _arrays(count: int) -> list[np.ndarray]:
    return [np.ones(ADD_SHAPE, np.float32) for _ in range(count)]


def _optimised_for(lower, text: str, target: CodegenTarget) -> llvm.ModuleRef:
    return optimized_llvm_module(lower(text), target, target.machine())


def test_optimised_ir_keeps_noalias(add_module):
    ir = add_module.llvm_ir
    define = next(line for line in ir.splitlines() if line.startswith("define void @add("))
    assert define.count("ptr noalias") == 3
    assert "target triple" in ir


def test_vectorized_loops_carry_the_forcing_metadata(lower, elementwise):
    """The guarantee itself: each `vectorized` loop's back edge asks LLVM for vectors of the
    target's lane count (and no full unrolling first); serial loops are left to LLVM."""
    module = lower(elementwise("add", ADD_SHAPE, 2, ADD_BODY, inner_kind="vectorized"))
    loops = force_vector_loops(module, {"add": 8}, 8)
    assert len(loops) == 1
    text = module_text(module, loop_properties=loops)
    assert re.search(r"br label %\"?vector_header\"?, !llvm\.loop !\d+", text)
    assert '!"llvm.loop.vectorize.enable", i1 true}' in text
    assert '!"llvm.loop.vectorize.width", i32 8}' in text
    assert '!"llvm.loop.unroll.disable"}' in text
    llvm.parse_assembly(text).verify()
    serial = lower(elementwise("add", ADD_SHAPE, 2, ADD_BODY))
    assert force_vector_loops(serial, {"add": 8}, 8) == {}


@pytest.mark.parametrize(("target", "lanes", "register"), OTHER_HOSTS)
def test_vectorized_loops_are_vector_code_on_every_host(
    lower, elementwise, target, lanes, register
):
    """The 64x40 add kernel is vector code of the lanes we chose on AVX2, SSE-only and
    AVX-512 CPUs alike (whatever LLVM's cost model would have chosen), in IR and assembly."""
    text = elementwise("add", ADD_SHAPE, 2, ADD_BODY, inner_kind="vectorized")
    optimised = _optimised_for(lower, text, target)
    widths = set(re.findall(r"fadd <(\d+) x float>", str(optimised)))
    assert widths == {str(lanes)}
    assembly = target.machine().emit_assembly(optimised)
    assert re.search(rf"\bv?addps\b[^\n]*%{register}", assembly)


def test_short_loops_are_vector_code_too(lower, elementwise):
    """A 2-D nest with 16 columns: two vectors per row on AVX2, not unrolled to scalars."""
    target = CodegenTarget("znver3", "+avx,+avx2,+fma")
    text = elementwise("add", (3, 16), 2, ADD_BODY, inner_kind="vectorized")
    assert "fadd <8 x float>" in str(_optimised_for(lower, text, target))


@pytest.mark.parametrize("columns", [7, 14])
def test_remainders_run_under_a_mask(lower, elementwise, columns):
    """A row of 14 (or 7) on AVX2: the iterations left over by whole vectors of 8 run as one
    masked vector iteration, not as a scalar loop (bench/layers.py, depthwise 3x3 on 14x14 and
    7x7 pixels: 1.2x and 1.7x faster on a Zen 3)."""
    target = CodegenTarget("znver3", "+avx,+avx2,+fma")
    text = elementwise("add", (3, columns), 2, ADD_BODY, inner_kind="vectorized")
    optimised = str(_optimised_for(lower, text, target))
    assert "fadd <8 x float>" in optimised
    assert "llvm.masked.store.v8f32" in optimised
    assert not re.search(r"fadd float ", optimised)


ROW_SEGMENT = """
loop.func @segment(%in: memref<4x64xf32>, %bounds: memref<2xi64>) outs(%out: memref<4x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %lo64 = memref.load %bounds[%c0] : memref<2xi64>
  %hi64 = memref.load %bounds[%c1] : memref<2xi64>
  %lo = arith.index_cast %lo64 : i64 to index
  %hi = arith.index_cast %hi64 : i64 to index
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %lo to %hi step %c1 vectorized {
      %x = memref.load %in[%i, %j] : memref<4x64xf32>
      %r = arith.addf %x, %x : f32
      memref.store %r, %out[%i, %j] : memref<4x64xf32>
    }
  }
  loop.return
}
"""


def test_loops_of_unknown_trip_count_run_their_remainder_under_a_mask_on_avx512(lower):
    """A vector loop whose bounds are values (a row of an im2col panel packed row by row,
    `contraction_pack_schedule`: a row or less) runs its last vector under a mask on an
    AVX-512 CPU (mask registers), not as a scalar loop of up to 7 (or 15) iterations."""
    target = CodegenTarget("znver4", "+avx,+avx2,+fma,+avx512f,+avx512vl,+avx512bw,+avx512dq")
    optimised = str(_optimised_for(lower, ROW_SEGMENT, target))
    assert "llvm.masked.store" in optimised
    assert not re.search(r"fadd float ", optimised)


def test_loops_of_unknown_trip_count_end_in_a_scalar_loop_on_avx2(lower):
    """The same loop on an AVX2 CPU: LLVM would predicate every iteration of it, each mask
    built by a dozen vector instructions (conv3x3 16x55x55 -> 64 ran 1.4x slower so on a Zen
    3); whole vectors, then a scalar remainder."""
    target = CodegenTarget("znver3", "+avx,+avx2,+fma")
    optimised = str(_optimised_for(lower, ROW_SEGMENT, target))
    assert "fadd <8 x float>" in optimised
    assert "llvm.masked" not in optimised
    assert re.search(r"fadd float ", optimised)


STRIDED_ROWS = """
loop.func @pick(%in: memref<3x28xf32>) outs(%out: memref<3x14xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c14 = arith.constant 14 : index
  loop.for %i = %c0 to %c3 step %c1 {
    loop.for %j = %c0 to %c14 step %c1 vectorized {
      %s = arith.muli %j, %c2 : index
      %x = memref.load %in[%i, %s] : memref<3x28xf32>
      %r = arith.addf %x, %x : f32
      memref.store %r, %out[%i, %j] : memref<3x14xf32>
    }
  }
  loop.return
}
"""


def test_strided_remainders_are_not_masked(lower):
    """A row of 14 read with stride 2 (pooling, a strided convolution's packing): a masked
    remainder would read with gathers (squeezenet's 3x3 stride-2 max pooling to 13 x 13
    pixels: 0.28 -> 0.15 ms without the mask on a Zen 5); it stays a scalar loop."""
    target = CodegenTarget("znver3", "+avx,+avx2,+fma")
    optimised = str(_optimised_for(lower, STRIDED_ROWS, target))
    assert "store <8 x float>" in optimised  # the vector: a wide load, shuffled
    assert "llvm.masked" not in optimised and "gather" not in optimised


def test_short_strided_rows_run_on_narrow_vectors(lower):
    """A row of 7 read with stride 2 (a stride-2 depthwise convolution to 7x7 pixels): too
    short for 8 lanes and not maskable, it runs one 4-lane vector and a scalar remainder."""
    target = CodegenTarget("znver3", "+avx,+avx2,+fma")
    text = STRIDED_ROWS.replace("c14 = arith.constant 14", "c14 = arith.constant 7")
    text = text.replace("memref<3x14xf32>", "memref<3x7xf32>")
    optimised = str(_optimised_for(lower, text, target))
    assert "store <4 x float>" in optimised  # (its stride-2 read: 8 floats, shuffled)
    assert "store <8 x float>" not in optimised
    assert "llvm.masked" not in optimised and "gather" not in optimised


def test_strided_rows_as_long_as_a_vector_run_on_narrower_ones(lower, capfd):
    """A row of 8 read with stride 3 (a packing kernel's gather of a small weight): LLVM keeps
    the last iteration of a strided loop scalar (the reads have gaps), so it cannot make 8
    iterations one 8-lane vector, and warned on stderr that the forced vectorisation failed
    (found by `bench/fuzz.py onnx-graphs`, seed 20101); two 4-lane iterations it can."""
    target = CodegenTarget("znver3", "+avx,+avx2,+fma")
    text = STRIDED_ROWS.replace("c14 = arith.constant 14", "c14 = arith.constant 8")
    text = text.replace("%c2 : index", "%c3 : index").replace("memref<3x14xf32>", "memref<3x8xf32>")
    text = text.replace("memref<3x28xf32>", "memref<3x24xf32>")
    optimised = str(_optimised_for(lower, text, target))
    assert "store <4 x float>" in optimised
    assert "not vectorized" not in capfd.readouterr().err


@pytest.mark.parametrize(("columns", "marked"), [(3, 0), (5, 0), (8, 1), (40, 1)])
def test_loops_shorter_than_a_vector_are_not_forced(lower, elementwise, columns, marked):
    """LLVM cannot vectorise a loop of fewer iterations than lanes: forcing it would only
    make LLVM warn on stderr."""
    text = elementwise("add", (7, columns), 2, ADD_BODY, inner_kind="vectorized")
    assert len(force_vector_loops(lower(text), {"add": 16}, 8)) == marked


def test_loops_calling_scalar_functions_are_not_forced(lower, elementwise):
    """A loop calling libm (`erff`) cannot be vectorised: it is left unmarked, so LLVM does
    not warn that the requested vectorisation failed."""
    text = elementwise("erf", (64,), 1, "%r = math.erf %x0 : f32", inner_kind="vectorized")
    module = lower(text, approximate_math=False)
    assert force_vector_loops(module, {"erf": 8}, 8) == {}


def test_lane_counts():
    assert vector_lanes("+avx,+avx2") == 8
    assert vector_lanes("+avx,+avx2,+avx512f") == 8
    assert vector_lanes("+avx,+avx2,+avx512f", wide=True) == 16
    assert vector_lanes("+sse4.2,-avx") == 4


def _target_has(feature: str) -> bool:
    """Whether the CPU the JIT compiles for has `feature`: this machine's, or the one
    `FUSION_TARGET_CPU` and `FUSION_TARGET_FEATURES` name (AVX2 code on an AVX-512 host)."""
    return f"+{feature}" in CodegenTarget.host().features.split(",")


def test_host_assembly_uses_vector_registers(add_module):
    if not _target_has("avx"):
        pytest.skip("the target CPU has no AVX")
    assert re.search(r"\bvaddps\b[^\n]*%[yz]mm", add_module.assembly)


def _function_attributes(ir: str, name: str) -> str:
    """The attributes of the LLVM function `name` in optimised IR (its attribute group)."""
    define = next(line for line in ir.splitlines() if re.match(rf"define .*@{name}\(", line))
    group = re.search(r"#(\d+) \{$", define)
    if group is None:
        return ""
    return re.search(rf"^attributes #{group[1]} = \{{(.*)\}}$", ir, re.MULTILINE)[1]


def test_expansion_kernels_are_vectorised_512_bits_wide(jit, elementwise, add_module):
    """A kernel holding an expansion prefers 512-bit vectors on AVX-512 hosts (and stays out
    of its callers); other kernels keep LLVM's preference for the CPU."""
    if not _target_has("avx512f"):
        pytest.skip("the target CPU has no AVX-512")
    module = jit(elementwise("tanh", (4096,), 1, "%r = math.tanh %x0 : f32"))
    attributes = _function_attributes(module.llvm_ir, "tanh")
    assert '"prefer-vector-width"="512"' in attributes and "noinline" in attributes
    assert re.search(r"\bvfmadd\w+ps\b[^\n]*%zmm", module.assembly)
    assert "prefer-vector-width" not in add_module.llvm_ir


def test_an_avx512_target_gets_the_wide_vectors_attributes_on_any_host(lower, elementwise):
    """The attributes `widen_vectors` gives (printed by `llvm_text`) reach LLVM whatever the
    host: code generated, not run, for an AVX-512 CPU."""
    target = CodegenTarget("skylake-avx512", "+avx,+avx2,+fma,+avx512f")
    machine = target.machine()
    kernel = elementwise("tanh", (4096,), 1, "%r = math.tanh %x0 : f32", inner_kind="vectorized")
    optimised = optimized_llvm_module(lower(kernel), target, machine)
    attributes = _function_attributes(str(optimised), "tanh")
    assert '"prefer-vector-width"="512"' in attributes and "noinline" in attributes
    assert re.search(r"\bvfmadd\w+ps\b[^\n]*%zmm", machine.emit_assembly(optimised))


def test_expansions_mark_their_function(lower, elementwise):
    """Only a function holding an expansion is marked (not one calling libm, nor one without
    math)."""
    expanded = lower(elementwise("k", (64,), 1, "%r = math.tanh %x0 : f32"))
    libm = lower(elementwise("k", (64,), 1, "%r = math.tanh %x0 : f32"), approximate_math=False)
    plain = lower(elementwise("k", (64,), 2, "%r = arith.addf %x0, %x1 : f32"))
    marked = [
        EXPANDED_MATH_ATTR in module.body.block.first_op.attributes
        for module in (expanded, libm, plain)
    ]
    assert marked == [True, False, False]


def test_function_address(add_module):
    assert add_module.function_address("add") != 0
    with pytest.raises(KeyError, match="no function 'missing'"):
        add_module.function_address("missing")


def test_call_kernel_writes_the_output(add_module):
    a, b, out = _arrays(3)
    a *= 2
    add_module.call_kernel("add", a, b, out)
    np.testing.assert_array_equal(out, np.full(ADD_SHAPE, 3, np.float32))


def test_read_only_inputs_are_accepted(add_module):
    a, b, out = _arrays(3)
    a.flags.writeable = False
    add_module.call_kernel("add", a, b, out)
    np.testing.assert_array_equal(out, a + b)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            lambda a: a.astype(np.float64),
            r"argument #1 \(input\): expected dtype float32, got float64",
        ),
        (
            lambda a: a.reshape(40, 64),
            r"argument #1 \(input\): expected shape \(64, 40\), got \(40, 64\)",
        ),
        (lambda a: np.ones((64, 80), np.float32)[:, ::2], r"argument #1 \(input\): .*C-contiguous"),
        (lambda a: a.tolist(), r"argument #1 \(input\): expected a numpy array, got list"),
    ],
    ids=["dtype", "shape", "strided", "list"],
)
def test_call_kernel_rejects_a_bad_argument(add_module, change, message):
    a, b, out = _arrays(3)
    with pytest.raises(KernelCallError, match=message):
        add_module.call_kernel("add", a, change(b), out)


def test_call_kernel_rejects_a_read_only_output(add_module):
    a, b, out = _arrays(3)
    out.flags.writeable = False
    with pytest.raises(KernelCallError, match=r"argument #2 \(output\): .*writeable"):
        add_module.call_kernel("add", a, b, out)


def test_call_kernel_checks_the_argument_count_and_name(add_module):
    with pytest.raises(KernelCallError, match="kernel 'add' takes 3 arrays, got 2"):
        add_module.call_kernel("add", *_arrays(2))
    with pytest.raises(KeyError, match="no kernel 'sub'.*kernels: add"):
        add_module.call_kernel("sub", *_arrays(3))


def test_each_compilation_has_its_own_engine(jit, elementwise):
    """Modules are independent and can be released in any order."""
    modules = [
        jit(
            elementwise(
                "scale",
                (100,),
                1,
                f"%c = arith.constant {k}.0 : f32\n%r = arith.mulf %x0, %c : f32",
            )
        )
        for k in range(1, 5)
    ]
    x = np.arange(100, dtype=np.float32)
    del modules[1]
    gc.collect()
    for module, k in zip(modules, (1, 3, 4), strict=True):
        out = np.empty_like(x)
        module.call_kernel("scale", x, out)
        np.testing.assert_array_equal(out, x * k)


ENTRY = """
loop.func @neg(%a: memref<4xf32>) outs(%b: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 4 : index
  loop.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.negf %x : f32
    memref.store %y, %b[%i] : memref<4xf32>
  }
  loop.return
}
loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 4 : index
  loop.for %i = %c0 to %n step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = memref.load %b[%i] : memref<4xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %c[%i] : memref<4xf32>
  }
  loop.return
}
loop.func @main(%x: memref<4xf32>, %w: memref<4xf32>) outs(%d: memref<4xf32>) {
  %s0 = loop.alloc : memref<4xf32>
  %s1 = loop.alloc : memref<16xf32>
  %a = loop.view %s0 : memref<4xf32> to memref<4xf32>
  %b = loop.view %s1 : memref<16xf32> to memref<4xf32>
  %c = loop.view %s0 : memref<4xf32> to memref<4xf32>
  loop.call @neg(%x, %a) : memref<4xf32>, memref<4xf32>
  loop.call @neg(%a, %b) : memref<4xf32>, memref<4xf32>
  loop.call @neg(%b, %c) : memref<4xf32>, memref<4xf32>
  loop.call @add(%c, %w, %d) : memref<4xf32>, memref<4xf32>, memref<4xf32>
  loop.return
}
"""


@pytest.mark.parametrize("stack_limit", [0, 4096])
def test_entry_function_calls_kernels_natively(jit, stack_limit):
    module = jit(ENTRY, stack_limit=stack_limit)
    x = np.array([1, -2, 3, -4], np.float32)
    w = np.array([10, 20, 30, 40], np.float32)
    out = np.empty(4, np.float32)
    module.call_kernel("main", x, w, out)
    np.testing.assert_array_equal(out, w - x)


def test_compile_rejects_a_module_that_is_not_lowered(ctx):
    module = Parser(ctx, "func.func @f() {\n  func.return\n}").parse_module()
    with pytest.raises(ValueError, match="'func.func' is not in the llvm dialect"):
        compile_llvm_module(module)
