"""Every example runs three ways — reference evaluator, unfused native build, fused native
build — and they agree.

Native kernels compute in float32 in loop order; the reference computes each op in float64 and
rounds once. Reductions of up to a few thousand terms (the FFN's 768, the conv's 576) put the
float32 sums within ~1e-5 relative of the exact value, so rtol 1e-4 with an absolute floor of
1e-4 × max |reference| (for elements where cancellation leaves a small value) holds with
margin. Fused and unfused builds may order a reduction differently once scheduling reorders
loops, so they are compared at the same tolerance rather than bit for bit.
"""

from pathlib import Path

import numpy as np
import pytest

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.dialects.reference.evaluator import evaluate
from fusion_compiler.driver import DEFAULT_PIPELINE, UNFUSED_PIPELINE, compile_module

EXAMPLES = sorted((Path(__file__).parent.parent.parent / "examples").glob("*.mlir"))


def random_inputs(function, seed: int) -> list[np.ndarray]:
    """Standard-normal inputs; batch-norm variances (`%var...`) uniform in [0.5, 1.5]."""
    rng = np.random.default_rng(seed)
    inputs = []
    for parameter in function.parameters:
        if parameter.name.rstrip("0123456789").endswith("var"):
            inputs.append(rng.uniform(0.5, 1.5, parameter.shape).astype(np.float32))
        else:
            inputs.append(rng.standard_normal(parameter.shape).astype(np.float32))
    return inputs


def assert_close(actual, reference):
    assert np.all(np.isfinite(reference))
    scale = float(np.max(np.abs(reference))) or 1.0
    np.testing.assert_allclose(actual, reference, rtol=1e-4, atol=1e-4 * scale)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_reference_unfused_and_fused_agree(path, tmp_path, monkeypatch):
    monkeypatch.setenv("FUSION_CACHE_DIR", str(tmp_path))
    module = parse_source(make_context(), path.read_text(), path.name)
    fused = compile_module(module, DEFAULT_PIPELINE)
    unfused = compile_module(module, UNFUSED_PIPELINE)
    inputs = random_inputs(fused.functions["main"], seed=11)
    reference = evaluate(module, "main", inputs)
    for want, plain, fast in zip(
        reference, unfused.run("main", *inputs), fused.run("main", *inputs), strict=True
    ):
        assert_close(plain, want)
        assert_close(fast, want)
    assert len(fused.kernels("main")) <= len(unfused.kernels("main"))
