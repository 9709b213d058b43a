"""Results reuse their buffers only once nothing the caller holds refers to them."""

from __future__ import annotations

import numpy as np

from fusion_compiler.lowering.jit import BUFFER_ALIGNMENT
from fusion_compiler.lowering.output_pool import POOL_DEPTH, OutputPool

SIZE = 1 << 20
SHAPE = (SIZE // 4,)
F32 = np.dtype(np.float32)


def _take(pool: OutputPool) -> np.ndarray:
    (array,), (address,) = pool.take_all()
    assert address == array.ctypes.data and address % BUFFER_ALIGNMENT == 0
    assert array.shape == SHAPE and array.dtype == F32 and array.flags.c_contiguous
    return array


def test_a_dropped_result_is_reused():
    pool = OutputPool([(SHAPE, F32)])
    first = _take(pool)
    address = first.ctypes.data
    del first
    assert _take(pool).ctypes.data == address


def test_held_results_and_their_views_are_never_handed_out_again():
    pool = OutputPool([(SHAPE, F32)])
    held = _take(pool)
    held[:] = 1.0
    view = _take(pool)[10:20]  # the result is dropped, its slice kept
    view[:] = 2.0
    for _ in range(5):
        _take(pool)[:] = 3.0
    assert (held == 1.0).all() and (view == 2.0).all()


def test_past_its_depth_the_pool_gives_new_buffers():
    pool = OutputPool([(SHAPE, F32)])
    kept = [_take(pool) for _ in range(POOL_DEPTH + 2)]
    assert len({array.ctypes.data for array in kept}) == POOL_DEPTH + 2
    pooled = {array.ctypes.data for array in kept[:POOL_DEPTH]}
    del kept
    assert {_take(pool).ctypes.data for _ in range(3)} <= pooled


def test_small_results_are_pooled_too():
    pool = OutputPool([((256,), F32)])
    (first,), (address,) = pool.take_all()
    (held,), (held_address,) = pool.take_all()
    assert held_address != address and address % BUFFER_ALIGNMENT == 0
    del first
    (second,), (again,) = pool.take_all()
    assert again == address == second.ctypes.data and held.ctypes.data == held_address


def test_a_compiled_function_reuses_a_large_result_only_when_dropped():
    import fusion_compiler as fc

    t = "tensor<512x512xf32>"
    model = fc.compile(
        f"func.func @main(%x: {t}) -> {t} {{\n"
        f"  %y = graph.relu %x : {t}\n  func.return %y : {t}\n}}",
        cache=False,
    )
    x = np.random.default_rng(0).standard_normal((512, 512)).astype(np.float32)
    kept = model(x)
    dropped = model(-x)
    address = dropped.ctypes.data
    del dropped
    again = model(-x)
    assert again.ctypes.data == address != kept.ctypes.data
    np.testing.assert_array_equal(kept, np.maximum(x, 0))
    np.testing.assert_array_equal(again, np.maximum(-x, 0))
