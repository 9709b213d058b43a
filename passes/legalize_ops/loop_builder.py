"""The kernel builder of the legalizations, at its old address: it lives with the loop dialect
(`fusion_compiler.dialects.loop.builder`), since lower-graph builds entry functions with it
too."""

from fusion_compiler.dialects.loop.builder import (
    CONTRACT,
    NEG_INF,
    Combine,
    Indices,
    KernelBuilder,
    Legalization,
    broadcast_indices,
    buffer_shape,
    buffer_type,
    nan_max,
)

__all__ = [
    "CONTRACT",
    "NEG_INF",
    "Combine",
    "Indices",
    "KernelBuilder",
    "Legalization",
    "broadcast_indices",
    "buffer_shape",
    "buffer_type",
    "nan_max",
]
