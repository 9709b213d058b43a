"""Kernels lowered by `convert-loop-to-llvm`, JIT-compiled and compared with numpy."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import MemRefType, StridedLayoutAttr, f32

from fusion_compiler.lowering.memref_to_llvm import element_extent

RNG = np.random.default_rng(1234)


def _random(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("shape", [(1000,), (1023,), (1,), (37, 53), (3, 5, 7)])
def test_elementwise_add(jit, elementwise, shape):
    module = jit(elementwise("add", shape, 2, "%r = arith.addf %x0, %x1 : f32"))
    a, b = _random(*shape), _random(*shape)
    out = np.zeros(shape, np.float32)
    module.call_kernel("add", a, b, out)
    np.testing.assert_array_equal(out, a + b)


def test_relu_with_compare_and_select(jit, elementwise):
    body = """
%zero = arith.constant 0.0 : f32
%pos = arith.cmpf ogt, %x0, %zero : f32
%r = arith.select %pos, %x0, %zero : f32
"""
    module = jit(elementwise("relu", (1001,), 1, body))
    x = _random(1001)
    out = np.empty_like(x)
    module.call_kernel("relu", x, out)
    np.testing.assert_array_equal(out, np.maximum(x, 0))


def test_min_max_and_negation(jit, elementwise):
    body = """
%lo = arith.constant -0.5 : f32
%hi = arith.constant 0.5 : f32
%a = arith.maximumf %x0, %lo : f32
%b = arith.minimumf %a, %hi : f32
%c = arith.maxnumf %b, %x1 : f32
%d = arith.minnumf %c, %hi : f32
%r = arith.negf %d : f32
"""
    module = jit(elementwise("clip", (999,), 2, body))
    x, y = _random(999), _random(999)
    out = np.empty_like(x)
    module.call_kernel("clip", x, y, out)
    expected = -np.minimum(np.maximum(np.clip(x, -0.5, 0.5), y), 0.5)
    np.testing.assert_array_equal(out, expected)


ROW_SUM = """
loop.func @row_sum(%x: memref<37x129xf32>) outs(%y: memref<37xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = arith.constant 37 : index
  %cols = arith.constant 129 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %rows step %c1 {
    memref.store %zero, %y[%i] : memref<37xf32>
    loop.for %j = %c0 to %cols step %c1 {
      %old = memref.load %y[%i] : memref<37xf32>
      %v = memref.load %x[%i, %j] : memref<37x129xf32>
      %new = arith.addf %old, %v : f32
      memref.store %new, %y[%i] : memref<37xf32>
    }
  }
  loop.return
}
"""


def test_row_sum_reduction(jit):
    module = jit(ROW_SUM)
    x = _random(37, 129)
    out = np.full(37, np.nan, np.float32)
    module.call_kernel("row_sum", x, out)
    np.testing.assert_allclose(out, x.sum(axis=1, dtype=np.float64), rtol=1e-5, atol=1e-5)


MATMUL = """
loop.func @matmul(%a: memref<33x65xf32>, %b: memref<65x47xf32>) outs(%c: memref<33x47xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant 33 : index
  %k = arith.constant 65 : index
  %n = arith.constant 47 : index
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %m step %c1 parallel {
    loop.for %j = %c0 to %n step %c1 vectorized {
      memref.store %zero, %c[%i, %j] : memref<33x47xf32>
      loop.for %p = %c0 to %k step %c1 unrolled {
        %x = memref.load %a[%i, %p] : memref<33x65xf32>
        %y = memref.load %b[%p, %j] : memref<65x47xf32>
        %old = memref.load %c[%i, %j] : memref<33x47xf32>
        %prod = arith.mulf %x, %y : f32
        %new = arith.addf %old, %prod : f32
        memref.store %new, %c[%i, %j] : memref<33x47xf32>
      }
    }
  }
  loop.return
}
"""


def test_matmul_with_every_loop_kind(jit):
    module = jit(MATMUL)
    a, b = _random(33, 65), _random(65, 47)
    out = np.empty((33, 47), np.float32)
    module.call_kernel("matmul", a, b, out)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)


def _softmax_rows(shape: tuple[int, int]) -> str:
    """Row max into a local buffer, then exp(x - max) into another, then normalise."""
    rows, cols = shape
    return f"""
loop.func @softmax(%x: memref<{rows}x{cols}xf32>) outs(%y: memref<{rows}x{cols}xf32>) {{
  %mx = loop.alloc : memref<{rows}xf32>
  %e = loop.alloc : memref<{rows}x{cols}xf32>
  %sum = loop.alloc : memref<{rows}xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = arith.constant {rows} : index
  %c = arith.constant {cols} : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %r step %c1 {{
    memref.store %ninf, %mx[%i] : memref<{rows}xf32>
    memref.store %zero, %sum[%i] : memref<{rows}xf32>
    loop.for %j = %c0 to %c step %c1 {{
      %old = memref.load %mx[%i] : memref<{rows}xf32>
      %v = memref.load %x[%i, %j] : memref<{rows}x{cols}xf32>
      %new = arith.maximumf %old, %v : f32
      memref.store %new, %mx[%i] : memref<{rows}xf32>
    }}
    loop.for %j = %c0 to %c step %c1 {{
      %m = memref.load %mx[%i] : memref<{rows}xf32>
      %v = memref.load %x[%i, %j] : memref<{rows}x{cols}xf32>
      %d = arith.subf %v, %m : f32
      %ex = math.exp %d : f32
      memref.store %ex, %e[%i, %j] : memref<{rows}x{cols}xf32>
      %s = memref.load %sum[%i] : memref<{rows}xf32>
      %s2 = arith.addf %s, %ex : f32
      memref.store %s2, %sum[%i] : memref<{rows}xf32>
    }}
    loop.for %j = %c0 to %c step %c1 {{
      %ex = memref.load %e[%i, %j] : memref<{rows}x{cols}xf32>
      %s = memref.load %sum[%i] : memref<{rows}xf32>
      %q = arith.divf %ex, %s : f32
      memref.store %q, %y[%i, %j] : memref<{rows}x{cols}xf32>
    }}
  }}
  loop.return
}}
"""


@pytest.mark.parametrize("stack_limit", [0, 4096, 1 << 20])
@pytest.mark.parametrize("shape", [(4, 10), (50, 301)])
def test_local_buffers_on_stack_or_heap(jit, shape, stack_limit):
    module = jit(_softmax_rows(shape), stack_limit=stack_limit)
    x = _random(*shape) * 5
    out = np.empty_like(x)
    for _ in range(3):  # buffers are allocated and released on every call
        module.call_kernel("softmax", x, out)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(out, e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_alloc_inside_a_loop_is_allocated_once(jit, lower):
    text = """
loop.func @twice(%x: memref<100xf32>) outs(%y: memref<100xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 100 : index
  loop.for %i = %c0 to %n step %c1 {
    %t = loop.alloc : memref<2000xf32>
    %v = memref.load %x[%i] : memref<100xf32>
    memref.store %v, %t[%i] : memref<2000xf32>
    %w = memref.load %t[%i] : memref<2000xf32>
    %d = arith.addf %w, %w : f32
    memref.store %d, %y[%i] : memref<100xf32>
  }
  loop.return
}
"""
    lowered = str(lower(text, stack_limit=0))
    assert lowered.count("llvm.call @aligned_alloc") == 1
    assert lowered.count("llvm.call @free") == 1
    x = _random(100)
    out = np.empty_like(x)
    jit(text, stack_limit=0).call_kernel("twice", x, out)
    np.testing.assert_array_equal(out, 2 * x)


BROADCAST_ADD = """
loop.func @badd(%x: memref<2x3x4xf32>, %b: memref<1x3x1xf32>, %s: memref<f32>) outs(%y: memref<2x3x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %j = %c0 to %c3 step %c1 {
      loop.for %k = %c0 to %c4 step %c1 {
        %v = memref.load %x[%i, %j, %k] : memref<2x3x4xf32>
        %w = memref.load %b[%c0, %j, %c0] : memref<1x3x1xf32>
        %z = memref.load %s[] : memref<f32>
        %a = arith.addf %v, %w : f32
        %r = arith.mulf %a, %z : f32
        memref.store %r, %y[%i, %j, %k] : memref<2x3x4xf32>
      }
    }
  }
  loop.return
}
"""


def test_broadcast_and_rank0_buffers(jit):
    module = jit(BROADCAST_ADD)
    x, b = _random(2, 3, 4), _random(1, 3, 1)
    s = np.array(1.5, np.float32)
    out = np.empty_like(x)
    module.call_kernel("badd", x, b, s, out)
    np.testing.assert_array_equal(out, (x + b) * s)


STRIDED = """
loop.func @column(%x: memref<5xf32, strided<[3], offset: 2>>) outs(%y: memref<5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 5 : index
  loop.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<5xf32, strided<[3], offset: 2>>
    memref.store %v, %y[%i] : memref<5xf32>
  }
  loop.return
}
"""


def test_static_strided_layout(lower):
    module = lower(STRIDED)
    text = str(module)
    assert "llvm.mlir.constant(3) : i64" in text
    assert "llvm.mlir.constant(2) : i64" in text


INDEX_ARITHMETIC = """
loop.func @gather(%x: memref<24xf32>) outs(%y: memref<24xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c23 = arith.constant 23 : index
  %n = arith.constant 24 : index
  %m3 = arith.constant -3 : index
  loop.for %i = %c0 to %n step %c1 {
    %row = arith.divui %i, %c6 : index
    %col = arith.remui %i, %c6 : index
    %t = arith.muli %col, %c4 : index
    %u = arith.addi %t, %row : index
    %shifted = arith.subi %u, %c1 : index
    %lo = arith.maxsi %shifted, %c0 : index
    %idx = arith.minsi %lo, %c23 : index
    %neg = arith.subi %m3, %i : index
    %fd = arith.floordivsi %neg, %c4 : index
    %cd = arith.ceildivsi %neg, %c4 : index
    %cu = arith.ceildivui %i, %c4 : index
    %v = memref.load %x[%idx] : memref<24xf32>
    %sum = arith.addi %fd, %cd : index
    %sum2 = arith.addi %sum, %cu : index
    %wide = arith.index_cast %sum2 : index to i32
    %f = arith.sitofp %wide : i32 to f32
    %r = arith.addf %v, %f : f32
    memref.store %r, %y[%i] : memref<24xf32>
  }
  loop.return
}
"""


def test_index_arithmetic(jit):
    module = jit(INDEX_ARITHMETIC)
    x = _random(24)
    out = np.empty_like(x)
    module.call_kernel("gather", x, out)
    i = np.arange(24)
    idx = np.clip((i % 6) * 4 + i // 6 - 1, 0, 23)
    neg = -3 - i
    extra = np.floor_divide(neg, 4) + -np.floor_divide(-neg, 4) + -(-i // 4)
    np.testing.assert_array_equal(out, x[idx] + extra.astype(np.float32))


CASTS = """
loop.func @casts(%x: memref<64xf32>) outs(%y: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 64 : index
  loop.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<64xf32>
    %s = arith.fptosi %v : f32 to i32
    %u = arith.fptoui %v : f32 to i16
    %s64 = arith.extsi %s : i32 to i64
    %u64 = arith.extui %u : i16 to i64
    %t = arith.trunci %s64 : i64 to i8
    %t32 = arith.extsi %t : i8 to i32
    %fs = arith.sitofp %t32 : i32 to f32
    %fu = arith.uitofp %u64 : i64 to f32
    %fu16 = arith.uitofp %u : i16 to f32
    %d = arith.extf %v : f32 to f64
    %d2 = arith.mulf %d, %d : f64
    %back = arith.truncf %d2 : f64 to f32
    %bits = arith.bitcast %back : f32 to i32
    %same = arith.bitcast %bits : i32 to f32
    %a = arith.addf %fs, %fu : f32
    %b = arith.addf %a, %fu16 : f32
    %r = arith.addf %b, %same : f32
    memref.store %r, %y[%i] : memref<64xf32>
  }
  loop.return
}
"""


def test_casts(jit):
    module = jit(CASTS)
    x = np.linspace(-150.5, 300.5, 64).astype(np.float32)
    out = np.empty_like(x)
    module.call_kernel("casts", x, out)
    s = np.trunc(x).astype(np.int64)
    u = np.clip(np.trunc(x), 0, None).astype(np.int64)  # fptoui saturates at 0
    wrapped = ((s + 128) % 256 - 128).astype(np.float32)
    square = (x.astype(np.float64) ** 2).astype(np.float32)
    expected = wrapped + u.astype(np.float32) + u.astype(np.float32) + square
    np.testing.assert_array_equal(out, expected)


UITOFP_64 = """
loop.func @u64(%x: memref<4xf32>) outs(%y: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 4 : index
  %big = arith.constant -1 : i64
  %half = arith.constant -9223372036854775807 : i64
  %f1 = arith.uitofp %big : i64 to f32
  %f2 = arith.uitofp %half : i64 to f32
  %s = arith.addf %f1, %f2 : f32
  loop.for %i = %c0 to %n step %c1 {
    memref.store %s, %y[%i] : memref<4xf32>
  }
  loop.return
}
"""


def test_uitofp_from_64_bits(jit):
    out = np.empty(4, np.float32)
    jit(UITOFP_64).call_kernel("u64", np.zeros(4, np.float32), out)
    expected = np.float32(np.float32(2.0**64) + np.float32(2.0**63))
    np.testing.assert_array_equal(out, np.full(4, expected))


@pytest.mark.parametrize(
    ("buffer_type", "extent"),
    [
        (MemRefType(f32, [37, 53]), 37 * 53),
        (MemRefType(f32, []), 1),
        (MemRefType(f32, [4, 0]), 0),
        (MemRefType(f32, [5], StridedLayoutAttr([3], 2)), 2 + 4 * 3 + 1),
    ],
)
def test_element_extent(buffer_type, extent):
    assert element_extent(buffer_type) == extent
