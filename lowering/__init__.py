"""Lowering of kernels to native code: `loop` → xDSL's `llvm` dialect → llvmlite → JIT.

- `ConvertLoopToLLVMPass` (`convert-loop-to-llvm`): `loop.func` kernels → `llvm.func`;
- `compile_llvm_module`: an `llvm` dialect module → a `JitModule` (O3 for the host CPU,
  MCJIT), whose kernels are called on numpy arrays with `JitModule.call_kernel`.

The names are loaded on first use: a compile-cache hit needs neither the pass nor xDSL's llvm
dialect and its translation (a tenth of a second of imports).
"""

from importlib import import_module

_HOMES = {
    "ConvertLoopToLLVMPass": "convert_loop_to_llvm",
    "JitModule": "jit",
    "KernelCallError": "jit",
    "compile_llvm_module": "llvm_codegen",
}

__all__ = ["ConvertLoopToLLVMPass", "JitModule", "KernelCallError", "compile_llvm_module"]


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{home}"), name)
