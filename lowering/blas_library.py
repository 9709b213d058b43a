"""The BLAS library of the `blas` backend: OpenBLAS from the `scipy-openblas32` wheel.

The optional extra `pip install 'fusion-compiler[blas]'` installs it. The package's own helpers
give its shared library (`get_lib_dir`, `get_library`) and the prefix of its symbols
(`BLAS_SYMBOL_PREFIX` in `get_pkg_config`: `scipy_`, so `cblas_sgemm` is
`scipy_cblas_sgemm`). `load()` makes the library's symbols visible to the JIT
(`llvmlite.binding.load_library_permanently`), once per process; the JIT calls it for every
module that declares a symbol of the library (`needs_library`), compiled or loaded from the
compile cache. Without the package, `load()` and `sgemm_symbol()` raise one
`MissingLibraryError` naming the extra.
"""

from __future__ import annotations

import ctypes
import os
import re
from dataclasses import dataclass
from functools import cache

from fusion_compiler.errors import MissingLibraryError

EXTRA = "blas"
"""The optional extra of the project that installs the library."""

PACKAGE = "scipy_openblas32"


@dataclass(frozen=True)
class BlasLibrary:
    path: str
    prefix: str
    suffix: str

    def symbol(self, name: str) -> str:
        """The library's name for the C function `name` (`cblas_sgemm` → `scipy_cblas_sgemm`)."""
        return f"{self.prefix}{name}{self.suffix}"


def missing_library_error() -> MissingLibraryError:
    return MissingLibraryError(
        "the 'blas' backend needs OpenBLAS, which is not installed: "
        f"pip install 'fusion-compiler[{EXTRA}]' (the {PACKAGE.replace('_', '-')} package)"
    )


@cache
def find_library() -> BlasLibrary:
    """Where the library is and how its symbols are named (from the package's helpers)."""
    try:
        package = __import__(PACKAGE)
    except ImportError:
        raise missing_library_error() from None
    path = os.path.join(package.get_lib_dir(), package.get_library(fullname=True))
    if not os.path.exists(path):
        raise missing_library_error()
    config = package.get_pkg_config()
    prefix = re.search(r"-DBLAS_SYMBOL_PREFIX=(\w+)", config)
    suffix = re.search(r"-DBLAS_SYMBOL_SUFFIX=(\w+)", config)
    return BlasLibrary(path, prefix[1] if prefix else "", suffix[1] if suffix else "")


def is_installed() -> bool:
    """Whether the library's package is installed."""
    try:
        find_library()
    except MissingLibraryError:
        return False
    return True


def sgemm_symbol() -> str:
    """The C name of the library's `cblas_sgemm`."""
    return find_library().symbol("cblas_sgemm")


@cache
def load() -> BlasLibrary:
    """Load the library into the process so that JIT-compiled code resolves its symbols."""
    import llvmlite.binding as llvm

    library = find_library()
    llvm.load_library_permanently(library.path)
    return library


def needs_library(declared: list[str]) -> bool:
    """Whether a module declaring the external functions `declared` calls the library."""
    return any("cblas_" in name for name in declared)


def set_num_threads(count: int) -> None:
    """Run the library's routines on `count` threads (0: every core); no effect when the
    library was never loaded."""
    if not load.cache_info().currsize:
        return
    library = load()
    handle = ctypes.CDLL(library.path)
    setter = getattr(handle, library.symbol("openblas_set_num_threads"))
    setter(ctypes.c_int(count or os.cpu_count() or 1))
