"""The checks of a random graph (`bench/graph_spec.py`): every source op in exactly one kernel,
the pipeline deterministic, reference == unfused == fused natively, the same bits on a call
after another. Used by
`tests/test_random_graphs.py` and `bench/fuzz.py`.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass

import numpy as np
from graph_spec import GraphSpec, build_module, location
from xdsl.dialects import func
from xdsl.dialects.builtin import FileLineColLoc, ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.graph import PRIMITIVE_ATTR
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import (
    DEFAULT_PIPELINE,
    UNFUSED_PIPELINE,
    PassManager,
    compile_module,
    parse_pipeline,
)
from fusion_compiler.lowering.lower_graph import is_copy_kernel, load_time_calls
from fusion_compiler.passes.analysis.function_graph import build_function_graph, op_label
from fusion_compiler.passes.analysis.graph_partition import partition
from fusion_compiler.passes.fuse_ops import FuseOpsPass


def main_of(module: ModuleOp) -> func.FuncOp:
    return next(
        op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main"
    )


def body_ops(function: func.FuncOp) -> list[Operation]:
    return [op for op in function.body.block.ops if not isinstance(op, func.ReturnOp)]


def fusion_units(main: func.FuncOp, fuse: FuseOpsPass) -> dict[FileLineColLoc, tuple]:
    """The partition of legalized `main` as `fuse` computes it: each group's ops in block
    order, keyed by the location of the last one (the location of the group's call)."""
    info = build_function_graph(main)
    result = partition(info.graph, fuse.max_depth, fuse.opt_level, fuse.max_args)
    members: dict[int, list[Operation]] = {}
    for index, op in enumerate(info.ops):
        members.setdefault(result.group_of[info.node_of_op(index)], []).append(op)
    return {ops[-1].location: tuple(ops) for ops in members.values()}


def _labels(ops) -> list[str]:
    return [op_label(op) for op in ops]


def check_call(op: Operation, units: dict, module: ModuleOp) -> int:
    """`op` of fused @main stands for exactly one unit of the partition; returns its size."""
    assert op.location in units, f"{op.name} at {op.location} stands for no group (or two)"
    unit = units.pop(op.location)
    if not isinstance(op, func.CallOp):
        assert unit == (op,), (op, unit)
        return 1
    callee = SymbolTable.lookup_symbol(module, op.callee)
    assert isinstance(callee, func.FuncOp) and PRIMITIVE_ATTR in callee.attributes
    inner = body_ops(callee)
    assert _labels(inner) == _labels(unit)
    assert all(isinstance(o, graph.CallLoopOp) for o in inner)
    if callee.location == unit[0].location:  # the group that defined the (shared) function
        assert [o.location for o in inner] == [o.location for o in unit]
    return len(unit)


def split_pipeline() -> tuple[tuple[ModulePass, ...], FuseOpsPass, tuple[ModulePass, ...]]:
    """`DEFAULT_PIPELINE` as (the passes before fuse-ops, fuse-ops, the passes after it)."""
    passes = parse_pipeline(DEFAULT_PIPELINE)
    at = next(i for i, p in enumerate(passes) if isinstance(p, FuseOpsPass))
    fuse = passes[at]
    assert isinstance(fuse, FuseOpsPass)
    return passes[:at], fuse, passes[at + 1 :]


@dataclass(frozen=True)
class Launches:
    """The kernels a build of a graph launches: `kernels` calls in its @main, of which
    `concats` call a lone concat's kernel, which lower-graph may do in place instead of
    launching it (`lowering/in_place.py`)."""

    kernels: int
    concats: int

    def check(self, model, what: str) -> None:
        """`model` launches every kernel once, but for some of the lone concats."""
        launched = op_kernels(model)
        concats = sum(name.startswith(CONCAT_KERNEL) for name in launched)
        assert concats <= self.concats, f"{what}: {concats} concat launches of {self.concats}"
        assert len(launched) - concats == self.kernels - self.concats, (
            f"{what}: {len(launched) - concats} launches besides concats, expected "
            f"{self.kernels - self.concats}: {launched}"
        )


CONCAT_KERNEL = "concat"
"""The name legalize-ops gives a concat's kernel (`concat`, `concat_1`, ...; `fused_...`
for a group): no other op's kernel name starts with it."""


def run_pipeline_checking_partition(spec: GraphSpec, module: ModuleOp) -> Launches:
    """Runs `DEFAULT_PIPELINE` on `module`, checking around fuse-ops that every source op is
    in exactly one group and each group in exactly one call of @main. Returns the calls that
    launch a kernel at every run (not those the model runs once, when it is loaded:
    `lower_graph.load_time_calls`, such as the packing of a constant matmul operand)."""
    before, fuse, after = split_pipeline()
    manager = PassManager(before)
    manager.run(module)
    main = main_of(module)
    sources = Counter(location(index) for index in range(len(spec.nodes)))
    assert Counter(op.location for op in body_ops(main)) == sources
    units = fusion_units(main, fuse)
    PassManager([fuse], ctx=manager.ctx).run(module)
    calls = body_ops(main_of(module))
    covered = sum(check_call(op, units, module) for op in calls)
    assert not units, f"groups without a call: {units}"
    assert covered == len(spec.nodes)
    PassManager(after, ctx=manager.ctx).run(module)
    main = main_of(module)
    at_load = set(load_time_calls(main))  # (a constant weight's packing: once, when loaded)
    launches = [op for op in body_ops(main) if isinstance(op, graph.CallLoopOp)]
    launches = [op for op in launches if op not in at_load]
    concats = sum(op.callee.string_value().startswith(CONCAT_KERNEL) for op in launches)
    return Launches(len(launches), concats)


def unfused_launches(spec: GraphSpec) -> Launches:
    """One kernel per op that is not a constant."""
    kernels = sum(n.op != "constant" for n in spec.nodes)
    return Launches(kernels, sum(n.op == "concat" for n in spec.nodes))


def random_inputs(spec: GraphSpec, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, shape).astype(np.float32) for shape in spec.args]


ROUNDING_TRIALS = 3
"""Evaluations of the reference with every op's result perturbed (`reference_and_spread`)."""

ROUNDING_PERTURBATION = 2.0**-22
"""The relative change `reference_and_spread` gives every element of an op's result, up or
down at random: 2-4 float32 ulps (never less than one, so no move rounds away), the order of
what one native op may differ from the reference's correctly rounded result (the
exp/log/tanh/erf expansions are within 1.5-2 ulps, gelu's a few more, a reduction's sum of a
few hundred terms a few)."""

SPREAD_FACTOR = 2.0
"""How many times its rounding spread an element may differ from the reference, besides
`rtol`/`atol`."""


def reference_and_spread(
    module: ModuleOp, inputs: list[np.ndarray]
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The reference results of `module`'s `@main` and, per element, how far they move when
    every op's float result is perturbed by a relative `ROUNDING_PERTURBATION` of random
    sign (the largest move over `ROUNDING_TRIALS` evaluations). That is
    the part of the float32 error the graph itself amplifies: where `lrn(v) - v` or
    `a + b - a` cancels, one ulp of an operand is many ulps of the result, whichever op rounds
    it, and no native kernel can do better than the rounding of its own operands."""
    reference = evaluate(module, "main", inputs)
    rng = np.random.default_rng(12345)

    def perturb(result: np.ndarray) -> np.ndarray:
        if not np.issubdtype(result.dtype, np.floating):
            return result
        signs = rng.choice(np.array([-1.0, 1.0]), np.shape(result))
        return (result * (1.0 + ROUNDING_PERTURBATION * signs)).astype(result.dtype)

    spread = [np.zeros(np.shape(w)) for w in reference]
    with np.errstate(all="ignore"):
        for _ in range(ROUNDING_TRIALS):
            moved = evaluate(module, "main", inputs, perturb=perturb)
            for index, (m, w) in enumerate(zip(moved, reference, strict=True)):
                if np.issubdtype(np.asarray(w).dtype, np.floating):
                    delta = np.abs(np.asarray(m, np.float64) - np.asarray(w, np.float64))
                    spread[index] = np.fmax(spread[index], np.where(np.isnan(delta), np.inf, delta))
    return reference, spread


def assert_close(
    got: list[np.ndarray],
    want: list[np.ndarray],
    what: str,
    spread: list[np.ndarray] | None = None,
) -> None:
    """Native kernels compute in float32 in loop order, the reference in float64 rounded once
    per op. Inputs and constants lie in [-1, 1], exp only sees values in [-6, 6], and no
    reduction, matmul or conv sums more than a few hundred terms, so the float32 round-off
    accumulated over a graph of at most 8 ops stays far below 1e-4 of each value (rtol),
    except where terms cancel: there the error is float32 epsilon (1.2e-7) times the size of
    the terms. `spread` (`reference_and_spread`) measures exactly that per element, and
    `SPREAD_FACTOR` times it is allowed on top; without it, the terms are taken to be within
    a factor of ~10-100 of the largest output (atol 1e-5 times max |reference|)."""
    assert len(got) == len(want)
    for index, (g, w) in enumerate(zip(got, want, strict=True)):
        assert np.all(np.isfinite(w)), f"reference result #{index} is not finite"
        scale = float(np.max(np.abs(w), initial=0.0)) or 1.0
        allowed = np.zeros(np.shape(w)) if spread is None else spread[index]
        assert np.shape(g) == np.shape(w), (
            f"{what} #{index}: shape {np.shape(g)}, not {np.shape(w)}"
        )
        error = np.abs(np.asarray(g, np.float64) - np.asarray(w, np.float64))
        tolerance = (
            1e-5 * scale + 1e-4 * np.abs(np.asarray(w, np.float64)) + SPREAD_FACTOR * allowed
        )
        bad = ~(error <= tolerance)  # NaN errors are bad
        if bad.any():
            first = np.unravel_index(int(np.argmax(bad)), np.shape(w)) if np.ndim(w) else ()
            raise AssertionError(
                f"{what} #{index}: {int(bad.sum())} of {np.size(w)} elements beyond "
                f"1e-5 x {scale:.3g} + 1e-4 |ref| + {SPREAD_FACTOR} x rounding spread; first at "
                f"{first}: {np.asarray(g)[first]!r} against {np.asarray(w)[first]!r} "
                f"(tolerance {tolerance[first]:.3g}, spread {allowed[first]:.3g})"
            )


def assert_same_after_other_inputs(
    model, inputs: list[np.ndarray], first: list[np.ndarray], other: list[np.ndarray]
) -> None:
    """`model` called on `other`, then on `inputs` again, gives `first`'s bits: its entry keeps
    its intermediate buffers between calls, and no kernel may read what an earlier call left
    there."""
    model.run("main", *other)
    again = model.run("main", *inputs)
    for index, (one, two) in enumerate(zip(first, again, strict=True)):
        if one.tobytes() != two.tobytes():
            raise AssertionError(
                f"fused result #{index}: a second call on the same inputs, after a call on "
                "other inputs, gave other bits"
            )


def op_kernels(model) -> list[str]:
    """The kernels `@main` launches for the graph's ops: without the copies lower-graph adds
    for returned values no kernel writes (a returned constant or argument)."""
    return [name for name in model.kernels("main") if not is_copy_kernel(name)]


def check_numerics(spec: GraphSpec, launches: Launches) -> str:
    """Reference, unfused and fused native results agree; returns the fused LLVM IR."""
    module = build_module(spec)
    inputs = random_inputs(spec, seed=len(spec.nodes))
    reference, spread = reference_and_spread(module, inputs)
    unfused = compile_module(module, UNFUSED_PIPELINE, cache=False)
    fused = compile_module(module, DEFAULT_PIPELINE, cache=False)
    assert_close(unfused.run("main", *inputs), reference, "unfused result", spread)
    first = fused.run("main", *inputs)
    assert_close(first, reference, "fused result", spread)
    assert_same_after_other_inputs(
        fused, inputs, first, random_inputs(spec, seed=len(spec.nodes) + 1)
    )
    unfused_launches(spec).check(unfused, "unfused")
    launches.check(fused, "fused")
    return fused.llvm_ir


def fused_ir_digest(spec: GraphSpec) -> str:
    """SHA-256 of the default pipeline's output for `spec`: equal in every process."""
    module = PassManager(DEFAULT_PIPELINE).run(build_module(spec))
    return hashlib.sha256(str(module).encode()).hexdigest()


def check_graph(spec: GraphSpec, input_seed: int = 0) -> str:
    """Every check of `spec` with one pipeline run per build: the partition around fuse-ops,
    reference == unfused == fused natively, one kernel per op unfused, and the fused model
    called again after a call on other inputs gives the same bits (its entry keeps its
    intermediate buffers between calls: no kernel may read what an earlier call left there).
    Returns the SHA-256 of the fused pipeline's output (for the check across processes)."""
    staged = build_module(spec)
    launches = run_pipeline_checking_partition(spec, staged)
    digest = hashlib.sha256(str(staged).encode()).hexdigest()
    module = build_module(spec)
    inputs = random_inputs(spec, seed=input_seed)
    reference, spread = reference_and_spread(module, inputs)
    unfused = compile_module(module, UNFUSED_PIPELINE, cache=False)
    fused = compile_module(staged, pipeline="", cache=False)
    assert_close(unfused.run("main", *inputs), reference, "unfused result", spread)
    first = fused.run("main", *inputs)
    assert_close(first, reference, "fused result", spread)
    assert_same_after_other_inputs(fused, inputs, first, random_inputs(spec, seed=input_seed + 1))
    unfused_launches(spec).check(unfused, "unfused")
    launches.check(fused, "fused")
    return digest
