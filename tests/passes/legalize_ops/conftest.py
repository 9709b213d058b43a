"""Test helpers of legalize-ops: legalize a one-op function, and run a kernel on numpy arrays.

`run_kernel` is a small, strict interpreter of the loop level (a recursive walk over `loop.for`,
`memref.load`/`store`, `arith` and `math`), used until the shared loop interpreter lands. It
checks the kernel conventions as it goes: every access must be in bounds (numpy would silently
wrap negative subscripts), `divui`/`remui` get non-negative operands, every op is one of the
allowed ones, and output and local buffers start as NaN so that an unwritten element shows.
Float ops round to f32 after every step, as the compiled kernel does.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.dialects import arith, func, math, memref
from xdsl.dialects.builtin import FloatAttr, FunctionType, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.traits import SymbolTable

from fusion_dialects import loop
from fusion_dialects.context import make_context
from fusion_dialects.graph import CallLoopOp, tensor_type
from passes.legalize_ops import LegalizeOpsPass

F32 = np.float32
Env = dict[SSAValue, object]


def _f32_unary(fn: Callable[[float], float]) -> Callable:
    return lambda x: F32(fn(float(x)))


def _rsqrt(x: float) -> float:
    return 1.0 / pymath.sqrt(x) if x > 0 else (pymath.inf if x == 0 else pymath.nan)


def _safe(fn: Callable[[float], float]) -> Callable[[float], float]:
    def apply(x: float) -> float:
        try:
            return fn(x)
        except (ValueError, OverflowError):
            return pymath.nan

    return apply


def _index_div(a: int, b: int) -> int:
    assert a >= 0 and b > 0, f"divui on {a}, {b}"
    return a // b


def _index_rem(a: int, b: int) -> int:
    assert a >= 0 and b > 0, f"remui on {a}, {b}"
    return a % b


FLOAT_BINARY: dict[type[Operation], Callable] = {
    arith.AddfOp: lambda a, b: F32(a + b),
    arith.SubfOp: lambda a, b: F32(a - b),
    arith.MulfOp: lambda a, b: F32(a * b),
    arith.DivfOp: lambda a, b: F32(np.divide(a, b)),
    arith.MaximumfOp: lambda a, b: F32(np.maximum(a, b)),
    arith.MinimumfOp: lambda a, b: F32(np.minimum(a, b)),
    math.PowFOp: lambda a, b: F32(np.power(np.float64(a), np.float64(b))),
}
FLOAT_UNARY: dict[type[Operation], Callable] = {
    arith.NegfOp: lambda x: F32(-x),
    math.AbsFOp: lambda x: F32(abs(x)),
    math.ExpOp: lambda x: F32(np.exp(np.float64(x))),
    math.LogOp: lambda x: F32(np.log(np.float64(x))),
    math.SqrtOp: lambda x: F32(np.sqrt(np.float64(x))),
    math.RsqrtOp: _f32_unary(_rsqrt),
    math.TanhOp: _f32_unary(pymath.tanh),
    math.ErfOp: _f32_unary(_safe(pymath.erf)),
}
INDEX_BINARY: dict[type[Operation], Callable] = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.DivUIOp: _index_div,
    arith.RemUIOp: _index_rem,
    arith.MinSIOp: min,
    arith.MaxSIOp: max,
}
COMPARISONS = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5}
COMPARE = {
    0: lambda a, b: a == b,
    1: lambda a, b: a != b,
    2: lambda a, b: a < b,
    3: lambda a, b: a <= b,
    4: lambda a, b: a > b,
    5: lambda a, b: a >= b,
}


def _subscripts(env: Env, buffer: np.ndarray, indices: Sequence[SSAValue]) -> tuple[int, ...]:
    subscripts = tuple(env[i] for i in indices)
    assert len(subscripts) == buffer.ndim, f"{len(subscripts)} subscripts for {buffer.shape}"
    for index, size in zip(subscripts, buffer.shape, strict=True):
        assert 0 <= index < size, f"subscript {subscripts} out of bounds of {buffer.shape}"
    return subscripts


def _constant(op: arith.ConstantOp) -> object:
    value = op.value
    if isinstance(value, FloatAttr):
        return F32(value.value.data)
    assert isinstance(value, IntegerAttr)
    return value.value.data


def _run_op(op: Operation, env: Env) -> None:  # noqa: C901 - one case per op family
    operands = [env[o] for o in op.operands]
    match op:
        case arith.ConstantOp():
            env[op.result] = _constant(op)
        case loop.ForOp():
            lb, ub, step = operands
            for i in range(lb, ub, step):
                env[op.induction_var] = i
                _run_block(op.body.block, env)
        case loop.AllocOp():
            shape = op.result.type.get_shape()
            env[op.result] = np.full(shape, np.nan, dtype=F32)
        case memref.LoadOp():
            buffer = env[op.memref]
            env[op.res] = buffer[_subscripts(env, buffer, op.indices)]
        case memref.StoreOp():
            buffer = env[op.memref]
            buffer[_subscripts(env, buffer, op.indices)] = env[op.value]
        case arith.CmpiOp():
            env[op.result] = COMPARE[op.predicate.value.data](*operands)
        case arith.SelectOp():
            condition, if_true, if_false = operands
            env[op.result] = if_true if condition else if_false
        case loop.YieldOp() | loop.ReturnOp():
            pass
        case _ if type(op) in INDEX_BINARY:
            env[op.results[0]] = INDEX_BINARY[type(op)](*operands)
        case _ if type(op) in FLOAT_BINARY:
            env[op.results[0]] = FLOAT_BINARY[type(op)](*operands)
        case _ if type(op) in FLOAT_UNARY:
            env[op.results[0]] = FLOAT_UNARY[type(op)](*operands)
        case _:
            raise AssertionError(f"op outside the kernel conventions: {op.name}")


def _run_block(block: Block, env: Env) -> None:
    for op in block.ops:
        _run_op(op, env)


def run_kernel(kernel: loop.FuncOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run `kernel` on `inputs`; its output buffers, fresh arrays."""
    env: Env = {}
    for arg, array in zip(kernel.input_args, inputs, strict=True):
        assert isinstance(arg.type, MemRefType)
        assert tuple(arg.type.get_shape()) == array.shape
        env[arg] = np.array(array, dtype=F32)
    outputs = []
    for arg in kernel.output_args:
        assert isinstance(arg.type, MemRefType)
        outputs.append(np.full(arg.type.get_shape(), np.nan, dtype=F32))
        env[arg] = outputs[-1]
    with np.errstate(all="ignore"):
        _run_block(kernel.body.block, env)
    return outputs


def build_one_op_module(
    make_op: Callable[..., Operation], shapes: Sequence[Sequence[int]]
) -> ModuleOp:
    """`func.func @case(args of shapes) { %r = make_op(args); return %r }` in a module."""
    block = Block(arg_types=[tensor_type(s) for s in shapes])
    op = make_op(*block.args)
    block.add_ops([op, func.ReturnOp(*op.results)])
    function_type = FunctionType.from_lists(
        [a.type for a in block.args], [r.type for r in op.results]
    )
    module = ModuleOp([func.FuncOp("case", function_type, Region(block))])
    module.verify()
    return module


def legalize_module(module: ModuleOp) -> ModuleOp:
    LegalizeOpsPass().apply(make_context(), module)
    module.verify()
    return module


def module_kernels(module: ModuleOp) -> list[loop.FuncOp]:
    return [op for op in module.ops if isinstance(op, loop.FuncOp)]


def legalize_one_op_and_run(
    make_op: Callable[..., Operation], inputs: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Legalize a one-op function and run its kernel on `inputs`."""
    module = legalize_module(build_one_op_module(make_op, [x.shape for x in inputs]))
    (call,) = [op for op in module.walk() if isinstance(op, CallLoopOp)]
    kernel = SymbolTable.lookup_symbol(module, call.callee)
    assert isinstance(kernel, loop.FuncOp)
    return run_kernel(kernel, inputs)


# Fixtures: test modules cannot import this file (pytest's importlib mode), so the helpers
# are handed over as fixtures.


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(0)


@pytest.fixture
def one_op_module():
    return build_one_op_module


@pytest.fixture
def legalize():
    return legalize_module


@pytest.fixture
def kernels_of():
    return module_kernels


@pytest.fixture
def legalize_and_run():
    return legalize_one_op_and_run


@pytest.fixture
def interpret():
    return run_kernel
