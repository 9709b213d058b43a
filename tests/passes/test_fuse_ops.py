"""fuse-ops on IR built in Python: group-size limits, and every op in exactly one group."""

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block, Region

from fusion_compiler.dialects.graph import CallLoopOp, ReluOp, tensor_type
from fusion_compiler.dialects.loop import FuncOp as KernelOp
from fusion_compiler.driver import PassManager


def relu_chain(length: int) -> ModuleOp:
    block = Block(arg_types=[tensor_type((16,))])
    value = block.args[0]
    for _ in range(length):
        op = ReluOp(value)
        block.add_op(op)
        value = op.result
    block.add_op(func.ReturnOp(value))
    function_type = FunctionType.from_lists([tensor_type((16,))], [tensor_type((16,))])
    return ModuleOp([func.FuncOp("main", function_type, Region(block))])


def fused_group_sizes(module: ModuleOp) -> list[int]:
    sizes = {}
    for op in module.ops:
        if isinstance(op, func.FuncOp) and "graph.primitive" in op.attributes:
            calls = [c for c in op.body.block.ops if isinstance(c, CallLoopOp)]
            sizes[op.sym_name.data] = len(calls)
    main = next(
        op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main"
    )
    return [
        sizes[c.callee.string_value()] for c in main.body.block.ops if isinstance(c, func.CallOp)
    ]


def test_a_300_op_chain_splits_256_and_44():
    module = relu_chain(300)
    PassManager("legalize-ops,annotate-pattern,fuse-ops").run(module)
    assert fused_group_sizes(module) == [256, 44]


def test_max_depth_4_on_a_10_op_chain_gives_4_4_2():
    module = relu_chain(10)
    PassManager("legalize-ops,annotate-pattern,fuse-ops{max-depth=4}").run(module)
    assert fused_group_sizes(module) == [4, 4, 2]


def test_the_chain_fuses_into_two_kernels_after_fuse_tir():
    module = relu_chain(300)
    PassManager("legalize-ops,annotate-pattern,fuse-ops,fuse-tir").run(module)
    kernels = [op.sym_name.data for op in module.ops if isinstance(op, KernelOp)]
    assert len(kernels) == 2
    assert all(name.startswith("fused_relu_relu") for name in kernels)
