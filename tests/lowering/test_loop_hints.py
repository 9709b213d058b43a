"""Loop and kernel hints that the LLVM lowering carries to LLVM: `fusion.rolled` loops get
`llvm.loop.unroll.disable`, and an outlined parallel body keeps its kernel's
`fusion.wide_vectors` (the register tiles inside are sized for the full vector width)."""

from __future__ import annotations

import re

import llvmlite.binding as llvm
from xdsl.backend.llvm.convert import convert_module

from fusion_compiler.dialects.loop.attributes import ROLLED_LOOP_ATTR, WIDE_VECTORS_ATTR
from fusion_compiler.lowering.vector_loops import keep_loops_rolled

KERNEL = """
loop.func @scale(%x: memref<64x8xf32>) outs(%y: memref<64x8xf32>) attributes {fusion.wide_vectors} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c8 = arith.constant 8 : index
  %c64 = arith.constant 64 : index
  loop.for %i = %c0 to %c64 step %c1 parallel {
    loop.for %j = %c0 to %c8 step %c1 {
      %v = memref.load %x[%i, %j] : memref<64x8xf32>
      memref.store %v, %y[%i, %j] : memref<64x8xf32>
      loop.for %k = %c0 to %c3 step %c1 attributes {fusion.rolled} {
        %w = memref.load %y[%i, %j] : memref<64x8xf32>
        %s = arith.addf %w, %v : f32
        memref.store %s, %y[%i, %j] : memref<64x8xf32>
      }
    }
  }
  loop.return
}
"""


def test_rolled_loops_are_not_unrolled_by_llvm(lower):
    module = lower(KERNEL, threads=False)
    ir_module = convert_module(module, fallback_target_triple=llvm.get_process_triple())
    assert keep_loops_rolled(ir_module) == 1
    text = str(ir_module)
    edge = re.search(r'br label %"?rolled_header[^,]*, !llvm\.loop (!\d+)', text)
    assert edge is not None
    loop_id = re.search(rf"^{re.escape(edge.group(1))} = distinct !{{(.*)}}$", text, re.M)
    assert loop_id is not None
    (disable,) = (m for m in re.findall(r"!\d+", loop_id.group(1)) if m != edge.group(1))
    assert re.search(rf'^{disable} = !{{ !"llvm.loop.unroll.disable" }}$', text, re.M)
    assert f"attributes {{{ROLLED_LOOP_ATTR}}}" in KERNEL


def test_outlined_parallel_body_keeps_the_wide_vectors_hint(lower):
    lowered = lower(KERNEL, parallel_threshold=0)
    bodies = [op for op in lowered.ops if getattr(op, "sym_name", None) is not None]
    body = next(op for op in bodies if op.sym_name.data == "scale_par0_body")
    assert WIDE_VECTORS_ATTR in body.attributes
    trampoline = next(op for op in bodies if op.sym_name.data == "scale_par0")
    assert WIDE_VECTORS_ATTR not in trampoline.attributes


PRIVATE = """
loop.func @tiles(%x: memref<64x64xf32>) outs(%y: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  loop.for %i = %c0 to %c64 step %c1 parallel {
    %t = loop.alloc {fusion.private} : memref<64xf32>
    loop.for %j = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i, %j] : memref<64x64xf32>
      memref.store %v, %t[%j] : memref<64xf32>
    }
    loop.for %j = %c0 to %c64 step %c1 {
      %v = memref.load %t[%j] : memref<64xf32>
      memref.store %v, %y[%i, %j] : memref<64x64xf32>
    }
  }
  loop.return
}
"""


def test_a_parallel_loop_with_private_buffers_runs_on_threads(lower):
    """Each thread gets its own copy (allocated in the outlined body); a buffer not marked
    private may carry values between iterations, and keeps its loop serial."""
    lowered = str(lower(PRIVATE, parallel_threshold=0))
    assert "llvm.call @GOMP_parallel(" in lowered
    body = lowered[lowered.index("@tiles_par0_body(") :]
    assert "llvm.alloca" in body
    shared = str(lower(PRIVATE.replace(" {fusion.private}", ""), parallel_threshold=0))
    assert "GOMP_parallel" not in shared
