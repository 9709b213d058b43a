"""`clean-up-kernels`: what the scheduling stages leave behind, removed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from fusion_compiler.dialects.loop import REGISTER_TILED_ATTR, FuncOp
from fusion_compiler.passes.schedule.common_values import eliminate_common_values
from fusion_compiler.passes.schedule.kernel_pass import KernelPass
from fusion_compiler.passes.schedule.normalize import (
    erase_dead_code,
    fold_index_constants,
    hoist_constants,
)
from fusion_compiler.passes.schedule.quotient_folding import fold_quotients
from fusion_compiler.passes.schedule.store_forwarding import (
    erase_dead_buffers,
    erase_overwritten_stores,
    forward_stores,
)


def clean_up(func: FuncOp, forward_stores_: bool) -> None:
    """Merge constants and common values, drop dead code and the local buffers no longer read;
    with `forward_stores_`, first forward stored and loaded values to later loads."""
    fold_quotients(func)
    fold_index_constants(func)
    hoist_constants(func)
    eliminate_common_values(func)
    if forward_stores_:
        forward_stores(func)
        erase_overwritten_stores(func)
    erase_dead_buffers(func)
    erase_dead_code(func)


@dataclass(frozen=True)
class CleanUpKernelsPass(KernelPass):
    """Fold index arithmetic (quotients and remainders of bounded subscripts too:
    `quotient_folding.py`), merge constants and common subexpressions, forward stores,
    erase dead stores, buffers and code.

    Pre-conditions: kernels of loops, buffers, loads, stores and scalar ops; stores are not
    forwarded in a register-tiled kernel (its accumulator loads and stores are the tile's).
    Post-conditions: constants folded and hoisted (one per value), no common subexpression;
    with `forward-stores` (the default), a load of a value stored earlier in the same
    iteration is replaced by that value and stores overwritten before any read are erased
    (`store_forwarding.py`); local buffers that are never read, unused pure ops and loads,
    and empty loops are gone. Same results, bit for bit.
    """

    name = "clean-up-kernels"

    skips_register_tiled: ClassVar[bool] = False

    forward_stores: bool = True

    def schedule(self, kernel: FuncOp) -> None:
        clean_up(kernel, self.forward_stores and REGISTER_TILED_ATTR not in kernel.attributes)
