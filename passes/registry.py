"""The pass registry, at its old address: it lives in `fusion_compiler.driver` (`PASSES`,
`available_passes`), above both the passes and the lowering it names."""

from fusion_compiler.driver import PASSES, available_passes

__all__ = ["PASSES", "available_passes"]
