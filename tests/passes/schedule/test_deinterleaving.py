"""deinterleave-buffers: which buffers get phase planes, and which are left alone.

The numbers are checked with the other stages (`test_numerics.py`'s `strided_windows`: a
stride-2 depthwise convolution, average and max pooling, natively bit for bit against the
unscheduled kernels and interpreted); these tests pin down the legality conditions."""

from __future__ import annotations

import re

import numpy as np
import pytest

from fusion_compiler.dialects.loop import AllocOp
from fusion_compiler.dialects.reference.loop_interpreter import run_kernel
from fusion_compiler.passes.schedule.deinterleaving import deinterleave_buffers, deinterleaving

WINDOWS = """
func.func @main(%x: tensor<1x3x11x11xf32>, %w: tensor<3x1x3x3xf32>) -> (tensor<1x3x6x6xf32>, tensor<1x3x5x5xf32>) {
  %d = graph.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 3 : i64} : (tensor<1x3x11x11xf32>, tensor<3x1x3x3xf32>) -> tensor<1x3x6x6xf32>
  %m = graph.max_pool2d %x {kernel = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 0, 0, 1, 1>} : (tensor<1x3x11x11xf32>) -> tensor<1x3x5x5xf32>
  func.return %d, %m : tensor<1x3x6x6xf32>, tensor<1x3x5x5xf32>
}"""


def _phase_loops(text: str) -> list[tuple[int, int]]:
    """The bounds of the loops over plane positions (`%p...`), in order."""
    constants = dict(re.findall(r"%(\w+) = arith\.constant (\d+) : index", text))
    bounds = re.findall(r"loop\.for %p\w* = %(\w+) to %(\w+)", text)
    return [(int(constants[lb]), int(constants[ub])) for lb, ub in bounds]


HOST = "cores=2 l1-bytes=32768"
"""The host facts schedule-kernels reads, fixed: the buffers must not depend on the CPU."""


def _allocs(text: str) -> list[str]:
    return re.findall(r"loop\.alloc[^:]*: (memref<[^>]*>)", text)


def test_stride_two_windows_get_even_and_odd_planes(build):
    # Each kernel's padded plane (13 and 12 columns) becomes 2 planes of 7 and 6 columns
    # (rows that align-buffer-rows, left out here, would pad to 8).
    scheduled = _allocs(build(WINDOWS, "windows.mlir", f"{HOST} align-rows=false").text)
    assert sorted(scheduled) == ["memref<1x1x12x2x6xf32>", "memref<1x1x13x2x7xf32>"]
    options = f"{HOST} deinterleave=false align-rows=false"
    kept = _allocs(build(WINDOWS, "windows.mlir", options).text)
    assert sorted(kept) == ["memref<1x1x12x12xf32>", "memref<1x1x13x13xf32>"]


KERNEL = """
loop.func @k(%x: memref<12xf32>) outs(%y: memref<4xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c12 = arith.constant 12 : index
  %reads = arith.constant {reads} : index
  %buf = loop.alloc : memref<12xf32>
  loop.for %i = %c1 to %c12 step %c1 {{
    {write}
  }}
  loop.for %c = %c0 to %reads step %c1 {{
    %t = arith.muli %c, %c{stride} : index
    %s = arith.addi %t, %c{stride} : index
    %v = memref.load %buf[%s] : memref<12xf32>
    memref.store %v, %y[%c] : memref<4xf32>
  }}
  loop.return
}}"""

COPY = """%a = memref.load %x[%i] : memref<12xf32>
    memref.store %a, %buf[%i] : memref<12xf32>"""


def _plan(parse_kernel, write: str, stride: int = 2):
    reads = min(4, 11 // stride)  # columns stride, 2 stride, ... all written (1 to 11)
    kernel = parse_kernel(KERNEL.format(write=write, stride=stride, reads=reads))
    alloc = next(op for op in kernel.walk() if isinstance(op, AllocOp))
    return kernel, deinterleaving(alloc)


@pytest.mark.parametrize(
    "stride, planes, loops",
    [
        # x in [1, 12): plane b holds the columns s p + b, p from ceil((1 - b) / s)
        (2, "memref<2x6xf32>", [(1, 6), (0, 6)]),
        (3, "memref<3x4xf32>", [(1, 4), (0, 4), (0, 4)]),
        (4, "memref<4x3xf32>", [(1, 3), (0, 3), (0, 3), (0, 3)]),
    ],
)
def test_a_copy_read_with_a_stride_is_deinterleaved(parse_kernel, stride, planes, loops):
    kernel, plan = _plan(parse_kernel, COPY, stride)
    assert plan is not None and plan.stride == stride
    x = np.random.default_rng(stride).uniform(-1, 1, 12).astype(np.float32)
    before = np.zeros(4, np.float32)
    run_kernel(kernel, [x, before])
    assert deinterleave_buffers(kernel) == 1
    kernel.verify()
    assert _allocs(str(kernel)) == [planes]
    assert _phase_loops(str(kernel)) == loops
    after = np.zeros(4, np.float32)
    run_kernel(kernel, [x, after])
    np.testing.assert_array_equal(after, before)
    reads = min(4, 11 // stride)
    np.testing.assert_array_equal(before[:reads], x[stride : stride * (reads + 1) : stride])


@pytest.mark.parametrize(
    "write, stride, why",
    [
        (
            """%p = arith.subi %i, %c1 : index
    %a = memref.load %buf[%p] : memref<12xf32>
    memref.store %a, %buf[%i] : memref<12xf32>""",
            2,
            "the writing loop reads the buffer: its order matters",
        ),
        (
            """loop.for %j = %c0 to %c1 step %c1 {
      %a = memref.load %x[%i] : memref<12xf32>
      memref.store %a, %buf[%i] : memref<12xf32>
    }""",
            2,
            "the store's loop does not walk its column",
        ),
        (
            """%a = memref.load %x[%i] : memref<12xf32>
    memref.store %a, %buf[%i] : memref<12xf32>
    memref.store %a, %y[%c0] : memref<4xf32>""",
            2,
            "the writing loop stores elsewhere too",
        ),
        (COPY, 5, "more planes than MAX_PHASES"),
        (COPY, 1, "contiguous reads already"),
    ],
)
def test_buffers_that_may_not_or_need_not_be_deinterleaved(parse_kernel, write, stride, why):
    kernel, plan = _plan(parse_kernel, write, stride)
    assert plan is None, why
    assert deinterleave_buffers(kernel) == 0


PANEL = """
loop.func @k(%x: memref<13xf32>) outs(%y: memref<3x6xf32>) attributes {fusion.register_tiled} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c6 = arith.constant 6 : index
  %c13 = arith.constant 13 : index
  %buf = loop.alloc : memref<13xf32>
  loop.for %i = %c0 to %c13 step %c1 {
    %a = memref.load %x[%i] : memref<13xf32>
    memref.store %a, %buf[%i] : memref<13xf32>
  }
  loop.for %kw = %c0 to %c3 step %c1 {
    loop.for %jo = %c0 to %c6 step %c3 {
      loop.for %jj = %c0 to %c3 step %c1 {
        %j = arith.addi %jo, %jj : index
        %t = arith.muli %j, %c2 : index
        %s = arith.addi %t, %kw : index
        %v = memref.load %buf[%s] : memref<13xf32>
        memref.store %v, %y[%kw, %j] : memref<3x6xf32>
      }
    }
  }
  loop.return
}"""


def test_a_panel_packed_over_the_window_columns_is_deinterleaved(parse_kernel):
    # `2 * (jo + jj) + kw`: `s * A + B` with the window column `kw` in `B`; the pack reads
    # plane `kw % 2` at `jo + jj + kw / 2`, and finds the same elements.
    kernel = parse_kernel(PANEL)
    x = np.random.default_rng(7).uniform(-1, 1, 13).astype(np.float32)
    before = np.zeros((3, 6), np.float32)
    run_kernel(kernel, [x, before])
    assert deinterleave_buffers(kernel) == 1
    kernel.verify()
    assert _allocs(str(kernel)) == ["memref<2x7xf32>"]
    after = np.zeros((3, 6), np.float32)
    run_kernel(kernel, [x, after])
    np.testing.assert_array_equal(after, before)
    expected = np.stack([x[kw : kw + 12 : 2] for kw in range(3)])
    np.testing.assert_array_equal(before, expected)
