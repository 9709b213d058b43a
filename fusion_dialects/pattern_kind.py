"""The operator pattern kinds that drive fusion (TVM's `OpPatternKind`).

One ordered vocabulary, shared by `annotate-pattern` (which derives a kernel's kind from its
loop body), the partition analysis of `fuse-ops` (which decides what may fuse), and the
`#loop.pattern<...>` attribute that carries the kind on a `loop.func`.

The values are TVM's, so combining two kinds is `max`:

    elemwise 0 < broadcast 1 < injective 2 < comm_reduce 3 < out_ewise_fusable 4 < tuple 7 < opaque 8
"""

from __future__ import annotations

from enum import IntEnum


class PatternKind(IntEnum):
    """How a kernel's outputs depend on its inputs, from most to least fusable."""

    ELEMWISE = 0
    """Every output element reads the inputs at the same index (`add`, `relu`)."""
    BROADCAST = 1
    """Inputs are read at the output index with some axes dropped (`expand_dims`, bias)."""
    INJECTIVE = 2
    """Each input index is a function of the output index (`transpose`, `reshape`, `concat`)."""
    COMM_REDUCE = 3
    """A commutative reduction (`reduce_sum`, `reduce_max`)."""
    OUT_EWISE_FUSABLE = 4
    """A complex op whose output can absorb elementwise consumers (`matmul`, `conv2d`)."""
    TUPLE = 7
    """A tuple node; only injective producers fuse into it."""
    OPAQUE = 8
    """Anything that cannot be fused."""

    @property
    def mnemonic(self) -> str:
        """The lower-case spelling used in IR and in diagnostics."""
        return self.name.lower()

    @classmethod
    def from_mnemonic(cls, text: str) -> PatternKind:
        """The kind spelled `text` (as printed by `mnemonic`); raises `ValueError`."""
        try:
            return cls[text.upper()]
        except KeyError:
            names = ", ".join(kind.mnemonic for kind in cls)
            raise ValueError(f"unknown pattern kind '{text}', expected one of: {names}") from None

    @staticmethod
    def combine(*kinds: PatternKind) -> PatternKind:
        """The kind of a group made of `kinds` (the least fusable of them)."""
        return PatternKind(max(kinds))
