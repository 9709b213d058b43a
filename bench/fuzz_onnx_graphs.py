"""Random valid ONNX models, and the check that the compiler computes what onnxruntime does.

Seed s draws a small model (`fuzz_onnx_draw.draw_model`: ops of the importer with the
attributes the ONNX spec allows at opsets 9-20).

`check_model` runs the model in onnxruntime (without graph optimisations) and through the
compiler (`fc.compile`: import, the default fusion pipeline, native code) and compares every
output. Where they differ, a float64 run of the model decides (onnxruntime's, or onnx's
reference evaluator where onnxruntime has no double kernel): if ours agrees with it, the
difference is onnxruntime's rounding, not ours. A quarter of the models (`DYNAMIC_SHARE`)
have dynamic dimensions: their first input's batch, its last dimension or both are
parameters, and the compiled model runs at the drawn sizes and at others (`other_sizes`),
compiled for each; half of those with a dynamic batch also at a batch of 0
(`empty_batch`), where onnxruntime runs it. Every third
static model (`COMMAND_LINE_EVERY`) is also compiled as the command line does, from the
`.mlir` file and weights file `fusion-import` writes, and must compute the same bits; every
fifth that passes (`SCHEDULE_OPTIONS_EVERY`) is compiled again with `schedule-kernels`
options drawn at random, and must compute the same bits as the default pipeline. Outcomes:

- `ok`; `unsupported`: the compiler says, with a diagnostic, that it does not support the
  model (which op and why); `ort-rejects`: onnxruntime cannot run the model either (a
  limitation of its own, such as dilated convolutions with `auto_pad`); `ort-imprecise`;
- `fail`: different numbers (or shapes) from the float64 run, or an error that is not a
  diagnostic.
"""

from __future__ import annotations

import random
import traceback

import numpy as np
from fuzz_onnx_draw import draw_model

__all__ = ["draw_model", "check_seed", "checked_case", "compiled_outputs", "differences"]

RTOL, ATOL = 1e-4, 1e-5
"""Tolerance of the comparison: relative, and absolute as a share of the output's largest
finite magnitude (at least 1): float32 kernels whose sums run in another order than
onnxruntime's (convolutions, reductions, normalisations) differ by a few ulps of their
largest terms."""


def onnxruntime_outputs(model, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The model's outputs from onnxruntime, one thread, graph optimisations off."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4
    options.intra_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    return session.run(None, inputs)


def as_double(model):
    """The model with every float32 tensor, constant and cast made float64."""
    import onnx
    from onnx import TensorProto, numpy_helper

    doubled = onnx.ModelProto()
    doubled.CopyFrom(model)
    graph = doubled.graph
    for info in [*graph.input, *graph.output, *graph.value_info]:
        if info.type.tensor_type.elem_type == TensorProto.FLOAT:
            info.type.tensor_type.elem_type = TensorProto.DOUBLE
    for index, tensor in enumerate(graph.initializer):
        if tensor.data_type == TensorProto.FLOAT:
            array = numpy_helper.to_array(tensor).astype(np.float64)
            graph.initializer[index].CopyFrom(numpy_helper.from_array(array, tensor.name))
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.name == "to" and attribute.i == TensorProto.FLOAT:
                attribute.i = TensorProto.DOUBLE
    return doubled


def exact_outputs(model, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The model's outputs computed in float64: by onnxruntime, or, for an op it has no
    double kernel for, by onnx's reference evaluator."""
    doubled = as_double(model)
    feeds = {name: value.astype(np.float64) for name, value in inputs.items()}
    try:
        return onnxruntime_outputs(doubled, feeds)
    except Exception:  # noqa: BLE001 - no double kernel: the reference evaluator
        from onnx.reference import ReferenceEvaluator

        return ReferenceEvaluator(doubled).run(None, feeds)


def differences(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Where `actual` is not within the tolerance (`RTOL`, `ATOL`) of `expected`."""
    finite = np.where(np.isfinite(expected), np.abs(expected), 0)
    scale = max(1.0, float(finite.max())) if expected.size else 1.0
    return ~np.isclose(actual, expected, rtol=RTOL, atol=ATOL * scale, equal_nan=True)


def compiled_outputs(model, input_sets: list[dict[str, np.ndarray]]) -> list[list[np.ndarray]]:
    """The model compiled once (`fc.compile`, no cache) and run on each set of inputs (a
    model with a dynamic dimension is compiled again for each new shape)."""
    import fusion_compiler as fc

    compiled = fc.compile(model, cache=False)
    runs = []
    for inputs in input_sets:
        results = compiled.run(**inputs)
        runs.append([np.asarray(results[output.name]) for output in model.graph.output])
    return runs


def command_line_outputs(model, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """The model as the command line compiles it: `fusion-import` writes an `.mlir` file
    (large constants in a weights file beside it), which is parsed and compiled; run on
    `inputs` by position."""
    import tempfile
    from pathlib import Path

    import onnx

    import fusion_compiler as fc
    from fusion_compiler.tools import fusion_import

    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder) / "model.onnx", Path(folder) / "model.mlir"
        onnx.save(model, str(source))
        if fusion_import.main([str(source), "-o", str(target)]) != 0:
            raise RuntimeError("fusion-import failed on a model fc.compile imports")
        outputs = fc.compile(target, cache=False)(*inputs.values())
    return [np.asarray(o) for o in (outputs if isinstance(outputs, tuple) else (outputs,))]


def with_dynamic_dims(model, axes: tuple[int, ...]):
    """The model with these dimensions of its first input parameters (`d0`, `d1`, ...) and
    its outputs' shapes unknown: compiled for each shape it is called with."""
    import onnx

    dynamic = onnx.ModelProto()
    dynamic.CopyFrom(model)
    graph = dynamic.graph
    dims = graph.input[0].type.tensor_type.shape.dim
    for axis in axes:
        dims[axis].dim_param = f"d{axis % len(dims)}"
    for output in graph.output:
        output.type.tensor_type.ClearField("shape")
    del graph.value_info[:]
    return dynamic


def other_sizes(
    inputs: dict[str, np.ndarray], axes: tuple[int, ...], seed: int
) -> dict[str, np.ndarray]:
    """The inputs with the first one's dimensions `axes` changed (1 -> 3, n -> n + 1), new
    values."""
    values = np.random.default_rng(seed + 1)
    first, *rest = inputs
    shape = list(inputs[first].shape)
    for axis in axes:
        shape[axis] = 3 if shape[axis] == 1 else shape[axis] + 1
    changed = {first: values.standard_normal(shape).astype(np.float32)}
    return changed | {name: inputs[name] for name in rest}


def check_model(
    model, input_sets: list[dict[str, np.ndarray]], command_line: bool = False
) -> tuple[str, str]:
    """(outcome, what happened) of the model on each set of inputs: see the module's
    docstring. A later set onnxruntime cannot run (a batch a reshape's constant shape does
    not fit) is left out. `command_line`: the model is also compiled as `fusion-import`
    writes it, and must compute the same bits on the first set."""
    import fusion_compiler as fc

    expected = []
    for index, inputs in enumerate(input_sets):
        try:
            expected.append(onnxruntime_outputs(model, inputs))
        except Exception as err:  # noqa: BLE001 - onnxruntime's refusal, in its words
            if index == 0:
                return "ort-rejects", f"{type(err).__name__}: {str(err)[:300]}"
            break
    input_sets = input_sets[: len(expected)]
    try:
        actual = compiled_outputs(model, input_sets)
    except fc.FusionError as err:
        return "unsupported", str(err).strip().splitlines()[-1].strip()[:300]
    except Exception as err:  # noqa: BLE001 - every other error is a finding
        return "fail", f"{type(err).__name__}: {err}\n{traceback.format_exc()[-2000:]}"
    different = _command_line_differs(model, input_sets[0], actual[0]) if command_line else ""
    if different:
        return "fail", different
    imprecise = ""
    for inputs, ours, theirs in zip(input_sets, actual, expected, strict=True):
        outcome, what = _compare(model, inputs, ours, theirs)
        if outcome == "fail":
            shapes = {name: value.shape for name, value in inputs.items()}
            return outcome, f"inputs of shapes {shapes}: {what}"
        imprecise = imprecise or what
    return ("ort-imprecise", imprecise) if imprecise else ("ok", "")


def _command_line_differs(model, inputs, actual: list[np.ndarray]) -> str:
    """What differs when the model is compiled from `fusion-import`'s file (the same IR
    through text and a weights file: it must compute the same bits), or ""."""
    try:
        printed = command_line_outputs(model, inputs)
    except Exception as err:  # noqa: BLE001 - the API compiled it: every error is a finding
        return f"the command line's route: {type(err).__name__}: {err}"
    for info, api, text in zip(model.graph.output, actual, printed, strict=True):
        if api.shape != text.shape or api.tobytes() != text.tobytes():
            return f"output {info.name}: the command line's route computes other bits"
    return ""


def _compare(
    model, inputs, actual: list[np.ndarray], expected: list[np.ndarray]
) -> tuple[str, str]:
    exact = None
    for index, (ours, theirs) in enumerate(zip(actual, expected, strict=True)):
        name = model.graph.output[index].name
        if ours.shape != theirs.shape:
            return "fail", f"output {name}: shape {ours.shape}, onnxruntime's {theirs.shape}"
        if not differences(ours, theirs).any():
            continue
        exact = exact_outputs(model, inputs) if exact is None else exact
        truth = exact[index].astype(np.float32)
        wrong = differences(ours, truth)
        if wrong.any():
            error = float(np.nanmax(np.abs(ours - truth)))
            return "fail", (
                f"output {name}: {int(wrong.sum())} of {truth.size} elements differ from the "
                f"float64 run (largest difference {error:.3g}; onnxruntime's "
                f"{int(differences(theirs, truth).sum())})"
            )
        return "ort-imprecise", f"output {name}: onnxruntime differs from the float64 run"
    return "ok", ""


DYNAMIC_SHARE = 0.25
"""The share of models whose first input has dynamic dimensions (its batch, its last or both):
checked at the drawn sizes and at others (`other_sizes`)."""


def checked_case(seed: int):
    """Model `seed` as checked: (model, input sets, op types), or None (no node drawn)."""
    drawn = draw_model(seed)
    if drawn is None:
        return None
    model, inputs, ops = drawn
    choice = random.Random(f"dynamic {seed}")
    if choice.random() < DYNAMIC_SHARE:
        rank = len(next(iter(inputs.values())).shape)
        axes = choice.choice([(0,), (0,), (0,), (0,), (-1,), (0, -1)]) if rank > 1 else (0,)
        input_sets = [inputs, other_sizes(inputs, axes, seed)]
        if 0 in axes and choice.random() < EMPTY_BATCH_SHARE:
            input_sets.append(empty_batch(inputs))
        return with_dynamic_dims(model, axes), input_sets, ops
    return model, [inputs], ops


EMPTY_BATCH_SHARE = 0.5
"""The share of models with a dynamic batch run at a batch of 0 too (`empty_batch`), where
onnxruntime runs them: every op then meets an empty tensor, which fold-constants folds."""


def empty_batch(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The inputs with the first one's batch 0."""
    first, *rest = inputs
    shape = (0, *inputs[first].shape[1:])
    return {first: np.zeros(shape, np.float32)} | {name: inputs[name] for name in rest}


COMMAND_LINE_EVERY = 3
"""Every third static model is also compiled through `fusion-import`'s file
(`command_line_outputs`)."""


SCHEDULE_OPTIONS_EVERY = 5
"""Every fifth model that passes is also compiled with `schedule-kernels` options drawn at
random (`scheduled_pipeline`), which must compute the same bits as the default pipeline: the
schedule stages never reassociate, whichever of them run and however they tile, unroll or
divide the work."""

SCHEDULE_SWITCHES = (
    "inline",
    "inline-into-reductions",
    "reuse-outputs",
    "fuse",
    "contractions",
    "prepack",
    "reorder",
    "loop-kinds",
    "overlap-tails",
    "split-index-sets",
    "deinterleave",
    "balance-max-chains",
    "tile-transposes",
    "collapse",
    "fold-buffers",
    "align-rows",
    "prefetch",
)
SCHEDULE_SIZES = {
    "contraction-rows": (1, 2, 3, 5, 8),
    "contraction-cols": (1, 2, 3, 8, 16, 24, 48),
    "tile": (1, 2, 3, 4, 7, 16, 64),
    "unroll-reductions": (0, 1, 2, 3, 5, 16),
    "unroll-jam": (0, 1, 2, 3, 5, 16),
    "l1-bytes": (64, 1024, 4096, 65536),
    "cores": (1, 2, 3, 5),
}


def scheduled_pipeline(seed: int) -> str:
    """The default pipeline with `schedule-kernels` options drawn from the seed: each switch
    set a fifth of the time, each size a third."""
    from fusion_compiler.driver import DEFAULT_PIPELINE

    rng = random.Random(f"schedule {seed}")
    chosen = [
        f"{name}={rng.choice(['true', 'false'])}"
        for name in SCHEDULE_SWITCHES
        if rng.random() < 0.2
    ]
    chosen += [
        f"{name}={rng.choice(sizes)}"
        for name, sizes in SCHEDULE_SIZES.items()
        if rng.random() < 0.3
    ]
    if not chosen:
        return DEFAULT_PIPELINE
    options = "{" + " ".join(chosen) + "}"
    return DEFAULT_PIPELINE.replace("schedule-kernels", "schedule-kernels" + options)


def _schedule_differs(model, inputs: dict[str, np.ndarray], pipeline: str) -> str:
    """What differs between the default pipeline's outputs and `pipeline`'s, or ""."""
    import fusion_compiler as fc

    try:
        default = fc.compile(model, cache=False).run(**inputs)
        scheduled = fc.compile(model, cache=False, pipeline=pipeline).run(**inputs)
    except Exception as err:  # noqa: BLE001 - the default pipeline compiled it: a finding
        return f"{pipeline}: {type(err).__name__}: {err}"
    for name, value in default.items():
        if np.asarray(value).tobytes() != np.asarray(scheduled[name]).tobytes():
            return f"output {name}: other bits with {pipeline}"
    return ""


def check_seed(seed: int) -> dict:
    """The fuzzer's record of model `seed` (`bench/fuzz.py onnx-graphs`)."""
    record: dict = {"mode": "onnx-graph", "seed": seed}
    try:
        case = checked_case(seed)
    except Exception as err:  # noqa: BLE001 - a bug of the generator: reported, not hidden
        record.update(status="fail", error=f"drawing the model: {type(err).__name__}: {err}")
        return record
    if case is None:
        record.update(status="ok", outcome="empty", ops=[])
        return record
    model, input_sets, ops = case
    command_line = len(input_sets) == 1 and seed % COMMAND_LINE_EVERY == 0
    outcome, what = check_model(model, input_sets, command_line)
    if outcome in ("ok", "ort-imprecise") and seed % SCHEDULE_OPTIONS_EVERY == 1:
        pipeline = scheduled_pipeline(seed)
        record["pipeline"] = pipeline
        different = _schedule_differs(model, input_sets[0], pipeline)
        if different:
            outcome, what = "fail", different
    record.update(status="fail" if outcome == "fail" else "ok", outcome=outcome, ops=ops)
    record["batches"] = len(input_sets)
    if what:
        record["error" if outcome == "fail" else "note"] = what
    return record
