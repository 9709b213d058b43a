"""Hashes of IR that never print a constant's elements: what the compile cache keys are made of.

A module is printed (generic format) into a SHA-256 digest, with every dense elements
attribute printed as the SHA-256 of its raw bytes, so hashing a model reads each weight once
and never turns it into text.
"""

from __future__ import annotations

import hashlib
from typing import IO, cast

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, StringAttr
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.printer import Printer

from fusion_compiler.dialects import graph
from fusion_compiler.dialects.printing import attribute_text
from fusion_compiler.dialects.resources import HashingStream


def _is_weight(op: Operation) -> bool:
    """Whether `op` is a `graph.constant` whose elements a hash with `weights=False` leaves
    out: one of more than one element (a scalar is a literal of the kernels that read it,
    `graph.ConstantOp.is_scalar`: its value is part of the code)."""
    return isinstance(op, graph.ConstantOp) and not op.is_scalar


class _ConstantHashingPrinter(Printer):
    """Prints dense elements as the SHA-256 of their raw bytes (and their type); with
    `weights=False`, the elements of `graph.constant` ops as their type alone (scalars'
    aside: `_is_weight`)."""

    weights = True
    _in_constant = False

    def print_op(self, op: Operation) -> None:
        if self.weights or not _is_weight(op):
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
    their elements (but the value of a one-element constant, which kernels hold as a literal:
    `_is_weight`).

    It covers what the generic format prints, in its order: per op its name, operands (by
    number: values are numbered as they are defined, blocks as they are met), properties and
    attributes (sorted by name; each attribute printed once per hash, a dense one as the
    SHA-256 of its bytes), successors, result types and regions (blocks with their argument
    types). About five times faster than printing the module into the hash
    (`_ConstantHashingPrinter`, which `printed_module_hash` keeps as the reference)."""
    return _StructuralHash(weights).of(module)


def renamed_hash(op: Operation, name: str) -> str:
    """`module_hash` of a symbol op (a function or kernel) as if its `sym_name` were `name`
    (its own is put back): the same body under another name hashes alike."""
    own = op.properties["sym_name"]
    op.properties["sym_name"] = StringAttr(name)
    try:
        return module_hash(op)
    finally:
        op.properties["sym_name"] = own


def printed_module_hash(module: Operation, *, weights: bool = True) -> str:
    """`module` printed in the generic format into a SHA-256 (dense elements as the hash of
    their bytes): what `module_hash` covers, at printing speed."""
    digest = hashlib.sha256()
    stream = cast(IO[str], HashingStream(digest))  # (it takes text: `write` is all it has)
    printer = _ConstantHashingPrinter(stream=stream, print_generic_format=True)
    printer.weights = weights
    printer.print_op(module)
    return digest.hexdigest()


class _StructuralHash:
    def __init__(self, weights: bool):
        self.weights = weights
        self.values: dict[SSAValue, int] = {}
        self.blocks: dict[Block, int] = {}
        self.parts: list[str] = []
        self.texts: dict[int, tuple[Attribute, str]] = {}
        """Each attribute object's text, by identity (an op's types and properties are mostly
        objects it shares with other ops of the module: looked up by identity, not by the
        attribute's hash, which xDSL recomputes through its parameters each time); the
        attribute is held, so its identity is not reused while the hash runs."""

    def of(self, op: Operation) -> str:
        self._op(op)
        return hashlib.sha256("\0".join(self.parts).encode()).hexdigest()

    def _value(self, value: SSAValue) -> str:
        number = self.values.get(value)
        if number is None:
            number = self.values[value] = len(self.values)
        return f"%{number}"

    def _block(self, block: Block) -> str:
        number = self.blocks.get(block)
        if number is None:
            number = self.blocks[block] = len(self.blocks)
        return f"^{number}"

    def _attribute(self, attribute: Attribute) -> str:
        known = self.texts.get(id(attribute))
        if known is not None:
            return known[1]
        if isinstance(attribute, DenseIntOrFPElementsAttr):
            digest = hashlib.sha256(attribute.data.data).hexdigest()
            text = f"dense_sha256<{digest}>:{self._attribute(attribute.type)}"
        else:
            text = attribute_text(attribute)
        self.texts[id(attribute)] = (attribute, text)
        return text

    def _entries(self, entries: dict[str, Attribute], constant: bool) -> str:
        items = []
        for name in sorted(entries):
            value = entries[name]
            if constant and isinstance(value, DenseIntOrFPElementsAttr):
                items.append(f"{name}=weights:{self._attribute(value.type)}")
            else:
                items.append(f"{name}={self._attribute(value)}")
        return ",".join(items)

    def _op(self, op: Operation) -> None:
        constant = not self.weights and _is_weight(op)
        results = ",".join(self._value(r) + ":" + self._attribute(r.type) for r in op.results)
        operands = ",".join(self._value(v) for v in op.operands)
        successors = ",".join(self._block(b) for b in op.successors)
        self.parts.append(
            f"{results}={op.name}({operands})[{successors}]"
            f"<{self._entries(op.properties, constant)}>"
            f"{{{self._entries(op.attributes, constant)}}}#{len(op.regions)}"
        )
        for region in op.regions:
            self.parts.append(f"region#{len(region.blocks)}")
            for block in region.blocks:
                arguments = ",".join(
                    self._value(a) + ":" + self._attribute(a.type) for a in block.args
                )
                self.parts.append(f"{self._block(block)}({arguments})#{len(block.ops)}")
                for inner in block.ops:
                    self._op(inner)
