"""Loop and kernel hints that the LLVM lowering carries to LLVM: `fusion.rolled` loops get
`llvm.loop.unroll.disable`, `fusion.scalar` loops `llvm.loop.vectorize.enable` false (a tile
stored across the output's contiguous dimension: no scatters), and an outlined parallel body
keeps its kernel's `fusion.wide_vectors` (the register tiles inside are sized for the full
vector width)."""

from __future__ import annotations

import re

from fusion_compiler.dialects.loop.attributes import (
    ROLLED_LOOP_ATTR,
    SCALAR_LOOP_ATTR,
    WIDE_VECTORS_ATTR,
)
from fusion_compiler.lowering import vector_loops
from fusion_compiler.lowering.jit import CodegenTarget
from fusion_compiler.lowering.llvm_codegen import optimized_llvm_module
from fusion_compiler.lowering.llvm_text import module_text
from fusion_compiler.lowering.vector_loops import apply_loop_hints

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


def _loop_hints(text: str, header: str) -> list[str]:
    """The properties of the `llvm.loop` id on the back edge of the loop `header`."""
    edge = re.search(rf'br label %"?{header}[^,]*, !llvm\.loop (!\d+)', text)
    assert edge is not None
    loop_id = re.search(rf"^{re.escape(edge.group(1))} = distinct !{{(.*)}}$", text, re.M)
    assert loop_id is not None
    hints = []
    for hint in (m for m in re.findall(r"!\d+", loop_id.group(1)) if m != edge.group(1)):
        line = re.search(rf"^{hint} = !{{(.*)}}$", text, re.M)
        assert line is not None
        hints.append(line.group(1).strip())
    return hints


def test_rolled_loops_are_not_unrolled_by_llvm(lower):
    module = lower(KERNEL, threads=False)
    hints = apply_loop_hints(module)
    assert len(hints) == 1
    text = module_text(module, loop_properties=hints)
    assert _loop_hints(text, "rolled_header") == ['!"llvm.loop.unroll.disable"']
    assert f"attributes {{{ROLLED_LOOP_ATTR}}}" in KERNEL


TILE_STORE = """
loop.func @store_tile(%acc: memref<8x48xf32>) outs(%y: memref<48x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %c48 = arith.constant 48 : index
  loop.for %jj = %c0 to %c48 step %c1 attributes {fusion.scalar} {
    loop.for %r = %c0 to %c8 step %c1 {
      %v = memref.load %acc[%r, %jj] : memref<8x48xf32>
      memref.store %v, %y[%jj, %r] : memref<48x64xf32>
    }
  }
  loop.return
}
"""
"""A register tile's store where the output is contiguous along the tile's rows: each column
of the tile is a run of the output (schedule-contractions' finish loop when `rows_inner`)."""


def test_scalar_loops_are_not_vectorised_into_scatters(lower):
    module = lower(TILE_STORE, threads=False)
    marked = apply_loop_hints(module)
    assert len(marked) == 1
    hints = _loop_hints(module_text(module, loop_properties=marked), "scalar_header")
    assert hints == ['!"llvm.loop.vectorize.enable", i1 false', '!"llvm.loop.unroll.disable"']
    assert f"attributes {{{SCALAR_LOOP_ATTR}}}" in TILE_STORE
    target = CodegenTarget("skylake-avx512", "+avx,+avx2,+fma,+avx512f")  # it has scatters
    machine = target.machine()
    assembly = machine.emit_assembly(optimized_llvm_module(lower(TILE_STORE), target, machine))
    assert "vscatter" not in assembly and "vmov" in assembly


def test_scalar_loops_are_not_unrolled_either(lower, monkeypatch):
    """A tile's store runs once per tile: unrolled, it was most of the code LLVM optimised in
    resnet50's 3x3 convolutions. Without the hint (patched away) LLVM unrolls this one."""
    target = CodegenTarget("znver3", "+avx,+avx2,+fma")  # (fixed: not the host's choice)
    machine = target.machine()

    def instructions() -> int:
        optimized = optimized_llvm_module(lower(TILE_STORE), target, machine)
        return sum(len(list(b.instructions)) for f in optimized.functions for b in f.blocks)

    rolled = instructions()
    vectorize_only = {**vector_loops.LOOP_HINTS}
    vectorize_only[vector_loops.SCALAR_HEADER] = vectorize_only[vector_loops.SCALAR_HEADER][:1]
    monkeypatch.setattr(vector_loops, "LOOP_HINTS", vectorize_only)
    assert instructions() > 2 * rolled


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
