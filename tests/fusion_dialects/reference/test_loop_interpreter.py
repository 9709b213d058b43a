"""The loop interpreter on hand-written kernels in the form legalize-ops produces, against numpy."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.parser import Parser

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.loop import ForOp, FuncOp
from fusion_compiler.dialects.reference import _loop_plan
from fusion_compiler.dialects.reference import numpy_ops as ref
from fusion_compiler.dialects.reference._erf import erf
from fusion_compiler.dialects.reference._loop_plan import plan_kernel
from fusion_compiler.dialects.reference.loop_interpreter import KernelError, run_kernel

RTOL = 1e-5


def parse_kernel(text: str) -> FuncOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    (kernel,) = [op for op in module.ops if isinstance(op, FuncOp)]
    return kernel


def constants(*values: int) -> str:
    return "\n".join(f"  %c{v} = arith.constant {v} : index" for v in sorted({0, 1, *values}))


def vectorized_loops(kernel: FuncOp) -> list[bool]:
    plan = plan_kernel(kernel)
    return [plan.loops[op].vectorized for op in kernel.walk() if isinstance(op, ForOp)]


def random(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


# --- kernels ------------------------------------------------------------------------------------

ADD_BROADCAST = f"""
loop.func @add(%a: memref<2x4x5x6xf32>, %b: memref<1x4x1x1xf32>) outs(%out: memref<2x4x5x6xf32>) {{
{constants(2, 4, 5, 6)}
  loop.for %i0 = %c0 to %c2 step %c1 {{
    loop.for %i1 = %c0 to %c4 step %c1 {{
      loop.for %i2 = %c0 to %c5 step %c1 {{
        loop.for %i3 = %c0 to %c6 step %c1 {{
          %x = memref.load %a[%i0, %i1, %i2, %i3] : memref<2x4x5x6xf32>
          %y = memref.load %b[%c0, %i1, %c0, %c0] : memref<1x4x1x1xf32>
          %s = arith.addf %x, %y : f32
          memref.store %s, %out[%i0, %i1, %i2, %i3] : memref<2x4x5x6xf32>
        }}
      }}
    }}
  }}
  loop.return
}}
"""


def conv_kernel(n: int, c: int, h: int, w: int, f: int, k: int, pad: int) -> str:
    """A padded conv: a pad block writes a local buffer (clamp + select), then init + update."""
    ph, pw = h + 2 * pad, w + 2 * pad
    oh, ow = ph - k + 1, pw - k + 1
    x_t, w_t = f"memref<{n}x{c}x{h}x{w}xf32>", f"memref<{f}x{c}x{k}x{k}xf32>"
    p_t, o_t = f"memref<{n}x{c}x{ph}x{pw}xf32>", f"memref<{n}x{f}x{oh}x{ow}xf32>"
    return f"""
loop.func @conv(%x: {x_t}, %wt: {w_t}) outs(%y: {o_t}) {{
  %pad = loop.alloc : {p_t}
{constants(n, c, h, w, f, k, ph, pw, oh, ow, pad, h - 1, w - 1)}
  %zero = arith.constant 0.0 : f32
  loop.for %pn = %c0 to %c{n} step %c1 {{
    loop.for %pc = %c0 to %c{c} step %c1 {{
      loop.for %ph = %c0 to %c{ph} step %c1 {{
        loop.for %pw = %c0 to %c{pw} step %c1 {{
          %hs = arith.subi %ph, %c{pad} : index
          %ws = arith.subi %pw, %c{pad} : index
          %hlo = arith.cmpi sge, %hs, %c0 : index
          %hhi = arith.cmpi slt, %hs, %c{h} : index
          %wlo = arith.cmpi sge, %ws, %c0 : index
          %whi = arith.cmpi slt, %ws, %c{w} : index
          %ok1 = arith.andi %hlo, %hhi : i1
          %ok2 = arith.andi %wlo, %whi : i1
          %ok = arith.andi %ok1, %ok2 : i1
          %hc0 = arith.maxsi %hs, %c0 : index
          %hc = arith.minsi %hc0, %c{h - 1} : index
          %wc0 = arith.maxsi %ws, %c0 : index
          %wc = arith.minsi %wc0, %c{w - 1} : index
          %v = memref.load %x[%pn, %pc, %hc, %wc] : {x_t}
          %s = arith.select %ok, %v, %zero : f32
          memref.store %s, %pad[%pn, %pc, %ph, %pw] : {p_t}
        }}
      }}
    }}
  }}
  loop.for %n = %c0 to %c{n} step %c1 {{
    loop.for %f = %c0 to %c{f} step %c1 {{
      loop.for %i = %c0 to %c{oh} step %c1 {{
        loop.for %j = %c0 to %c{ow} step %c1 {{
          memref.store %zero, %y[%n, %f, %i, %j] : {o_t}
          loop.for %c = %c0 to %c{c} step %c1 {{
            loop.for %ky = %c0 to %c{k} step %c1 {{
              loop.for %kx = %c0 to %c{k} step %c1 {{
                %r = arith.addi %i, %ky : index
                %q = arith.addi %j, %kx : index
                %a = memref.load %pad[%n, %c, %r, %q] : {p_t}
                %b = memref.load %wt[%f, %c, %ky, %kx] : {w_t}
                %p = arith.mulf %a, %b : f32
                %old = memref.load %y[%n, %f, %i, %j] : {o_t}
                %new = arith.addf %old, %p : f32
                memref.store %new, %y[%n, %f, %i, %j] : {o_t}
              }}
            }}
          }}
        }}
      }}
    }}
  }}
  loop.return
}}
"""


def matmul_kernel(m: int, k: int, n: int) -> str:
    a_t, b_t, c_t = f"memref<{m}x{k}xf32>", f"memref<{k}x{n}xf32>", f"memref<{m}x{n}xf32>"
    return f"""
loop.func @matmul(%a: {a_t}, %b: {b_t}) outs(%c: {c_t}) {{
{constants(m, k, n)}
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c{m} step %c1 {{
    loop.for %j = %c0 to %c{n} step %c1 {{
      memref.store %zero, %c[%i, %j] : {c_t}
      loop.for %k = %c0 to %c{k} step %c1 {{
        %x = memref.load %a[%i, %k] : {a_t}
        %y = memref.load %b[%k, %j] : {b_t}
        %p = arith.mulf %x, %y : f32
        %old = memref.load %c[%i, %j] : {c_t}
        %new = arith.addf %old, %p : f32
        memref.store %new, %c[%i, %j] : {c_t}
      }}
    }}
  }}
  loop.return
}}
"""


ROW_MAX = f"""
loop.func @row_max(%x: memref<5x7xf32>) outs(%out: memref<5x1xf32>) {{
{constants(5, 7)}
  %ninf = arith.constant 0xFF800000 : f32
  loop.for %i = %c0 to %c5 step %c1 {{
    memref.store %ninf, %out[%i, %c0] : memref<5x1xf32>
    loop.for %k = %c0 to %c7 step %c1 {{
      %v = memref.load %x[%i, %k] : memref<5x7xf32>
      %old = memref.load %out[%i, %c0] : memref<5x1xf32>
      %new = arith.maximumf %old, %v : f32
      memref.store %new, %out[%i, %c0] : memref<5x1xf32>
    }}
  }}
  loop.return
}}
"""

SOFTMAX = f"""
loop.func @softmax(%x: memref<3x8xf32>) outs(%out: memref<3x8xf32>) {{
  %max = loop.alloc : memref<3xf32>
  %exp = loop.alloc : memref<3x8xf32>
  %sum = loop.alloc : memref<3xf32>
{constants(3, 8)}
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c3 step %c1 {{
    memref.store %ninf, %max[%i] : memref<3xf32>
    loop.for %k = %c0 to %c8 step %c1 {{
      %v = memref.load %x[%i, %k] : memref<3x8xf32>
      %m = memref.load %max[%i] : memref<3xf32>
      %m2 = arith.maximumf %m, %v : f32
      memref.store %m2, %max[%i] : memref<3xf32>
    }}
  }}
  loop.for %i2 = %c0 to %c3 step %c1 {{
    loop.for %j2 = %c0 to %c8 step %c1 {{
      %v = memref.load %x[%i2, %j2] : memref<3x8xf32>
      %m = memref.load %max[%i2] : memref<3xf32>
      %d = arith.subf %v, %m : f32
      %e = math.exp %d : f32
      memref.store %e, %exp[%i2, %j2] : memref<3x8xf32>
    }}
  }}
  loop.for %i3 = %c0 to %c3 step %c1 {{
    memref.store %zero, %sum[%i3] : memref<3xf32>
    loop.for %k3 = %c0 to %c8 step %c1 {{
      %e = memref.load %exp[%i3, %k3] : memref<3x8xf32>
      %s = memref.load %sum[%i3] : memref<3xf32>
      %s2 = arith.addf %s, %e : f32
      memref.store %s2, %sum[%i3] : memref<3xf32>
    }}
  }}
  loop.for %i4 = %c0 to %c3 step %c1 {{
    loop.for %j4 = %c0 to %c8 step %c1 {{
      %e = memref.load %exp[%i4, %j4] : memref<3x8xf32>
      %s = memref.load %sum[%i4] : memref<3xf32>
      %q = arith.divf %e, %s : f32
      memref.store %q, %out[%i4, %j4] : memref<3x8xf32>
    }}
  }}
  loop.return
}}
"""

RESHAPE = f"""
loop.func @reshape(%x: memref<6x4xf32>) outs(%out: memref<3x8xf32>) {{
{constants(3, 4, 8)}
  loop.for %i = %c0 to %c3 step %c1 {{
    loop.for %j = %c0 to %c8 step %c1 {{
      %row = arith.muli %i, %c8 : index
      %flat = arith.addi %row, %j : index
      %r = arith.divui %flat, %c4 : index
      %c = arith.remui %flat, %c4 : index
      %v = memref.load %x[%r, %c] : memref<6x4xf32>
      memref.store %v, %out[%i, %j] : memref<3x8xf32>
    }}
  }}
  loop.return
}}
"""

ROW_SUM_TWICE = f"""
loop.func @row_sum_twice(%x: memref<4x6xf32>) outs(%out: memref<4xf32>) {{
  %acc = loop.alloc : memref<1xf32>
{constants(4, 6)}
  %zero = arith.constant 0.0 : f32
  %two = arith.constant 2.0 : f32
  loop.for %i = %c0 to %c4 step %c1 {{
    memref.store %zero, %acc[%c0] : memref<1xf32>
    loop.for %k = %c0 to %c6 step %c1 {{
      %v = memref.load %x[%i, %k] : memref<4x6xf32>
      %old = memref.load %acc[%c0] : memref<1xf32>
      %new = arith.addf %old, %v : f32
      memref.store %new, %acc[%c0] : memref<1xf32>
    }}
    %s = memref.load %acc[%c0] : memref<1xf32>
    %d = arith.mulf %s, %two : f32
    memref.store %d, %out[%i] : memref<4xf32>
  }}
  loop.return
}}
"""
"""A non-perfect nest reusing a one-element local accumulator for every row: the row loop must
run in Python (scalar), the reduction loop inside it still vectorises."""

PREFIX_SUM = f"""
loop.func @prefix_sum(%x: memref<9xf32>) outs(%out: memref<9xf32>) {{
{constants(9)}
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c9 step %c1 {{
    %p = arith.subi %i, %c1 : index
    %pc = arith.maxsi %p, %c0 : index
    %has = arith.cmpi sgt, %i, %c0 : index
    %prev = memref.load %out[%pc] : memref<9xf32>
    %base = arith.select %has, %prev, %zero : f32
    %v = memref.load %x[%i] : memref<9xf32>
    %s = arith.addf %base, %v : f32
    memref.store %s, %out[%i] : memref<9xf32>
  }}
  loop.return
}}
"""
"""A scan: each iteration reads the previous one's result, so nothing vectorises."""

GELU = f"""
loop.func @gelu(%x: memref<4x50xf32>) outs(%out: memref<4x50xf32>) {{
{constants(4, 50)}
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %rsqrt2 = arith.constant 0.70710678 : f32
  loop.for %i = %c0 to %c4 step %c1 {{
    loop.for %j = %c0 to %c50 step %c1 {{
      %v = memref.load %x[%i, %j] : memref<4x50xf32>
      %s = arith.mulf %v, %rsqrt2 : f32
      %e = math.erf %s : f32
      %e1 = arith.addf %e, %one : f32
      %h = arith.mulf %v, %half : f32
      %g = arith.mulf %h, %e1 : f32
      memref.store %g, %out[%i, %j] : memref<4x50xf32>
    }}
  }}
  loop.return
}}
"""

SUM_ALL = f"""
loop.func @sum_all(%x: memref<3x4xf32>) outs(%out: memref<f32>) {{
{constants(3, 4)}
  %zero = arith.constant 0.0 : f32
  memref.store %zero, %out[] : memref<f32>
  loop.for %i = %c0 to %c3 step %c1 {{
    loop.for %j = %c0 to %c4 step %c1 {{
      %v = memref.load %x[%i, %j] : memref<3x4xf32>
      %old = memref.load %out[] : memref<f32>
      %new = arith.addf %old, %v : f32
      memref.store %new, %out[] : memref<f32>
    }}
  }}
  loop.return
}}
"""


# --- numerics -----------------------------------------------------------------------------------


def test_elementwise_with_broadcast_load_is_exact():
    a, b = random(2, 4, 5, 6), random(1, 4, 1, 1, seed=1)
    out = np.zeros((2, 4, 5, 6), np.float32)
    run_kernel(parse_kernel(ADD_BROADCAST), [a, b, out])
    np.testing.assert_array_equal(out, a + b)


def test_padded_conv_with_local_pad_buffer():
    x, w = random(2, 3, 5, 6), random(4, 3, 3, 3, seed=1)
    out = np.zeros((2, 4, 5, 6), np.float32)
    kernel = parse_kernel(conv_kernel(2, 3, 5, 6, 4, 3, 1))
    run_kernel(kernel, [x, w, out])
    np.testing.assert_allclose(out, ref.conv2d(x, w, padding=(1, 1, 1, 1)), rtol=RTOL, atol=1e-6)
    assert all(vectorized_loops(kernel))


def test_matmul_reduction():
    a, b = random(5, 7), random(7, 3, seed=1)
    out = np.full((5, 3), np.nan, np.float32)
    run_kernel(parse_kernel(matmul_kernel(5, 7, 3)), [a, b, out])
    np.testing.assert_allclose(out, ref.matmul(a, b), rtol=RTOL, atol=1e-6)


def test_row_max_with_minus_infinity_init_and_unit_axis():
    x = random(5, 7)
    x[2] = -np.inf
    out = np.zeros((5, 1), np.float32)
    run_kernel(parse_kernel(ROW_MAX), [x, out])
    np.testing.assert_array_equal(out, x.max(axis=1, keepdims=True))


def test_softmax_four_blocks():
    x = random(3, 8) * 10
    out = np.zeros((3, 8), np.float32)
    kernel = parse_kernel(SOFTMAX)
    run_kernel(kernel, [x, out])
    np.testing.assert_allclose(out, ref.softmax(x, -1), rtol=RTOL, atol=1e-7)
    assert all(vectorized_loops(kernel))


def test_reshape_with_divui_remui_is_exact():
    x = random(6, 4)
    out = np.zeros((3, 8), np.float32)
    run_kernel(parse_kernel(RESHAPE), [x, out])
    np.testing.assert_array_equal(out, x.reshape(3, 8))


def test_non_perfect_nest_runs_the_outer_loop_in_python():
    x = random(4, 6)
    out = np.zeros(4, np.float32)
    kernel = parse_kernel(ROW_SUM_TWICE)
    assert vectorized_loops(kernel) == [False, True]
    run_kernel(kernel, [x, out])
    np.testing.assert_allclose(out, 2 * x.astype(np.float64).sum(axis=1), rtol=RTOL)


def test_scan_falls_back_to_the_scalar_interpreter():
    x = random(9)
    out = np.zeros(9, np.float32)
    kernel = parse_kernel(PREFIX_SUM)
    assert vectorized_loops(kernel) == [False]
    run_kernel(kernel, [x, out])
    np.testing.assert_allclose(out, np.cumsum(x), rtol=RTOL, atol=1e-6)


def test_gelu_with_math_erf():
    x = random(4, 50) * 3
    out = np.zeros((4, 50), np.float32)
    run_kernel(parse_kernel(GELU), [x, out])
    np.testing.assert_allclose(out, ref.gelu(x), rtol=RTOL, atol=1e-7)


def test_rank0_accumulator_with_init_outside_the_loops():
    x = random(3, 4)
    out = np.zeros((), np.float32)
    run_kernel(parse_kernel(SUM_ALL), [x, out])
    np.testing.assert_allclose(out, x.astype(np.float64).sum(), rtol=RTOL)


def test_chunked_nests_give_the_same_result(monkeypatch):
    monkeypatch.setattr(_loop_plan, "MAX_ELEMENTS", 64)
    kernel = parse_kernel(conv_kernel(2, 3, 5, 6, 4, 3, 1))
    plans = plan_kernel(kernel).loops.values()
    assert any(p.vectorized and p.chunk < p.extent for p in plans)
    x, w = random(2, 3, 5, 6), random(4, 3, 3, 3, seed=1)
    out = np.zeros((2, 4, 5, 6), np.float32)
    run_kernel(kernel, [x, w, out])
    np.testing.assert_allclose(out, ref.conv2d(x, w, padding=(1, 1, 1, 1)), rtol=RTOL, atol=1e-6)


def test_reduction_loops_are_chunked_too(monkeypatch):
    monkeypatch.setattr(_loop_plan, "MAX_ELEMENTS", 8)
    kernel = parse_kernel(matmul_kernel(2, 50, 3))
    k_loop = [op for op in kernel.walk() if isinstance(op, ForOp)][-1]
    assert plan_kernel(kernel).loops[k_loop].chunk < 50
    a, b = random(2, 50), random(50, 3, seed=1)
    out = np.zeros((2, 3), np.float32)
    run_kernel(kernel, [a, b, out])
    np.testing.assert_allclose(out, ref.matmul(a, b), rtol=RTOL, atol=1e-6)


STRIDED = f"""
loop.func @strided(%x: memref<10xf32>) outs(%out: memref<10xf32>) {{
{constants(2, 3, 9, 10)}
  %minus = arith.constant -1.0 : f32
  loop.for %i = %c0 to %c10 step %c1 {{
    memref.store %minus, %out[%i] : memref<10xf32>
  }}
  loop.for %j = %c1 to %c9 step %c3 {{
    %v = memref.load %x[%j] : memref<10xf32>
    memref.store %v, %out[%j] : memref<10xf32>
  }}
  loop.return
}}
"""


def test_loops_with_lower_bound_and_step():
    x = random(10)
    out = np.zeros(10, np.float32)
    kernel = parse_kernel(STRIDED)
    assert all(vectorized_loops(kernel))
    run_kernel(kernel, [x, out])
    expected = np.full(10, -1.0, np.float32)
    expected[1:9:3] = x[1:9:3]
    np.testing.assert_array_equal(out, expected)


ROW_SCAN = f"""
loop.func @row_scan(%x: memref<4x6xf32>) outs(%out: memref<4x6xf32>) {{
{constants(4, 6)}
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c4 step %c1 {{
    loop.for %j = %c0 to %c6 step %c1 {{
      %p = arith.subi %j, %c1 : index
      %pc = arith.maxsi %p, %c0 : index
      %has = arith.cmpi sgt, %j, %c0 : index
      %prev = memref.load %out[%i, %pc] : memref<4x6xf32>
      %base = arith.select %has, %prev, %zero : f32
      %v = memref.load %x[%i, %j] : memref<4x6xf32>
      %s = arith.addf %base, %v : f32
      memref.store %s, %out[%i, %j] : memref<4x6xf32>
    }}
  }}
  loop.return
}}
"""
"""Rows are independent (vectorised), the scan along a row is not (run in Python)."""


def test_scalar_loop_inside_a_vectorised_loop():
    x = random(4, 6)
    out = np.zeros((4, 6), np.float32)
    kernel = parse_kernel(ROW_SCAN)
    assert vectorized_loops(kernel) == [True, False]
    run_kernel(kernel, [x, out])
    np.testing.assert_allclose(out, np.cumsum(x, axis=1), rtol=RTOL, atol=1e-6)


# --- index and float op semantics ---------------------------------------------------------------

INDEX_OPS = [
    ("divsi", lambda i: math.trunc((i - 5) / 3)),
    ("remsi", lambda i: (i - 5) - 3 * math.trunc((i - 5) / 3)),
    ("floordivsi", lambda i: (i - 5) // 3),
    ("ceildivsi", lambda i: -((5 - i) // 3)),
]


@pytest.mark.parametrize("name, expected", INDEX_OPS, ids=[n for n, _ in INDEX_OPS])
def test_signed_division_of_negative_indices(name, expected):
    kernel = parse_kernel(f"""
loop.func @k(%x: memref<10xf32>) outs(%out: memref<10xf32>) {{
{constants(3, 5, 10)}
  loop.for %i = %c0 to %c10 step %c1 {{
    %d = arith.subi %i, %c5 : index
    %q = arith.{name} %d, %c3 : index
    %n = arith.index_cast %q : index to i64
    %f = arith.sitofp %n : i64 to f32
    memref.store %f, %out[%i] : memref<10xf32>
  }}
  loop.return
}}
""")
    out = np.zeros(10, np.float32)
    run_kernel(kernel, [np.zeros(10, np.float32), out])
    np.testing.assert_array_equal(out, [expected(i) for i in range(10)])


def test_unsigned_comparison_sees_negative_indices_as_large():
    kernel = parse_kernel(f"""
loop.func @k(%x: memref<6xf32>) outs(%out: memref<6xf32>) {{
{constants(2, 6)}
  %zero = arith.constant 0.0 : f32
  loop.for %i = %c0 to %c6 step %c1 {{
    %d = arith.subi %i, %c2 : index
    %inside = arith.cmpi ult, %d, %c2 : index
    %v = memref.load %x[%i] : memref<6xf32>
    %s = arith.select %inside, %v, %zero : f32
    memref.store %s, %out[%i] : memref<6xf32>
  }}
  loop.return
}}
""")
    x = np.arange(1, 7, dtype=np.float32)
    out = np.zeros(6, np.float32)
    run_kernel(kernel, [x, out])
    np.testing.assert_array_equal(out, [0, 0, 3, 4, 0, 0])


@pytest.mark.parametrize(
    "combine, expected",
    [("maximumf", np.nan), ("maxnumf", 3.0), ("minimumf", np.nan), ("minnumf", -1.0)],
)
def test_max_and_min_reductions_follow_nan_semantics(combine, expected):
    kernel = parse_kernel(f"""
loop.func @k(%x: memref<4xf32>) outs(%out: memref<f32>) {{
{constants(4)}
  %init = arith.constant 0.0 : f32
  memref.store %init, %out[] : memref<f32>
  loop.for %k = %c0 to %c4 step %c1 {{
    %v = memref.load %x[%k] : memref<4xf32>
    %old = memref.load %out[] : memref<f32>
    %new = arith.{combine} %old, %v : f32
    memref.store %new, %out[] : memref<f32>
  }}
  loop.return
}}
""")
    out = np.zeros((), np.float32)
    run_kernel(kernel, [np.array([1.0, np.nan, 3.0, -1.0], np.float32), out])
    np.testing.assert_array_equal(out, np.float32(expected))


def test_erf_matches_math_erf():
    x = np.concatenate([np.linspace(-30.0, 30.0, 200_001), [0.0, -0.0, 0.46875, 4.0, 26.6]])
    expected = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(erf(x), expected, rtol=5e-16, atol=5e-16)
    special = erf(np.array([np.inf, -np.inf, np.nan]))
    np.testing.assert_array_equal(special, [1.0, -1.0, np.nan])


# --- errors -------------------------------------------------------------------------------------


def test_buffers_must_match_the_signature():
    kernel = parse_kernel(matmul_kernel(2, 3, 4))
    a, b = random(2, 3), random(3, 4)
    with pytest.raises(KernelError, match="got 2 buffers"):
        run_kernel(kernel, [a, b])
    with pytest.raises(KernelError, match=r"buffer #1 \(input\) must be an array of shape"):
        run_kernel(kernel, [a, random(4, 3), np.zeros((2, 4), np.float32)])
    with pytest.raises(KernelError, match=r"buffer #2 \(output\).*float32"):
        run_kernel(kernel, [a, b, np.zeros((2, 4), np.float64)])


def test_out_of_bounds_access_is_an_error():
    kernel = parse_kernel(f"""
loop.func @k(%x: memref<4xf32>) outs(%out: memref<4xf32>) {{
{constants(4)}
  loop.for %i = %c0 to %c4 step %c1 {{
    %p = arith.subi %i, %c1 : index
    %v = memref.load %x[%p] : memref<4xf32>
    memref.store %v, %out[%i] : memref<4xf32>
  }}
  loop.return
}}
""")
    with pytest.raises(KernelError, match="subscript #0 is -1, out of bounds"):
        run_kernel(kernel, [random(4), np.zeros(4, np.float32)])


def test_unsupported_op_is_named():
    kernel = parse_kernel("""
loop.func @k(%x: memref<4xf32>) outs(%out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %v = memref.load %x[%c0] : memref<4xf32>
  %b = arith.bitcast %v : f32 to i32
  loop.return
}
""")
    with pytest.raises(KernelError, match="'arith.bitcast'"):
        run_kernel(kernel, [random(4), np.zeros(4, np.float32)])


def test_every_pure_op_of_the_conventions_has_semantics():
    from fusion_compiler.dialects.reference._loop_ops import SCALAR_OPS

    conventions = [arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.DivUIOp, arith.RemUIOp]
    conventions += [arith.MinSIOp, arith.MaxSIOp, arith.CmpiOp, arith.SelectOp, arith.ConstantOp]
    assert all(op in SCALAR_OPS for op in conventions)


# --- speed on the real examples -----------------------------------------------------------------


def _timed(kernel: FuncOp, buffers: list[np.ndarray]) -> float:
    start = time.perf_counter()
    run_kernel(kernel, buffers)
    return time.perf_counter() - start


def test_resnet_conv_runs_in_seconds():
    """1x64x56x56 input, 64x64x3x3 weight: 115M multiply-adds."""
    kernel = parse_kernel(conv_kernel(1, 64, 56, 56, 64, 3, 1))
    x, w = random(1, 64, 56, 56), random(64, 64, 3, 3, seed=1)
    out = np.zeros((1, 64, 56, 56), np.float32)
    assert _timed(kernel, [x, w, out]) < 10.0
    np.testing.assert_allclose(out, ref.conv2d(x, w, padding=(1, 1, 1, 1)), rtol=RTOL, atol=1e-4)


def test_transformer_matmul_runs_in_seconds():
    """128x768 @ 768x3072: 302M multiply-adds."""
    kernel = parse_kernel(matmul_kernel(128, 768, 3072))
    a, b = random(128, 768), random(768, 3072, seed=1)
    out = np.zeros((128, 3072), np.float32)
    assert _timed(kernel, [a, b, out]) < 10.0
    np.testing.assert_allclose(out, ref.matmul(a, b), rtol=RTOL, atol=1e-4)
