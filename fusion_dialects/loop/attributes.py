"""The `loop` dialect's attributes: a kernel's pattern kind and a loop's execution kind."""

from __future__ import annotations

from xdsl.ir import Data
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.str_enum import StrEnum

from fusion_compiler.dialects.pattern_kind import PatternKind


@irdl_attr_definition
class PatternKindAttr(Data[PatternKind]):
    """A kernel's fusion pattern kind: `#loop.pattern<out_ewise_fusable>`."""

    name = "loop.pattern"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> PatternKind:
        with parser.in_angle_brackets():
            pos = parser.pos
            word = parser.parse_identifier()
            try:
                return PatternKind.from_mnemonic(word)
            except ValueError as err:
                parser.raise_error(str(err), pos, parser.pos)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data.mnemonic}>")


class LoopKind(StrEnum):
    """How a `loop.for` is to be executed."""

    SERIAL = "serial"
    PARALLEL = "parallel"
    VECTORIZED = "vectorized"
    UNROLLED = "unrolled"


@irdl_attr_definition
class LoopKindAttr(Data[LoopKind]):
    """The execution kind of a `loop.for`: `#loop.kind<parallel>`."""

    name = "loop.kind"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> LoopKind:
        with parser.in_angle_brackets():
            return parser.parse_str_enum(LoopKind)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data.value}>")


WIDE_VECTORS_ATTR = "fusion.wide_vectors"
"""Discardable attribute of a kernel to be vectorised at the full vector width of the host: its
register tiles are sized for it (schedule-contractions sets it), or its vector loops read with
stride 2 over at least one full-width vector (mark-loop-kinds: `loop_kinds.py`); the JIT lets
LLVM vectorise such a kernel 512 bits wide on AVX-512 hosts."""


ROLLED_LOOP_ATTR = "fusion.rolled"
"""Discardable attribute of a `loop.for` that LLVM must not unroll: the reduction loops around
a register tile's vector loop (schedule-contractions). Unrolling a 3x3 window's loops puts
nine steps of the tile in one block, whose loads LLVM's scheduler then hoists past the
register file (spills); one step per iteration keeps the tile in registers. The LLVM
lowering names such a loop's header `rolled_header` (`lowering/vector_loops.py`)."""


SCALAR_LOOP_ATTR = "fusion.scalar"
"""Discardable attribute of a `loop.for` that LLVM must not vectorise: the loop over a register
tile's columns that stores the tile where the output is contiguous along its rows instead
(schedule-contractions: a convolution vectorised along output channels storing to NCHW). Left
to its cost model, LLVM vectorises it with a scatter per vector of channels, which AVX-512
hosts run an element at a time at a higher price than scalar stores: zfnet's 7x7 stem (3 ->
96 channels, 147 steps of reduction per tile) took 3.49-3.50 ms with scatters, 3.35 ms without
(1 thread, Zen 4, two paired rounds of `bench/layers.py`). The LLVM lowering names such a loop's header `scalar_header`
(`lowering/vector_loops.py`)."""


PRIVATE_BUFFER_ATTR = "fusion.private"
"""Discardable attribute of a `loop.alloc` inside a loop whose every iteration writes the
elements it reads before reading them: no value flows through the buffer from one iteration
to another (schedule-contractions' accumulator tiles and packed panels). A parallel loop
holding such a buffer may still run on threads, each with its own copy (the LLVM lowering
allocates it at the entry of the outlined body); any other local buffer in a loop keeps the
loop serial."""

KEPT_BUFFER_ATTR = "fusion.kept"
"""Discardable attribute of a `loop.alloc` at the top of an entry function (a slot of its
memory plan, lower-graph): the buffer is kept from one call of the entry to the next rather
than allocated on every call (`lowering/kept_buffers.py`). Its contents are not: every call
writes a slot before it reads it, as with a fresh buffer."""


REGISTER_TILED_ATTR = "fusion.register_tiled"
"""Discardable attribute of a kernel whose contraction nests are register-tiled
(schedule-contractions sets it): the kernel's loop order is final, so the loop-order stages
that run after it (reorder-reductions, unroll-reductions, unroll-jam-reductions and the
re-fusion and clean-up between them) leave such a kernel alone."""


CONCAT_AXIS_ATTR = "fusion.concat_axis"
"""Integer attribute of the kernel legalize-ops makes for a `graph.concat` (its axis): the
kernel only copies its operands into their parts of the result, so lower-graph may instead
have the operands' producers write into those parts (`lowering/in_place.py`). A kernel fused
from several ops never has it; the schedule memo's stubs keep it."""


ALGORITHM_FLOPS_ATTR = "fusion.algorithm_flops"
"""Discardable integer attribute of a kernel: the FLOPs of one launch of its algorithm, recorded
by a schedule that makes the kernel execute more (schedule-contractions pads remainder tiles
to whole vectors); the profiler's count (`costs.kernel_flops`) then stays the algorithm's."""


EXP_NO_OVERFLOW_ATTR = "fusion.exp_no_overflow"
"""Discardable unit attribute of a `math.exp` whose argument is at most 43 or NaN by
construction, and whose results below f32's normal range do not matter next to the others
(softmax's `x - max(x)`, whose row sum is at least 1; gelu's tail exponent `-a^2/2 + P(t)`,
above -85): the f32 expansion then needs no overflow handling and computes, in fewer
instructions, exp's bits wherever exp is a normal number and +0 below 2^-126.5
(`lowering/math_approximations.exp_no_overflow`). Legalize-ops sets it; copies keep it."""


UNIT_DIGEST_ATTR = "fusion.unit_digest"
"""Discardable string attribute of a stub kernel (an empty body of a scheduled kernel's type)
that the schedule memo puts in place of a kernel scheduled in an earlier compile: the content
digest of the unit that compiles it, whose object code the compile cache holds
(`lowering/schedule_memo.py`)."""
