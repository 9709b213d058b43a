"""Every pass of the project by its command-line name (imported lazily, like xDSL's registry)."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass


def _legalize_ops() -> type[ModulePass]:
    from fusion_compiler.passes.legalize_ops import LegalizeOpsPass

    return LegalizeOpsPass


def _annotate_pattern() -> type[ModulePass]:
    from fusion_compiler.passes.annotate_pattern import AnnotatePatternPass

    return AnnotatePatternPass


def _fuse_ops() -> type[ModulePass]:
    from fusion_compiler.passes.fuse_ops import FuseOpsPass

    return FuseOpsPass


def _fuse_tir() -> type[ModulePass]:
    from fusion_compiler.passes.fuse_tir import FuseTIRPass

    return FuseTIRPass


def _schedule_kernels() -> type[ModulePass]:
    from fusion_compiler.passes.schedule.schedule_kernels import ScheduleKernelsPass

    return ScheduleKernelsPass


def _schedule_contractions() -> type[ModulePass]:
    from fusion_compiler.passes.schedule.contraction_schedule import ScheduleContractionsPass

    return ScheduleContractionsPass


def _lower_graph() -> type[ModulePass]:
    from fusion_compiler.lowering.lower_graph import LowerGraphPass

    return LowerGraphPass


def _convert_loop_to_llvm() -> type[ModulePass]:
    from fusion_compiler.lowering.convert_loop_to_llvm import ConvertLoopToLLVMPass

    return ConvertLoopToLLVMPass


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "legalize-ops": _legalize_ops,
    "annotate-pattern": _annotate_pattern,
    "fuse-ops": _fuse_ops,
    "fuse-tir": _fuse_tir,
    "schedule-kernels": _schedule_kernels,
    "schedule-contractions": _schedule_contractions,
    "lower-graph": _lower_graph,
    "convert-loop-to-llvm": _convert_loop_to_llvm,
}
"""The project's passes in pipeline order; each factory imports its pass on first use."""


def available_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """The project's passes, then xDSL's own (a project pass wins a name clash)."""
    from xdsl.universe import Universe

    passes = dict(Universe.get_multiverse().all_passes)
    passes.update(PASSES)
    return passes
