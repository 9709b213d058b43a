"""The pattern-kind analysis of `annotate-pattern` (`index_expr`, `kernel_blocks`,
`pattern_analysis`) on kernels parsed from text."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import memref
from xdsl.parser import Parser

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.dialects.pattern_kind import PatternKind as K
from fusion_compiler.passes.analysis.index_expr import IndexExprBuilder
from fusion_compiler.passes.analysis.kernel_blocks import compute_blocks
from fusion_compiler.passes.analysis.pattern_analysis import analyze_kernel, kernel_pattern

PRELUDE = """
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.000000e+00 : f32
"""


def parse_kernel(signature: str, body: str) -> FuncOp:
    """`loop.func @k<signature> { <index constants %c0..%c4, %zero> <body> loop.return }`."""
    text = f"loop.func @k{signature} {{{PRELUDE}{body}\n  loop.return\n}}"
    module = Parser(make_context(), text).parse_module()
    module.verify()
    kernel = module.body.block.first_op
    assert isinstance(kernel, FuncOp)
    return kernel


def spatial_2x3(load: str, load_type: str) -> FuncOp:
    """`y[i, j] = x[<load>]` over a 2x3 output; `%i`, `%j` are the loop variables."""
    body = f"""
  loop.for %i = %c0 to %c2 step %c1 {{
    loop.for %j = %c0 to %c3 step %c1 {{
      %s = arith.addi %i, %c0 : index
      %v = memref.load %x[{load}] : {load_type}
      memref.store %v, %y[%i, %j] : memref<2x3xf32>
    }}
  }}"""
    return parse_kernel(f"(%x: {load_type}) outs(%y: memref<2x3xf32>)", body)


# ---------------------------------------------------------------------------------------------
# One load against the store
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("load", "load_type", "expected"),
    [
        ("%i, %j", "memref<2x3xf32>", K.ELEMWISE),
        ("%s, %j", "memref<2x3xf32>", K.ELEMWISE),  # %s = %i + 0 is folded
        ("%j", "memref<3xf32>", K.BROADCAST),
        ("%c0, %j", "memref<1x3xf32>", K.BROADCAST),
        ("%i, %c0", "memref<2x1xf32>", K.BROADCAST),
        ("", "memref<f32>", K.BROADCAST),
        ("%i, %c0, %j", "memref<2x1x3xf32>", K.ELEMWISE),  # unit dim indexed by 0 skipped
        ("%j, %i", "memref<3x2xf32>", K.INJECTIVE),
        ("%j, %j", "memref<3x3xf32>", K.INJECTIVE),  # not the store's subscripts in order
        ("%c1, %j", "memref<2x3xf32>", K.INJECTIVE),  # 0/1 in a non-unit dimension
        ("%c0, %j", "memref<2x3xf32>", K.INJECTIVE),
    ],
)
def test_load_against_store(load, load_type, expected):
    assert kernel_pattern(spatial_2x3(load, load_type)) == expected


def two_loads(first: str, first_type: str, second: str, second_type: str) -> FuncOp:
    body = f"""
  loop.for %i = %c0 to %c2 step %c1 {{
    loop.for %j = %c0 to %c3 step %c1 {{
      %u = memref.load %a[{first}] : {first_type}
      %v = memref.load %b[{second}] : {second_type}
      %w = arith.mulf %u, %v : f32
      memref.store %w, %y[%i, %j] : memref<2x3xf32>
    }}
  }}"""
    return parse_kernel(f"(%a: {first_type}, %b: {second_type}) outs(%y: memref<2x3xf32>)", body)


def test_broadcast_next_to_elemwise_is_elemwise():
    kernel = two_loads("%i, %j", "memref<2x3xf32>", "%j", "memref<3xf32>")
    assert kernel_pattern(kernel) == K.ELEMWISE


def test_two_broadcast_loads_stay_broadcast():
    kernel = two_loads("%i", "memref<2xf32>", "%j", "memref<3xf32>")
    assert kernel_pattern(kernel) == K.BROADCAST


def test_block_kind_is_the_max_over_loads():
    kernel = two_loads("%i, %j", "memref<2x3xf32>", "%j, %i", "memref<3x2xf32>")
    assert kernel_pattern(kernel) == K.INJECTIVE


def test_store_at_an_expression_is_not_injective():
    body = """
  loop.for %i = %c0 to %c2 step %c1 {
    %v = memref.load %x[%i] : memref<2xf32>
    %o = arith.addi %i, %c1 : index
    memref.store %v, %y[%o] : memref<3xf32>
  }"""
    kernel = parse_kernel("(%x: memref<2xf32>) outs(%y: memref<3xf32>)", body)
    assert kernel_pattern(kernel) == K.OPAQUE


# ---------------------------------------------------------------------------------------------
# Index expressions
# ---------------------------------------------------------------------------------------------


def subscripts_of_first_load(body: str) -> list:
    kernel = parse_kernel("(%x: memref<8x8xf32>) outs(%y: memref<2xf32>)", body)
    load = next(op for op in kernel.walk() if isinstance(op, memref.LoadOp))
    return list(IndexExprBuilder().subscripts(tuple(load.indices)))


def test_identities_and_constants_are_folded():
    first, second = subscripts_of_first_load("""
  loop.for %i = %c0 to %c2 step %c1 {
    %a = arith.muli %c1, %i : index
    %b = arith.addi %c2, %c3 : index
    %v = memref.load %x[%a, %b] : memref<8x8xf32>
    memref.store %v, %y[%i] : memref<2xf32>
  }""")
    assert first.loop_var is not None and first.loop_vars == {first.loop_var}
    assert second.constant == 5 and not second.loop_vars


def test_compound_expressions_record_their_variables():
    first, second = subscripts_of_first_load("""
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %k = %c0 to %c3 step %c1 {
      %a = arith.addi %i, %k : index
      %b = arith.addi %k, %i : index
      %v = memref.load %x[%a, %b] : memref<8x8xf32>
      memref.store %v, %y[%i] : memref<2xf32>
    }
  }""")
    assert first.loop_var is None and len(first.loop_vars) == 2
    assert first.loop_vars == second.loop_vars
    assert first != second  # structural keys: commuted operands are not recognised as equal
    assert first.understood and second.understood


def test_cmpi_predicates_are_part_of_the_key():
    first, second = subscripts_of_first_load("""
  loop.for %i = %c0 to %c2 step %c1 {
    %lt = arith.cmpi slt, %i, %c1 : index
    %ge = arith.cmpi sge, %i, %c1 : index
    %a = arith.select %lt, %i, %c0 : index
    %b = arith.select %ge, %i, %c0 : index
    %v = memref.load %x[%a, %b] : memref<8x8xf32>
    memref.store %v, %y[%i] : memref<2xf32>
  }""")
    assert first != second


def test_deep_subscripts_are_not_understood_but_do_not_crash():
    chain = "\n".join(f"    %e{n + 1} = arith.addi %e{n}, %i : index" for n in range(200))
    body = f"""
  loop.for %i = %c0 to %c2 step %c1 {{
    %e0 = arith.addi %i, %c1 : index
{chain}
    %v = memref.load %x[%e200, %i] : memref<8x8xf32>
    memref.store %v, %y[%i] : memref<2xf32>
  }}"""
    kernel = parse_kernel("(%x: memref<8x8xf32>) outs(%y: memref<2xf32>)", body)
    report = analyze_kernel(kernel)
    assert report.kind == K.OPAQUE
    assert "not an index expression" in report.reason


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------


def reduction(update: str, signature: str, store_type: str = "memref<2xf32>") -> FuncOp:
    """Init `y[i] = 0`, then `<update>` (which stores `%new` into `%y[%i]`) over `%k`."""
    body = f"""
  loop.for %i = %c0 to %c2 step %c1 {{
    memref.store %zero, %y[%i] : {store_type}
    loop.for %k = %c0 to %c3 step %c1 {{
      %old = memref.load %y[%i] : {store_type}
{update}
      memref.store %new, %y[%i] : {store_type}
    }}
  }}"""
    return parse_kernel(signature, body)


def test_sum_is_comm_reduce_and_its_init_is_not_a_block():
    kernel = reduction(
        """      %v = memref.load %x[%i, %k] : memref<2x3xf32>
      %new = arith.addf %old, %v : f32""",
        "(%x: memref<2x3xf32>) outs(%y: memref<2xf32>)",
    )
    report = analyze_kernel(kernel)
    assert report.kind == K.COMM_REDUCE
    assert [(block.position, block.kind) for block in report.blocks] == [(1, K.COMM_REDUCE)]
    assert report.blocks[0].by_reduction_rule


def test_matrix_vector_product_is_comm_reduce():
    # y[i] += a[i, k] * b[k]: a reads every store variable, so the multiply-add rule (each factor
    # misses one) does not apply, as in TVM; no window either.
    kernel = reduction(
        """      %u = memref.load %a[%i, %k] : memref<2x3xf32>
      %v = memref.load %b[%k] : memref<3xf32>
      %p = arith.mulf %u, %v : f32
      %new = arith.addf %old, %p : f32""",
        "(%a: memref<2x3xf32>, %b: memref<3xf32>) outs(%y: memref<2xf32>)",
    )
    assert kernel_pattern(kernel) == K.COMM_REDUCE


def test_matmul_with_a_broadcast_batch_is_out_ewise_fusable():
    body = """
  loop.for %b = %c0 to %c2 step %c1 {
    loop.for %i = %c0 to %c2 step %c1 {
      loop.for %j = %c0 to %c4 step %c1 {
        memref.store %zero, %c[%b, %i, %j] : memref<2x2x4xf32>
        loop.for %k = %c0 to %c3 step %c1 {
          %old = memref.load %c[%b, %i, %j] : memref<2x2x4xf32>
          %u = memref.load %x[%b, %i, %k] : memref<2x2x3xf32>
          %v = memref.load %w[%c0, %k, %j] : memref<1x3x4xf32>
          %p = arith.mulf %u, %v : f32
          %new = arith.addf %p, %old : f32
          memref.store %new, %c[%b, %i, %j] : memref<2x2x4xf32>
        }
      }
    }
  }"""
    signature = "(%x: memref<2x2x3xf32>, %w: memref<1x3x4xf32>) outs(%c: memref<2x2x4xf32>)"
    report = analyze_kernel(parse_kernel(signature, body))
    assert report.kind == K.OUT_EWISE_FUSABLE
    assert report.blocks[-1].reason == "a multiply-add over reduction loops"


def test_reduction_variable_inside_an_expression_is_out_ewise_fusable():
    kernel = reduction(
        """      %w = arith.addi %i, %k : index
      %v = memref.load %x[%w] : memref<8xf32>
      %new = arith.maximumf %old, %v : f32""",
        "(%x: memref<8xf32>) outs(%y: memref<2xf32>)",
    )
    report = analyze_kernel(kernel)
    assert report.kind == K.OUT_EWISE_FUSABLE
    assert "reduction variable inside an expression" in report.reason


def lane_split(lanes: int) -> FuncOp:
    """`p[i, l] += x[i, c * 4 + l]` with the lane loop `l` running `0 to lanes`."""
    body = f"""
  loop.for %i = %c0 to %c2 step %c1 {{
    loop.for %l = %c0 to %c{lanes} step %c1 {{
      memref.store %zero, %p[%i, %l] : memref<2x4xf32>
    }}
    loop.for %c = %c0 to %c3 step %c1 {{
      loop.for %l = %c0 to %c{lanes} step %c1 {{
        %b = arith.muli %c, %c4 : index
        %k = arith.addi %b, %l : index
        %v = memref.load %x[%i, %k] : memref<2x12xf32>
        %old = memref.load %p[%i, %l] : memref<2x4xf32>
        %new = arith.addf %old, %v : f32
        memref.store %new, %p[%i, %l] : memref<2x4xf32>
      }}
    }}
  }}"""
    return parse_kernel("(%x: memref<2x12xf32>) outs(%p: memref<2x4xf32>)", body)


def test_a_lane_split_is_comm_reduce_not_a_window():
    # legalize-ops' lane reduction: each x[i, k] is read by exactly one lane l (k = c * 4 + l).
    report = analyze_kernel(lane_split(4))
    assert report.kind == K.COMM_REDUCE
    assert report.reason.endswith("a commutative reduction")


def test_a_split_narrower_than_its_stride_is_still_a_window():
    # l in 0..3 with stride 4: not a partition of the row into lanes.
    assert kernel_pattern(lane_split(3)) == K.OUT_EWISE_FUSABLE


def test_output_block_after_a_reduction_is_out_ewise_fusable():
    body = """
  %t = loop.alloc : memref<2xf32>
  loop.for %i = %c0 to %c2 step %c1 {
    memref.store %zero, %t[%i] : memref<2xf32>
    loop.for %k = %c0 to %c3 step %c1 {
      %old = memref.load %t[%i] : memref<2xf32>
      %v = memref.load %x[%i, %k] : memref<2x3xf32>
      %new = arith.addf %old, %v : f32
      memref.store %new, %t[%i] : memref<2xf32>
    }
    %s = memref.load %t[%i] : memref<2xf32>
    %m = arith.mulf %s, %s : f32
    memref.store %m, %y[%i] : memref<2xf32>
  }"""
    report = analyze_kernel(parse_kernel("(%x: memref<2x3xf32>) outs(%y: memref<2xf32>)", body))
    assert report.kind == K.OUT_EWISE_FUSABLE
    assert report.reason == "block 2 writes an output after a commutative reduction"
    assert [block.buffer for block in report.blocks] == ["local buffer #0", "argument #1"]


def test_a_second_reduction_into_the_output_stays_comm_reduce():
    body = """
  %t = loop.alloc : memref<2xf32>
  loop.for %i = %c0 to %c2 step %c1 {
    memref.store %zero, %t[%i] : memref<2xf32>
    loop.for %k = %c0 to %c3 step %c1 {
      %old = memref.load %t[%i] : memref<2xf32>
      %v = memref.load %x[%i, %k] : memref<2x3xf32>
      %new = arith.addf %old, %v : f32
      memref.store %new, %t[%i] : memref<2xf32>
    }
  }
  loop.for %i = %c0 to %c2 step %c1 {
    memref.store %zero, %y[%i] : memref<2xf32>
    loop.for %k = %c0 to %c3 step %c1 {
      %old = memref.load %y[%i] : memref<2xf32>
      %v = memref.load %x[%i, %k] : memref<2x3xf32>
      %m = memref.load %t[%i] : memref<2xf32>
      %d = arith.subf %v, %m : f32
      %new = arith.addf %old, %d : f32
      memref.store %new, %y[%i] : memref<2xf32>
    }
  }"""
    report = analyze_kernel(parse_kernel("(%x: memref<2x3xf32>) outs(%y: memref<2xf32>)", body))
    assert report.kind == K.COMM_REDUCE
    assert [block.position for block in report.blocks] == [1, 3]


def test_a_fill_without_a_reduction_is_an_elemwise_block():
    body = """
  loop.for %i = %c0 to %c2 step %c1 {
    memref.store %zero, %y[%i] : memref<2xf32>
  }"""
    report = analyze_kernel(parse_kernel("() outs(%y: memref<2xf32>)", body))
    assert report.kind == K.ELEMWISE
    assert report.blocks[0].reason == "no loads"


# ---------------------------------------------------------------------------------------------
# Opaque kernels and the report
# ---------------------------------------------------------------------------------------------


def test_opaque_reasons():
    no_store = parse_kernel("(%x: memref<2xf32>)", "")
    assert analyze_kernel(no_store).reason == "the kernel stores nothing"
    two_stores = parse_kernel(
        "(%x: memref<2xf32>) outs(%y: memref<2x2xf32>)",
        """
  loop.for %i = %c0 to %c2 step %c1 {
    %v = memref.load %x[%i] : memref<2xf32>
    memref.store %v, %y[%i, %c0] : memref<2x2xf32>
    memref.store %v, %y[%c0, %i] : memref<2x2xf32>
  }""",
    )
    report = analyze_kernel(two_stores)
    assert report.kind == K.OPAQUE
    assert report.reason == "blocks 0 and 1 store at different subscripts in one loop body"


def test_stores_at_the_same_subscripts_in_one_body_are_fine():
    body = """
  loop.for %i = %c0 to %c2 step %c1 {
    %v = memref.load %x[%i] : memref<2xf32>
    memref.store %v, %y[%i] : memref<2xf32>
    memref.store %v, %z[%i, %c0] : memref<2x1xf32>
  }"""
    signature = "(%x: memref<2xf32>) outs(%y: memref<2xf32>, %z: memref<2x1xf32>)"
    assert kernel_pattern(parse_kernel(signature, body)) == K.ELEMWISE


def test_foreign_ops_make_the_kernel_opaque():
    body = """
  %t = memref.alloc() : memref<2xf32>"""
    report = analyze_kernel(parse_kernel("(%x: memref<2xf32>)", body))
    assert report.kind == K.OPAQUE
    assert report.reason == "'memref.alloc' is not a kernel op"


def test_describe_lists_the_blocks():
    kernel = spatial_2x3("%j, %i", "memref<3x2xf32>")
    assert analyze_kernel(kernel).describe() == (
        "injective: block 0: load subscripts only use the store's variables\n"
        "  block 0 (writes argument #1): injective: load subscripts only use the store's variables"
    )


def test_blocks_record_loops_and_reduction_variables():
    kernel = reduction(
        """      %v = memref.load %x[%i, %k] : memref<2x3xf32>
      %new = arith.addf %old, %v : f32""",
        "(%x: memref<2x3xf32>) outs(%y: memref<2xf32>)",
    )
    init, update = compute_blocks(kernel)
    assert len(init.loops) == 1 and init.is_init and not init.has_reduction
    assert len(update.loops) == 2 and update.reduction_vars == (update.loops[1].induction_var,)
    assert [update.is_accumulator(load) for load in update.loads] == [True, False]
    assert update.writes_argument and update.problem is None


# ---------------------------------------------------------------------------------------------
# Never crash: random index arithmetic in the subscripts
# ---------------------------------------------------------------------------------------------

_INDEX_OPS = ["addi", "subi", "muli", "divui", "remui", "minsi", "maxsi", "shli", "ceildivui"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(_INDEX_OPS), st.integers(0, 20), st.integers(0, 20)),
        min_size=1,
        max_size=12,
    ),
    st.integers(0, 20),
    st.integers(0, 20),
)
def test_random_subscripts_always_get_a_kind(steps, row, col):
    values = ["%i", "%k", "%c0", "%c1", "%c2", "%c3"]
    lines = []
    for number, (name, lhs, rhs) in enumerate(steps):
        pick = values[lhs % len(values)], values[rhs % len(values)]
        lines.append(f"      %e{number} = arith.{name} {pick[0]}, {pick[1]} : index")
        values.append(f"%e{number}")
    body = f"""
  loop.for %i = %c0 to %c2 step %c1 {{
    loop.for %k = %c0 to %c3 step %c1 {{
{chr(10).join(lines)}
      %v = memref.load %x[{values[row % len(values)]}, {values[col % len(values)]}] : memref<4x4xf32>
      memref.store %v, %y[%i] : memref<2xf32>
    }}
  }}"""
    kernel = parse_kernel("(%x: memref<4x4xf32>) outs(%y: memref<2xf32>)", body)
    assert analyze_kernel(kernel).kind in K
