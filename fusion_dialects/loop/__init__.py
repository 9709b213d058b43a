"""The `loop` dialect: kernels as loop nests over buffers (the level of TVM's TIR).

A kernel is a `loop.func`, a symbol whose arguments are `memref`s in destination-passing style:
the inputs, then the outputs it writes (like a TIR PrimFunc). Its body is built from

- `loop.for`: one loop op for every schedule; its `kind` (serial, parallel, vectorized,
  unrolled) is a scheduling decision that the lowering honours;
- `memref.load` / `memref.store`: upstream's ops are reused for element accesses, with `index`
  subscripts computed by `arith` ops on loop induction variables;
- `arith` and `math` ops for the scalar computation;
- `loop.alloc`: a kernel-local intermediate buffer (TIR's `alloc_buffer`), freed when the
  kernel returns.

One module per part: `attributes.py` (pattern and loop kinds), `kernel.py` (`loop.func`,
`loop.return`), `loops.py` (`loop.for`, `loop.yield`), `buffers.py` (`loop.alloc`,
`loop.prefetch`, and the `loop.call` / `loop.view` of lowered entry functions), `external.py` (`loop.gemm`, a call of
a BLAS library's `sgemm`); everything is importable from here.

Every `memref.store` together with the loops around it is a *compute block* in TIR's sense:
the enclosing loops whose induction variables index the store are its spatial loops, the
others are reduction loops. A reduction is written as an init store followed by an update
store of the same element inside the reduction loops. Keeping the loop structure explicit, with
no iteration arguments, lets later passes inline, tile, reorder, vectorise and parallelise.

```mlir
loop.func @add(%a: memref<4xf32>, %b: memref<4xf32>) outs(%c: memref<4xf32>) pattern elemwise {
  %lo = arith.constant 0 : index
  %hi = arith.constant 4 : index
  %one = arith.constant 1 : index
  loop.for %i = %lo to %hi step %one {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = memref.load %b[%i] : memref<4xf32>
    %s = arith.addf %x, %y : f32
    memref.store %s, %c[%i] : memref<4xf32>
  }
  loop.return
}
```
"""

from __future__ import annotations

from xdsl.ir import Dialect

from fusion_compiler.dialects.loop.attributes import (
    REGISTER_TILED_ATTR,
    WIDE_VECTORS_ATTR,
    LoopKind,
    LoopKindAttr,
    PatternKindAttr,
)
from fusion_compiler.dialects.loop.buffers import AllocOp, CallOp, PrefetchOp, ViewOp
from fusion_compiler.dialects.loop.external import GemmOp
from fusion_compiler.dialects.loop.kernel import FuncOp, ReturnOp, kernel_symbol
from fusion_compiler.dialects.loop.loops import ForOp, YieldOp

__all__ = [
    "AllocOp",
    "CallOp",
    "ForOp",
    "FuncOp",
    "GemmOp",
    "Loop",
    "LoopKind",
    "LoopKindAttr",
    "PatternKindAttr",
    "PrefetchOp",
    "REGISTER_TILED_ATTR",
    "ReturnOp",
    "WIDE_VECTORS_ATTR",
    "ViewOp",
    "YieldOp",
    "kernel_symbol",
]

Loop = Dialect(
    "loop",
    [FuncOp, ReturnOp, ForOp, YieldOp, AllocOp, PrefetchOp, CallOp, ViewOp, GemmOp],
    [PatternKindAttr, LoopKindAttr],
)
