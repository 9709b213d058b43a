"""A load entry's launches, one by one: what `load_memo` keeps the results of.

A load entry (`lower_graph`) runs the launches of a function that read only constants: the
packing kernels of prepack-weights. When each of its launches reads only the load entry's
inputs and writes only its results, every result once (the packing kernels do), the launches
can run apart, and the results of each are kept by its kernel and its inputs (`load_memo`):
a model with one op or one weight changed packs again only what the change touches. The plan
is read off the load entry when it is split into units (`launch_plans`, at the loop level)
and completed with the cache keys of the kernels' units once they are compiled
(`with_launches`), unless a kernel reaches the BLAS library, whose results no key covers
(its version, its threads).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from fusion_compiler.lowering.blas_library import needs_library
from fusion_compiler.lowering.jit import NativeUnit

if TYPE_CHECKING:  # (a model loaded from the cache reads `LoadLaunch`es and no IR)
    from xdsl.dialects.builtin import ModuleOp

    from fusion_compiler.dialects import loop
    from fusion_compiler.lowering.compile_cache import LoadBinding


@dataclass(frozen=True)
class LoadLaunch:
    """A launch of a load entry that reads only the load entry's inputs and writes only its
    results: `kernel` (its symbol, in the unit whose cache key is `unit`) on the inputs
    `inputs` (positions in `LoadBinding.load_sources`), writing the results `outputs`
    (positions in `LoadBinding.results`). `load_memo` keeps what it writes."""

    kernel: str
    unit: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


_Plan = list[tuple[str, int, tuple[int, ...], tuple[int, ...]]]
"""A load entry's launches: kernel, index of its unit, load inputs read, results written."""


def launch_plans(units: list[ModuleOp], bindings: dict[str, LoadBinding]) -> dict[str, _Plan]:
    """Per load entry of `bindings` whose launches each read only its inputs and write only
    its results, every result once (`LoadLaunch`), those launches; `units` are those of
    `native_units.name_by_content`, still at the loop level."""
    from fusion_compiler.dialects import loop

    functions = {
        op.sym_name.data: (index, op)
        for index, unit in enumerate(units)
        for op in unit.ops
        if isinstance(op, loop.FuncOp)
    }
    plans = {}
    for binding in bindings.values():
        found = functions.get(binding.load_entry)
        if found is None:
            continue
        plan = _launches_of(found[1], functions)
        if plan is not None:
            plans[binding.load_entry] = plan
    return plans


def _launches_of(load: loop.FuncOp, functions: dict[str, tuple[int, loop.FuncOp]]) -> _Plan | None:
    """The plan of the load entry `load` (`functions`: each function's unit and op), or None
    when a launch reads a buffer of its own or a result, or writes an input."""
    from xdsl.ir import BlockArgument

    from fusion_compiler.dialects import loop

    block = load.body.block
    entry_inputs = len(load.function_type.inputs.data)
    plan: _Plan = []
    written: list[int] = []
    for op in block.ops:
        if isinstance(op, loop.ReturnOp):
            continue
        callee = functions.get(op.callee.string_value()) if isinstance(op, loop.CallOp) else None
        if callee is None or any(
            not isinstance(v, BlockArgument) or v.block is not block for v in op.operands
        ):
            return None  # (another op, or a buffer of the load entry's own)
        count = len(callee[1].function_type.inputs.data)
        positions = [v.index for v in op.operands]
        inputs, outputs = positions[:count], [p - entry_inputs for p in positions[count:]]
        if any(p >= entry_inputs for p in inputs) or any(p < 0 for p in outputs):
            return None
        plan.append((op.callee.string_value(), callee[0], tuple(inputs), tuple(outputs)))
        written += outputs
    results = len(load.function_type.outputs.data)
    return plan if sorted(written) == list(range(results)) else None


def with_launches(
    bindings: dict[str, LoadBinding],
    plans: dict[str, _Plan],
    keys: list[str],
    compiled: Sequence[NativeUnit | None],
) -> dict[str, LoadBinding]:
    """`bindings`, each with its load entry's launches (`LoadBinding.launches`) when it has
    a plan and no launch reaches the BLAS library (whose results no key covers: its
    version, its threads)."""
    defined = {
        name: index
        for index, unit in enumerate(compiled)
        if unit is not None
        for name in unit.kernels
    }
    done = {}
    for name, binding in bindings.items():
        plan = plans.get(binding.load_entry)
        if plan is not None and not any(
            _reaches_library(index, compiled, defined) for _, index, _, _ in plan
        ):
            launches = tuple(
                LoadLaunch(kernel, keys[index], inputs, outputs)
                for kernel, index, inputs, outputs in plan
            )
            binding = replace(binding, launches=launches)
        done[name] = binding
    return done


def _reaches_library(
    start: int, compiled: Sequence[NativeUnit | None], defined: dict[str, int]
) -> bool:
    """Whether the unit `start`, or a unit it calls, calls the BLAS library."""
    reached = {start}
    work = [start]
    called: set[str] = set()
    while work:
        unit = compiled[work.pop()]
        if unit is None:
            return True  # (unknown: as if it did)
        for symbol in unit.externals:
            called.add(symbol)
            index = defined.get(symbol)
            if index is not None and index not in reached:
                reached.add(index)
                work.append(index)
    return needs_library(sorted(called))
