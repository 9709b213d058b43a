"""The shape rules: every rule on good and bad shapes, compared with numpy where numpy has the
same operation, and every error message names the shapes involved."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import DYNAMIC_INDEX

from fusion_compiler.dialects import shape_rules as sr
from fusion_compiler.dialects.shape_rules import ShapeError

dims = st.integers(min_value=1, max_value=4)
shapes = st.lists(dims, min_size=0, max_size=4).map(tuple)


def test_a_dynamic_dimension_is_xdsls():
    assert sr.DYN == DYNAMIC_INDEX


def _raises(match: str):
    """`pytest.raises(ShapeError)` whose message contains `match` literally."""
    return pytest.raises(ShapeError, match=re.escape(match))


# ---------------------------------------------------------------------------------------------
# fmt and axes
# ---------------------------------------------------------------------------------------------


def test_fmt_writes_shapes_like_tensor_types():
    assert sr.fmt((2, 3, 4)) == "2x3x4"
    assert sr.fmt((7,)) == "7"
    assert sr.fmt(()) == "scalar"


@pytest.mark.parametrize(
    ("axis", "rank", "expected"), [(0, 3, 0), (2, 3, 2), (-1, 3, 2), (-3, 3, 0)]
)
def test_normalize_axis(axis, rank, expected):
    assert sr.normalize_axis(axis, rank) == expected


@pytest.mark.parametrize(("axis", "rank"), [(3, 3), (-4, 3), (0, 0)])
def test_normalize_axis_out_of_range(axis, rank):
    with _raises(f"axis {axis} is out of range for rank {rank}"):
        sr.normalize_axis(axis, rank)


def test_normalize_axes_sorts_and_rejects_repeats():
    assert sr.normalize_axes([-1, 0], 3) == (0, 2)
    assert sr.normalize_axes([], 3) == ()
    with _raises("axes [1, -2] repeat an axis"):
        sr.normalize_axes([1, -2], 3)
    with _raises("axes 5 is out of range for rank 2"):
        sr.normalize_axes([5], 2)


# ---------------------------------------------------------------------------------------------
# Broadcasting
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((4, 8), (8,), (4, 8)),
        ((4, 1), (1, 8), (4, 8)),
        ((10, 1, 20), (), (10, 1, 20)),
        ((), (), ()),
        ((1, 64, 56, 56), (1, 64, 1, 1), (1, 64, 56, 56)),
        ((0, 3), (1, 3), (0, 3)),
    ],
)
def test_broadcast(a, b, expected):
    assert sr.broadcast(a, b) == expected
    assert sr.broadcast(b, a) == expected


def test_broadcast_error_names_both_shapes():
    with _raises("shapes 2x3 and 4x5 are not broadcast-compatible"):
        sr.broadcast((2, 3), (4, 5))


@settings(max_examples=200, deadline=None)
@given(shapes, shapes)
def test_broadcast_matches_numpy(a, b):
    try:
        expected = np.broadcast_shapes(a, b)
    except ValueError:
        with pytest.raises(ShapeError):
            sr.broadcast(a, b)
    else:
        assert sr.broadcast(a, b) == expected


def test_broadcast_to():
    assert sr.broadcast_to((1, 64, 1, 1), (2, 64, 7, 7)) == (2, 64, 7, 7)
    assert sr.broadcast_to((3,), (2, 3)) == (2, 3)
    with _raises("shape 1x3 cannot be broadcast to 3x1"):
        sr.broadcast_to((1, 3), (3, 1))
    with _raises("shape 2x3 cannot be broadcast to 3"):
        sr.broadcast_to((2, 3), (3,))


def test_broadcast_to_incompatible_names_both_shapes():
    with pytest.raises(ShapeError) as err:
        sr.broadcast_to((2, 3), (3, 3))
    assert "2x3" in str(err.value) and "3x3" in str(err.value)


# ---------------------------------------------------------------------------------------------
# matmul
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((128, 768), (768, 3072), (128, 3072)),
        ((4, 128, 64), (4, 64, 128), (4, 128, 128)),
        ((2, 1, 3, 4), (5, 4, 6), (2, 5, 3, 6)),
        ((3, 4), (2, 4, 5), (2, 3, 5)),
    ],
)
def test_matmul(a, b, expected):
    assert sr.matmul(a, b) == expected
    assert np.matmul(np.zeros(a), np.zeros(b)).shape == expected


def test_matmul_errors_name_the_shapes():
    with _raises("contracting dimensions differ: 128x768 has 768 columns, 512x3072 has 512 rows"):
        sr.matmul((128, 768), (512, 3072))
    with _raises("matmul needs operands of rank >= 2, got 768 and 768x3072"):
        sr.matmul((768,), (768, 3072))
    with _raises("batch dimensions of 2x4x8 and 3x8x5 are not broadcast-compatible"):
        sr.matmul((2, 4, 8), (3, 8, 5))


# ---------------------------------------------------------------------------------------------
# Sliding windows: conv2d and pooling
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("size", "kernel", "stride", "lo", "hi", "dilation", "expected"),
    [
        (56, 3, 1, 1, 1, 1, 56),
        (112, 3, 2, 1, 1, 1, 56),
        (9, 3, 2, 0, 1, 2, 3),
        (3, 3, 1, 0, 0, 1, 1),
    ],
)
def test_window_output(size, kernel, stride, lo, hi, dilation, expected):
    assert sr.window_output(size, kernel, stride, lo, hi, dilation) == expected
    effective = (kernel - 1) * dilation + 1
    assert len(range(0, size + lo + hi - effective + 1, stride)) == expected


def test_window_that_does_not_fit():
    with _raises("window of 5 does not fit an input of 2 padded by 1+1"):
        sr.window_output(2, 3, 1, 1, 1, dilation=2)


def test_conv2d():
    assert sr.conv2d((1, 64, 56, 56), (64, 64, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1) == (
        1,
        64,
        56,
        56,
    )
    # Strided, asymmetric padding, dilated, grouped.
    assert sr.conv2d((1, 4, 9, 9), (8, 2, 3, 3), (2, 2), (1, 0, 1, 1), (1, 2), 2) == (1, 8, 5, 3)
    # Depthwise.
    assert sr.conv2d((2, 32, 8, 8), (32, 1, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 32) == (
        2,
        32,
        6,
        6,
    )


@pytest.mark.parametrize(
    ("x", "w", "strides", "padding", "dilation", "groups", "message"),
    [
        (
            (1, 64, 56, 56),
            (64, 32, 3, 3),
            (1, 1),
            (1, 1, 1, 1),
            (1, 1),
            1,
            "weight 64x32x3x3 expects 32 input channels (32 per group x 1 groups), "
            "input 1x64x56x56 has 64",
        ),
        (
            (1, 64, 56, 56),
            (64, 64, 3, 3),
            (1, 1),
            (1, 1, 1, 1),
            (1, 1),
            3,
            "groups = 3 must divide the input channels (64) and the output channels (64)",
        ),
        (
            (1, 64, 56, 56),
            (64, 64, 3, 3),
            (1, 1),
            (1, 1, 1, 1),
            (1, 1),
            0,
            "groups = 0 must divide",
        ),
        (
            (64, 56, 56),
            (64, 64, 3, 3),
            (1, 1),
            (1, 1, 1, 1),
            (1, 1),
            1,
            "conv2d needs a rank-4 input and weight, got 64x56x56 and 64x64x3x3",
        ),
        (
            (1, 64, 56, 56),
            (64, 64, 3, 3),
            (1,),
            (1, 1, 1, 1),
            (1, 1),
            1,
            "'strides' needs 2 values, got 1",
        ),
        (
            (1, 64, 56, 56),
            (64, 64, 3, 3),
            (1, 0),
            (1, 1, 1, 1),
            (1, 1),
            1,
            "'strides' values must be >= 1, got [1, 0]",
        ),
        (
            (1, 64, 56, 56),
            (64, 64, 3, 3),
            (1, 1),
            (1, 1),
            (1, 1),
            1,
            "'padding' needs 4 values, got 2",
        ),
        (
            (1, 64, 56, 56),
            (64, 64, 3, 3),
            (1, 1),
            (1, -1, 1, 1),
            (1, 1),
            1,
            "'padding' values must be >= 0, got [1, -1, 1, 1]",
        ),
        (
            (1, 64, 56, 56),
            (64, 64, 3, 3),
            (1, 1),
            (1, 1, 1, 1),
            (0, 1),
            1,
            "'dilation' values must be >= 1, got [0, 1]",
        ),
        (
            (1, 64, 2, 2),
            (64, 64, 3, 3),
            (1, 1),
            (0, 0, 0, 0),
            (1, 1),
            1,
            "window of 3 does not fit an input of 2 padded by 0+0",
        ),
    ],
)
def test_conv2d_errors(x, w, strides, padding, dilation, groups, message):
    with _raises(message):
        sr.conv2d(x, w, strides, padding, dilation, groups)


def test_pool2d():
    assert sr.pool2d((1, 64, 112, 112), (3, 3), (2, 2), (1, 1, 1, 1)) == (1, 64, 56, 56)
    assert sr.pool2d((1, 3, 4, 6), (2, 3), (2, 3), (0, 0, 0, 0)) == (1, 3, 2, 2)


@pytest.mark.parametrize(
    ("x", "kernel", "strides", "padding", "message"),
    [
        ((1, 64, 112, 112), (3, 3), (2, 2), (3, 3, 3, 3), "padding [3, 3, 3, 3] must be smaller"),
        ((1, 64, 112, 112), (3, 3), (2, 2), (0, 0, 0, 3), "than the kernel [3, 3]"),
        ((64, 112, 112), (3, 3), (2, 2), (1, 1, 1, 1), "rank-4 NCHW input, got 64x112x112"),
        ((1, 64, 112, 112), (3,), (2, 2), (1, 1, 1, 1), "'kernel' needs 2 values, got 1"),
        ((1, 64, 112, 112), (0, 3), (2, 2), (0, 0, 0, 0), "'kernel' values must be >= 1"),
        ((1, 64, 2, 2), (3, 3), (1, 1), (0, 0, 0, 0), "window of 3 does not fit an input of 2"),
    ],
)
def test_pool2d_errors(x, kernel, strides, padding, message):
    with _raises(message):
        sr.pool2d(x, kernel, strides, padding)


def test_global_pool2d():
    assert sr.global_pool2d((2, 64, 7, 7)) == (2, 64, 1, 1)
    with _raises("global pooling needs a rank-4 NCHW input, got 64x7x7"):
        sr.global_pool2d((64, 7, 7))


# ---------------------------------------------------------------------------------------------
# Normalisation parameters
# ---------------------------------------------------------------------------------------------


def test_channel_parameter():
    sr.channel_parameter((1, 64, 56, 56), (64,), "scale")
    sr.channel_parameter((8, 16), (16,), "mean")
    with _raises("scale must have shape 64 (the channels of 1x64x56x56), got 32"):
        sr.channel_parameter((1, 64, 56, 56), (32,), "scale")
    with _raises("var must have shape 64 (the channels of 1x64x56x56), got 1x64"):
        sr.channel_parameter((1, 64, 56, 56), (1, 64), "var")
    with _raises("the input needs a channel axis 1, got 64"):
        sr.channel_parameter((64,), (64,), "bias")


def test_layer_norm_parameter():
    sr.layer_norm_parameter((128, 256), (256,), -1, "gamma")
    sr.layer_norm_parameter((2, 128, 256), (128, 256), 1, "beta")
    with _raises("gamma must have shape 256 (axes 1.. of 128x256), got 128"):
        sr.layer_norm_parameter((128, 256), (128,), -1, "gamma")
    with _raises("beta must have shape 128x256 (axes 1.. of 2x128x256), got 256"):
        sr.layer_norm_parameter((2, 128, 256), (256,), 1, "beta")
    with _raises("axis 2 is out of range for rank 2"):
        sr.layer_norm_parameter((128, 256), (256,), 2, "gamma")


# ---------------------------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "axes", "keepdims", "expected"),
    [
        ((512, 768), [1], True, (512, 1)),
        ((512, 768), [1], False, (512,)),
        ((4, 8, 16), [-1, 0], False, (8,)),
        ((4, 8, 16), [], False, ()),
        ((4, 8, 16), [], True, (1, 1, 1)),
    ],
)
def test_reduce(x, axes, keepdims, expected):
    assert sr.reduce(x, axes, keepdims) == expected
    numpy_axes = tuple(axes) if axes else None
    assert np.sum(np.zeros(x), axis=numpy_axes, keepdims=keepdims).shape == expected


def test_reduce_errors():
    with _raises("axes 3 is out of range for rank 3"):
        sr.reduce((4, 8, 16), [3], False)
    with _raises("axes [1, -2] repeat an axis"):
        sr.reduce((4, 8, 16), [1, -2], False)


# ---------------------------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------------------------


@settings(max_examples=100, deadline=None)
@given(st.lists(dims, min_size=1, max_size=4).map(tuple), st.data())
def test_transpose_matches_numpy(x, data):
    perm = data.draw(st.permutations(range(len(x))))
    assert sr.transpose(x, perm) == np.transpose(np.zeros(x), perm).shape


@pytest.mark.parametrize("perm", [[1, 2, 2], [0, 1], [0, 1, 2, 3], [1, 2, 3]])
def test_transpose_bad_permutation(perm):
    with _raises(f"perm {perm} is not a permutation of the 3 axes of 128x4x64"):
        sr.transpose((128, 4, 64), perm)


def test_reshape():
    assert sr.reshape((128, 256), (128, 4, 64)) == (128, 4, 64)
    assert sr.reshape((), (1, 1)) == (1, 1)
    with _raises("cannot reshape 128x256 (32768 elements) to 128x4x32 (16384 elements)"):
        sr.reshape((128, 256), (128, 4, 32))


@pytest.mark.parametrize(
    ("x", "axes", "expected"),
    [((10, 1, 20), [1], (10, 20)), ((10, 1, 20, 1), [], (10, 20)), ((1,), [-1], ())],
)
def test_squeeze(x, axes, expected):
    assert sr.squeeze(x, axes) == expected
    assert np.squeeze(np.zeros(x), axis=tuple(axes) if axes else None).shape == expected


def test_squeeze_errors():
    with _raises("cannot squeeze axis 1 of 10x2x20: its size is 2"):
        sr.squeeze((10, 2, 20), [1])
    with _raises("axes 3 is out of range for rank 3"):
        sr.squeeze((10, 1, 20), [3])


@pytest.mark.parametrize(
    ("x", "axes", "expected"),
    [((10, 20), [0, -1], (1, 10, 20, 1)), ((3,), [1], (3, 1)), ((), [0], (1,))],
)
def test_expand_dims(x, axes, expected):
    assert sr.expand_dims(x, axes) == expected
    assert np.expand_dims(np.zeros(x), tuple(axes)).shape == expected


def test_expand_dims_errors():
    with _raises("axes 3 is out of range for rank 3"):
        sr.expand_dims((10, 20), [3])
    with _raises("axes [0, -4] repeat an axis"):
        sr.expand_dims((10, 20), [0, -4])


def test_concat():
    assert sr.concat([(2, 3), (2, 5), (2, 1)], -1) == (2, 9)
    assert sr.concat([(2, 3)], 0) == (2, 3)
    parts = [np.zeros((4, 2, 3)), np.zeros((4, 5, 3))]
    assert sr.concat([p.shape for p in parts], 1) == np.concatenate(parts, axis=1).shape


def test_concat_errors():
    with _raises(
        "operand #1 has shape 3x5, which differs from 2x3 outside the concatenation axis 1"
    ):
        sr.concat([(2, 3), (3, 5)], 1)
    with _raises("operand #2 has shape 2x3x1, which differs from 2x3"):
        sr.concat([(2, 3), (2, 3), (2, 3, 1)], 0)
    with _raises("concat needs at least one operand"):
        sr.concat([], 0)
    with _raises("axis 2 is out of range for rank 2"):
        sr.concat([(2, 3)], 2)


def test_split():
    assert sr.split((2, 10), 1, [3, 0, 7]) == [(2, 3), (2, 0), (2, 7)]
    pieces = np.split(np.zeros((6, 4)), [1, 3], axis=0)
    assert sr.split((6, 4), -2, [1, 2, 3]) == [p.shape for p in pieces]


def test_split_errors():
    with _raises(
        "sections [3, 6] must be non-negative and add up to 10, the size of axis 1 of 2x10"
    ):
        sr.split((2, 10), 1, [3, 6])
    with _raises("sections [12, -2] must be non-negative"):
        sr.split((2, 10), 1, [12, -2])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 6), min_size=1, max_size=3).map(tuple),
    st.data(),
)
def test_slice_matches_numpy(x, data):
    bounds = st.integers(-8, 8)
    starts = [data.draw(bounds) for _ in x]
    ends = [data.draw(bounds) for _ in x]
    steps = [data.draw(st.integers(-3, 3).filter(bool)) for _ in x]
    index = tuple(slice(*args) for args in zip(starts, ends, steps, strict=True))
    assert sr.slice_(x, starts, ends, steps) == np.zeros(x)[index].shape
    for size, start, end, step in zip(x, starts, ends, steps, strict=True):
        assert list(sr.slice_bounds(size, start, end, step)) == list(range(size))[start:end:step]


def test_slice_errors():
    with _raises("starts, ends and steps need one entry per axis of 8x10, got 1, 1 and 1"):
        sr.slice_((8, 10), [1], [7], [2])
    with _raises("got 2, 2 and 1"):
        sr.slice_((8, 10), [0, 0], [8, 10], [1])
    with _raises("slice step must not be 0"):
        sr.slice_((8, 10), [0, 0], [8, 10], [1, 0])


# --- dynamic dimensions (`?`) -----------------------------------------------------------------

Q = sr.DYN


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ((Q, 8), (8,), (Q, 8)),
        ((Q, 8), (4, 1), (4, 8)),  # a static side other than 1 decides
        ((Q, 1), (Q, 8), (Q, 8)),
        ((Q,), (1,), (Q,)),
        ((Q, Q), (Q, Q), (Q, Q)),
    ],
)
def test_broadcast_propagates_dynamic_dimensions(a, b, expected):
    assert sr.broadcast(a, b) == expected


def test_dynamic_rules_check_what_static_dimensions_decide():
    assert sr.matmul((Q, 8), (8, 16)) == (Q, 16)
    assert sr.matmul((2, Q, 8), (Q, 8, 4)) == (2, Q, 4)
    with pytest.raises(ShapeError, match="contracting dimensions differ: \\?x8 has 8 columns"):
        sr.matmul((Q, 8), (16, 4))
    with pytest.raises(ShapeError, match="not broadcast-compatible"):
        sr.broadcast((Q, 3), (Q, 4))
    assert sr.concat([(Q, 3), (2, 5)], 1) == (2, 8)
    assert sr.concat([(Q, 3), (2, Q)], 0) == (Q, 3)
    assert sr.reshape((Q, 8), (3, 4)) == (3, 4)  # checked once ? is known
    assert sr.slice_((Q, 8), (0, 2), (5, 8), (1, 1)) == (Q, 6)
    assert sr.conv2d((Q, 3, Q, 32), (8, 3, 3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 1) == (
        Q,
        8,
        Q,
        32,
    )
    with pytest.raises(ShapeError, match="needs its shape to be static"):
        sr.squeeze((Q, 1), ())
    assert sr.fmt((Q, 8)) == "?x8"


def test_compatible_shapes():
    assert sr.compatible((Q, 8), (4, 8))
    assert sr.compatible((4, 8), (Q, Q))
    assert not sr.compatible((Q, 8), (4, 9))
    assert not sr.compatible((Q,), (Q, Q))


@pytest.mark.parametrize(
    "source, shape, expected",
    [
        ((2, 8), (0, -1, 2), (2, 4, 2)),
        ((Q, 8), (0, 2, 4), (Q, 2, 4)),
        ((Q, 8), (0, -1), (Q, Q)),  # -1 of a dynamic count stays ?
        ((6,), (-1, 3), (2, 3)),
    ],
)
def test_onnx_reshape_target(source, shape, expected):
    assert sr.onnx_reshape_target(source, shape) == expected


def test_onnx_reshape_target_errors():
    with pytest.raises(ShapeError, match="cannot reshape 2x8 to \\[3, -1\\]"):
        sr.onnx_reshape_target((2, 8), (3, -1))
    with pytest.raises(ShapeError, match="invalid reshape target"):
        sr.onnx_reshape_target((2, 8), (-1, -1))


@pytest.mark.parametrize("bounds", [(0, 5, 1), (0, 5, 2), (5, 0, -1), (0.5, 3.2, 0.7), (3, 3, 1)])
def test_range_length_is_numpy_arange(bounds):
    assert sr.range_length(*bounds) == len(np.arange(*bounds))


def test_onnx_slice():
    assert sr.onnx_slice((1, 64), (0,), (5,), (1,), (1,)) == (1, 5)
    assert sr.onnx_slice((1, 64), (0,), (-1,), (-1,), (1,)) == (1, 63)
    assert sr.onnx_slice((1, 64), None, None, (1,), (1,)) == (1, Q)
    assert sr.onnx_slice((Q, 4), (0,), (2,), (0,), (1,)) == (Q, 4)
