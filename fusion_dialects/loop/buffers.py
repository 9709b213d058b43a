"""Buffers: `loop.alloc` (kernel-local), `loop.prefetch` (a hint that an element is read
soon), and, in lowered entry functions, `loop.call` (run a kernel on buffers) and
`loop.view` (a shaped view of a memory-plan slot)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, IndexType, IntegerAttr, MemRefType, SymbolRefAttr, i64
from xdsl.ir import SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import MemoryAllocEffect, Pure
from xdsl.utils.exceptions import VerifyException

from fusion_compiler.dialects.loop.kernel import FuncOp, _types
from fusion_compiler.dialects.symbols import lookup_symbol


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A kernel-local buffer, alive until the kernel returns (TIR's `alloc_buffer`).

    ```mlir
    %padded = loop.alloc : memref<1x64x58x58xf32>
    ```
    """

    name = "loop.alloc"

    result = result_def(MemRefType)
    traits = traits_def(MemoryAllocEffect())
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, buffer_type: MemRefType):
        super().__init__(result_types=[buffer_type])

    def verify_(self) -> None:
        buffer_type = self.result.type
        assert isinstance(buffer_type, MemRefType)
        if any(dim < 0 for dim in buffer_type.get_shape()):
            raise VerifyException(f"a local buffer needs a static shape, got {buffer_type}")


@irdl_op_definition
class PrefetchOp(IRDLOperation):
    """A hint that the element `buffer[indices]` is read soon: the cache line that holds it is
    fetched ahead of the read (LLVM's `llvm.prefetch`). It changes no value; its indices name
    an element of the buffer. Kernels hold it only at the end of scheduling
    (`prefetch-epilogues`): the loop analyses do not know it, so a kernel holding it is left
    alone by any scheduling pass that would run after.

    ```mlir
    loop.prefetch %residual[%c0, %row, %h, %w] : memref<1x256x56x56xf32>
    ```
    """

    name = "loop.prefetch"

    buffer = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    assembly_format = "$buffer `[` $indices `]` attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue, indices: Sequence[SSAValue]):
        super().__init__(operands=[buffer, list(indices)])

    def verify_(self) -> None:
        buffer_type = self.buffer.type
        assert isinstance(buffer_type, MemRefType)
        if len(self.indices) != buffer_type.get_num_dims():
            raise VerifyException(
                f"{buffer_type} needs {buffer_type.get_num_dims()} indices, got {len(self.indices)}"
            )


@irdl_op_definition
class CallOp(IRDLOperation):
    """Run a kernel on buffers: its inputs, then its outputs (used by lowered entry functions).

    ```mlir
    loop.call @fused_conv2d_add_relu(%x, %w, %b, %y)
        : memref<1x64x56x56xf32>, memref<64x64x3x3xf32>, memref<1x64x1x1xf32>,
          memref<1x64x56x56xf32>
    ```
    """

    name = "loop.call"

    callee = prop_def(SymbolRefAttr)
    buffers = var_operand_def(MemRefType)
    assembly_format = "$callee `(` $buffers `)` attr-dict `:` type($buffers)"

    def __init__(self, callee: str | SymbolRefAttr, buffers: Sequence[SSAValue]):
        if isinstance(callee, str):
            callee = SymbolRefAttr(callee)
        super().__init__(operands=[buffers], properties={"callee": callee})

    def verify_(self) -> None:
        kernel = lookup_symbol(self, self.callee)
        if not isinstance(kernel, FuncOp):
            raise VerifyException(f"{self.callee} is not a loop.func kernel")
        expected = (*kernel.function_type.inputs.data, *kernel.function_type.outputs.data)
        actual = tuple(buffer.type for buffer in self.buffers)
        if actual != expected:
            raise VerifyException(
                f"{self.callee} takes buffers {_types(expected)}, got {_types(actual)}"
            )


@irdl_op_definition
class ViewOp(IRDLOperation):
    """A buffer of another shape over the elements of another buffer, in row-major order,
    starting `offset` elements in (0 when absent): a memory-plan slot, or a part of a buffer
    another value is written into in place (an operand of a concat, `lowering/in_place.py`).

    ```mlir
    %t = loop.view %slot : memref<200704xf32> to memref<1x64x56x56xf32>
    %b = loop.view %slot[193600] : memref<387200xf32> to memref<1x64x55x55xf32>
    ```
    """

    name = "loop.view"

    source = operand_def(MemRefType)
    offset = opt_prop_def(IntegerAttr[I64])
    result = result_def(MemRefType)
    traits = traits_def(Pure())
    assembly_format = "$source (`[` $offset^ `]`)? attr-dict `:` type($source) `to` type($result)"

    def __init__(self, source: SSAValue, result_type: MemRefType, offset: int = 0):
        properties = {"offset": IntegerAttr(offset, i64)} if offset else {}
        super().__init__(operands=[source], result_types=[result_type], properties=properties)

    @property
    def element_offset(self) -> int:
        return 0 if self.offset is None else self.offset.value.data

    def verify_(self) -> None:
        source, result = self.source.type, self.result.type
        assert isinstance(source, MemRefType) and isinstance(result, MemRefType)
        if source.element_type != result.element_type:
            raise VerifyException(
                f"the source must be a buffer of {result.element_type}, got {source}"
            )
        if self.element_offset < 0:
            raise VerifyException(f"the offset must be at least 0, got {self.element_offset}")
        if self.element_offset + _count(result.get_shape()) > _count(source.get_shape()):
            at = f" at offset {self.element_offset}" if self.element_offset else ""
            raise VerifyException(f"{result}{at} does not fit in {source}")


def _count(shape: Sequence[int]) -> int:
    count = 1
    for dim in shape:
        count *= dim
    return count
