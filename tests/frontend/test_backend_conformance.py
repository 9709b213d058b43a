"""onnx's backend conformance suite over the compiler: `onnx.backend.test.BackendTest` with
`fusion_compiler.frontend.backend.FusionBackend`, on the CPU.

The runner's test sets here:

- node: one test per case of onnx's own test-case generators (`onnx.backend.test.case.node`,
  the tooling behind `python -m onnx.backend.test.cmd_tools generate-data`); the runner builds
  their models and data in memory when it is constructed (about 15 s), nothing is written;
- simple, pytorch-converted, pytorch-operator: the models and data shipped in the onnx wheel;
- real (the light model zoo): excluded here, see `test_zoo_native.py` and `bench/zoo.py`.

Each test imports the model, compiles it with the default fusion pipeline to native code
(no compile cache: nothing would be reused), runs it on the recorded inputs and compares with
the recorded outputs at the runner's tolerances. What the compiler cannot run is excluded by
the explicit list of `fusion_compiler.frontend.conformance_exclusions`, each entry with its reason; the
runner reports those as skipped. The CUDA copies of the tests are dropped.
"""

from __future__ import annotations

import os
import re
import unittest
import warnings

import pytest

pytest.importorskip("onnx")

import onnx.backend.test  # noqa: E402

from fusion_compiler.frontend.backend import FusionBackend  # noqa: E402
from fusion_compiler.frontend.conformance_exclusions import (  # noqa: E402
    EXCLUDED,
    excluded_entries,
    exclusion_patterns,
)


def _runner_test_cases() -> dict[str, type]:
    """The runner's unittest classes, one per test set, with exclusions and without CUDA."""
    with warnings.catch_warnings():  # the node case generators overflow casts on purpose
        warnings.simplefilter("ignore", RuntimeWarning)
        backend_test = onnx.backend.test.BackendTest(FusionBackend, __name__)
    for pattern in exclusion_patterns():
        backend_test.exclude(pattern)
    cases = backend_test.test_cases
    for case in cases.values():
        for name in [n for n in vars(case) if n.startswith("test_") and n.endswith("_cuda")]:
            delattr(case, name)
    if os.environ.get(FULL_VARIABLE) != "1":
        _sample(cases, _ATTENTION, ATTENTION_SAMPLE, "attention")
        _sample(cases, _EXPANDED_OTHER, EXPANDED_SAMPLE, "expanded function")
    return cases


FULL_VARIABLE = "FUSION_TEST_FULL_CONFORMANCE"
ATTENTION_SAMPLE = 4
EXPANDED_SAMPLE = 2
"""The `_expanded` tests run an op's ONNX function body (graphs of ops each tested on its own
too): in the default run one in `EXPANDED_SAMPLE` of them (by name). Attention's tests, node
and expanded alike, import the same function body (`onnx_functions`: about 160 variants of
one op at 1.5 s each): one in `ATTENTION_SAMPLE` of them. `FUSION_TEST_FULL_CONFORMANCE=1`
runs them all (the counts in the README)."""
_ATTENTION = re.compile(r"test_(flex)?attention_.*_cpu$")
_EXPANDED_OTHER = re.compile(r"test_(?!(flex)?attention_).*expanded.*_cpu$")


def _sample(cases: dict[str, type], pattern: re.Pattern, every: int, what: str) -> None:
    """Skips all but every `every`-th test whose name matches `pattern` (sorted by name)."""
    reason = f"{what}, sampled: {FULL_VARIABLE}=1 runs every variant"
    for case in cases.values():
        names = sorted(n for n in vars(case) if pattern.match(n))
        for index, name in enumerate(names):
            if index % every:
                setattr(case, name, unittest.skip(reason)(getattr(case, name)))


_test_cases = _runner_test_cases()
globals().update(_test_cases)


@pytest.fixture(scope="module", autouse=True)
def _no_compile_cache():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FUSION_CACHE_DIR", "")
        yield


def _cpu_test_names() -> list[str]:
    return [name for case in _test_cases.values() for name in vars(case) if name.endswith("_cpu")]


def test_every_exclusion_names_a_test():
    """No stale entry: each one matches at least one test of the runner."""
    names = _cpu_test_names()
    stale = [
        entry
        for entry, pattern in zip(
            (e for e, _ in excluded_entries()), exclusion_patterns(), strict=True
        )
        if not any(re.match(pattern, name) for name in names)
    ]
    assert not stale


def test_every_reason_has_entries():
    assert all(names.split() for names in EXCLUDED.values())
    assert all(reason.strip() == reason and reason for reason in EXCLUDED)
