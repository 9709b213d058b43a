"""The fusion pipeline (unscheduled kernels, through the loop interpreter) preserves the numbers: on every example, the reference evaluation of the
graph, of the unfused kernels (fusion off) and of the fused kernels agree.

The reference computes each op in float64 and rounds once; the kernels compute in float32 in
loop order, so they differ from it by float32 rounding accumulated over reductions (at most
a few thousand terms here): the tolerance is rtol 1e-4 with an absolute floor of 1e-4 times the
output's scale. Fused and unfused kernels run the same loop nests in the same order on the same
values, so they must agree to float32 round-off of a single op (rtol 1e-6).
"""

from pathlib import Path

import numpy as np
import pytest

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import FUSION_PIPELINE, PassManager

UNFUSED_FUSION_PIPELINE = FUSION_PIPELINE.replace("fuse-ops", "fuse-ops{opt-level=0}")

EXAMPLES = sorted((Path(__file__).parent.parent.parent / "examples").glob("*.mlir"))


def _load(path: Path):
    ctx = make_context()
    return ctx, parse_source(ctx, path.read_text(), path.name)


def _random_inputs(module, seed: int) -> list[np.ndarray]:
    main = next(
        op for op in module.ops if getattr(op, "sym_name", None) and op.sym_name.data == "main"
    )
    rng = np.random.default_rng(seed)
    inputs = []
    for arg in main.body.block.args:
        shape = tuple(arg.type.get_shape())
        if (
            (arg.name_hint or "").rstrip("0123456789").endswith("var")
        ):  # batch-norm variances must be positive
            inputs.append(rng.uniform(0.5, 1.5, shape).astype(np.float32))
        else:
            inputs.append(rng.standard_normal(shape).astype(np.float32))
    return inputs


def _compiled(path: Path, pipeline: str):
    ctx, module = _load(path)
    PassManager(pipeline, ctx=ctx).run(module)
    return module


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_fused_unfused_and_reference_agree(path):
    _, graph = _load(path)
    inputs = _random_inputs(graph, seed=7)
    reference = evaluate(graph, "main", inputs)
    unfused = evaluate(_compiled(path, UNFUSED_FUSION_PIPELINE), "main", inputs)
    fused = evaluate(_compiled(path, FUSION_PIPELINE), "main", inputs)
    for ref, plain, fast in zip(reference, unfused, fused, strict=True):
        assert np.all(np.isfinite(ref)), "the example's random inputs must give finite results"
        scale = float(np.max(np.abs(ref))) or 1.0
        np.testing.assert_allclose(plain, ref, rtol=1e-4, atol=1e-4 * scale)
        np.testing.assert_allclose(fast, plain, rtol=1e-6, atol=1e-6 * scale)
