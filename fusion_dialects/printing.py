"""IR text made faster than xDSL's printer makes it: the texts of attributes are kept.

A model's IR spells the same few dozen tensor types thousands of times (densenet121's graph:
2,974 of them), and xDSL prints each one anew, parameter by parameter. `attribute_text` keeps
the text of each attribute for the process (equal attributes print alike), and
`ModulePrinter` writes a tensor type from it; the structural hash of the compile cache
(`lowering/ir_hash.py`) names attributes by the same texts.
"""

from __future__ import annotations

from functools import lru_cache

from xdsl.dialects.builtin import NoneAttr, TensorType
from xdsl.ir import Attribute
from xdsl.printer import Printer

ATTRIBUTE_TEXTS_KEPT = 8192
"""The most attribute texts `attribute_text` keeps. Kernels share most of their attributes
(types, constants, loop marks), and printing them was a third of the time of hashing a
kernel; densenet121's whole compile meets 1553 distinct ones (39515 hits), so this holds
several models' worth in a few megabytes."""


@lru_cache(maxsize=ATTRIBUTE_TEXTS_KEPT)
def attribute_text(attribute: Attribute) -> str:
    """The text of `attribute` (not a dense elements attribute: its elements would be kept),
    shared by every caller in this process."""
    return str(attribute)


class ModulePrinter(Printer):
    """xDSL's printer, writing each tensor type without an encoding as its kept text
    (`attribute_text`): the same characters, half of the time of printing a model's graph
    (densenet121's: 0.107 -> 0.05 s)."""

    def print_attribute(self, attribute: Attribute) -> None:
        if isinstance(attribute, TensorType) and isinstance(attribute.encoding, NoneAttr):
            self.print_string(attribute_text(attribute))
            return
        super().print_attribute(attribute)
