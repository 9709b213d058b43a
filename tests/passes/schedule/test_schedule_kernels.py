"""`schedule-kernels` is a pipeline of stage passes: which stages its options choose, in which
order, each registered under its own name; the driver expands it so each stage is verified
and timed on its own, and running it as one pass (`xdsl-opt`) gives the same IR."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusion_compiler.driver import PASSES, PassManager, parse_file, parse_pipeline
from fusion_compiler.errors import PassOptionError
from fusion_compiler.instruments import PassTimer
from fusion_compiler.passes.pipeline_pass import PipelinePass
from fusion_compiler.passes.schedule.clean_up_kernels import CleanUpKernelsPass
from fusion_compiler.passes.schedule.compute_inline import ComputeInlinePass
from fusion_compiler.passes.schedule.contraction_schedule import ScheduleContractionsPass
from fusion_compiler.passes.schedule.fuse_loops import FuseLoopsPass
from fusion_compiler.passes.schedule.reorder_reductions import ReorderReductionsPass
from fusion_compiler.passes.schedule.schedule_kernels import ScheduleKernelsPass
from fusion_compiler.passes.schedule.unroll_jam_reductions import UnrollJamReductionsPass
from fusion_compiler.passes.schedule.unroll_reductions import UnrollReductionsPass

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

DEFAULT_STAGES = [
    "normalize-kernels",
    "compute-inline",
    "reuse-outputs",
    "fuse-loops",
    "clean-up-kernels",
    "schedule-contractions",
    "clean-up-kernels",
    "prepack-weights",
    "reorder-reductions",
    "unroll-reductions",
    "unroll-jam-reductions",
    "split-index-sets",
    "deinterleave-buffers",
    "tile-transposes",
    "clean-up-kernels",
    "balance-max-chains",
    "collapse-nests",
    "mark-loop-kinds",
    "overlap-vector-tails",
    "fold-buffers",
    "align-buffer-rows",
    "prefetch-epilogues",
]


def test_the_default_stages_in_order():
    assert [p.name for p in parse_pipeline("schedule-kernels")] == DEFAULT_STAGES
    assert [p.name for p in ScheduleKernelsPass().stages()] == DEFAULT_STAGES


def test_every_stage_is_registered_under_its_name():
    for stage in ScheduleKernelsPass().stages():
        assert PASSES[stage.name]() is type(stage)
        assert not isinstance(stage, PipelinePass)


def test_options_choose_and_configure_the_stages():
    stages = parse_pipeline(
        "schedule-kernels{inline-into-reductions=true contraction-rows=4 contraction-cols=16 "
        "tile=16 unroll-reductions=3 unroll-jam=4}"
    )
    assert ComputeInlinePass(into_reductions=True) in stages
    assert ScheduleContractionsPass(rows=4, cols=16) in stages
    assert ReorderReductionsPass(tile=16) in stages
    assert UnrollReductionsPass(max_steps=3, refuse=True) in stages
    assert UnrollJamReductionsPass(max_copies=4) in stages


def test_switched_off_stages_are_left_out():
    names = [
        p.name
        for p in parse_pipeline(
            "schedule-kernels{inline=false reuse-outputs=false contractions=false "
            "reorder=false unroll-reductions=1 unroll-jam=0 split-index-sets=false "
            "deinterleave=false balance-max-chains=false collapse=false loop-kinds=false fold-buffers=false "
            "align-rows=false tile-transposes=false}"
        )
    ]
    assert names == ["normalize-kernels", "fuse-loops", "clean-up-kernels", "clean-up-kernels"]


@pytest.mark.parametrize(
    "option, stage",
    [
        ("overlap-tails", "overlap-vector-tails"),  # vector tails left scalar
        ("collapse", "collapse-nests"),  # nests left uncollapsed
        ("deinterleave", "deinterleave-buffers"),  # strided buffers left interleaved
        ("align-rows", "align-buffer-rows"),  # short rows left unaligned
        ("prefetch", "prefetch-epilogues"),  # epilogue operands left unprefetched
        ("tile-transposes", "tile-transposes"),  # transposes left untiled
        ("balance-max-chains", "balance-max-chains"),  # max chains left chains
    ],
)
def test_an_option_switches_its_stage_off(option, stage):
    names = [p.name for p in parse_pipeline(f"schedule-kernels{{{option}=false}}")]
    assert names == [name for name in DEFAULT_STAGES if name != stage]


def test_without_prepacking_weights_are_packed_at_every_launch():
    stages = parse_pipeline("schedule-kernels{prepack=false}")
    assert "prepack-weights" not in [p.name for p in stages]
    assert ScheduleContractionsPass(weights=False) in stages


def test_without_fusion_nothing_fuses_and_no_store_is_forwarded():
    stages = parse_pipeline("schedule-kernels{fuse=false}")
    assert FuseLoopsPass() not in stages
    assert UnrollReductionsPass(refuse=False) in stages
    assert CleanUpKernelsPass(forward_stores=True) not in stages


@pytest.mark.parametrize(
    "pipeline",
    [
        "schedule-kernels{unroll-jam=-1}",
        "unroll-jam-reductions{max-copies=-1}",
        "unroll-reductions{max-steps=-2}",
        "reorder-reductions{tile=-4}",
    ],
)
def test_bad_options_are_user_errors(pipeline):
    with pytest.raises(PassOptionError, match="must be >= 0"):
        parse_pipeline(pipeline)


@pytest.mark.parametrize("example", ["ffn", "conv_block", "layer_norm_spelled"])
def test_one_pass_or_its_stages_give_the_same_kernels(example):
    fused = parse_file(EXAMPLES / f"{example}.mlir")
    PassManager("legalize-ops,annotate-pattern,fuse-ops,fuse-tir").run(fused)
    staged, whole = fused.clone(), fused.clone()
    timer = PassTimer()
    PassManager("schedule-kernels", instruments=[timer]).run(staged)
    ScheduleKernelsPass().apply(PassManager([]).ctx, whole)
    assert str(staged) == str(whole)
    assert [name for name, _ in timer.timings] == DEFAULT_STAGES
