"""A kernel unit's LLVM IR with its integers left open: what kernel families are made of.

`llvm_text.unit_template(module, ...)` prints a kernel's unit as `module_text` prints it, but
with markers where a family may need something else than this kernel's own text:

- every integer constant operand (`IntHole`: a loop bound, an offset, an allocation size, a
  constant subscript) and every dimension of an array type a `getelementptr` steps through;
- the kernel's own symbol, which begins the names of its outlined parallel bodies;
- a place for a pointer to the family's parameters: after the parameters of every function
  the unit defines, after the arguments of every call of one, at the top of each function;
- the context a parallel loop hands to `GOMP_parallel`, which is all an outlined body gets.

`render_plain` gives back the kernel's text byte for byte (tested against `module_text`);
`structure_key` is the same text with every open integer blanked, so kernels that differ
only in those integers have the same key; `render_family` (`kernel_families`) prints one
function for all of them, each open integer that differs between them read from a table
of `i64`s the caller passes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

MARKER = re.compile("\x00([a-zA-Z])([0-9]*)\x00")
"""`\\0<kind><index>\\0`: h an integer hole, g a `getelementptr` through arrays (its
dimensions are holes too), c a parallel call, N the kernel's symbol, S/s the parameter-table parameter (after other
parameters / alone), A/a the table as a call argument (after others / alone), T a trampoline's
context parameter, E the set-up at the top of function `index` (a line of its own)."""

SHAPE = "%fam.shape"
"""The parameter-table pointer in a family's functions."""


@dataclass(frozen=True)
class IntHole:
    """An integer constant operand of the template, or an array dimension a `GepLine` names."""

    type: str
    value: int
    function: int
    """The index of the function it is printed in (`UnitTemplate.functions`)."""
    fixed: bool = False
    """Members of a family must agree on it: a divisor (a constant divisor is a multiply and
    a shift, a variable one a division)."""


@dataclass(frozen=True)
class GepLine:
    """A `getelementptr` through array types, kept apart so that a family whose members
    differ in a dimension can compute its address from the dimension (`render_family`)."""

    result: str
    inbounds: str
    dims: tuple[int, ...]
    """Hole indices of the dimensions, outermost first."""
    element: str
    base: str
    indices: tuple[tuple[str, str], ...]
    """(type, value) of each index; a value may hold a hole marker."""
    function: int


@dataclass(frozen=True)
class ParallelCall:
    """A `GOMP_parallel(body, context, ...)` call: `prefix` up to the context, `suffix` after."""

    prefix: str
    context: str
    suffix: str


@dataclass
class FunctionInfo:
    trampoline: bool
    """Called by `GOMP_parallel` with the context as its only argument."""
    parallel_calls: bool = False


@dataclass
class UnitTemplate:
    """What `llvm_text.unit_template` printed (see the module docstring)."""

    kernel: str
    """The kernel's symbol (the unit's one function of external linkage)."""
    kernel_parameters: str = ""
    """The kernel's parameter list as printed (for a family member's entry function)."""
    lines: list[str] = field(default_factory=list)
    holes: list[IntHole] = field(default_factory=list)
    geps: list[GepLine] = field(default_factory=list)
    calls: list[ParallelCall] = field(default_factory=list)
    functions: list[FunctionInfo] = field(default_factory=list)
    familiable: bool = True
    """False when the unit takes a function's address for anything but `GOMP_parallel`."""

    def hole(self, type_: str, value: int, function: int, fixed: bool = False) -> str:
        self.holes.append(IntHole(type_, value, function, fixed))
        return f"\x00h{len(self.holes) - 1}\x00"

    def dim(self, value: int, function: int) -> int:
        """A hole for an array dimension (an `i64` where a family computes with it)."""
        self.holes.append(IntHole("i64", value, function))
        return len(self.holes) - 1


def plain_gep(gep: GepLine, dim_text: Callable[[int], str]) -> str:
    source = gep.element
    for index in reversed(gep.dims):
        source = f"[{dim_text(index)} x {source}]"
    operands = ", ".join([gep.base, *(f"{t} {v}" for t, v in gep.indices)])
    return f"{gep.result}getelementptr{gep.inbounds} {source}, {operands}"


def render(
    template: UnitTemplate,
    symbol: str,
    hole_text: Callable[[int], str],
    line_text: Mapping[str, Callable[[int], str]],
    flags: Mapping[str, str],
    entry: Callable[[int], list[str]],
) -> str:
    """The template's lines with each marker replaced: holes by `hole_text`, whole-line
    markers (`g`, `c`) by `line_text`, `N` by `symbol`, the flag markers (S, s, A, a, T) by
    `flags`, and each `E` line by the lines `entry` gives for its function."""

    def marker(match: re.Match[str]) -> str:
        kind, index = match.group(1), match.group(2)
        if kind == "h":
            return hole_text(int(index))
        if kind in line_text:
            return MARKER.sub(marker, line_text[kind](int(index)))
        if kind == "N":
            return symbol
        return flags[kind]

    out: list[str] = []
    for line in template.lines:
        if line.startswith("\x00E"):
            out += [MARKER.sub(marker, text) for text in entry(int(line[2:-1]))]
        elif "\x00" in line:
            out.append(MARKER.sub(marker, line))
        else:
            out.append(line)
    return "\n".join(out) + "\n"


_PLAIN_FLAGS = {"S": "", "s": "", "A": "", "a": "", "T": "%a0"}


def render_plain(template: UnitTemplate) -> str:
    """The kernel's own text (what `module_text` prints for the unit)."""

    def hole(index: int) -> str:
        return str(template.holes[index].value)

    return render(
        template,
        template.kernel,
        hole,
        {
            "g": lambda i: plain_gep(template.geps[i], hole),
            "c": lambda i: _plain_call(template.calls[i]),
        },
        _PLAIN_FLAGS,
        lambda function: [],
    )


def _plain_call(call: ParallelCall) -> str:
    return f"{call.prefix}{call.context}{call.suffix}"


def structure_key(template: UnitTemplate) -> str:
    """The template with every open integer blanked (a fixed one kept), the kernel's symbol
    too: kernels with equal keys differ only in their open integers."""

    def hole(index: int) -> str:
        h = template.holes[index]
        return f"#{h.type}:{h.value}" if h.fixed else f"#{h.type}"

    return render(
        template,
        "#N",
        hole,
        {
            "g": lambda i: plain_gep(template.geps[i], hole),
            "c": lambda i: _plain_call(template.calls[i]),
        },
        {"S": "#S", "s": "#s", "A": "#A", "a": "#a", "T": "#T"},
        lambda function: [f"#E{function}"],
    )
