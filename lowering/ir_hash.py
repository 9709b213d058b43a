"""Hashes of IR that never print a constant's elements: what the compile cache keys are made of.

A module is printed (generic format) into a SHA-256 digest, with every dense elements
attribute printed as the SHA-256 of its raw bytes, so hashing a model reads each weight once
and never turns it into text.
"""

from __future__ import annotations

import hashlib
from typing import IO, cast

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import Attribute, Operation
from xdsl.printer import Printer

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.resources import HashingStream


class _ConstantHashingPrinter(Printer):
    """Prints dense elements as the SHA-256 of their raw bytes (and their type); with
    `weights=False`, the elements of `graph.constant` ops as their type alone."""

    weights = True
    _in_constant = False

    def print_op(self, op: Operation) -> None:
        if self.weights or not isinstance(op, graph.ConstantOp):
            super().print_op(op)
            return
        self._in_constant = True
        try:
            super().print_op(op)
        finally:
            self._in_constant = False

    def print_attribute(self, attribute: Attribute) -> None:
        if isinstance(attribute, DenseIntOrFPElementsAttr):
            if self._in_constant:
                self.print_string("weights : ")
            else:
                digest = hashlib.sha256(attribute.data.data).hexdigest()
                self.print_string(f"dense_sha256<{digest}> : ")
            self.print_attribute(attribute.type)
            return
        super().print_attribute(attribute)


def module_hash(module: Operation, *, weights: bool = True) -> str:
    """A hash of `module` (or of any op) that reads each constant's raw bytes once and never
    prints them; with `weights=False`, one that covers the types of `graph.constant` ops, not
    their elements."""
    digest = hashlib.sha256()
    stream = cast(IO[str], HashingStream(digest))  # (it takes text: `write` is all it has)
    printer = _ConstantHashingPrinter(stream=stream, print_generic_format=True)
    printer.weights = weights
    printer.print_op(module)
    return digest.hexdigest()
