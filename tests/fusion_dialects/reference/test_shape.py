"""Data-movement reference ops: explicit expected values and roundtrips."""

import numpy as np
import pytest

from fusion_compiler.dialects.reference import numpy_ops as ref

INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


def _arange(*shape: int) -> np.ndarray:
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape)


@pytest.mark.parametrize(
    ("start", "end", "step", "expected"),
    [
        (1, 4, 1, [1, 2, 3]),
        (-3, INT64_MAX, 1, [3, 4, 5]),
        (0, 100, 2, [0, 2, 4]),
        (4, 1, -1, [4, 3, 2]),
        (-1, INT64_MIN, -1, [5, 4, 3, 2, 1, 0]),
        (INT64_MAX, INT64_MIN, -2, [5, 3, 1]),
        (5, -7, -3, [5, 2]),
        (-2, -5, -1, [4, 3, 2]),
        (2, 2, 1, []),
        (1, 4, -1, []),
        (-10, INT64_MIN, -1, []),  # numpy semantics; ONNX would clamp the start to 0 and give [0]
    ],
)
def test_slice_one_axis_follows_python_slicing(start, end, step, expected) -> None:
    y = ref.slice(_arange(6), [start], [end], [step])
    assert y.dtype == np.float32
    np.testing.assert_array_equal(y, np.float32(expected))


def test_slice_several_axes_with_negative_steps() -> None:
    x = _arange(3, 4, 5)
    y = ref.slice(x, [2, 0, -1], [INT64_MIN, 4, 0], [-1, 2, -2])
    expected = np.empty((3, 2, 2), np.float32)
    for a, i in enumerate([2, 1, 0]):
        for b, j in enumerate([0, 2]):
            for c, k in enumerate([4, 2]):
                expected[a, b, c] = x[i, j, k]
    np.testing.assert_array_equal(y, expected)


def test_slice_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="non-zero"):
        ref.slice(_arange(4), [0], [4], [0])
    with pytest.raises(ValueError, match="one start, end and step per axis"):
        ref.slice(_arange(2, 2), [0], [2], [1])


@pytest.mark.parametrize(
    ("axis", "sections"), [(0, [1, 3, 2]), (1, [4]), (-1, [2, 0, 3]), (-2, [2, 2])]
)
def test_split_then_concat_roundtrips(axis, sections) -> None:
    x = _arange(6, 4, 5) if axis == 0 else _arange(3, 4, 5)
    pieces = ref.split(x, axis, sections)
    assert [p.shape[axis] for p in pieces] == sections
    np.testing.assert_array_equal(ref.concat(pieces, axis), x)


def test_split_pieces_are_consecutive() -> None:
    first, second = ref.split(_arange(5), 0, [2, 3])
    np.testing.assert_array_equal(first, [0, 1])
    np.testing.assert_array_equal(second, [2, 3, 4])
    with pytest.raises(ValueError, match="sum to"):
        ref.split(_arange(5), 0, [2, 2])


def test_concat_joins_along_negative_axis() -> None:
    a, b = _arange(2, 3), _arange(2, 1) + 100
    np.testing.assert_array_equal(ref.concat([a, b], -1), [[0, 1, 2, 100], [3, 4, 5, 101]])


def test_transpose_moves_input_dim_perm_i_to_output_dim_i() -> None:
    x = _arange(2, 3, 4)
    y = ref.transpose(x, [2, 0, 1])
    assert y.shape == (4, 2, 3)
    for i, j, k in np.ndindex(4, 2, 3):
        assert y[i, j, k] == x[j, k, i]
    with pytest.raises(ValueError, match="permutation"):
        ref.transpose(x, [0, 0, 1])


@pytest.mark.parametrize(
    ("shape", "axes", "expected"),
    [
        ((3, 4), [0], (1, 3, 4)),
        ((3, 4), [0, -1], (1, 3, 4, 1)),
        ((3, 4), [1, 3], (3, 1, 4, 1)),
        ((3,), [-1, -2], (3, 1, 1)),
    ],
)
def test_expand_dims_axes_are_output_positions(shape, axes, expected) -> None:
    x = _arange(*shape)
    y = ref.expand_dims(x, axes)
    assert y.shape == expected
    np.testing.assert_array_equal(y.ravel(), x.ravel())


def test_squeeze_removes_listed_unit_dims() -> None:
    x = _arange(1, 3, 1, 2)
    assert ref.squeeze(x, [0, -2]).shape == (3, 2)
    assert ref.squeeze(x, [2]).shape == (1, 3, 2)
    assert ref.squeeze(x, []).shape == (3, 2)
    with pytest.raises(ValueError, match="cannot squeeze"):
        ref.squeeze(x, [1])


def test_reshape_and_broadcast_to() -> None:
    x = _arange(2, 3)
    np.testing.assert_array_equal(ref.reshape(x, [3, 2]), [[0, 1], [2, 3], [4, 5]])
    y = ref.broadcast_to(np.float32([[1.0], [2.0]]), [3, 2, 4])
    assert y.shape == (3, 2, 4) and y.dtype == np.float32
    assert (y[:, 0] == 1.0).all() and (y[:, 1] == 2.0).all()


def test_results_never_alias_inputs() -> None:
    x = _arange(2, 3)
    results = [
        ref.reshape(x, [6]),
        ref.broadcast_to(x, [2, 3]),
        ref.transpose(x, [1, 0]),
        ref.squeeze(x[None], [0]),
        ref.expand_dims(x, [0]),
        ref.concat([x], 0),
        ref.slice(x, [0, 0], [2, 3], [1, 1]),
        *ref.split(x, 0, [2]),
    ]
    for result in results:
        assert not np.shares_memory(result, x)
        assert result.flags.writeable


def test_constant_defaults_to_float32_and_copies() -> None:
    payload = [[1.5, 2.0]]
    value = ref.constant(payload)
    assert value.dtype == np.float32 and value.shape == (1, 2)
    assert ref.constant(3, dtype=np.int64).dtype == np.int64
    source = np.ones(2, np.float32)
    assert not np.shares_memory(ref.constant(source), source)
