"""The analytic tile model of `contraction_tiles`: which register tiles it picks for hosts
given by their facts (never this machine's), so the choices hold on every CPU."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Region

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.graph.base import tensor_type
from fusion_compiler.dialects.loop import AllocOp, ForOp, FuncOp
from fusion_compiler.driver import FUSION_PIPELINE, PassManager
from fusion_compiler.passes.fold_constants.elements import dense_of
from fusion_compiler.passes.schedule import contraction_schedule
from fusion_compiler.passes.schedule.contraction_pack_match import (
    StridedBroadcast,
    packed_candidates,
)
from fusion_compiler.passes.schedule.contraction_tiles import (
    FAR_BROADCAST_FACTOR,
    HostModel,
    PackedShape,
    Tile,
    _store_misses,
    broadcasts_beyond_l2,
    packed_cost,
    packed_tile,
    register_tile,
    steps_by_rows,
    strided_broadcast_tile,
)

AVX512 = HostModel(vector_width=16, registers=32)
AVX2 = HostModel(vector_width=8, registers=16)


EXTENTS = [(256, 784), (512, 784), (256, 196), (64, 3136), (7, 512), (14, 256), (512, 49), (9, 99)]


def _vectors(tile: Tile, host: HostModel) -> int:
    return -(-tile.cols // host.vector_width)


def test_register_tile_has_the_most_fmas_per_load():
    assert register_tile(AVX512) == Tile(6, 64)
    assert register_tile(AVX2) == Tile(3, 32)


@pytest.mark.parametrize("host", [AVX512, AVX2], ids=["avx512", "avx2"])
@pytest.mark.parametrize("extents", EXTENTS)
def test_packed_tile_fits_the_registers_in_the_order_of_its_steps(extents, host):
    """Accumulators, one broadcast per row and one panel vector within the register file (LLVM
    issues a step's broadcasts first: a tile over that spills an accumulator every step), or,
    issued row by row, accumulators, the panel's vectors and one broadcast."""
    tile = packed_tile(host, *extents)
    vectors = _vectors(tile, host)
    if steps_by_rows(tile.rows, vectors, host.registers):
        assert host is AVX2 and tile.rows * vectors + vectors + 1 <= host.registers
    else:
        assert tile.rows * vectors + tile.rows + 1 <= host.registers
    assert vectors >= 2 or tile.cols <= host.vector_width


def test_the_avx2_tiles_that_spilled_are_issued_row_by_row():
    """4 x 3 vectors (12 accumulators, 4 broadcasts, 1 panel vector: 17 of 16 registers) ran
    at half the speed of 3 x 4 on Zen 3 (an accumulator stored and reloaded every step);
    issued row by row (12 accumulators, 3 panel vectors, 1 broadcast) it fits, and so does
    6 x 2; 7 x 2 fits neither order. AVX-512 hosts keep the usual order."""
    assert steps_by_rows(4, 3, 16) and steps_by_rows(6, 2, 16)
    assert not steps_by_rows(3, 4, 16) and not steps_by_rows(5, 2, 16)  # they fit as they are
    assert not steps_by_rows(7, 2, 16) and not steps_by_rows(5, 3, 16)  # 17 and 19 registers
    assert AVX2.tiles_by_rows and not AVX512.tiles_by_rows
    chosen = {(t.rows, _vectors(t, AVX2)) for t in (packed_tile(AVX2, *e) for e in EXTENTS)}
    assert not chosen & {(7, 2), (5, 3)}
    assert chosen & {(4, 3), (6, 2)}
    for extents in EXTENTS:
        tile = packed_tile(AVX512, *extents)
        assert not steps_by_rows(tile.rows, _vectors(tile, AVX512), AVX512.registers)


@pytest.mark.parametrize(
    ("channels", "steps", "tile"), [(128, 992, Tile(4, 24)), (512, 1024, Tile(6, 16))]
)
def test_a_deep_layer_takes_a_tile_issued_row_by_row(channels, steps, tile):
    """1x1 convolutions to 128 and 512 channels on 14 x 14 pixels, the pixels the panel:
    4 x 3 and 6 x 2 vectors, issued row by row, where 5 x 2 was the largest tile of the usual
    order (1.11x and 1.07x faster on a Zen 3, `contraction_tiles.steps_by_rows`)."""
    assert packed_tile(ZEN3, channels, 196, steps=steps) == tile


@pytest.mark.parametrize("extents", [(256, 784), (512, 784), (256, 196), (256, 3136)])
def test_packed_tile_prefers_reuse_over_remainders(extents):
    """On wide grids every tile is FMA-bound by the model and the grids differ only in their
    remainders: the tile with the most FMAs per load wins (at least three vectors wide on
    AVX-512; the 2-vector tiles measured 10-25% slower on ResNet-50's 1x1 layers)."""
    tile = packed_tile(AVX512, *extents)
    assert tile.cols >= 3 * AVX512.vector_width
    assert tile.rows >= 6


def test_packed_tile_fits_a_short_row():
    """Seven output pixels take seven rows beside the output channels, not 6 + 1."""
    assert packed_tile(AVX512, 7, 512).rows == 7


def test_packed_tile_never_wider_than_the_columns():
    tile = packed_tile(AVX512, 256, 20)
    assert tile.cols <= 32


ZEN3 = HostModel(vector_width=8, registers=16, l2_bytes=512 * 1024)


@pytest.mark.parametrize("rows", [7, 12, 14, 28])
def test_a_panel_that_would_not_fit_l2_gets_a_narrower_tile(rows):
    """A 3x3 convolution of 512 channels reduces over 4608 steps: no panel of two vectors or
    more fits half of a 512 KB L2, and the narrowest of them (2 vectors, 295 KB) is taken
    rather than 4 (590 KB: streamed from L3 once per register tile) or 1 (a load per FMA)."""
    assert packed_tile(ZEN3, rows, 512, steps=4608).cols == 16


@pytest.mark.parametrize("rows", [14, 56])
def test_the_panels_that_fit_half_of_l2_are_kept(rows):
    """256 channels: 2304 steps; 2 and 3 vectors (147 and 221 KB) fit half of L2, 4 do not."""
    tile = packed_tile(ZEN3, rows, 256, steps=2304)
    assert 2304 * tile.cols * 4 <= 0.5 * ZEN3.l2_bytes


def test_the_wide_tile_is_chosen_when_the_reduction_is_unknown():
    assert packed_tile(ZEN3, 14, 512).cols == 32


@pytest.mark.parametrize("host", [ZEN3, AVX512], ids=["zen3", "avx512"])
@pytest.mark.parametrize(("steps", "cols"), [(25088, 4096), (4096, 1024), (2048, 1000)])
def test_a_single_row_takes_enough_accumulators_whatever_its_panel(host, steps, cols):
    """A matrix-vector product by a weight (one row of tiles, each panel streamed once): 8
    vectors, the FMA latency times the FMA units, where the L2 share had narrowed the panels
    of 4096 steps or more to 2 vectors and the 4-vector cap left each FMA waiting."""
    tile = packed_tile(host, 1, cols, steps=steps)
    assert tile == Tile(1, 8 * host.vector_width)


def test_a_short_row_keeps_the_l2_share():
    """Two rows or more re-read each panel once per row tile: the single-row rule is not theirs."""
    assert packed_tile(ZEN3, 2, 4096, steps=25088).cols <= 4 * ZEN3.vector_width


def test_a_panel_that_fits_l2_keeps_the_tile():
    for extents in EXTENTS:
        assert packed_tile(ZEN3, *extents, steps=64) == packed_tile(ZEN3, *extents)


ZEN5 = HostModel(vector_width=16, registers=32, l1_bytes=48 * 1024, l1_ways=12)


@pytest.mark.parametrize(
    ("cols", "pixels", "misses"),
    [
        (64, 224 * 224, 1 - 12 / 64),  # channels 196 KiB apart: the tile's 64 lines in one set
        (64, 112 * 112, 1 - 12 / 16),  # 49 KiB apart: four sets of 16 lines, 12 ways each
        (32, 112 * 112, 0.0),  # 32 lines fit those four sets
        (64, 56 * 56, 0.0),  # 12.25 KiB apart: sixteen sets
        (64, 55 * 55, 0.0),
    ],
)
def test_scattered_stores_miss_when_their_lines_share_l1_sets(cols, pixels, misses):
    assert ZEN5.l1_sets == 64
    assert _store_misses(ZEN5, cols, pixels) == pytest.approx(misses)


def test_no_misses_without_a_known_stride():
    assert _store_misses(ZEN5, 64, 0) == 0.0


@pytest.mark.parametrize("ways", [8, 12])
def test_the_l1_ways_option_fixes_the_associativity_whatever_the_host(ways, monkeypatch):
    """A test that sizes the model's L1 (`l1-bytes`) fixes its ways too: 8 on Zen 3 and Zen 4,
    12 on Zen 5, where `packed_broadcasts.mlir`'s 1 KiB L1 had one set, not two."""
    monkeypatch.setattr(contraction_schedule, "host_model", lambda: ZEN5)
    host = contraction_schedule.TileOptions(l1_bytes=1024, l1_ways=ways).host()
    assert (host.l1_ways, host.l1_sets) == (ways, 2 if ways == 8 else 1)
    assert contraction_schedule.TileOptions().host().l1_ways == 12  # (0: the host's)


def _stem_plans(pixels: int) -> tuple[PackedShape, PackedShape]:
    """conv3x3 of 3 channels to 64 on `pixels` x `pixels` outputs: vectorised along the output
    channels (the weights as panel, the tile stored across channels) or along each output
    row's pixels (an im2col of the row as panel, packed per row, stored contiguously)."""
    channels = PackedShape(pixels, 64, 27, pixels, 1, output_stride=pixels * pixels)
    row = PackedShape(64, pixels, 27, pixels, pixels, True, True)
    return channels, row


def test_a_stem_whose_channels_alias_in_l1_is_vectorised_along_its_pixels():
    channels, row = _stem_plans(224)
    tile = Tile(6, 64)
    assert packed_cost(ZEN5, tile, row) < packed_cost(ZEN5, tile, channels)


def test_stores_that_do_not_alias_cost_what_they_did():
    channels, _ = _stem_plans(56)
    unknown = PackedShape(56, 64, 27, 56, 1)
    assert packed_cost(ZEN5, Tile(6, 64), channels) == packed_cost(ZEN5, Tile(6, 64), unknown)


def _deep_plans(weights_packed_per_run: int) -> tuple[PackedShape, PackedShape]:
    """conv1x1 of 2048 channels to 512 on 7 x 7 pixels (ResNet-50's last block): vectorised
    along the output channels (the weights as panel: packed at load time when they are
    constant, else at every run) or along the 49 pixels collapsed (the input as panel)."""
    channels = PackedShape(7, 512, 2048, 7, weights_packed_per_run, output_stride=49)
    pixels = PackedShape(512, 49, 2048, 1, 1, True, True)
    return channels, pixels


def test_weights_packed_at_load_time_cost_nothing_per_run():
    """Measured on Zen 5 (1 thread): along the channels 0.54-0.56 ms, along the pixels 0.59
    (onnxruntime 0.50); the model chose the pixels while it charged the channel plan for
    packing its constant weights at every run."""
    channels, pixels = _deep_plans(weights_packed_per_run=0)
    assert packed_cost(ZEN5, Tile(7, 48), channels) < packed_cost(ZEN5, Tile(6, 64), pixels)
    channels, pixels = _deep_plans(weights_packed_per_run=1)
    assert packed_cost(ZEN5, Tile(7, 48), channels) > packed_cost(ZEN5, Tile(6, 64), pixels)


def _deep_conv(constant_weights: bool):
    """conv1x1 2048x7x7 -> 512 at graph level, its weights a constant or an argument."""
    x_type, w_type = tensor_type((1, 2048, 7, 7)), tensor_type((512, 2048, 1, 1))
    block = Block(arg_types=[x_type] if constant_weights else [x_type, w_type])
    if constant_weights:
        weights = np.random.default_rng(0).standard_normal((512, 2048, 1, 1), np.float32)
        constant = graph.ConstantOp(dense_of(weights, w_type))
        block.add_op(constant)
        w = constant.result
    else:
        w = block.args[1]
    conv = graph.Conv2DOp(block.args[0], w, (1, 1), (0, 0, 0, 0), (1, 1), 1)
    block.add_ops([conv, func.ReturnOp(conv.result)])
    signature = ([arg.type for arg in block.args], [conv.result.type])
    return ModuleOp([func.FuncOp("main", signature, Region(block))])


def _panel_sources(module: ModuleOp) -> set[int]:
    """The kernel arguments copied into its packed panels (the input 0, the weights 1)."""
    (kernel,) = [op for op in module.ops if isinstance(op, FuncOp)]
    panels = {op.result for op in kernel.walk() if isinstance(op, AllocOp)}
    return {
        store.value.owner.memref.index
        for store in kernel.walk()
        if isinstance(store, memref.StoreOp)
        and store.memref in panels
        and isinstance(store.value.owner, memref.LoadOp)
        and isinstance(store.value.owner.memref, BlockArgument)
    }


@pytest.mark.parametrize("constant_weights", [True, False], ids=["constant", "argument"])
def test_the_plan_of_a_deep_layer_follows_where_its_weights_are_packed(
    constant_weights, monkeypatch
):
    """With constant weights (packed once, at load time) the 2048x7x7 -> 512 layer is
    vectorised along its output channels, the weights its panel; with weights passed at
    every run (packed at every run) along its 49 pixels, the input its panel. Before the
    prepacked panel was priced at no packing, both got the pixels."""
    monkeypatch.setattr(contraction_schedule, "host_model", lambda: ZEN5)
    module = _deep_conv(constant_weights)
    PassManager(f"{FUSION_PIPELINE},schedule-contractions").run(module)
    assert _panel_sources(module) == ({1} if constant_weights else {0})


ZEN3 = HostModel(vector_width=8, registers=16, l1_bytes=32 * 1024, l2_bytes=512 * 1024)
ZEN4 = HostModel(vector_width=16, registers=32, l1_bytes=32 * 1024, l2_bytes=1024 * 1024)


def _weights_panel(lines: int, steps_per_line: int = 1, broadcast_bytes: int = 0) -> PackedShape:
    """conv1x1 1024x14x14 -> 256 along its output channels (the weights as panel, packed at
    load time), its input pixels broadcast `lines` lines apart over the reduction."""
    return PackedShape(
        14, 256, 1024, 14, 0, output_stride=196, broadcast_lines=lines,
        broadcast_steps_per_line=steps_per_line, broadcast_bytes=broadcast_bytes,
    )  # fmt: skip


def test_strided_broadcasts_wait_once_their_lines_fill_l1():
    """A tile whose strided broadcasts read fewer lines than L1 holds waits for nothing; from
    as many as it holds, a cycle per line (from L2) per tile of the grid."""
    tile = Tile(3, 32)
    none = packed_cost(ZEN3, tile, _weights_panel(0))
    assert packed_cost(ZEN3, tile, _weights_panel(511)) == none
    tiles = (4 + 1) * (256 // 32) * 14  # 14 = 4 x 3 + 2 rows; 8 column tiles; 14 repeats
    lines = 1024
    assert packed_cost(ZEN3, tile, _weights_panel(lines)) == pytest.approx(none + tiles * lines)
    three_steps = packed_cost(ZEN3, tile, _weights_panel(lines, steps_per_line=3))
    assert three_steps == pytest.approx(none + tiles * lines / 3)


def test_a_tiles_broadcast_lines_count_the_span_of_its_rows():
    """480 runs of 5 steps (a 5x5 window over 96 channels), rows 2 elements apart: a tile of
    5 rows spans 13 elements per run, 1.75 lines on average (840); one row, 5 elements
    (1.25 lines: 600). Runs closer than a line (input rows of 8 elements) may share lines,
    and rows of no known stride are not spanned: one line per run, as the cost model
    counts them."""
    strided = StridedBroadcast(480, 5, 96 * 54 * 54 * 4, row_stride=2, run_pitch=54)
    assert strided.tile_lines(5) == 840
    assert strided.tile_lines(1) == 600
    assert strided._replace(run_pitch=8).tile_lines(5) == 480
    assert strided._replace(row_stride=None).tile_lines(5) == 480


def test_strided_broadcasts_from_beyond_l2_wait_longer():
    """The broadcasts' buffer and a column tile's panel over L2: the lines come from L3."""
    tile = Tile(3, 32)
    near = packed_cost(ZEN3, tile, _weights_panel(1024, broadcast_bytes=100 * 1024))
    far = packed_cost(ZEN3, tile, _weights_panel(1024, broadcast_bytes=802 * 1024))
    none = packed_cost(ZEN3, tile, _weights_panel(0))
    assert far - none == pytest.approx(FAR_BROADCAST_FACTOR * (near - none))


def test_avx512_hosts_charge_no_wait():
    """Measured at 0.9-1.2 of onnxruntime's speed with the weights' panels on Zen 4 and 5."""
    tile = Tile(6, 64)
    assert packed_cost(ZEN4, tile, _weights_panel(1024)) == packed_cost(
        ZEN4, tile, _weights_panel(0)
    )


def test_far_strided_broadcasts_choose_wide_tiles():
    """conv3x3 256x28x28 -> 256 stride 2 with its 196 output pixels as rows: its broadcasts
    come from beyond L2, and every column tile reads their lines again, so the tile is sized
    by the whole cost: 4 vectors wide, where the grid's cycles alone (`packed_tile`, its
    panel held to half of L2) take 3 (4 x 3, issued row by row; 5 x 2 before such tiles:
    3 x 4 measured 1.08-1.15x faster than that on a Zen 3)."""
    shape = PackedShape(
        196, 256, 2304, 1, 0, output_stride=196, broadcast_lines=768,
        broadcast_steps_per_line=3, broadcast_bytes=256 * 28 * 28 * 4,
    )  # fmt: skip
    assert packed_tile(ZEN3, 196, 256, steps=2304) == Tile(4, 24)
    assert broadcasts_beyond_l2(ZEN3, Tile(4, 24), shape)
    assert strided_broadcast_tile(ZEN3, shape) == Tile(3, 32)
    assert not broadcasts_beyond_l2(ZEN3, Tile(5, 16), _weights_panel(768, 3, 100 * 1024))


def _conv(channels: int, pixels: int, outputs: int, window: int) -> ModuleOp:
    """conv2d (same padding) of constant weights at graph level."""
    x_type = tensor_type((1, channels, pixels, pixels))
    w_type = tensor_type((outputs, channels, window, window))
    block = Block(arg_types=[x_type])
    weights = np.random.default_rng(0).standard_normal(w_type.get_shape(), np.float32)
    constant = graph.ConstantOp(dense_of(weights, w_type))
    pad = (window - 1) // 2
    conv = graph.Conv2DOp(block.args[0], constant.result, (1, 1), (pad,) * 4, (1, 1), 1)
    block.add_ops([constant, conv, func.ReturnOp(conv.result)])
    signature = ([x_type], [conv.result.type])
    return ModuleOp([func.FuncOp("main", signature, Region(block))])


@pytest.mark.parametrize(("host", "panel"), [(ZEN3, {0}), (ZEN4, {1})], ids=["avx2", "avx512"])
def test_a_long_reduction_over_strided_pixels_packs_the_pixels_on_avx2(host, panel, monkeypatch):
    """conv1x1 1024x14x14 -> 256: its weights' panel would broadcast input pixels a channel
    plane apart, 1024 lines a tile. On AVX2 the plan packs the collapsed pixels instead (the
    weights broadcast, contiguous: 1.15x faster on a Zen 3); on AVX-512 the weights stay the
    panel."""
    monkeypatch.setattr(contraction_schedule, "host_model", lambda: host)
    module = _conv(1024, 14, 256, 1)
    PassManager(f"{FUSION_PIPELINE},schedule-contractions").run(module)
    assert _panel_sources(module) == panel


@pytest.mark.parametrize(
    ("channels", "window", "expected"),
    [(1024, 1, (1024, 1, 1024 * 14 * 14 * 4)), (512, 3, (512 * 3, 3, 512 * 16 * 16 * 4))],
    ids=["1x1", "3x3"],
)
def test_the_weights_panel_broadcasts_strided_pixels(channels, window, expected):
    """A convolution's weights panel broadcasts input pixels a channel plane apart: a line
    per reduction step (1x1), or per row of a 3x3 window (its three steps along the row
    share a line), from the padded input; the collapsed pixels' panel broadcasts the
    weights, contiguous along the reduction."""
    module = _conv(channels, 14, 64, window)
    PassManager(FUSION_PIPELINE).run(module)
    (kernel,) = [op for op in module.ops if isinstance(op, FuncOp)]
    roots = [op for op in kernel.body.block.ops if isinstance(op, ForOp)]
    by_columns = {
        match.cols_extent: match.strided_broadcast
        for root in roots
        for match in packed_candidates(root)
    }
    assert by_columns[64][:3] == expected  # the output channels as columns: the weights panel
    assert by_columns[196] is None  # the collapsed pixels as columns
