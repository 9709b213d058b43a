"""Vectorisation that does not depend on LLVM's cost model: loop metadata on `vectorized` loops.

`schedule-kernels` marks a loop `vectorized` when it is innermost, parallel and reads and
writes whole vectors. LLVM's loop vectoriser, left to its cost model, may still leave such a
loop scalar (on AMD Zen 3 a 64x40 add kernel stayed scalar). So every `vectorized` loop is
forced: `loop_to_llvm` names its header block `VECTOR_HEADER`, and `force_vector_loops` puts
on each of its back edges the loop metadata

    br label %vector_header, !llvm.loop !0
    !0 = distinct !{!0, !1, !2, !3, !5}
    !1 = !{!"llvm.loop.vectorize.enable", i1 true}
    !2 = !{!"llvm.loop.vectorize.width", i32 8}
    !3 = !{!"llvm.loop.unroll.disable"}
    !4 = !{!"llvm.loop.isvectorized"}
    !5 = !{!"llvm.loop.vectorize.followup_all", !4}

which makes the vectoriser emit vectors of `vector_lanes(...)` elements whatever its cost
model estimates (it still proves legality itself, and leaves an illegal loop scalar). A loop
of a static trip count under two vectors that is not a multiple of the lanes (a row of 7 or
14 pixels on 8 lanes), and on AVX-512 hosts a loop whose trip count is not static (a row of
an im2col panel packed row by row, `contraction_pack_schedule`: a row or less), also gets
`llvm.loop.vectorize.predicate.enable`: its remainder runs
as one vector iteration under a mask, not as a scalar loop (`MASKED_TRIPS`; only where every
load and store has 32- or 64-bit elements, which AVX masks, and is contiguous or invariant in
the loop: `loop_to_llvm` names the header of a loop with a strided access
`STRIDED_VECTOR_HEADER`). Without a static trip count LLVM predicates every iteration, not
only the last: with AVX-512's mask registers that is a compare per iteration, but on AVX2
each mask is built from the induction variable by about fifteen vector instructions and
applied by `vmaskmovps` loads and stores, so there such a loop gets whole vectors and a
scalar remainder (`force_vector_loops`' `mask_registers`). Measured on a Zen 3
(`bench/layers.py` shapes, 1 thread, both builds in one process alternating with
onnxruntime, one run of 6-40 samples each; the panels packed row by row): conv3x3 16x55x55 -> 64, onnxruntime / ours
0.72 -> 1.00; 32x27x27 -> 128, 0.82 -> 1.01; 48x13x13 -> 192 and 64x224x224 -> 64 unchanged
(0.87, 0.95). The
lane count is the target's preferred vector register width over 32 bits: 256-bit on AVX and
AVX-512 hosts (LLVM's preference there), 512-bit in functions with math expansions on
AVX-512 hosts (`llvm_codegen.widen_vectors`), 128-bit with SSE only.

The loops are found in the `llvm` dialect module before it is printed: `force_vector_loops`
and `apply_loop_hints` return the properties of each back edge, which `llvm_text` writes as
its `llvm.loop` metadata. The lowering names a loop's header block after its kind, since
xDSL's `llvm.br` carries no loop annotation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import llvm
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerAttr, IntegerType, ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from fusion_compiler.lowering.llvm_text import LoopProperties, LoopProperty, successor_edges

VECTOR_HEADER = "vector_header"
"""The name of the header block of a lowered `vectorized` loop (`llvm_text` suffixes `.1`, ...
to repeated names)."""

STRIDED_VECTOR_HEADER = "strided_vector_header"
"""The header name of a lowered `vectorized` loop with an access that is neither contiguous nor
invariant in it (a stride-2 read of a pooling window, a packing gather): never masked, since
a strided read under a mask is a gather, element by element (`MASKED_TRIPS`)."""

ROLLED_HEADER = "rolled_header"
"""The header name of a lowered loop marked `ROLLED_LOOP_ATTR`: `apply_loop_hints` forbids
LLVM to unroll it."""

SCALAR_HEADER = "scalar_header"
"""The header name of a lowered loop marked `SCALAR_LOOP_ATTR`: `apply_loop_hints` forbids
LLVM to vectorise or unroll it."""

F32_BITS = 32


def target_vector_bits(features: str, wide: bool = False) -> int:
    """The vector width, in bits, preferred on a CPU with these LLVM features (`+avx2,...`);
    `wide`: a function whose long arithmetic chains gain from AVX-512's full width."""
    enabled = {f[1:] for f in features.split(",") if f.startswith("+")}
    if wide and "avx512f" in enabled:
        return 512
    if "avx" in enabled:
        return 256
    return 128


def vector_lanes(features: str, wide: bool = False) -> int:
    """The vectorisation factor forced on `vectorized` loops (f32 lanes of a vector)."""
    return target_vector_bits(features, wide) // F32_BITS


def _header_name(block: Block) -> str:
    """A block's name as the lowering gave it."""
    return block.name_hint or ""


def _is_vector_header(block: Block) -> bool:
    return _header_name(block) in (VECTOR_HEADER, STRIDED_VECTOR_HEADER)


def _is_strided(header: Block) -> bool:
    return _header_name(header) == STRIDED_VECTOR_HEADER


VECTOR_INTRINSICS = frozenset(
    {
        "sqrt",
        "fabs",
        "floor",
        "ceil",
        "round",
        "roundeven",
        "trunc",
        "fma",
        "fmuladd",
        "copysign",
        "minnum",
        "maxnum",
        "minimum",
        "maximum",
        "smin",
        "smax",
        "umin",
        "umax",
        "abs",
        "ldexp",
    }
)
"""The LLVM intrinsics that have vector forms on every x86 CPU. A loop calling anything
else (libm's `erff`, `llvm.exp.f32`, ...) cannot be vectorised without a vector math
library; it is not forced (LLVM would only warn that it could not). (`ldexp` is one
instruction on AVX-512 only; elsewhere LLVM calls libm for each lane, which is why exp's
expansion takes it only there: convert-loop-to-llvm's `ldexp` option.)"""


def _callee(op: Operation) -> str | None:
    if isinstance(op, llvm.CallOp) and op.callee is not None:
        return op.callee.string_value()
    if isinstance(op, llvm.CallIntrinsicOp):
        return op.intrin.data
    return None


def _calls_scalar_only_function(blocks: Sequence[Block]) -> bool:
    for block in blocks:
        for op in block.ops:
            name = _callee(op)
            if name is None:
                continue
            if not name.startswith("llvm.") or name.split(".")[1] not in VECTOR_INTRINSICS:
                return True
    return False


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, llvm.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


Incomings = dict[Block, list[tuple[SSAValue, Block]]]
"""The value each predecessor passes to a block's first argument (its induction variable, for
a loop header), in the order of the blocks."""


def _incomings(blocks: Sequence[Block]) -> Incomings:
    incomings: Incomings = {}
    for block in blocks:
        for successor, arguments in successor_edges(block.last_op):
            if arguments:
                incomings.setdefault(successor, []).append((arguments[0], block))
    return incomings


def static_trip_count(header: Block, latch: Block, incomings: Incomings) -> int | None:
    """The iterations of the loop with this header and latch, when its bounds and step are
    constants: the header's one argument is the induction variable, its first op compares it
    with the upper bound, and the value coming from the latch adds the step (`loop_to_llvm`)."""
    compare = next((op for op in header.ops if not isinstance(op, llvm.ConstantOp)), None)
    if len(header.args) != 1 or not isinstance(compare, llvm.ICmpOp):
        return None
    phi = header.args[0]
    lower = [_constant(value) for value, block in incomings.get(header, ()) if block is not latch]
    nexts = [value for value, block in incomings.get(header, ()) if block is latch]
    upper = _constant(compare.rhs)
    if len(lower) != 1 or lower[0] is None or upper is None or len(nexts) != 1:
        return None
    increment = nexts[0].owner
    if not isinstance(increment, llvm.AddOp) or increment.lhs is not phi:
        return None
    step = _constant(increment.rhs)
    if step is None or step <= 0:
        return None
    return max(0, -(-(upper - lower[0]) // step))


NARROW_LANES = 4
"""128-bit vectors, which every x86-64 CPU has: the lanes of a strided loop too short for the
target's plain width (`NARROW_MIN_TRIPS`)."""

NARROW_MIN_TRIPS = 6
"""A strided loop of this many iterations or more, but fewer than the plain lanes, runs on
`NARROW_LANES` (a stride-2 3x3 depthwise convolution's rows of 7: one 4-lane vector and 3
scalar iterations, where 8 lanes left the whole row scalar; `bench/layers.py --match _dw`
on a Zen 4, 272 channels of 14x14 to 7x7: 0.046-0.048 -> 0.029 ms, two runs each, alternating
with the build before). Its remainder cannot be masked
(`MASKED_TRIPS`); shorter loops stay LLVM's (4 lanes for 4 or 5 iterations failed on a Zen 3)."""


def _forced_lanes(lanes: int, fewest: int, trip_count: int | None) -> int | None:
    """`lanes`, halved while wider than a loop's static trip count but not below `fewest`
    (the target's plain vector width); None when even that is wider than the loop: LLVM
    cannot vectorise a loop wider than its trip count and only warns that it could not,
    and forcing narrower vectors on short loops fails too (measured: 4 lanes on an AVX2
    CPU for 4 or 5 iterations)."""
    if trip_count is None:
        return lanes
    while lanes > trip_count and lanes > fewest:
        lanes //= 2
    return lanes if lanes <= trip_count else None


def vector_loops(function: llvm.FuncOp) -> list[tuple[llvm.BrOp, int | None, bool]]:
    """The back edge, static trip count and maskability (`_maskable`) of each vector loop of
    `function` that calls no scalar-only function.

    A back edge is a branch to a vector loop header from a block laid out after it: the
    lowering lays a loop out as pre-header, header, body blocks, latch (`loop_to_llvm`)."""
    blocks = list(function.body.blocks)
    position = {block: index for index, block in enumerate(blocks)}
    incomings: Incomings | None = None
    loops = []
    for index, block in enumerate(blocks):
        terminator = block.last_op
        if not isinstance(terminator, llvm.BrOp):
            continue
        header = terminator.successor
        if not _is_vector_header(header) or position[header] >= index:
            continue
        body = blocks[position[header] : index + 1]
        if not _calls_scalar_only_function(body):
            incomings = incomings if incomings is not None else _incomings(blocks)
            maskable = not _is_strided(header) and _maskable(body)
            loops.append((terminator, static_trip_count(header, block, incomings), maskable))
    return loops


MASKED_TRIPS = 2
"""Loops of fewer than this many vectors run their remainder under a mask: there it is a
third of the work or more (a row of 14 on 8 lanes: 6 scalar iterations after one vector).
Not loops with strided accesses (`STRIDED_VECTOR_HEADER`): LLVM reads those under a mask
with gathers, slower than the scalar remainder (bench/layers.py on a Zen 3: a stride-2
depthwise 3x3 with 28-wide rows ran 0.17 -> 0.53 ms with its remainder of 4 masked;
squeezenet's 3x3 stride-2 max pooling to 13 x 13 pixels on a Zen 5, 0.28 -> 0.15 ms without
the mask)."""


def _maskable(blocks: Sequence[Block]) -> bool:
    """Whether every load and store of the loop has 32- or 64-bit elements, which AVX and
    AVX-512 load and store under a mask (narrower integers have no masked moves on AVX2)."""
    for block in blocks:
        for op in block.ops:
            if isinstance(op, llvm.LoadOp):
                type_ = op.dereferenced_value.type
            elif isinstance(op, llvm.StoreOp):
                type_ = op.value.type
            else:
                continue
            wide_int = isinstance(type_, IntegerType) and type_.width.data in (32, 64)
            if not (wide_int or isinstance(type_, Float32Type | Float64Type)):
                return False
    return True


def _loop_properties(lanes: int, masked: bool = False) -> LoopProperties:
    """Vectorise `lanes` wide; `masked`: the iterations left over by whole vectors run as one
    vector iteration under a mask (`llvm.loop.vectorize.predicate.enable`) instead of a
    scalar remainder loop; no full unrolling before (LLVM's full unroller runs before the
    vectoriser and would turn a short loop into straight-line scalar code); the vector loop
    and its remainder may be unrolled again (`followup_all` replaces the original
    properties)."""
    mask = (("llvm.loop.vectorize.predicate.enable", True),) if masked else ()
    return (
        *mask,
        ("llvm.loop.vectorize.enable", True),
        ("llvm.loop.vectorize.width", lanes),
        _UNROLL_DISABLE,
        ("llvm.loop.vectorize.followup_all", (("llvm.loop.isvectorized",),)),
    )


def force_vector_loops(
    module: ModuleOp, lanes_of: dict[str, int], fewest_lanes: int, mask_registers: bool = True
) -> dict[Operation, LoopProperties]:
    """The forcing metadata of the back edge of every `vectorized` loop, with the lane count
    `lanes_of[function name]` (down to `fewest_lanes` for a shorter loop; a loop shorter
    still is left to LLVM), for `llvm_text` to attach. `mask_registers`: whether the target
    has them (AVX-512), on which a loop of unknown trip count runs under a mask (module
    docstring). A strided loop's reads have gaps, and LLVM keeps its last iteration scalar
    lest the last vector read past them: its vectors must be narrower than its trip count
    (8 iterations at stride 3 are not one 8-lane vector; LLVM warned on stderr that it could
    not vectorise them)."""
    marked: dict[Operation, LoopProperties] = {}
    for function in module.ops:
        if not isinstance(function, llvm.FuncOp):
            continue
        for edge, trip_count, maskable in vector_loops(function):
            full = lanes_of[function.sym_name.data]
            if maskable and trip_count and full // 2 < trip_count < full:
                lanes: int | None = full  # one masked iteration
            else:
                narrow = not maskable and (trip_count or 0) >= NARROW_MIN_TRIPS
                fewest = min(fewest_lanes, NARROW_LANES) if narrow else fewest_lanes
                vector_trips = trip_count
                if trip_count and _is_strided(edge.successor):  # (its last trip stays scalar)
                    vector_trips = trip_count - 1
                lanes = _forced_lanes(full, fewest, vector_trips)
            if lanes is None:
                continue
            masked = maskable and (
                (trip_count is None and mask_registers)
                or (
                    trip_count is not None
                    and trip_count % lanes != 0
                    and trip_count < MASKED_TRIPS * lanes
                )
            )
            marked[edge] = _loop_properties(lanes, masked)
    return marked


def _back_edges(function: llvm.FuncOp, is_header: Callable[[Block], bool]) -> list[llvm.BrOp]:
    """The unconditional branches to a block `is_header` accepts from a block laid out after it."""
    blocks = list(function.body.blocks)
    position = {block: index for index, block in enumerate(blocks)}
    edges = []
    for index, block in enumerate(blocks):
        terminator = block.last_op
        if isinstance(terminator, llvm.BrOp):
            header = terminator.successor
            if is_header(header) and position[header] < index:
                edges.append(terminator)
    return edges


def apply_loop_hints(module: ModuleOp) -> dict[Operation, LoopProperties]:
    """The `LOOP_HINTS` of each kind of loop for its back edge (`rolled_header`: no unrolling;
    `scalar_header`: no vectorising, no unrolling), for `llvm_text` to attach."""
    marked: dict[Operation, LoopProperties] = {}
    for header, hints in LOOP_HINTS.items():
        for function in module.ops:
            if isinstance(function, llvm.FuncOp):
                for edge in _back_edges(function, _named(header)):
                    marked[edge] = hints
    return marked


_UNROLL_DISABLE: LoopProperty = ("llvm.loop.unroll.disable",)

LOOP_HINTS: dict[str, LoopProperties] = {
    ROLLED_HEADER: (_UNROLL_DISABLE,),
    SCALAR_HEADER: (("llvm.loop.vectorize.enable", False), _UNROLL_DISABLE),
}
"""The `llvm.loop` properties `apply_loop_hints` gives the back edge of each kind of loop. A
`scalar_header` loop (a register tile's store, column by column, into rows of the output:
`SCALAR_LOOP_ATTR`) runs once per tile, after its reduction: LLVM unrolled it anyway (resnet50's
3x3 convolutions: 2538 instructions rather than 1190 after O3, 0.55 s of optimisation rather
than 0.16 s for the slowest), so it is kept rolled too."""


def _named(header: str) -> Callable[[Block], bool]:
    """Whether a block is a loop header of that name."""
    return lambda block: _header_name(block) == header
