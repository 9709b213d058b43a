"""Test helpers of legalize-ops: legalize a one-op function, and run its kernel on numpy
arrays, twice: with the shared loop interpreter (which bounds-checks every access) and
natively, through convert-loop-to-llvm and the llvmlite JIT."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, MemRefType, ModuleOp
from xdsl.ir import Block, Operation, Region
from xdsl.traits import SymbolTable

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.context import make_context
from fusion_compiler.dialects.graph import CallLoopOp, tensor_type
from fusion_compiler.dialects.reference import loop_interpreter
from fusion_compiler.passes.legalize_ops import LegalizeOpsPass

Runner = Callable[[loop.FuncOp, Sequence[np.ndarray]], list[np.ndarray]]


def _nan_outputs(kernel: loop.FuncOp) -> list[np.ndarray]:
    """Output buffers that start as NaN, so that an element the kernel never writes shows."""
    outputs = []
    for arg in kernel.output_args:
        assert isinstance(arg.type, MemRefType)
        outputs.append(np.full(arg.type.get_shape(), np.nan, dtype=np.float32))
    return outputs


def _f32(inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [np.array(x, dtype=np.float32, order="C") for x in inputs]


def run_kernel(kernel: loop.FuncOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run `kernel` on `inputs` with the shared loop interpreter; its output buffers."""
    outputs = _nan_outputs(kernel)
    loop_interpreter.run_kernel(kernel, [*_f32(inputs), *outputs])
    return outputs


def run_kernel_natively(kernel: loop.FuncOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Compile `kernel` alone through convert-loop-to-llvm and llvmlite, then call it."""
    from fusion_compiler.lowering.convert_loop_to_llvm import ConvertLoopToLLVMPass
    from fusion_compiler.lowering.llvm_codegen import compile_llvm_module

    module = ModuleOp([kernel.clone()])
    ConvertLoopToLLVMPass().apply(make_context(), module)
    outputs = _nan_outputs(kernel)
    compile_llvm_module(module).call_kernel(kernel.sym_name.data, *_f32(inputs), *outputs)
    return outputs


RUNNERS: dict[str, Runner] = {"interpreter": run_kernel, "llvm": run_kernel_natively}


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
    make_op: Callable[..., Operation], inputs: Sequence[np.ndarray], runner: Runner = run_kernel
) -> list[np.ndarray]:
    """Legalize a one-op function and run its kernel on `inputs` with `runner`."""
    module = legalize_module(build_one_op_module(make_op, [x.shape for x in inputs]))
    (call,) = [op for op in module.walk() if isinstance(op, CallLoopOp)]
    kernel = SymbolTable.lookup_symbol(module, call.callee)
    assert isinstance(kernel, loop.FuncOp)
    return runner(kernel, inputs)


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


@pytest.fixture(params=sorted(RUNNERS))
def legalize_and_run(request):
    """Legalize a one-op function and run its kernel, with each runner in turn."""
    runner = RUNNERS[request.param]
    return lambda make_op, inputs: legalize_one_op_and_run(make_op, inputs, runner)


@pytest.fixture
def interpret():
    return run_kernel
