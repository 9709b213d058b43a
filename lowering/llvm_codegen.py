"""From an `llvm` dialect module to object code for one CPU: LLVM IR, O3, machine code.

`compile_unit(module)`:

    LLVM IR text (`llvm_text.module_text`), with: 512-bit vectors for functions with math
    expansions (`widen_vectors`), `vectorized` loops forced to vector code, `fusion.rolled`
    ones kept rolled and `fusion.scalar` ones scalar (`vector_loops`), the team size declared,
    not defined (`threading_runtime.RUNTIME_GLOBALS`)
    →  llvmlite.binding.parse_assembly  →  verify
    →  triple and data layout of a TargetMachine for the target (`jit.CodegenTarget.host`)
    →  new pass manager, PipelineTuningOptions(speed_level=3)  →  object code

The result is a `jit.NativeUnit`; `jit.JitModule` links any number of them into one engine.
Each call makes its own target machine; units compiled apart (in other processes:
`native_units`) link together.
"""

from __future__ import annotations

import time
from typing import Any

import llvmlite.binding as llvm
from xdsl.dialects import llvm as llvm_dialect
from xdsl.dialects.builtin import ModuleOp

from fusion_compiler.dialects.loop.attributes import WIDE_VECTORS_ATTR
from fusion_compiler.lowering.jit import (
    CodegenTarget,
    JitModule,
    KernelSignature,
    NativeUnit,
    host_target_machine,
    kernel_signatures,
)
from fusion_compiler.lowering.kept_buffers import declares_buffer_keeper, link_buffer_keeper
from fusion_compiler.lowering.llvm_text import module_text, unit_template
from fusion_compiler.lowering.math_to_llvm import EXPANDED_MATH_ATTR
from fusion_compiler.lowering.threading_runtime import (
    RUNTIME_GLOBALS,
    link_serial_runtime,
    openmp_available,
    uses_openmp,
)
from fusion_compiler.lowering.unit_template import UnitTemplate
from fusion_compiler.lowering.vector_loops import (
    apply_loop_hints,
    force_vector_loops,
    vector_lanes,
)


def optimize(module: llvm.ModuleRef, target_machine: llvm.TargetMachine) -> None:
    """Runs LLVM's O3 pipeline (new pass manager) on `module` for `target_machine`."""
    tuning = llvm.create_pipeline_tuning_options(speed_level=3)
    builder = llvm.create_pass_builder(target_machine, tuning)
    builder.getModulePassManager().run(module, builder)


WIDE_VECTOR_ATTRIBUTES = ('"prefer-vector-width"="512"', "noinline")
"""LLVM function attributes of `widen_vectors`. The loop vectoriser reads the preference of
the function that holds the loop after inlining, so the function is kept out of its callers
(an outlined parallel body out of its trampoline; a kernel out of the entry function)."""


def _is_wide(op: llvm_dialect.FuncOp, target: CodegenTarget) -> bool:
    """Whether `op` is to be vectorised 512 bits wide on `target`: it holds an f32 expansion,
    or its schedule asks for the full vector width (`WIDE_VECTORS_ATTR`: register tiles sized
    for it, or stride-2 vector loops whose shuffles it halves)."""
    return target.has_avx512 and (
        EXPANDED_MATH_ATTR in op.attributes or WIDE_VECTORS_ATTR in op.attributes
    )


def widen_vectors(module: ModuleOp, target: CodegenTarget) -> dict[str, tuple[str, ...]]:
    """On AVX-512 targets, the function attributes (`WIDE_VECTOR_ATTRIBUTES`) that let LLVM
    vectorise the functions holding an f32 expansion (`EXPANDED_MATH_ATTR`) or full-width
    register tiles (`WIDE_VECTORS_ATTR`) 512 bits wide, by function name.

    LLVM's tuning for AVX-512 CPUs prefers 256-bit vectors, and every other function keeps
    that: code bound by memory or by reductions gains nothing from wider vectors (layer_norm
    is 12% slower with them). Expansions are long chains of float arithmetic per element,
    which 512-bit vectors run at up to twice the rate. Measured single-threaded, with the
    same code otherwise: relu(tanh(a * b + c)) on 1024x1024 takes 0.65 ms rather than
    0.78 ms (as long as with tanh replaced by the identity: memory-bound), softmax 10-15% and
    the encoder block 11-19% less, the matmul + gelu kernel mostly 10% less (varying between
    processes). Per element, the results are the same whatever the vector width (nothing is
    reassociated).
    """
    return {
        op.sym_name.data: WIDE_VECTOR_ATTRIBUTES
        for op in module.ops
        if isinstance(op, llvm_dialect.FuncOp) and _is_wide(op, target)
    }


def _vector_lanes_by_function(module: ModuleOp, target: CodegenTarget) -> dict[str, int]:
    """The lane count forced on the `vectorized` loops of each function (`vector_loops`)."""
    return {
        op.sym_name.data: vector_lanes(target.features, wide=_is_wide(op, target))
        for op in module.ops
        if isinstance(op, llvm_dialect.FuncOp)
    }


def _check_lowered(module: ModuleOp) -> None:
    for op in module.ops:
        if not isinstance(op, llvm_dialect.FuncOp | llvm_dialect.GlobalOp):
            raise ValueError(
                f"compile_llvm_module: '{op.name}' is not in the llvm dialect "
                "(run convert-loop-to-llvm first)"
            )


StageTimings = list[tuple[str, float]]
"""(stage, seconds) pairs, appended in order (`PassTimer.timings` has the same form)."""


def merged_timings(timings: StageTimings) -> StageTimings:
    """`timings` with the seconds of each stage summed, in the order stages first appear."""
    totals: dict[str, float] = {}
    for stage, seconds in timings:
        totals[stage] = totals.get(stage, 0.0) + seconds
    return list(totals.items())


def _text_options(
    module: ModuleOp, target: CodegenTarget, target_machine: llvm.TargetMachine
) -> dict[str, Any]:
    """What `module_text` and `unit_template` print a unit with for `target`: the triple,
    data layout, loop metadata (`vector_loops`), function attributes and runtime globals."""
    _check_lowered(module)
    loops = force_vector_loops(
        module,
        _vector_lanes_by_function(module, target),
        vector_lanes(target.features),
        mask_registers=target.has_avx512,
    )
    return {
        "triple": target_machine.triple,
        "data_layout": str(target_machine.target_data),
        "loop_properties": loops | apply_loop_hints(module),
        "function_attributes": widen_vectors(module, target),
        "declared_globals": RUNTIME_GLOBALS,
    }


def llvm_ir_text(
    module: ModuleOp, target: CodegenTarget, target_machine: llvm.TargetMachine
) -> str:
    """An `llvm` dialect module as the LLVM IR text LLVM is given for `target`."""
    return module_text(module, **_text_options(module, target, target_machine))


def llvm_ir_template(
    module: ModuleOp, target: CodegenTarget, target_machine: llvm.TargetMachine
) -> UnitTemplate:
    """`llvm_ir_text` as a template (`unit_template`), for a kernel that may join a family."""
    return unit_template(module, **_text_options(module, target, target_machine))


def optimized_text(
    text: str, target_machine: llvm.TargetMachine, timings: StageTimings | None = None
) -> llvm.ModuleRef:
    """LLVM IR text parsed, verified and optimised at O3 for `target_machine`; appends the
    seconds of parsing and optimisation to `timings` when given."""
    clock = _StageClock(timings)
    llvm_module = llvm.parse_assembly(text)
    if uses_openmp(llvm_module) and not openmp_available():
        link_serial_runtime(llvm_module)
    if declares_buffer_keeper(llvm_module):
        link_buffer_keeper(llvm_module)
    llvm_module.verify()
    llvm_module.triple = target_machine.triple
    llvm_module.data_layout = str(target_machine.target_data)
    clock.lap("llvm-translate")
    optimize(llvm_module, target_machine)
    clock.lap("llvm-optimize")
    return llvm_module


def optimized_llvm_module(
    module: ModuleOp,
    target: CodegenTarget,
    target_machine: llvm.TargetMachine,
    timings: StageTimings | None = None,
) -> llvm.ModuleRef:
    """Translates an `llvm` dialect module to LLVM, forces its `vectorized` loops to vector
    code (`vector_loops`) and optimises it at O3 for `target` (whose machine is given);
    appends the seconds of translation and optimisation to `timings` when given."""
    clock = _StageClock(timings)
    text = llvm_ir_text(module, target, target_machine)
    clock.lap("llvm-translate")
    return optimized_text(text, target_machine, timings)


ENTRY_CODEGEN_LEVEL = 1
"""The code generator's optimisation level for a unit of entry functions (sequences of kernel
launches, one basic block each): level 2 and up reschedule a block of hundreds of calls for
nothing. densenet121's entry unit: 0.45 s of machine code at levels 3 and 2, 0.044 s at
level 1 (one run each), the same size (the same calls, some moves in another order)."""


def compile_unit(
    module: ModuleOp,
    target: CodegenTarget | None = None,
    timings: StageTimings | None = None,
    codegen_level: int = 3,
) -> NativeUnit:
    """An `llvm` dialect module translated, optimised and compiled to object code for `target`
    (the host by default), the code generator optimising at `codegen_level`; appends the
    seconds of each stage to `timings` when given."""
    target = target or CodegenTarget.host()
    target_machine = target.machine(codegen_level)
    clock = _StageClock(timings)
    text = llvm_ir_text(module, target, target_machine)
    clock.lap("llvm-translate")
    return compile_text(text, kernel_signatures(module), target, codegen_level, timings)


def compile_text(
    text: str,
    kernels: dict[str, KernelSignature],
    target: CodegenTarget | None = None,
    codegen_level: int = 3,
    timings: StageTimings | None = None,
) -> NativeUnit:
    """LLVM IR text (defining `kernels`) optimised and compiled to object code for `target`,
    the code generator optimising at `codegen_level`; appends each stage's seconds to
    `timings` when given."""
    target = target or CodegenTarget.host()
    target_machine = target.machine(codegen_level)
    llvm_module = optimized_text(text, target_machine, timings)
    clock = _StageClock(timings)
    object_code = target_machine.emit_object(llvm_module)
    clock.lap("llvm-codegen")
    externals = tuple(sorted(f.name for f in llvm_module.functions if f.is_declaration))
    return NativeUnit(str(llvm_module), object_code, kernels, externals)


def compile_llvm_module(module: ModuleOp, timings: StageTimings | None = None) -> JitModule:
    """Translates, optimises and JIT-compiles an `llvm` dialect module for the host CPU;
    appends the seconds of each stage to `timings` when given."""
    unit = compile_unit(module, timings=timings)
    return JitModule([unit], host_target_machine())


class _StageClock:
    """Appends the seconds since the previous lap to `timings` (nothing when it is None)."""

    def __init__(self, timings: StageTimings | None):
        self.timings = timings
        self.start = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        if self.timings is not None:
            self.timings.append((stage, now - self.start))
        self.start = now
