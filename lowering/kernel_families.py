"""Kernel families: kernels that differ only in integers compiled once, as one function.

A model repeats a layer at many sizes: densenet121's 58 dense layers each run a 1x1
convolution over the channels of all the layers before it (64 + 32 l of them), which its
schedule makes the same loop nest but for the reduction's extent, the packing buffer's size
and the weights' row stride. LLVM spends the same ~0.1 s on each of these kernels, and they
were 8.7 of the 14.7 s that lowering and LLVM took on densenet121's units.

So the kernels' units are printed as templates (`unit_template`: their LLVM IR with every
integer constant operand and every array dimension of an address left open), and kernels
whose templates have the same `structure_key` form a family. A family is compiled as one
unit holding:

- the family function `@<base>_family_<hash>`: the template with each open integer that
  differs between the members read from a table of `i64`s (its last parameter; every
  function of the unit passes the table on, and an outlined parallel body gets it beside its
  context: `GOMP_parallel` hands over one pointer); an address through an array type one of
  whose dimensions differs is computed from that dimension (`flat_gep`);
- each member's kernel symbol, a function of the member's signature that calls the family
  function with the member's table, a constant. It is a `weak_odr` definition: another
  compile may have compiled the same kernel (the same content symbol) alone or in another
  family, and a model that links both units gets one of the two, which are equivalent.

A divisor is never opened (`IntHole.fixed`: members must agree on it), so a family computes
no division a member did not. What changes for a member is that LLVM no longer knows the
opened integers: trip counts, strides and sizes are loaded once per call and kept in
registers. The same arithmetic in the same order: the results are the same, bit for bit.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fusion_compiler.lowering.unit_template import (
    SHAPE,
    GepLine,
    ParallelCall,
    UnitTemplate,
    plain_gep,
    render,
    structure_key,
)

CONTENT_SUFFIX = re.compile(r"_[0-9a-f]{16}$")
"""The content hash that ends a kernel's symbol (`native_units.name_by_content`)."""


def family_key(template: UnitTemplate) -> str | None:
    """What kernels of one family have in common: their base name (their symbol without its
    content hash) and their `structure_key`; None for a template that joins no family. (The
    base name is what lets the schedule workers compile a kernel through when too few
    kernels bear its name.)"""
    if not template.familiable or not template.kernel:
        return None
    key = structure_key(template)
    return CONTENT_SUFFIX.sub("", template.kernel) + "\n" + hashlib.sha256(key.encode()).hexdigest()


def family_groups(keys: Sequence[str | None]) -> list[list[int]]:
    """The indices of `keys` (`family_key`s) in groups to compile together, in order of first
    appearance: equal keys together (a family when there are enough of them), every other
    one (None) alone."""
    families: dict[str, list[int]] = {}
    order: list[list[int]] = []
    for index, key in enumerate(keys):
        if key is None:
            order.append([index])
            continue
        if key not in families:
            families[key] = []
            order.append(families[key])
        families[key].append(index)
    return order


@dataclass(frozen=True)
class _Parameters:
    """Which open integers a family reads from its table: by hole, the table slot."""

    slots: dict[int, int]
    """Hole index → slot, for the holes whose value differs between members."""
    values: list[list[int]]
    """Per member, the table (one `i64` per slot)."""


def _parameters(members: Sequence[UnitTemplate]) -> _Parameters:
    slots: dict[int, int] = {}
    by_values: dict[tuple[int, ...], int] = {}
    for index in range(len(members[0].holes)):
        values = tuple(member.holes[index].value for member in members)
        if all(value == values[0] for value in values):
            continue
        slots[index] = by_values.setdefault(values, len(by_values))
    tables = [[0] * len(by_values) for _ in members]
    for values, slot in by_values.items():
        for member, value in enumerate(values):
            tables[member][slot] = value
    return _Parameters(slots, tables)


def family_text(members: Sequence[UnitTemplate]) -> tuple[str, str]:
    """The LLVM IR of a family (see the module docstring) and its function's symbol."""
    first = members[0]
    parameters = _parameters(members)
    printer = _FamilyPrinter(first, parameters.slots)
    placeholder = "\x01family\x01"
    text = render(
        first,
        placeholder,
        printer.hole_text,
        {"g": printer.gep_text, "c": lambda i: _family_call(first.calls[i])},
        {
            "S": f", ptr noalias readonly {SHAPE}",
            "s": f"ptr noalias readonly {SHAPE}",
            "A": f", ptr {SHAPE}",
            "a": f"ptr {SHAPE}",
            "T": "%fam.context",
        },
        printer.entry,
    )
    names = [member.kernel for member in members]
    digest = hashlib.sha256("\0".join([text, *names]).encode()).hexdigest()[:16]
    symbol = f"{CONTENT_SUFFIX.sub('', first.kernel)}_family_{digest}"
    text = _not_inlined(text.replace(placeholder, symbol), symbol)
    wrappers = [
        _member_entry(member, table, symbol)
        for member, table in zip(members, parameters.values, strict=True)
    ]
    return text + "".join(wrappers), symbol


class _FamilyPrinter:
    """What `render` asks of a family: each hole's text (a literal, or the table slot loaded
    at the top of its function), addresses, and each function's set-up."""

    def __init__(self, first: UnitTemplate, slots: dict[int, int]):
        self.first = first
        self.slots = slots
        self.uses: dict[int, set[tuple[int, str]]] = {}
        """By function, the (slot, type) pairs it reads."""
        for index, slot in slots.items():
            hole = first.holes[index]
            self.uses.setdefault(hole.function, set()).add((slot, hole.type))
        for gep in first.geps:
            for index in gep.dims:
                if index in slots:
                    self.uses.setdefault(gep.function, set()).add((slots[index], "i64"))

    def hole_text(self, index: int) -> str:
        slot = self.slots.get(index)
        if slot is None:
            return str(self.first.holes[index].value)
        return _slot_value(slot, self.first.holes[index].type)

    def gep_text(self, index: int) -> str:
        gep = self.first.geps[index]
        if not any(dim in self.slots for dim in gep.dims):
            return plain_gep(gep, self.hole_text)
        return flat_gep(gep, self.hole_text, f"%fam.g{index}")

    def entry(self, function: int) -> list[str]:
        """The top of a function: a trampoline takes its context and the table from the pair
        it is handed; a function with parallel calls makes room for such pairs; then the
        table's slots the function reads."""
        info = self.first.functions[function]
        lines = []
        if info.trampoline:
            lines += [
                "  %a0 = load ptr, ptr %fam.context",
                "  %fam.shape.slot = getelementptr inbounds ptr, ptr %fam.context, i64 1",
                f"  {SHAPE} = load ptr, ptr %fam.shape.slot",
            ]
        if info.parallel_calls:
            lines += [
                "  %fam.pair = alloca [2 x ptr], align 8",
                "  %fam.pair.1 = getelementptr inbounds ptr, ptr %fam.pair, i64 1",
            ]
        for slot, type_ in sorted(self.uses.get(function, ())):
            name = _slot_value(slot, "i64")
            lines.append(f"  {name}.at = getelementptr inbounds i64, ptr {SHAPE}, i64 {slot}")
            lines.append(f"  {name} = load i64, ptr {name}.at, align 8")
            if type_ != "i64":
                lines.append(f"  {_slot_value(slot, type_)} = trunc i64 {name} to {type_}")
        return list(dict.fromkeys(lines))


def _slot_value(slot: int, type_: str) -> str:
    return f"%fam.p{slot}" if type_ == "i64" else f"%fam.p{slot}.{type_}"


def _family_call(call: ParallelCall) -> str:
    """A parallel call that hands its body the pair (context, table)."""
    return (
        f"  store ptr {call.context}, ptr %fam.pair\n"
        f"  store ptr {SHAPE}, ptr %fam.pair.1\n"
        f"{call.prefix}%fam.pair{call.suffix}"
    )


def flat_gep(gep: GepLine, hole_text: Callable[[int], str], prefix: str) -> str:
    """`gep` as one index over its innermost element type: the sum of each index times the
    elements of the arrays it steps over (the same address; the dimensions may be values)."""
    dims = [hole_text(index) for index in gep.dims]
    lines: list[str] = []
    count = 0

    def emit(opcode: str, a: str, b: str) -> str:
        nonlocal count
        name = f"{prefix}.{count}"
        count += 1
        lines.append(f"  {name} = {opcode} nsw i64 {a}, {b}")
        return name

    total: str | None = None
    for position, (type_, value) in enumerate(gep.indices):
        if type_ != "i64":
            name = f"{prefix}.{count}"
            count += 1
            lines.append(f"  {name} = sext {type_} {value} to i64")
            value = name
        term = value
        for dim in dims[position:]:
            term = emit("mul", term, dim)
        total = term if total is None else emit("add", total, term)
    assert total is not None
    lines.append(f"{gep.result}getelementptr{gep.inbounds} {gep.element}, {gep.base}, i64 {total}")
    return "\n".join(lines)


def _not_inlined(text: str, symbol: str) -> str:
    """`text` with the family function marked `noinline`: its members call it, and a copy of
    it in each would be what the family saves."""
    lines = text.split("\n")
    head = f'define void @"{symbol}"('
    for index, line in enumerate(lines):
        if line.startswith(head) and " noinline" not in line:
            lines[index] = line + " noinline"
    return "\n".join(lines)


def _member_entry(member: UnitTemplate, table: list[int], family: str) -> str:
    """The member's kernel: a call of the family function with the member's table."""
    name = member.kernel
    parameters = [p for p in member.kernel_parameters.split(", ") if p]
    arguments = [f"{p.split()[0]} {p.split()[-1]}" for p in parameters]
    arguments.append(f'ptr @"{name}.table"')
    items = ", ".join(f"i64 {v}" for v in table)
    return (
        f'@"{name}.table" = private unnamed_addr constant [{len(table)} x i64] [{items}]\n'
        f'define weak_odr void @"{name}"({member.kernel_parameters})\n'
        "{\n"
        f'  tail call void @"{family}"({", ".join(arguments)})\n'
        "  ret void\n"
        "}\n"
    )
