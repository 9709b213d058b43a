"""`ir_walk`'s walks visit the ops xDSL's `walk()` visits, in its order, and tolerate what
xDSL's tolerate: erasing the op just visited."""

from __future__ import annotations

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Region

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.passes.analysis.ir_walk import region_ops, walk_ops

KERNEL = """
loop.func @nest(%in: memref<4x4xf32>) outs(%out: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c4 step %c1 {
    loop.for %j = %c0 to %c4 step %c1 {
      %v = memref.load %in[%i, %j] : memref<4x4xf32>
      memref.store %v, %out[%i, %j] : memref<4x4xf32>
    }
    loop.for %k = %c0 to %c4 step %c1 {
      %w = memref.load %in[%k, %i] : memref<4x4xf32>
      memref.store %w, %out[%i, %k] : memref<4x4xf32>
    }
  }
  %c2 = arith.constant 2 : index
  loop.return
}
"""


def _module() -> ModuleOp:
    return parse_source(make_context(), KERNEL, "nest.mlir")


def test_walks_visit_xdsl_walks_ops_in_order():
    module = _module()
    kernel = next(op for op in module.ops if isinstance(op, FuncOp))
    assert list(walk_ops(module)) == list(module.walk())
    assert list(walk_ops(kernel)) == list(kernel.walk())
    assert list(region_ops(kernel.body)) == list(kernel.body.walk())
    constant = next(iter(kernel.body.block.ops))
    assert list(walk_ops(constant)) == [constant]


def test_walks_over_several_regions_and_blocks_keep_xdsls_order():
    def constant(value: int) -> arith.ConstantOp:
        return arith.ConstantOp(IntegerAttr(value, IndexType()))

    condition = arith.ConstantOp(IntegerAttr(1, 1))
    then = Region(Block([constant(1), scf.YieldOp()]))
    other = Region(Block([constant(2), scf.YieldOp()]))
    branch = scf.IfOp(condition, [], then, other)
    region = Region([Block([condition, branch]), Block([constant(3)])])
    holder = scf.ExecuteRegionOp([], region)
    assert list(walk_ops(holder)) == list(holder.walk())
    assert list(region_ops(region)) == list(region.walk())


def test_the_op_just_visited_may_be_erased():
    module = _module()
    kernel = next(op for op in module.ops if isinstance(op, FuncOp))
    expected = [op.name for op in kernel.body.walk()]
    seen = []
    for op in region_ops(kernel.body):
        seen.append(op.name)
        if isinstance(op, arith.ConstantOp) and not op.result.uses:
            op.detach()
            op.erase()
    assert seen == expected
    assert "%c2" not in str(kernel)
