"""The legality predicates and rewrites of schedule-kernels on small hand-written kernels.

Each predicate is checked on a kernel where it must hold and on one where it must not; every
rewrite is checked to leave verifying IR that computes the same values (loop interpreter;
test_numerics.py checks bit-identical native results).
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import memref

from fusion_compiler.dialects.loop import WIDE_VECTORS_ATTR, AllocOp, ForOp, LoopKind
from fusion_compiler.dialects.reference.loop_interpreter import run_kernel
from fusion_compiler.passes.analysis.loop_access import is_parallel
from fusion_compiler.passes.schedule.compute_inline import (
    inlinable_producer,
    inline_producers,
    is_cheap,
)
from fusion_compiler.passes.schedule.loop_fusion import can_fuse, fuse_loops
from fusion_compiler.passes.schedule.loop_kinds import mark_loop_kinds, widen_strided_vectors
from fusion_compiler.passes.schedule.normalize import hoist_constants, remove_unit_loops
from fusion_compiler.passes.schedule.reduction_order import can_reorder, reorder_reductions
from fusion_compiler.passes.schedule.reduction_unroll import can_unroll_into, unroll_reductions
from fusion_compiler.passes.schedule.schedule_kernels import ScheduleKernelsPass
from fusion_compiler.passes.schedule.store_forwarding import (
    erase_dead_buffers,
    forward_stores,
    reaching_value,
)
from fusion_compiler.passes.schedule.tiling import can_strip_mine
from fusion_compiler.passes.schedule.unroll_jam import (
    can_unroll_jam,
    jam_factor,
    unroll_jam_reductions,
)

HEADER = """
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
"""

CHAIN = f"""
loop.func @chain(%a: memref<8xf32>) outs(%c: memref<8xf32>) {{
  %t = loop.alloc : memref<8xf32>
  {HEADER}
  loop.for %i = %c0 to %c8 step %c1 {{
    %x = memref.load %a[%i] : memref<8xf32>
    %e = math.exp %x : f32
    memref.store %e, %t[%i] : memref<8xf32>
  }}
  loop.for %j = %c0 to %c8 step %c1 {{
    %y = memref.load %t[%j] : memref<8xf32>
    %r = arith.maximumf %y, %zero : f32
    memref.store %r, %c[%j] : memref<8xf32>
  }}
}}
"""

SHIFTED = CHAIN.replace(
    "%y = memref.load %t[%j] : memref<8xf32>",
    "%j1 = arith.addi %j, %c1 : index\n    %j2 = arith.minsi %j1, %c4 : index\n"
    "    %y = memref.load %t[%j2] : memref<8xf32>",
)

MATMUL = f"""
loop.func @matmul(%a: memref<8x8xf32>, %b: memref<8x8xf32>) outs(%c: memref<8x8xf32>) {{
  {HEADER}
  loop.for %i = %c0 to %c8 step %c1 {{
    loop.for %j = %c0 to %c8 step %c1 {{
      memref.store %zero, %c[%i, %j] : memref<8x8xf32>
      loop.for %k = %c0 to %c8 step %c1 {{
        %x = memref.load %a[%i, %k] : memref<8x8xf32>
        %y = memref.load %b[%k, %j] : memref<8x8xf32>
        %p = arith.mulf %x, %y : f32
        %o = memref.load %c[%i, %j] : memref<8x8xf32>
        %s = arith.addf %o, %p : f32
        memref.store %s, %c[%i, %j] : memref<8x8xf32>
      }}
    }}
  }}
}}
"""

ROW_SUM = f"""
loop.func @row_sum(%x: memref<8x8xf32>) outs(%s: memref<8xf32>) {{
  {HEADER}
  loop.for %i = %c0 to %c8 step %c1 {{
    memref.store %zero, %s[%i] : memref<8xf32>
    loop.for %k = %c0 to %c8 step %c1 {{
      %v = memref.load %x[%i, %k] : memref<8x8xf32>
      %o = memref.load %s[%i] : memref<8xf32>
      %n = arith.addf %o, %v : f32
      memref.store %n, %s[%i] : memref<8xf32>
    }}
  }}
}}
"""

TRANSPOSE_OF_RESHAPE = f"""
loop.func @reshape_transpose(%q: memref<4x8xf32>) outs(%out: memref<8x4xf32>) {{
  %t = loop.alloc : memref<4x8xf32>
  {HEADER}
  loop.for %i = %c0 to %c4 step %c1 {{
    loop.for %j = %c0 to %c8 step %c1 {{
      %v = memref.load %q[%i, %j] : memref<4x8xf32>
      memref.store %v, %t[%i, %j] : memref<4x8xf32>
    }}
  }}
  loop.for %a = %c0 to %c8 step %c1 {{
    loop.for %b = %c0 to %c4 step %c1 {{
      %w = memref.load %t[%b, %a] : memref<4x8xf32>
      memref.store %w, %out[%a, %b] : memref<8x4xf32>
    }}
  }}
}}
"""


def _same(actual, expected):
    """Interpreted results agree to float32 accumulation error: the interpreter sums
    vectorised reductions in float64 and scalar loops (which a rewrite may create) in float32."""
    np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)


def _loops(kernel) -> list[ForOp]:
    return [op for op in kernel.body.walk() if isinstance(op, ForOp)]


def _run(kernel, *shapes_in, out_shapes, seed=0):
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes_in]
    outputs = [np.zeros(s, np.float32) for s in out_shapes]
    run_kernel(kernel, [*inputs, *outputs])
    return outputs


# --- loop fusion and store forwarding ----------------------------------------------------------


def test_fusion_of_an_elementwise_chain_removes_the_intermediate(parse_kernel):
    kernel = parse_kernel(CHAIN)
    before = _run(kernel, (8,), out_shapes=[(8,)])
    first, second = _loops(kernel)
    assert can_fuse(first, second)
    assert fuse_loops(kernel)
    assert forward_stores(kernel) and erase_dead_buffers(kernel)
    kernel.verify()
    assert len(_loops(kernel)) == 1
    assert not any(isinstance(op, AllocOp) for op in kernel.body.walk())
    _same(_run(kernel, (8,), out_shapes=[(8,)])[0], before[0])


def test_no_fusion_when_the_consumer_reads_another_iteration(parse_kernel):
    kernel = parse_kernel(SHIFTED)
    first, second = _loops(kernel)
    assert not can_fuse(first, second)
    assert not fuse_loops(kernel)


def test_no_fusion_of_loops_over_different_ranges(parse_kernel):
    kernel = parse_kernel(CHAIN.replace("%j = %c0 to %c8", "%j = %c0 to %c4"))
    first, second = _loops(kernel)
    assert not can_fuse(first, second)


def test_an_init_store_between_loops_moves_up_to_let_them_fuse(parse_kernel):
    text = f"""
loop.func @square_sum(%x: memref<8xf32>) outs(%e: memref<8xf32>, %s: memref<f32>) {{
  {HEADER}
  loop.for %i = %c0 to %c8 step %c1 {{
    %v = memref.load %x[%i] : memref<8xf32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %e[%i] : memref<8xf32>
  }}
  memref.store %zero, %s[] : memref<f32>
  loop.for %k = %c0 to %c8 step %c1 {{
    %v = memref.load %e[%k] : memref<8xf32>
    %o = memref.load %s[] : memref<f32>
    %n = arith.addf %o, %v : f32
    memref.store %n, %s[] : memref<f32>
  }}
}}
"""
    kernel = parse_kernel(text)
    before = _run(kernel, (8,), out_shapes=[(8,), ()])
    assert fuse_loops(kernel)
    kernel.verify()
    assert len(_loops(kernel)) == 1
    after = _run(kernel, (8,), out_shapes=[(8,), ()])
    for got, want in zip(after, before, strict=True):
        _same(got, want)


def test_forwarding_stops_at_a_store_that_may_alias(parse_kernel):
    text = f"""
loop.func @alias(%a: memref<8xf32>, %p: memref<8xf32>) outs(%c: memref<8xf32>) {{
  {HEADER}
  loop.for %i = %c0 to %c8 step %c1 {{
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %c[%i] : memref<8xf32>
    %y = memref.load %p[%i] : memref<8xf32>
    memref.store %y, %c[%c0] : memref<8xf32>
    %z = memref.load %c[%i] : memref<8xf32>
    memref.store %z, %c[%c1] : memref<8xf32>
  }}
}}
"""
    kernel = parse_kernel(text)
    load = [op for op in kernel.body.walk() if isinstance(op, memref.LoadOp)][-1]
    assert reaching_value(load) is None


def test_forwarding_never_leaves_a_loop_that_writes_the_buffer(parse_kernel):
    kernel = parse_kernel(ROW_SUM)
    loads = [op for op in kernel.body.walk() if isinstance(op, memref.LoadOp)]
    accumulator = next(load for load in loads if len(load.indices) == 1)
    assert reaching_value(accumulator) is None


# --- compute inline ----------------------------------------------------------------------------


def test_a_data_movement_producer_is_inlined_into_its_reader(parse_kernel):
    kernel = parse_kernel(TRANSPOSE_OF_RESHAPE)
    before = _run(kernel, (4, 8), out_shapes=[(8, 4)])
    alloc = next(op for op in kernel.body.walk() if isinstance(op, AllocOp))
    producer = inlinable_producer(alloc, kernel)
    assert producer is not None and is_cheap(producer)
    assert inline_producers(kernel)
    erase_dead_buffers(kernel)
    kernel.verify()
    assert not any(isinstance(op, AllocOp) for op in kernel.body.walk())
    _same(_run(kernel, (4, 8), out_shapes=[(8, 4)])[0], before[0])


def test_a_producer_with_float_math_is_not_inlined(parse_kernel):
    kernel = parse_kernel(CHAIN.replace("%j = %c0 to %c8", "%j = %c0 to %c4"))
    alloc = next(op for op in kernel.body.walk() if isinstance(op, AllocOp))
    producer = inlinable_producer(alloc, kernel)
    assert producer is not None and not is_cheap(producer)
    assert not inline_producers(kernel)


def test_no_inlining_into_a_reduction_unless_asked(parse_kernel):
    text = f"""
loop.func @copy_sum(%q: memref<8xf32>) outs(%s: memref<f32>) {{
  %t = loop.alloc : memref<8xf32>
  {HEADER}
  loop.for %i = %c0 to %c8 step %c1 {{
    %v = memref.load %q[%i] : memref<8xf32>
    memref.store %v, %t[%i] : memref<8xf32>
  }}
  memref.store %zero, %s[] : memref<f32>
  loop.for %k = %c0 to %c8 step %c1 {{
    %v = memref.load %t[%k] : memref<8xf32>
    %o = memref.load %s[] : memref<f32>
    %n = arith.addf %o, %v : f32
    memref.store %n, %s[] : memref<f32>
  }}
}}
"""
    kernel = parse_kernel(text)
    assert not inline_producers(kernel)
    assert inline_producers(kernel, into_reductions=True)
    kernel.verify()


# --- reduction order ---------------------------------------------------------------------------


def test_matmul_gets_its_column_loop_innermost(parse_kernel):
    kernel = parse_kernel(MATMUL)
    before = _run(kernel, (8, 8), (8, 8), out_shapes=[(8, 8)])
    i, j, k = _loops(kernel)
    assert is_parallel(i) and is_parallel(j) and not is_parallel(k)
    assert can_reorder(j) and not can_reorder(i)
    assert reorder_reductions(kernel)
    kernel.verify()
    order = [loop.induction_var.name_hint for loop in _loops(kernel)]
    assert order == ["i", "j", "k", "j"]  # i { j { init }; k { j { update } } }
    _same(_run(kernel, (8, 8), (8, 8), out_shapes=[(8, 8)])[0], before[0])


def test_a_row_sum_keeps_its_order(parse_kernel):
    kernel = parse_kernel(ROW_SUM)
    outer = _loops(kernel)[0]
    assert is_parallel(outer) and not can_reorder(outer)
    assert not reorder_reductions(kernel)


# --- reduction unrolling -----------------------------------------------------------------------


def test_reduction_steps_unroll_into_the_vector_loop(parse_kernel):
    kernel = parse_kernel(MATMUL)
    before = _run(kernel, (8, 8), (8, 8), out_shapes=[(8, 8)])
    reorder_reductions(kernel)
    k = next(loop for loop in _loops(kernel) if loop.induction_var.name_hint == "k")
    assert can_unroll_into(k, 4) and can_unroll_into(k, 8)
    assert not can_unroll_into(k, 3)  # does not divide 8
    i = _loops(kernel)[0]
    assert not can_unroll_into(i, 2)  # its body is not a perfect nest
    assert unroll_reductions(kernel, 4)
    kernel.verify()
    k = next(loop for loop in _loops(kernel) if loop.induction_var.name_hint == "k")
    assert k.step.owner.value.value.data == 4
    _same(_run(kernel, (8, 8), (8, 8), out_shapes=[(8, 8)])[0], before[0])


def test_no_reduction_unrolling_when_the_element_depends_on_the_reduction(parse_kernel):
    text = f"""
loop.func @scatter(%in: memref<8xf32>) outs(%out: memref<12xf32>) {{
  {HEADER}
  loop.for %k = %c0 to %c4 step %c1 {{
    loop.for %x = %c0 to %c8 step %c1 {{
      %i = arith.addi %x, %k : index
      %v = memref.load %in[%x] : memref<8xf32>
      %o = memref.load %out[%i] : memref<12xf32>
      %s = arith.addf %o, %v : f32
      memref.store %s, %out[%i] : memref<12xf32>
    }}
  }}
}}
"""
    kernel = parse_kernel(text)
    k, x = _loops(kernel)
    assert is_parallel(x) and not is_parallel(x, scope=k)
    assert not can_unroll_into(k, 2)
    assert not unroll_reductions(kernel, 4)


# --- unroll-and-jam, tiling, loop kinds --------------------------------------------------------


def test_unroll_jam_needs_a_factor_that_divides_the_trip_count(parse_kernel):
    kernel = parse_kernel(MATMUL)
    i = _loops(kernel)[0]
    assert can_unroll_jam(i, 4) and can_unroll_jam(i, 2) and can_unroll_jam(i, 8)
    assert not can_unroll_jam(i, 3) and not can_unroll_jam(i, 16) and not can_unroll_jam(i, 1)
    assert jam_factor(i, 6) == 4 and jam_factor(i, 3) == 2 and jam_factor(i, 16) == 8
    k = _loops(kernel)[2]
    assert not can_unroll_jam(k, 4)  # a reduction loop
    assert not can_strip_mine(i, 8) and can_strip_mine(i, 4)


def test_unroll_jam_of_the_matmul_rows(parse_kernel):
    kernel = parse_kernel(MATMUL)
    before = _run(kernel, (8, 8), (8, 8), out_shapes=[(8, 8)])
    reorder_reductions(kernel)
    assert unroll_jam_reductions(kernel, 4, l1_bytes=32768)
    kernel.verify()
    outer = _loops(kernel)[0]
    assert outer.step.owner.value.value.data == 4
    stores = [op for op in kernel.body.walk() if isinstance(op, memref.StoreOp)]
    assert len(stores) == 8  # four init stores, four updates
    _same(_run(kernel, (8, 8), (8, 8), out_shapes=[(8, 8)])[0], before[0])


def test_loop_kinds(parse_kernel):
    kernel = parse_kernel(MATMUL)
    reorder_reductions(kernel)
    mark_loop_kinds(kernel)
    kinds = [(loop.induction_var.name_hint, loop.loop_kind) for loop in _loops(kernel)]
    assert kinds == [
        ("i", LoopKind.PARALLEL),
        ("j", LoopKind.VECTORIZED),
        ("k", LoopKind.SERIAL),
        ("j", LoopKind.VECTORIZED),
    ]


AVX512 = "+avx,+avx2,+fma,+avx512f"
AVX2 = "+avx,+avx2,+fma,-avx512f"


def _strided_rows(width: int) -> str:
    """Every other element of each row: a vector loop of `width` reading with stride 2."""
    return f"""
loop.func @halve(%a: memref<4x{2 * width}xf32>) outs(%c: memref<4x{width}xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %cw = arith.constant {width} : index
  loop.for %i = %c0 to %c4 step %c1 {{
    loop.for %j = %c0 to %cw step %c1 {{
      %k = arith.muli %j, %c2 : index
      %x = memref.load %a[%i, %k] : memref<4x{2 * width}xf32>
      memref.store %x, %c[%i, %j] : memref<4x{width}xf32>
    }}
  }}
  loop.return
}}
"""


@pytest.mark.parametrize(
    "width,features,wide",
    [(16, AVX512, True), (55, AVX512, True), (13, AVX512, False), (55, AVX2, False)],
)
def test_strided_vector_loops_of_a_full_wide_vector_get_wide_vectors(
    parse_kernel, width, features, wide
):
    kernel = parse_kernel(_strided_rows(width))
    mark_loop_kinds(kernel)
    assert _loops(kernel)[-1].loop_kind == LoopKind.VECTORIZED
    assert widen_strided_vectors(kernel, features) is wide
    assert (WIDE_VECTORS_ATTR in kernel.attributes) is wide


def test_contiguous_vector_loops_keep_the_preferred_width(parse_kernel):
    kernel = parse_kernel(MATMUL)
    reorder_reductions(kernel)
    mark_loop_kinds(kernel)
    assert not widen_strided_vectors(kernel, AVX512)
    assert WIDE_VECTORS_ATTR not in kernel.attributes


def test_unit_loops_and_constants_are_normalised(parse_kernel):
    text = f"""
loop.func @unit(%a: memref<1x8xf32>) outs(%c: memref<1x8xf32>) {{
  {HEADER}
  loop.for %n = %c0 to %c1 step %c1 {{
    loop.for %i = %c0 to %c8 step %c1 {{
      %two = arith.constant 2.0 : f32
      %x = memref.load %a[%n, %i] : memref<1x8xf32>
      %y = arith.mulf %x, %two : f32
      memref.store %y, %c[%n, %i] : memref<1x8xf32>
    }}
  }}
}}
"""
    kernel = parse_kernel(text)
    remove_unit_loops(kernel)
    hoist_constants(kernel)
    kernel.verify()
    assert [loop.induction_var.name_hint for loop in _loops(kernel)] == ["i"]
    top = list(kernel.body.block.ops)
    assert sum(1 for op in top if op.name == "arith.constant") == 6


# --- the pass ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [CHAIN, MATMUL, ROW_SUM, TRANSPOSE_OF_RESHAPE, SHIFTED])
def test_the_pass_is_deterministic_and_idempotent(loop_ctx, text):
    from xdsl.parser import Parser

    outputs = []
    for _ in range(2):
        module = Parser(loop_ctx, text).parse_module()
        ScheduleKernelsPass().apply(loop_ctx, module)
        module.verify()
        outputs.append(str(module))
    assert outputs[0] == outputs[1]
    module = Parser(loop_ctx, outputs[0]).parse_module()
    ScheduleKernelsPass().apply(loop_ctx, module)
    assert str(module) == outputs[0]
