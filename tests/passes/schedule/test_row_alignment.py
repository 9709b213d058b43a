"""align-buffer-rows: which pitch a row gets (the numbers are checked with the other stages:
`test_numerics.py`'s `small_planes`, natively bit for bit and interpreted)."""

from __future__ import annotations

import re

import pytest

from fusion_compiler.passes.schedule.row_alignment import align_buffer_rows, row_pitch


@pytest.mark.parametrize(
    "extent, pitch",
    [(1, 1), (2, 2), (3, 4), (7, 8), (8, 8), (9, 16), (13, 16), (15, 16), (16, 16), (29, 29)],
)
def test_rows_shorter_than_a_line_get_a_power_of_two(extent, pitch):
    assert row_pitch(extent, element_bytes=4) == pitch


def test_wider_elements_fill_a_line_sooner():
    assert row_pitch(9, element_bytes=8) == 9  # 72 bytes: more than a line already
    assert row_pitch(5, element_bytes=8) == 8


DEPTHWISE = """
func.func @main(%x: tensor<1x4x7x7xf32>, %w: tensor<4x1x3x3xf32>) -> tensor<1x4x7x7xf32> {
  %d = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 4 : i64} : (tensor<1x4x7x7xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x7x7xf32>
  func.return %d : tensor<1x4x7x7xf32>
}"""


def test_a_small_padded_plane_gets_rows_of_a_line(build):
    def allocs(options: str) -> list[str]:
        # the host facts schedule-kernels reads fixed: the buffers must not depend on the CPU
        text = build(DEPTHWISE, "depthwise.mlir", f"cores=2 l1-bytes=32768 {options}").text
        return re.findall(r"loop\.alloc[^:]*: (memref<[^>]*>)", text)

    assert allocs("") == ["memref<1x1x9x16xf32>"]
    assert allocs("align-rows=false") == ["memref<1x1x9x9xf32>"]


ODD_BUFFERS = """
loop.func @k(%x: memref<2x3xi1>) outs(%y: memref<2x3xi1>, %z: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %cst = arith.constant 1.000000e+00 : f32
  %bits = loop.alloc : memref<2x3xi1>
  %one = loop.alloc : memref<f32>
  memref.store %cst, %one[] : memref<f32>
  loop.for %i = %c0 to %c2 step %c1 {
    loop.for %j = %c0 to %c3 step %c1 vectorized {
      %0 = memref.load %x[%i, %j] : memref<2x3xi1>
      memref.store %0, %bits[%i, %j] : memref<2x3xi1>
      %1 = memref.load %bits[%i, %j] : memref<2x3xi1>
      memref.store %1, %y[%i, %j] : memref<2x3xi1>
    }
  }
  %2 = memref.load %one[] : memref<f32>
  memref.store %2, %z[] : memref<f32>
  loop.return
}"""


def test_rank_zero_and_sub_byte_buffers_are_left_alone(parse_kernel):
    kernel = parse_kernel(ODD_BUFFERS)
    assert align_buffer_rows(kernel) == 0
