"""An entry keeps its slots from one call to the next; concurrent calls never share one, and
the buffers are freed with the model's native code."""

from __future__ import annotations

import ctypes
import gc
import threading

import numpy as np

from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.diagnostics import parse_source
from fusion_compiler.driver import compile_module
from fusion_compiler.lowering import kept_buffers

N = 64

IR = f"""
func.func @main(%a: tensor<{N}x{N}xf32>, %b: tensor<{N}x{N}xf32>) -> tensor<{N}x{N}xf32> {{
  %t = graph.matmul %a, %b : (tensor<{N}x{N}xf32>, tensor<{N}x{N}xf32>) -> tensor<{N}x{N}xf32>
  %u = graph.matmul %t, %b : (tensor<{N}x{N}xf32>, tensor<{N}x{N}xf32>) -> tensor<{N}x{N}xf32>
  func.return %u : tensor<{N}x{N}xf32>
}}
"""
"""Two matmuls, which fuse-ops keeps apart: the first one's result (16 KiB) is a slot on the
heap."""

SLOT = f"{kept_buffers.KEPT_PREFIX}main_0"


def _model():
    return compile_module(parse_source(make_context(), IR, "kept.mlir"), cache=False)


def _inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return tuple(rng.integers(-3, 4, (N, N)).astype(np.float32) for _ in range(2))  # type: ignore[return-value]


def _expected(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.float64) @ b @ b).astype(np.float32)  # (small integers: exact)


def _held(model) -> int | None:
    address = model._jit.global_address(SLOT)
    assert address, "the entry's slot has no global"
    return ctypes.c_void_p.from_address(address).value


def test_the_slot_is_kept_between_calls():
    model = _model()
    assert _held(model) is None  # (nothing allocated before the first call)
    a, b = _inputs(0)
    (first,) = model.main(a, b)
    kept = _held(model)
    assert kept is not None and kept % 64 == 0
    for seed in range(1, 4):
        a, b = _inputs(seed)
        (result,) = model.main(a, b)
        np.testing.assert_array_equal(result, _expected(a, b))
        assert _held(model) == kept


def test_concurrent_calls_each_get_a_buffer_of_their_own():
    model = _model()
    cases = [_inputs(seed) for seed in range(8)]
    wrong: list[int] = []

    def calls(offset: int) -> None:
        for round_ in range(40):
            index = (offset + round_) % len(cases)
            a, b = cases[index]
            (result,) = model.main(a, b)
            if not np.array_equal(result, _expected(a, b)):
                wrong.append(index)

    threads = [threading.Thread(target=calls, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong
    assert _held(model) is not None  # (one buffer kept, the others freed)


def test_release_frees_and_clears_and_a_later_call_allocates_again():
    model = _model()
    model.main(*_inputs(0))
    address = model._jit.global_address(SLOT)
    kept_buffers.release_kept([address])
    assert _held(model) is None
    a, b = _inputs(1)
    (result,) = model.main(a, b)
    np.testing.assert_array_equal(result, _expected(a, b))
    assert _held(model) is not None


def test_the_kept_buffers_are_freed_with_the_native_code(monkeypatch):
    freed: list[int] = []
    real_free = kept_buffers._free
    monkeypatch.setattr(
        kept_buffers, "_free", lambda pointer: (freed.append(pointer), real_free(pointer))
    )
    model = _model()
    model.main(*_inputs(0))
    kept = _held(model)
    del model
    gc.collect()
    assert freed == [kept]


def test_kept_globals_are_found_in_a_units_ir():
    text = '@__fusion_kept_main_0 = global i64 0, align 8\n@"__fusion_kept_a.b_1" = global i64 0\n'
    text += "@__fusion_num_threads = external global i32\n"
    assert kept_buffers.kept_globals(text) == ["__fusion_kept_main_0", "__fusion_kept_a.b_1"]
