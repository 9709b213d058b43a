"""schedule-contractions computes the same bits as the unscheduled kernels, natively, on every
convolution and matmul shape class: strides, padding, dilation, groups, depthwise, 1x1, the
7x7 stride-2 stem, matmul and batched matmul with remainders in both tile dimensions.

Each graph is compiled several ways: without any schedule (the reference), with the default
schedule (tile sizes from this host's model), and with fixed tiles and host facts
(`schedule-contractions{rows=3 cols=8 vector-width=4 registers=16}` after schedule-kernels'
other stages), so that remainders and padded column tiles are exercised whatever the host,
and with tiles of 6 rows, whose steps go row by row.
The outputs must be equal bit for bit: each accumulator receives the same FMAs in the same
order. The small planes (3 x 3, 7 x 7 pixels) collapse their pixel loops into one column
dimension (an im2col panel) under the fixed tiles or this host's; the stride-1 windows
(`conv3x3`, `conv3x3_short_rows`, `conv3x3_dilated`, `conv_rectangular_kernel`) collapse
theirs too and pack their im2col row by row of the plane, column tiles crossing rows. Which schedule a shape gets (packed panels or not) is checked by the lit tests.
"""

from __future__ import annotations

import numpy as np
import pytest

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.driver import FUSION_PIPELINE, compile_module

SCHEDULE_STAGES = "schedule-kernels{contractions=false}"
FIXED_TILES = (
    "schedule-kernels{contractions=false reorder=false unroll-reductions=0 unroll-jam=0 "
    "loop-kinds=false},schedule-contractions{rows=3 cols=8 vector-width=4 registers=16}"
)
ROW_BY_ROW_TILES = FIXED_TILES.replace("rows=3 cols=8", "rows=6 cols=8")
"""6 x 2 vectors of 4 lanes in 16 registers: each reduction step issued row by row
(`contraction_tiles.steps_by_rows`), a loop over the columns per row."""
PIPELINES = {
    "default": f"{FUSION_PIPELINE},schedule-kernels",
    "fixed-tiles": f"{FUSION_PIPELINE},{FIXED_TILES}",
    "row-by-row-tiles": f"{FUSION_PIPELINE},{ROW_BY_ROW_TILES}",
    "fixed-tiles-unpacked": f"{FUSION_PIPELINE},{FIXED_TILES}".replace(
        "registers=16}", "registers=16 packing=false}"
    ),
}


def _conv(x, w, o, strides=(1, 1), padding=(0, 0, 0, 0), dilation=(1, 1), groups=1, batch=1) -> str:
    """conv2d + bias + relu on `batch` inputs `x` (C, H, W) and a kernel `w` (KH, KW)."""
    (c, h, wd), (kh, kw) = x, w
    (sh, sw), (dh, dw), (t, left, b, r) = strides, dilation, padding
    oh = (h + t + b - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + left + r - dw * (kw - 1) - 1) // sw + 1
    xt, wt = f"tensor<{batch}x{c}x{h}x{wd}xf32>", f"tensor<{o}x{c // groups}x{kh}x{kw}xf32>"
    yt, bt = f"tensor<{batch}x{o}x{oh}x{ow}xf32>", f"tensor<1x{o}x1x1xf32>"
    attributes = (
        f"strides = array<i64: {sh}, {sw}>, padding = array<i64: {t}, {left}, {b}, {r}>, "
        f"dilation = array<i64: {dh}, {dw}>, groups = {groups} : i64"
    )
    return f"""
func.func @main(%x: {xt}, %w: {wt}, %b: {bt}) -> {yt} {{
  %c = graph.conv2d %x, %w {{{attributes}}} : ({xt}, {wt}) -> {yt}
  %a = graph.add %c, %b : ({yt}, {bt}) -> {yt}
  %r = graph.relu %a : {yt}
  func.return %r : {yt}
}}"""


def _matmul(a: tuple[int, ...], b: tuple[int, ...]) -> str:
    """matmul + bias (+ gelu, a long epilogue) of shapes `a` @ `b`."""
    out = (*a[:-1], b[-1])
    at, btype, ot = (f"tensor<{'x'.join(map(str, s))}xf32>" for s in (a, b, out))
    ct = f"tensor<{b[-1]}xf32>"
    return f"""
func.func @main(%a: {at}, %b: {btype}, %c: {ct}) -> {ot} {{
  %m = graph.matmul %a, %b : ({at}, {btype}) -> {ot}
  %s = graph.add %m, %c : ({ot}, {ct}) -> {ot}
  %g = graph.gelu %s : {ot}
  func.return %g : {ot}
}}"""


def _matvec_by_weight(k: int, n: int) -> str:
    """A classifier's layer at batch 1: x (1 x k) @ a constant weight (k x n) + bias, which
    normalize-kernels keeps a row loop for (`vector_product_rows`) and schedule-contractions
    tiles as one row over panels packed when the model is loaded."""
    rng = np.random.default_rng([k, n])
    weight = rng.uniform(-1.0, 1.0, (k, n)).astype(np.float32)
    xt, wt, ot, ct = (
        f"tensor<1x{k}xf32>",
        f"tensor<{k}x{n}xf32>",
        f"tensor<1x{n}xf32>",
        f"tensor<{n}xf32>",
    )
    return f"""
func.func @main(%a: {xt}, %c: {ct}) -> {ot} {{
  %w = graph.constant dense<"0x{weight.tobytes().hex().upper()}"> : {wt}
  %m = graph.matmul %a, %w : ({xt}, {wt}) -> {ot}
  %s = graph.add %m, %c : ({ot}, {ct}) -> {ot}
  func.return %s : {ot}
}}"""


def _conv_of_weights(x: tuple[int, int, int], o: int, window: int = 3, stride: int = 1) -> str:
    """conv2d (same padding) of a constant weight + relu: with the weights as panel (packed
    at load time), its output pixels are the rows of the register tiles, the plane's rows and
    pixels collapsed into one dimension where that is cheaper (`rows_outer`)."""
    (c, h, wd) = x
    pad = (window - 1) // 2
    oh, ow = ((size + 2 * pad - window) // stride + 1 for size in (h, wd))
    rng = np.random.default_rng([c, h, o, window, stride])
    weight = rng.uniform(-1.0, 1.0, (o, c, window, window)).astype(np.float32)
    xt = f"tensor<1x{c}x{h}x{wd}xf32>"
    wt = f"tensor<{o}x{c}x{window}x{window}xf32>"
    yt = f"tensor<1x{o}x{oh}x{ow}xf32>"
    attributes = (
        f"strides = array<i64: {stride}, {stride}>, padding = array<i64: {pad}, {pad}, {pad}, "
        f"{pad}>, dilation = array<i64: 1, 1>, groups = 1 : i64"
    )
    return f"""
func.func @main(%x: {xt}) -> {yt} {{
  %w = graph.constant dense<"0x{weight.tobytes().hex().upper()}"> : {wt}
  %c = graph.conv2d %x, %w {{{attributes}}} : ({xt}, {wt}) -> {yt}
  %r = graph.relu %c : {yt}
  func.return %r : {yt}
}}"""


GRAPHS = {
    "conv3x3": _conv((3, 9, 9), (3, 3), 20, padding=(1, 1, 1, 1)),
    "conv3x3_short_rows": _conv((16, 5, 5), (3, 3), 24, padding=(1, 1, 1, 1)),
    "conv3x3_strided_asymmetric_pad": _conv((4, 9, 10), (3, 3), 12, (2, 2), (1, 0, 1, 1)),
    "conv3x3_dilated": _conv((5, 11, 11), (3, 3), 9, dilation=(2, 2), padding=(2, 2, 2, 2)),
    "conv_grouped": _conv((8, 7, 7), (3, 3), 12, (2, 1), (1, 1, 1, 1), (1, 2), groups=4),
    "conv_depthwise": _conv((16, 8, 8), (3, 3), 16, padding=(1, 1, 1, 1), groups=16),
    "conv1x1": _conv((24, 6, 7), (1, 1), 40),
    "conv1x1_stride2": _conv((12, 9, 9), (1, 1), 17, strides=(2, 2)),
    "conv7x7_stem": _conv((3, 23, 23), (7, 7), 16, strides=(2, 2), padding=(3, 3, 3, 3)),
    "conv_rectangular_kernel": _conv((6, 8, 9), (1, 5), 10, padding=(0, 2, 0, 2)),
    "conv3x3_tiny_plane": _conv((6, 5, 5), (3, 3), 20, (2, 2), (1, 1, 1, 1)),
    "conv3x3_batched": _conv((5, 9, 8), (3, 3), 12, padding=(1, 1, 1, 1), batch=3),
    "conv3x3_grouped_batched": _conv(
        (8, 9, 8), (3, 3), 12, padding=(1, 1, 1, 1), groups=4, batch=3
    ),
    "conv1x1_deep_small_plane": _conv((32, 7, 7), (1, 1), 24),
    "conv3x3_weights_small_plane": _conv_of_weights((40, 7, 7), 24),
    "conv3x3_s2_weights_small_plane": _conv_of_weights((48, 13, 13), 32, stride=2),
    "conv5x5_weights_small_plane": _conv_of_weights((32, 7, 7), 48, window=5),
    "conv3x3_weights_rows_of_28": _conv_of_weights((64, 28, 28), 64),
    "conv3x3_weights_rows_of_14": _conv_of_weights((64, 14, 14), 96),
    "conv1x1_weights_deep_small_plane": _conv_of_weights((512, 7, 7), 64, window=1),
    "matmul_remainders": _matmul((37, 29), (29, 45)),
    "matmul_vector": _matmul((1, 33), (33, 21)),
    "matvec_by_weight": _matvec_by_weight(70, 45),
    "matvec_by_weight_wide": _matvec_by_weight(40, 150),  # (full tiles of 8 vectors, and a rest)
    "matmul_batched": _matmul((3, 17, 9), (3, 9, 21)),
    "matmul_narrow": _matmul((13, 40), (40, 3)),
}


def _run(text: str, name: str, pipeline: str | None, inputs: list[np.ndarray]):
    module = parse_source(make_context(), text, f"{name}.mlir")
    model = compile_module(module, pipeline or FUSION_PIPELINE, cache=False)
    return model.run("main", *inputs)


def _inputs(text: str, name: str) -> list[np.ndarray]:
    module = parse_source(make_context(), text, f"{name}.mlir")
    main = next(op for op in module.ops if op.sym_name.data == "main")
    rng = np.random.default_rng(7)
    return [
        rng.uniform(-1.0, 1.0, tuple(t.get_shape())).astype(np.float32)
        for t in main.function_type.inputs.data
    ]


@pytest.mark.parametrize("schedule", sorted(PIPELINES))
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_scheduled_contraction_is_bit_identical(name, schedule):
    text = GRAPHS[name]
    inputs = _inputs(text, name)
    (expected,) = _run(text, name, None, inputs)
    (actual,) = _run(text, name, PIPELINES[schedule], inputs)
    np.testing.assert_array_equal(actual, expected)


def test_a_matrix_vector_product_by_a_weight_is_register_tiled():
    from fusion_compiler.dialects.loop import REGISTER_TILED_ATTR
    from fusion_compiler.driver import PassManager

    module = parse_source(make_context(), GRAPHS["matvec_by_weight"], "matvec.mlir")
    PassManager(PIPELINES["default"]).run(module)
    kernels = {op.sym_name.data: op for op in module.ops if op.name == "loop.func"}
    assert any(REGISTER_TILED_ATTR in kernel.attributes for kernel in kernels.values())
    assert any(name.startswith("prepack") for name in kernels)  # W's panels, packed at load


def test_a_batched_convolution_is_register_tiled():
    """The padding of a batch of images is not fused into the convolution's batch loop
    (`loop_fusion`), a grouped convolution's included: the convolution stays a perfect nest,
    which schedule-contractions register-tiles (before, it kept naive loops: 4 x 192 x 28 x
    28, 64 filters, 5-8x as long)."""
    from fusion_compiler.dialects.loop import REGISTER_TILED_ATTR
    from fusion_compiler.driver import PassManager

    for name in ("conv3x3_batched", "conv3x3_grouped_batched"):
        module = parse_source(make_context(), GRAPHS[name], f"{name}.mlir")
        PassManager(PIPELINES["default"]).run(module)
        kernels = [op for op in module.ops if op.name == "loop.func"]
        assert [REGISTER_TILED_ATTR in kernel.attributes for kernel in kernels] == [True], name


SMALL_PLANES = {
    "conv3x3_weights_small_plane": _conv_of_weights((40, 7, 7), 32),
    "conv3x3_s2_weights_small_plane": GRAPHS["conv3x3_s2_weights_small_plane"],
    "conv5x5_weights_small_plane": _conv_of_weights((32, 7, 7), 32, window=5),
}
"""Convolutions to 4 vectors of channels on small planes (`test_a_small_plane_...`)."""


@pytest.mark.parametrize("name", sorted(SMALL_PLANES))
def test_a_small_plane_of_pixels_collapses_into_the_rows(name, monkeypatch):
    """conv3x3 40x7x7 -> 32 of constant weights on an AVX2 host model (8 lanes, 16
    registers): the weights are the panel and the 49 output pixels its rows, in register
    tiles crossing the plane's rows (7 rows of 7 in tiles of 3 rows would leave a tile of one
    row each: conv3x3 160x7x7 -> 224 ran 1.3x faster collapsed on a Zen 3); the same bits as
    unscheduled. Also of a stride-2 window and of a 5x5 one. (To 3 vectors of channels, a
    row of 7 takes tiles of 4 and 3 rows, issued row by row: no row is left alone.)"""
    chosen = _zen3_plans(monkeypatch)
    _check_scheduled_bits(SMALL_PLANES[name], name)
    assert (49, True) in [plan[:2] for plan in chosen]


def _zen3_plans(monkeypatch, packed_broadcasts: bool = False) -> list[tuple[int, bool, int, int]]:
    """Schedules on a Zen 3 host model from now on; the list it returns receives each plan
    `packed_plan` takes: (rows, collapsed, tile rows, tile columns), or with
    `packed_broadcasts`, (rows, whether it packs its broadcasts, tile rows, tile columns)."""
    from fusion_compiler.passes.schedule import contraction_schedule
    from fusion_compiler.passes.schedule.contraction_tiles import HostModel

    chosen = []
    plan = contraction_schedule.TileOptions.packed_plan

    def spy(self, root, tolerance=contraction_schedule.PLAN_TOLERANCE):
        found = plan(self, root, tolerance)
        if found:
            match, tile = found
            flag = match.packs_broadcasts if packed_broadcasts else match.rows_outer is not None
            chosen.append((match.rows_extent, flag, tile.rows, tile.cols))
        return found

    zen3 = HostModel(vector_width=8, registers=16, l1_bytes=32 * 1024, l2_bytes=512 * 1024)
    monkeypatch.setattr(contraction_schedule, "host_model", lambda: zen3)
    monkeypatch.setattr(contraction_schedule.TileOptions, "packed_plan", spy)
    return chosen


def _check_scheduled_bits(text: str, name: str) -> None:
    """The default pipeline's build of `text` gives the unscheduled kernels' bits."""
    inputs = _inputs(text, name)
    (expected,) = _run(text, name, None, inputs)
    (actual,) = _run(text, name, PIPELINES["default"], inputs)
    np.testing.assert_array_equal(actual, expected)


def _plans_with_and_without_the_slack_rule(monkeypatch, name: str):
    """The plans `packed_plan` takes for `GRAPHS[name]` on a Zen 3 host model (`_zen3_plans`),
    with its latency-slack rule and with the rule patched away; both builds give the
    unscheduled kernels' bits."""
    from fusion_compiler.passes.schedule import contraction_schedule

    chosen = _zen3_plans(monkeypatch)
    _check_scheduled_bits(GRAPHS[name], name)
    ruled = list(chosen)
    chosen.clear()
    monkeypatch.setattr(contraction_schedule, "_exposed", lambda host, plan: False)
    _check_scheduled_bits(GRAPHS[name], name)
    return ruled, chosen


def test_a_tile_with_latency_slack_wins_a_tie_of_rows(monkeypatch):
    """conv3x3 64x28x28 -> 64 of constant weights on an AVX2 host model: a row of 28 pixels
    in 4 x 2-vector tiles (8 accumulators, as many as the FMAs in flight: no slack) and the
    784 pixels collapsed in 3 x 4-vector tiles cost the same by the model; the collapsed
    plan, whose tile has slack, is taken (1.02-1.09x faster on a Zen 3's 28 x 28 layers);
    without the rule, the row's plan, the cheaper by a fraction of a percent. Among tiles of
    the usual order of steps: with tiles issued row by row the row's plan takes 4 x 3
    vectors, which have slack (as fast, measured)."""
    from fusion_compiler.passes.schedule import contraction_pack_schedule, contraction_tiles

    for module in (contraction_tiles, contraction_pack_schedule):
        monkeypatch.setattr(module, "steps_by_rows", lambda rows, vectors, registers: False)
    ruled, unruled = _plans_with_and_without_the_slack_rule(
        monkeypatch, "conv3x3_weights_rows_of_28"
    )
    assert ruled == [(784, True, 3, 32)]
    assert unruled == [(28, False, 4, 16)]


def test_a_plan_whose_remainder_tile_has_no_slack_gives_way(monkeypatch):
    """conv3x3 64x14x14 -> 96 of constant weights on an AVX2 host model: a row of 14 pixels in
    3 x 4-vector tiles leaves a tile of 2 rows (8 accumulators: no latency slack) for a
    seventh of the rows (`contraction_schedule.EXPOSED_SHARE`); the 196 pixels collapsed, in
    4 x 3-vector tiles (issued row by row), cost as much by the model and are taken (1.04x
    faster on a Zen 3); without the rule, the row's plan."""
    ruled, unruled = _plans_with_and_without_the_slack_rule(
        monkeypatch, "conv3x3_weights_rows_of_14"
    )
    assert ruled == [(196, True, 4, 24)]
    assert unruled == [(14, False, 3, 32)]


@pytest.mark.parametrize(
    ("l2_kib", "block"),
    [(1024, None), (256, None), (128, 20), (40, 14), (16, 5)],  # 40 channels: 1, 1, 2, 3, 8 blocks
)
def test_a_reduction_whose_panel_outgrows_l2_is_blocked(l2_kib, block, monkeypatch):
    """conv3x3 40x7x7 -> 24 of constant weights on AVX2 host models of 4 KiB of L1 (a tile's
    120 broadcast lines overflow it) and shrinking L2: the panel of a column tile (360 steps
    x 16 or 24 columns) past a quarter of L2 splits the input channels in blocks of that
    share (`reduction_block`), the row tiles run over each in turn with the partial sums kept
    in the output (first block, a loop over the middle ones, last block); the same bits as
    unscheduled."""
    from fusion_compiler.passes.schedule import contraction_schedule
    from fusion_compiler.passes.schedule.contraction_tiles import HostModel

    blocks = []
    choose = contraction_schedule.reduction_block

    def spy(host, match, tile):
        blocks.append(choose(host, match, tile))
        return blocks[-1]

    host = HostModel(vector_width=8, registers=16, l1_bytes=4 * 1024, l2_bytes=l2_kib * 1024)
    monkeypatch.setattr(contraction_schedule, "host_model", lambda: host)
    monkeypatch.setattr(contraction_schedule, "reduction_block", spy)
    name = "conv3x3_weights_small_plane"
    text = GRAPHS[name]
    inputs = _inputs(text, name)
    (expected,) = _run(text, name, None, inputs)
    (actual,) = _run(text, name, PIPELINES["default"], inputs)
    assert blocks == [block]
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize(("l1_bytes", "block"), [(4608, None), (3072, 2)])
def test_the_lines_a_tiles_rows_span_decide_the_blocking(l1_bytes, block, monkeypatch):
    """conv5x5 8x20x20 -> 16 stride 2 of constant weights on AVX2 host models of 16 KiB of
    L2: the weights are the panel, a row of 10 output pixels the rows, in 5 x 2-vector
    tiles. Each of the 40 runs of 5 steps (`c`, `kh`) of a tile reads 5 rows 2 apart under a
    5-wide window, 13 elements: 1.75 lines on average, 70 in all
    (`StridedBroadcast.tile_lines`). With 48 lines of L1 they overflow it, which one line per
    run (40) would not, and the panel (200 steps x 16 columns, past a quarter of L2) is read
    in blocks of 2 channels; with 72 lines, one block. The same bits as unscheduled either
    way. (zfnet512's conv5x5 96x54x54 -> 256 stride 2 ran 1.06-1.09x faster blocked on a
    Zen 3.)"""
    from fusion_compiler.passes.schedule import contraction_schedule
    from fusion_compiler.passes.schedule.contraction_tiles import HostModel

    blocks = []
    choose = contraction_schedule.reduction_block

    def spy(host, match, tile):
        blocks.append((choose(host, match, tile), match.strided_broadcast.tile_lines(tile.rows)))
        return blocks[-1][0]

    host = HostModel(vector_width=8, registers=16, l1_bytes=l1_bytes, l2_bytes=16 * 1024)
    monkeypatch.setattr(contraction_schedule, "host_model", lambda: host)
    monkeypatch.setattr(contraction_schedule, "reduction_block", spy)
    name = "conv5x5_s2_weights_rows"
    text = _conv_of_weights((8, 20, 20), 16, window=5, stride=2)
    inputs = _inputs(text, name)
    (expected,) = _run(text, name, None, inputs)
    (actual,) = _run(text, name, PIPELINES["default"], inputs)
    assert blocks == [(block, 70)]
    np.testing.assert_array_equal(actual, expected)


def test_the_strided_broadcasts_of_a_deep_small_plane_are_packed(monkeypatch):
    """conv1x1 512x7x7 -> 64 of constant weights on a Zen 3 host model: the weights are the
    panel and the 49 pixels the rows, whose broadcasts read a new line of the input at each
    of the 512 steps (more lines than L1 holds). They are packed once per launch, the rows of
    each full tile side by side per step (`PackedContraction.packs_broadcasts`); the 4 rows
    of the remainder tile read the input as before. The same bits as unscheduled. (Zen 3, 1
    thread: the 1x1 layers of 512-1024 channels on 7 x 7 pixels ran 1.02-1.10x faster in the
    second of two paired runs.)"""
    chosen = _zen3_plans(monkeypatch, packed_broadcasts=True)
    name = "conv1x1_weights_deep_small_plane"
    _check_scheduled_bits(GRAPHS[name], name)
    assert chosen == [(49, True, 5, 16)]


MASKED_PANEL_TILES = (
    "schedule-kernels{inline=true inline-into-reductions=true prepack=false "
    "contraction-rows=2 contraction-cols=1}"
)
"""A padding inlined into the reduction as masks, the input packed as the panel
(`bench/fuzz.py onnx-graphs` seed 93176 drew these options)."""


@pytest.mark.parametrize(
    "name", ["conv_stride2_masked", "conv3x3_strided_asymmetric_pad", "conv3x3_dilated"]
)
def test_masks_inlined_into_a_packed_reduction_keep_their_subscripts(name):
    """The masks test subscripts the panel's load computes too: the tile's update recomputes
    them with every op they come from (the clone read a value of the packing loop, and the
    kernel did not verify)."""
    text = (
        _conv((2, 7, 9), (1, 2), 6, strides=(2, 2), padding=(2, 1, 0, 1))
        if name == "conv_stride2_masked"
        else GRAPHS[name]
    )
    inputs = _inputs(text, name)
    (expected,) = _run(text, name, None, inputs)
    (actual,) = _run(text, name, f"{FUSION_PIPELINE},{MASKED_PANEL_TILES}", inputs)
    np.testing.assert_array_equal(actual, expected)
