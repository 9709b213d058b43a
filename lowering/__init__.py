"""Lowering of kernels to native code: `loop` → xDSL's `llvm` dialect → llvmlite → JIT.

- `ConvertLoopToLLVMPass` (`convert-loop-to-llvm`): `loop.func` kernels → `llvm.func`;
- `compile_llvm_module`: an `llvm` dialect module → a `JitModule` (O3 for the host CPU,
  MCJIT), whose kernels are called on numpy arrays with `JitModule.call_kernel`.
"""

from fusion_compiler.lowering.convert_loop_to_llvm import ConvertLoopToLLVMPass
from fusion_compiler.lowering.jit import JitModule, KernelCallError
from fusion_compiler.lowering.llvm_codegen import compile_llvm_module

__all__ = ["ConvertLoopToLLVMPass", "JitModule", "KernelCallError", "compile_llvm_module"]
