"""`FUSION_TARGET_CPU` and `FUSION_TARGET_FEATURES`: code for another CPU that this machine can run
(SSE-only code here, whatever this machine has), with the same bits; the schedules' host model
and the compile cache's keys follow the target; an incomplete target or one asking for a feature
this machine lacks is a `TargetError`, and the command-line tools say so in one line."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest

from fusion_compiler.errors import TargetError
from fusion_compiler.lowering import compile_cache
from fusion_compiler.lowering.jit import (
    TARGET_CPU_VARIABLE,
    TARGET_FEATURES_VARIABLE,
    CodegenTarget,
)
from fusion_compiler.passes.schedule.contraction_tiles import host_features, host_model

pytestmark = pytest.mark.skipif(
    platform.machine() not in ("x86_64", "AMD64"), reason="x86 CPU names and features"
)

SSE = ("x86-64-v2", "+sse4.2,+popcnt,-avx,-avx2,-fma,-avx512f")
"""A target every x86-64 machine of this project runs (no AVX: 128-bit vectors, no FMA unit)."""

CONV = """
func.func @main(%x: tensor<1x8x13x13xf32>, %w: tensor<24x8x3x3xf32>) -> tensor<1x24x13x13xf32> {
  %c = graph.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x8x13x13xf32>, tensor<24x8x3x3xf32>) -> tensor<1x24x13x13xf32>
  %r = graph.relu %c : tensor<1x24x13x13xf32>
  %e = graph.exp %r : tensor<1x24x13x13xf32>
  func.return %e : tensor<1x24x13x13xf32>
}
"""


def _target(monkeypatch, cpu: str, features: str) -> None:
    monkeypatch.setenv(TARGET_CPU_VARIABLE, cpu)
    monkeypatch.setenv(TARGET_FEATURES_VARIABLE, features)


def _missing_feature() -> str:
    """A feature this machine lacks (asked of LLVM: not the target `FUSION_TARGET_CPU` may
    name, which has fewer, when the suite runs with one set)."""
    have = llvm.get_host_cpu_features()
    for feature in ("avx512vp2intersect", "amx-tile", "avx10.2-512", "sha512", "avx512fp16"):
        if not have.get(feature, False):
            return feature
    pytest.skip("this CPU has every feature the test could ask for")


def _compile(text: str):
    from fusion_compiler.dialects.context import make_context
    from fusion_compiler.dialects.diagnostics import parse_source
    from fusion_compiler.driver import compile_module

    return compile_module(parse_source(make_context(), text, "conv.mlir"), cache=False)


def test_code_for_an_sse_cpu_runs_here_with_the_same_bits(monkeypatch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 8, 13, 13)).astype(np.float32) * 0.3
    w = rng.standard_normal((24, 8, 3, 3)).astype(np.float32) * 0.3
    (native,) = _compile(CONV).run("main", x, w)
    _target(monkeypatch, *SSE)
    assert CodegenTarget.host() == CodegenTarget(*SSE)
    assert host_features() == SSE[1]
    model = host_model()  # the tile model's facts follow, though the host's were read above
    assert (model.vector_width, model.registers) == (4, 16)
    model = _compile(CONV)
    (sse,) = model.run("main", x, w)
    assembly = model.assembly
    assert "%ymm" not in assembly and "%zmm" not in assembly and "%xmm" in assembly
    np.testing.assert_array_equal(sse.view(np.uint32), native.view(np.uint32))


def test_the_cache_keys_follow_the_target(monkeypatch):
    host = compile_cache.key_of_hash("0" * 64, "legalize-ops")
    _target(monkeypatch, *SSE)
    assert compile_cache.key_of_hash("0" * 64, "legalize-ops") != host


@pytest.mark.parametrize(
    "cpu, features, message",
    [
        ("znver3", "", "go together"),
        ("", "+avx2", "go together"),
        ("x86-64-v2", "sse4.2", "each with \\+ or -"),
        ("x86-64-v2", "+{missing}", "turns on \\+{missing}, which this CPU .* lacks"),
    ],
    ids=["no-features", "no-cpu", "unsigned", "missing"],
)
def test_an_incomplete_or_foreign_target_is_an_error(monkeypatch, cpu, features, message):
    missing = _missing_feature()
    _target(monkeypatch, cpu, features.format(missing=missing))
    with pytest.raises(TargetError, match=message.format(missing=missing)):
        CodegenTarget.host()


def test_the_tools_report_a_foreign_target_in_one_line(tmp_path):
    source = tmp_path / "conv.mlir"
    source.write_text(CONV)
    missing = _missing_feature()
    environment = {
        **os.environ,
        TARGET_CPU_VARIABLE: "x86-64-v2",
        TARGET_FEATURES_VARIABLE: f"+{missing}",
        "FUSION_CACHE_DIR": "",
    }
    result = subprocess.run(
        [sys.executable, "-m", "fusion_compiler.tools.fusion_run", str(source), "--random-inputs"],
        capture_output=True,
        text=True,
        env=environment,
        cwd=Path(__file__).parent,
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"+{missing}" in lines[0] and "could not run here" in lines[0]
