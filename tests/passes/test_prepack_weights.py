"""prepack-weights end to end: a contraction whose packed operand is a constant packs it once,
in the load entry, and computes the same bits as the kernel that packs at every launch."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.graph.base import tensor_type
from fusion_compiler.dialects.loop import FuncOp
from fusion_compiler.driver import DEFAULT_PIPELINE, PassManager, compile_module, lower_to_entries
from fusion_compiler.lowering.lower_graph import LOAD_ENTRY_ATTR
from fusion_compiler.passes.analysis.launches import constant_inputs, kernel_launches
from fusion_compiler.passes.fold_constants.elements import dense_of
from fusion_compiler.passes.schedule import (
    contraction_pack_schedule,
    contraction_schedule,
    prepack_weights,
)
from fusion_compiler.passes.schedule.contraction_tiles import HostModel

NO_PREPACK = DEFAULT_PIPELINE.replace("schedule-kernels", "schedule-kernels{prepack=false}")


def _constant(block: Block, shape, seed: int):
    array = np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)
    op = graph.ConstantOp(dense_of(array, tensor_type(shape)))
    block.add_op(op)
    return op.result


def conv_module(c, h, o, k, stride=1, groups=1) -> ModuleOp:
    block = Block(arg_types=[tensor_type((1, c, h, h))])
    w = _constant(block, (o, c // groups, k, k), 1)
    b = _constant(block, (1, o, 1, 1), 2)
    pad = (k - 1) // 2
    conv = graph.Conv2DOp(block.args[0], w, (stride, stride), (pad,) * 4, (1, 1), groups)
    add = graph.AddOp(conv.result, b)
    relu = graph.ReluOp(add.result)
    block.add_ops([conv, add, relu, func.ReturnOp(relu.result)])
    signature = ([block.args[0].type], [relu.result.type])
    return ModuleOp([func.FuncOp("main", signature, Region(block))])


def matmul_module(m, k, n) -> ModuleOp:
    block = Block(arg_types=[tensor_type((m, k))])
    b = _constant(block, (k, n), 3)
    mm = graph.MatmulOp(block.args[0], b)
    block.add_ops([mm, func.ReturnOp(mm.result)])
    signature = ([block.args[0].type], [mm.result.type])
    return ModuleOp([func.FuncOp("main", signature, Region(block))])


CASES = {
    # vectorised along the output channels, whose weights are the panel: a loop of column
    # tiles and a remainder tile padded to whole vectors
    "conv3x3_24x7x7_o40": lambda: conv_module(24, 7, 40, 3),
    "conv3x3_16x9x9_o72_s2": lambda: conv_module(16, 9, 72, 3, stride=2),
    "conv5x5_8x6x6_o20": lambda: conv_module(8, 6, 20, 5),
    "conv3x3_16x6x6_o48_g2": lambda: conv_module(16, 6, 48, 3, groups=2),
    "matmul_24x40x70": lambda: matmul_module(24, 40, 70),
    # one row tile: packing per launch would only copy B, packing at load time pays
    "matmul_2x64x200": lambda: matmul_module(2, 64, 200),
    # a single row: its full column tiles read `PANEL_STREAMS` sub-panels at once
    "matvec_1x40x600": lambda: matmul_module(1, 40, 600),
}


def _has_load_entry(module: ModuleOp, pipeline: str) -> bool:
    lowered, _ = lower_to_entries(module, pipeline)
    return any(LOAD_ENTRY_ATTR in op.attributes for op in lowered.ops)


@pytest.mark.parametrize("name", sorted(CASES))
def test_prepacked_weights_give_the_same_bits(name):
    module = CASES[name]()
    assert not _has_load_entry(module, NO_PREPACK)
    arg = module.body.block.first_op.body.block.args[0]
    x = np.random.default_rng(7).standard_normal(arg.type.get_shape(), dtype=np.float32)
    packed = compile_module(module, cache=False)
    per_launch = compile_module(module, NO_PREPACK, cache=False)
    want = per_launch.run("main", x)[0]
    np.testing.assert_array_equal(packed.run("main", x)[0], want)
    np.testing.assert_array_equal(packed.run("main", x)[0], want)  # the packing ran once


def _packs_weights_per_launch(module: ModuleOp) -> bool:
    """Whether the build without prepack-weights packs a panel from a constant at every
    launch (what prepack-weights finds to move)."""
    scheduled = module.clone()
    PassManager(NO_PREPACK).run(scheduled)
    launches = kernel_launches(scheduled)
    for kernel in [op for op in scheduled.ops if isinstance(op, FuncOp)]:
        constants = constant_inputs(kernel, launches)
        if any(
            prepack_weights._fill(kernel, a, constants) for a in prepack_weights._panels(kernel)
        ):
            return True
    return False


def test_every_panel_packed_from_a_constant_is_prepacked():
    prepacked = {name for name, make in CASES.items() if _has_load_entry(make(), DEFAULT_PIPELINE)}
    # whether a convolution is vectorised along its output channels (the weights are the
    # panel) or along its pixels depends on the host's vector width; a matmul's panel is B
    # on every host (with one row tile only because its B is a weight)
    assert {"matmul_24x40x70", "matmul_2x64x200"} <= prepacked
    per_launch = {name for name, make in CASES.items() if _packs_weights_per_launch(make())}
    assert per_launch - {"matmul_2x64x200"} <= prepacked, per_launch - prepacked


@pytest.mark.parametrize("width", [8, 16], ids=["avx2", "avx512"])
def test_a_single_row_reads_its_panel_from_sub_panels(width, monkeypatch):
    """A matrix-vector product by a weight: each full column tile's panel is packed as
    `PANEL_STREAMS` sub-panels side by side (`PackedBuilder._panel_streams`), which the tile
    reads at once; the remainder tile keeps one panel. The same bits (the test above). The
    host model is fixed (AVX2's and AVX-512's vector widths and registers, the defaults
    otherwise): 600 columns make full tiles of 8 vectors on both, each sub-panel 2 vectors."""
    host = HostModel(vector_width=width, registers=2 * width)
    monkeypatch.setattr(contraction_schedule, "host_model", lambda: host)
    lowered, _ = lower_to_entries(matmul_module(1, 40, 600), DEFAULT_PIPELINE)
    packs = [
        op
        for op in lowered.ops
        if isinstance(op, FuncOp) and op.sym_name.data.startswith("prepack_")
    ]
    shapes = [arg.type.get_shape() for op in packs for arg in op.body.block.args[1:]]
    streams = contraction_pack_schedule.PANEL_STREAMS
    tiles = 600 // (8 * width)
    assert (tiles, streams, 40, 8 * width // streams) in shapes


def test_weights_passed_as_arguments_are_packed_at_every_launch():
    block = Block(arg_types=[tensor_type((1, 16, 9, 9)), tensor_type((72, 16, 3, 3))])
    conv = graph.Conv2DOp(block.args[0], block.args[1], (2, 2), (1,) * 4, (1, 1), 1)
    block.add_ops([conv, func.ReturnOp(conv.result)])
    signature = ([a.type for a in block.args], [conv.result.type])
    module = ModuleOp([func.FuncOp("main", signature, Region(block))])
    assert not _has_load_entry(module, DEFAULT_PIPELINE)
