"""`fusion-run` refuses a function whose buffers cannot fit in the machine's memory, before
anything is compiled or allocated.

The bound is a lower bound of what a run needs, whatever fusion does: its inputs, its
outputs and the largest intermediate tensor (the memory plan of lower-graph holds at least
that one at once; fused kernels keep fewer intermediates, never a larger one).
"""

from __future__ import annotations

import os
from math import prod
from typing import TYPE_CHECKING

from fusion_compiler.dialects.compile_error import CompileError

if TYPE_CHECKING:
    from xdsl.dialects import func
    from xdsl.ir import Attribute


def physical_memory() -> int | None:
    """The machine's physical memory in bytes (None when the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def tensor_bytes(value_type: Attribute) -> int:
    # (imported here: `memory_problem` is what a run of a model the cache holds asks, with
    # the bytes `run_facts` kept, and it loads no IR machinery)
    from xdsl.dialects.builtin import TensorType

    from fusion_compiler.dialects.element_dtypes import numpy_dtype

    if not isinstance(value_type, TensorType):
        return 0
    itemsize = numpy_dtype(value_type.element_type).itemsize
    return prod(value_type.get_shape()) * itemsize


def _size(count: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"


def memory_needed(function: func.FuncOp) -> tuple[int, int, int]:
    """Bytes of the inputs, of the outputs and of the largest intermediate tensor."""
    inputs = sum(tensor_bytes(arg.type) for arg in function.body.block.args)
    outputs = sum(tensor_bytes(t) for t in function.function_type.outputs.data)
    returned = set(function.body.block.last_op.operands) if function.body.block.last_op else set()
    largest = max(
        (
            tensor_bytes(r.type)
            for op in function.body.block.ops
            for r in op.results
            if r not in returned
        ),
        default=0,
    )
    return inputs, outputs, largest


def check_memory(
    function: func.FuncOp,
    available: int | None = None,
    needed: tuple[int, int, int] | None = None,
) -> None:
    """Raises a `CompileError` with the sizes when `function` cannot run in `available`
    bytes (default: the machine's physical memory); `needed`: its `memory_needed`, when the
    caller has it."""
    needed = memory_needed(function) if needed is None else needed
    problem = memory_problem(function.sym_name.data, needed, available)
    if problem is not None:
        raise CompileError(problem, function)


def memory_problem(
    name: str, needed: tuple[int, int, int], available: int | None = None
) -> str | None:
    """What is wrong when a function `name` that needs `needed` bytes (`memory_needed`) cannot
    run in `available` bytes (default: the machine's physical memory); None if it can."""
    available = physical_memory() if available is None else available
    if available is None:
        return None
    inputs, outputs, largest = needed
    total = inputs + outputs + largest
    if total <= available:
        return None
    return (
        f"@{name} needs at least {_size(total)} of memory (inputs "
        f"{_size(inputs)}, outputs {_size(outputs)}, largest intermediate {_size(largest)}); "
        f"this machine has {_size(available)}"
    )
