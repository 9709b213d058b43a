"""`loop_access.is_parallel` on blocked subscripts (`blocked_dimension`): iteration `g` of
`out[g * 4 + fl]`, `fl < 4`, writes its own block of 4 elements, so `g` is parallel; a block
that reaches into the next one (`fl < 5`, or a read of `out[g * 4 + fl + 1]`) is not."""

from __future__ import annotations

import pytest
from xdsl.dialects import memref

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.loop import ForOp, FuncOp
from fusion_compiler.passes.analysis.loop_access import (
    blocked_dimension,
    element_stride,
    is_parallel,
)


def _group_loop(inner: int, offset: int) -> ForOp:
    """`out[g * 4 + fl] = in[g] (+ out[g * 4 + fl + offset])` for g < 2, fl < `inner`."""
    text = f"""
loop.func @blocked(%in: memref<2xf32>) outs(%out: memref<12xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %cn = arith.constant {inner} : index
  %co = arith.constant {offset} : index
  loop.for %g = %c0 to %c2 step %c1 {{
    loop.for %fl = %c0 to %cn step %c1 {{
      %base = arith.muli %g, %c4 : index
      %f = arith.addi %base, %fl : index
      %read = arith.addi %f, %co : index
      %v = memref.load %in[%g] : memref<2xf32>
      %o = memref.load %out[%read] : memref<12xf32>
      %s = arith.addf %v, %o : f32
      memref.store %s, %out[%f] : memref<12xf32>
    }}
  }}
  loop.return
}}"""
    return _loop(text, "g")


def _loop(text: str, hint: str) -> ForOp:
    """The loop over `%hint` of the kernel `text`."""
    module = parse_source(make_context(), text, f"{hint}.mlir")
    kernel = next(op for op in module.ops if isinstance(op, FuncOp))
    return next(
        op for op in kernel.walk() if isinstance(op, ForOp) and op.induction_var.name_hint == hint
    )


def test_a_group_loop_over_blocks_of_its_own_is_parallel():
    loop = _group_loop(4, 0)
    assert is_parallel(loop)
    accesses = [op for op in loop.walk() if isinstance(op, memref.LoadOp | memref.StoreOp)]
    out = [access for access in accesses if access.memref.name_hint == "out"]
    assert len(out) == 2 and blocked_dimension(out, loop) == 0


@pytest.mark.parametrize(("inner", "offset"), [(5, 0), (4, 1), (3, 2)])
def test_blocks_that_reach_into_the_next_group_are_not_parallel(inner, offset):
    assert not is_parallel(_group_loop(inner, offset))


def test_element_stride_flattens_the_subscripts_row_major():
    """`out[c, 2 * p]` of a 3 x 10 buffer: one step of `c` is 10 elements, one of `p` two."""
    text = """
loop.func @strided(%in: memref<3x5xf32>) outs(%out: memref<3x10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c5 = arith.constant 5 : index
  loop.for %c = %c0 to %c3 step %c1 {
    loop.for %p = %c0 to %c5 step %c1 {
      %q = arith.muli %p, %c2 : index
      %v = memref.load %in[%c, %p] : memref<3x5xf32>
      memref.store %v, %out[%c, %q] : memref<3x10xf32>
    }
  }
  loop.return
}"""
    module = parse_source(make_context(), text, "strided.mlir")
    kernel = next(op for op in module.ops if isinstance(op, FuncOp))
    outer = next(op for op in kernel.body.block.ops if isinstance(op, ForOp))
    inner = next(op for op in outer.body.block.ops if isinstance(op, ForOp))
    store = next(op for op in inner.walk() if isinstance(op, memref.StoreOp))
    load = next(op for op in inner.walk() if isinstance(op, memref.LoadOp))
    assert element_stride(store, outer.induction_var) == 10
    assert element_stride(store, inner.induction_var) == 2
    assert element_stride(load, outer.induction_var) == 5
    assert element_stride(load, inner.induction_var) == 1


def _tile_epilogue(read_offset: int, row: str) -> ForOp:
    """A register tile's epilogue over a collapsed 13 x 13 plane (contraction_schedule's):
    `out[r', (t + j) / 13, (t + j) % 13] = acc[r, j] + out[...]` for j < 40 at column t = 128,
    the row `r' = it + r` computed inside the loop, the read `read_offset` columns further
    (within the plane for offsets from -128 to 1)."""
    text = f"""
loop.func @epilogue(%acc: memref<6x48xf32>) outs(%out: memref<1x12x13x13xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c13 = arith.constant 13 : index
  %c40 = arith.constant 40 : index
  %c128 = arith.constant 128 : index
  %co = arith.constant {read_offset} : index
  loop.for %it = %c0 to %c6 step %c6 {{
    loop.for %r = %c0 to %c6 step %c1 {{
      loop.for %j = %c0 to %c40 step %c1 {{
        %rr = arith.addi %it, {row} : index
        %f = arith.addi %c128, %j : index
        %y = arith.divui %f, %c13 : index
        %x = arith.remui %f, %c13 : index
        %g = arith.addi %f, %co : index
        %gy = arith.divui %g, %c13 : index
        %gx = arith.remui %g, %c13 : index
        %a = memref.load %acc[%r, %j] : memref<6x48xf32>
        %o = memref.load %out[%c0, %rr, %gy, %gx] : memref<1x12x13x13xf32>
        %s = arith.addf %a, %o : f32
        memref.store %s, %out[%c0, %rr, %y, %x] : memref<1x12x13x13xf32>
      }}
    }}
  }}
  loop.return
}}"""
    return _loop(text, "j")


def test_a_tile_of_a_collapsed_walk_is_parallel():
    # iteration j touches element 128 + j of the plane, at a row fixed in the loop (computed
    # in its body from values defined outside): no other iteration does
    assert is_parallel(_tile_epilogue(0, "%r"))


def test_a_tile_whose_row_moves_with_the_loop_is_parallel_by_its_row():
    # row it + j and element 128 + j: a distinct element per iteration (sliced by the row)
    assert is_parallel(_tile_epilogue(0, "%j"))


@pytest.mark.parametrize("offset", [1, -1, -13])
def test_a_collapsed_walk_that_reads_a_neighbour_is_not_parallel(offset):
    # reading element 128 + j + offset of the plane, which iteration j + offset writes (the
    # element above it, for -13)
    assert not is_parallel(_tile_epilogue(offset, "%r"))
