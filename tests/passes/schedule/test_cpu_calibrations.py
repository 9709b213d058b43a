"""The tile model's costs measured on a CPU (`contraction_tiles.CPU_CALIBRATIONS`): Zen 4's
far window im2col and missed scattered stores, which decide its large 3x3 convolutions, and
its one 512-bit FMA a cycle."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Region

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.graph.base import tensor_type
from fusion_compiler.driver import FUSION_PIPELINE, PassManager
from fusion_compiler.errors import PassOptionError
from fusion_compiler.lowering.jit import TARGET_CPU_VARIABLE, TARGET_FEATURES_VARIABLE
from fusion_compiler.passes.fold_constants.elements import dense_of
from fusion_compiler.passes.schedule import contraction_schedule
from fusion_compiler.passes.schedule.contraction_tiles import (
    CONTIGUOUS_PACK_CYCLES,
    CPU_CALIBRATIONS,
    HostCosts,
    HostModel,
    PackedShape,
    Tile,
    host_model,
    packed_cost,
    step_cycles,
)

ZEN4 = HostModel(vector_width=16, registers=32, l1_bytes=32 * 1024, l2_bytes=1024 * 1024)
ZEN4_COSTS = CPU_CALIBRATIONS["znver4"]
CALIBRATED_ZEN4 = replace(ZEN4, costs=ZEN4_COSTS)
AVX2_FEATURES = "+avx,+avx2,+fma,-avx512f,-avx512bw,-avx512vl,-avx512dq,-avx512cd"


def _im2col(source_bytes: int) -> PackedShape:
    """conv3x3 64x224x224 -> 64 along its 50,176 pixels collapsed: its im2col packed once."""
    return PackedShape(64, 50176, 576, 1, 1, True, True, window_source_bytes=source_bytes)


def test_a_window_packed_from_beyond_l2_costs_the_host_figure():
    padded_input = 64 * 226 * 226 * 4
    far, near = _im2col(padded_input), _im2col(512 * 1024)
    tile = Tile(6, 64)
    extra = 576 * 50176 * (ZEN4_COSTS.far_window_pack_cycles - CONTIGUOUS_PACK_CYCLES)
    uncharged = replace(ZEN4, costs=replace(ZEN4_COSTS, far_window_pack_cycles=0.0))
    assert packed_cost(CALIBRATED_ZEN4, tile, far) == packed_cost(uncharged, tile, far) + extra
    assert packed_cost(CALIBRATED_ZEN4, tile, near) == packed_cost(uncharged, tile, near)


def _conv(channels: int, pixels: int, outputs: int, window: int = 3) -> ModuleOp:
    """conv `window` x `window` (same padding) of `channels` to `outputs` on `pixels` x
    `pixels`, its weights a constant (packed at load time when they are the panel)."""
    x_type = tensor_type((1, channels, pixels, pixels))
    w_type = tensor_type((outputs, channels, window, window))
    block = Block(arg_types=[x_type])
    weights = np.random.default_rng(0).standard_normal(w_type.get_shape(), np.float32)
    constant = graph.ConstantOp(dense_of(weights, w_type))
    pads = ((window - 1) // 2,) * 4
    conv = graph.Conv2DOp(block.args[0], constant.result, (1, 1), pads, (1, 1), 1)
    block.add_ops([constant, conv, func.ReturnOp(conv.result)])
    signature = ([x_type], [conv.result.type])
    return ModuleOp([func.FuncOp("main", signature, Region(block))])


def _panel_of_plan(monkeypatch, host: HostModel, module: ModuleOp, options: str = "") -> str:
    """Which operand the packed plan of `module`'s convolution packs on `host` (with
    schedule-contractions' `options`)."""
    chosen: list[str] = []
    plan = contraction_schedule.TileOptions.packed_plan

    def spy(self, root, *args, **kwargs):
        result = plan(self, root, *args, **kwargs)
        if result is not None:
            panel = result[0].panel.memref
            weights = isinstance(panel, BlockArgument) and panel.index == 1
            chosen.append("weights" if weights else "input")
        return result

    monkeypatch.setattr(contraction_schedule, "host_model", lambda: host)
    monkeypatch.setattr(contraction_schedule.TileOptions, "packed_plan", spy)
    PassManager(f"{FUSION_PIPELINE},schedule-contractions{{{options}}}").run(module)
    (panel,) = chosen
    return panel


def test_a_zen4_vectorises_vgg19s_first_large_layer_along_its_channels(monkeypatch):
    """conv3x3 64x224x224 -> 64 on a Zen 4 (1 thread): its im2col (13 MB of input, packed by
    rows) 39.5-40.6 ms, its weights' plan 35.4-35.9 ms (onnxruntime 36.5-37.0). Without the
    calibration the model took the im2col."""
    assert _panel_of_plan(monkeypatch, CALIBRATED_ZEN4, _conv(64, 224, 64)) == "weights"
    assert _panel_of_plan(monkeypatch, ZEN4, _conv(64, 224, 64)) == "input"


def test_a_window_within_l2_keeps_its_im2col(monkeypatch):
    """16 channels on 55 x 55 pixels to 64 (squeezenet; 0.2 MB of input, within a Zen 4's
    L2): the im2col, as without the calibration."""
    assert _panel_of_plan(monkeypatch, CALIBRATED_ZEN4, _conv(16, 55, 64)) == "input"
    assert _panel_of_plan(monkeypatch, ZEN4, _conv(16, 55, 64)) == "input"


def test_one_fma_a_cycle_weighs_a_tiles_loads_less(monkeypatch):
    """A Zen 4 issues one 512-bit FMA a cycle: a 5 x 4-vector tile's step is its 20 FMAs,
    not 10, beside its 4.5 cycles of loads, and conv1x1 384x13x13 -> 48 (inception_v1) is
    vectorised along its 48 output channels (1.10-1.14x faster there) rather than along its
    169 pixels."""
    assert step_cycles(5, 4) == 10 and step_cycles(5, 4, fma_units=1) == 20
    assert ZEN4_COSTS.fma_units == 1
    assert _panel_of_plan(monkeypatch, CALIBRATED_ZEN4, _conv(384, 13, 48, 1)) == "weights"
    assert _panel_of_plan(monkeypatch, ZEN4, _conv(384, 13, 48, 1)) == "input"


def test_the_host_model_takes_the_calibration_of_the_cpu_compiled_for(monkeypatch):
    """By LLVM's name of the CPU (`FUSION_TARGET_CPU` here, with features any x86-64 host of
    this project has): whatever the vector width, the costs are the CPU's."""
    monkeypatch.setenv(TARGET_FEATURES_VARIABLE, AVX2_FEATURES)
    monkeypatch.setenv(TARGET_CPU_VARIABLE, "znver4")
    assert host_model().costs == ZEN4_COSTS
    assert host_model().costs.fma_units == 1
    monkeypatch.setenv(TARGET_CPU_VARIABLE, "znver3")
    assert host_model().costs == HostCosts() == HostModel(8, 16).costs


def test_the_costs_option_names_the_cpu_whose_costs_the_model_takes(monkeypatch):
    """`costs=default` takes none (a fixed host model for tests, whatever the machine);
    `costs=znver4` takes Zen 4's on any host; another name is refused."""
    module = _conv(64, 224, 64)
    assert _panel_of_plan(monkeypatch, CALIBRATED_ZEN4, module, "costs=default") == "input"
    module = _conv(64, 224, 64)
    assert _panel_of_plan(monkeypatch, ZEN4, module, "costs=znver4") == "weights"
    with pytest.raises(PassOptionError, match="option 'costs' must be one of default, znver4"):
        PassManager("schedule-contractions{costs=zen9}")
