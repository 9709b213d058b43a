"""The analytic model of the host that sizes a contraction's register tile. No tuning step.

A contraction `C[i, j] += A[i, k] * B[k, j]` scheduled by `schedule-contractions` keeps an
`R x T` tile of `C` in vector registers for the whole reduction: per reduction step it loads
`T / W` vectors of `B` (W: f32 lanes of a vector register), broadcasts `R` scalars of `A`, and
issues `R * T / W` FMAs. The tile must fit the register file with the operands of one step as
LLVM schedules them: it issues every broadcast of the step first, then loads the panel one
vector at a time (seen on AVX-512 and AVX2 code alike), so

    R * (T / W)  accumulators  +  R broadcasts of A  +  1 vector of B   <=   registers

(`_fits`). A tile over that keeps an accumulator in memory across steps: its chain of FMAs
then waits for a store and a reload every step, and the kernel runs at half speed or less
(measured: 4 x 3 vectors on AVX2, 9 x 3 on AVX-512). Among the tiles that fit, the one with
the most FMAs per load (`R * V / (R + V)`, `V = T / W`) wins, ties going to the larger tile.
With 32 registers (AVX-512) that is 6 x 4 vectors (24 accumulators, 6 broadcasts, 1 vector of
B: 6 x 64 floats, the tile of BLIS' f32 micro-kernel for that machine); with 16 (AVX2) it is
3 x 4 vectors (3 x 32 floats). A dimension shorter than the tile shrinks it (`fit_tile`). The
packed-panel schedule sizes its tile on the whole grid (`packed_tile`).

A packed tile with more rows than that can issue its steps row by row instead
(`steps_by_rows`): the panel's `V` vectors first, then each row's broadcast with its `V`
FMAs, so that one broadcast lives at a time,

    R * V  accumulators  +  V vectors of the panel  +  1 broadcast   <=   registers,

which the packed schedule gets from LLVM by giving each row a loop over the columns of its
own (the panel's loads, the same in every row's loop, are one load each: BLAS's micro-kernel
for AVX2, 6 x 2 vectors). On AVX2 that admits 6 x 2 and 4 x 3 vectors: a tile of fewer
panel vectors per step reads less of a panel that streams from L2 once per row tile. Such
tiles compete on hosts without AVX-512 (`HostModel.tiles_by_rows`), where they were
measured: on a Zen 3 the deep 1x1 layers (512-1024 channels on 14 x 14 pixels, 832 on 6 x 6)
took 6 x 2 or 4 x 3 vectors for 5 x 2 or 3 x 4 and ran 1.03-1.09x faster (`steps_by_rows`
gives the whole run).

The reduction is read whole by each row tile, its `K x T` panel from L1 or L2; it is blocked
only where a convolution's strided broadcasts overflow L1 (`contraction_schedule.
reduction_block`). Blocking a matrix product's reduction so that its panel fits half of L1
made it slower on a Zen 3 (1 thread, both builds in one process, alternating, 30 rounds):
ffn 1.07x, transformer_block 1.04x, mlp 1.03x the time.

Host facts: the vector width and register count come from the CPU features llvmlite reports
(`+avx512f`: 16 lanes, 32 registers; `+avx`: 8 lanes, 16 registers; otherwise 4 and 16), the
cache sizes and the L1 data cache's associativity from `/sys/devices/system/cpu/cpu0/cache`
(defaults 32 KiB 8-way and 1 MiB where it is not readable), the cores from the process's CPU
affinity, and the costs measured on a particular CPU, by LLVM's name of it, from
`CPU_CALIBRATIONS` (they follow `FUSION_TARGET_CPU`; schedule-contractions' `costs` option
names another CPU, or `default`). Every fact can be overridden by a pass option, which is how
tests fix the tile.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from fusion_compiler.host import usable_cores

CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")
DEFAULT_L1_BYTES = 32 * 1024
DEFAULT_L2_BYTES = 1024 * 1024
DEFAULT_L1_WAYS = 8
CACHE_LINE_BYTES = 64
F32_BYTES = 4
AVX512_LANES = 16


FMA_UNITS = 2
"""Vector FMAs issued per cycle (two on the x86 cores we target: AVX2's 256-bit FMAs on Zen 3,
512-bit ones on Zen 5). The default of `HostCosts.fma_units`: a Zen 4 issues one 512-bit FMA
per cycle (its two 256-bit units together), `CPU_CALIBRATIONS`."""

MISSED_STORE_CYCLES = 20.0
"""Cycles a scattered store costs beyond `SCATTERED_STORE_CYCLES` when it misses L1 because the
lines one column tile writes share L1 sets beyond the cache's associativity; the model takes
that fraction of the stores to miss (`_store_misses`). Measured on Zen 5 (48 KiB 12-way L1,
1 thread): conv2d 3x3 to 64 channels of 224 x 224 pixels (channels 196 KiB apart, a multiple
of 4 KiB: a tile's 64 lines in one set, 81% missing) vectorised along the channels spent
18-20 cycles per output element beyond the model's other terms; 112 x 112 pixels (four sets
of 16 lines, 25% missing), about 5. The default of `HostCosts.missed_store_cycles`: on a Zen 4
it is `CPU_CALIBRATIONS`' figure."""

FAR_WINDOW_PACK_CYCLES = 0.0
"""Cycles to pack one element of a window's im2col (`PackedShape.window_source_bytes`) when
its source exceeds L2; 0: priced as any other copy (`CONTIGUOUS_PACK_CYCLES`). The default of
`HostCosts.far_window_pack_cycles`: on a Zen 4 it is `CPU_CALIBRATIONS`' figure."""


@dataclass(frozen=True)
class HostCosts:
    """The costs of the tile model that are measured per CPU (`CPU_CALIBRATIONS`)."""

    fma_units: int = FMA_UNITS
    """Vector FMAs the core issues per cycle (`step_cycles`)."""
    missed_store_cycles: float = MISSED_STORE_CYCLES
    """What a scattered store that misses L1 costs beyond a scattered store (`packed_cost`)."""
    far_window_pack_cycles: float = FAR_WINDOW_PACK_CYCLES
    """What packing one element of a window's im2col from beyond L2 costs (`packed_cost`)."""


@dataclass(frozen=True)
class HostModel:
    """What the tile model needs to know about the CPU the kernels will run on."""

    vector_width: int
    """f32 lanes of one vector register."""
    registers: int
    """Vector registers of the ISA."""
    l1_bytes: int = DEFAULT_L1_BYTES
    l2_bytes: int = DEFAULT_L2_BYTES
    l1_ways: int = DEFAULT_L1_WAYS
    """Associativity of the L1 data cache."""
    cores: int = 1
    """The cores a kernel's parallel loop is split over (`contraction_pack_schedule`'s
    choice of that loop)."""
    costs: HostCosts = HostCosts()
    """The costs measured on the CPU (`CPU_CALIBRATIONS`; the defaults elsewhere)."""

    @property
    def strided_broadcast_cycles(self) -> float:
        """Cycles a register tile waits per line its strided broadcasts read from L2
        (`STRIDED_BROADCAST_CYCLES`; 0 with AVX-512's 16 lanes)."""
        return 0.0 if self.vector_width >= AVX512_LANES else STRIDED_BROADCAST_CYCLES

    @property
    def tiles_by_rows(self) -> bool:
        """Whether packed tiles that issue their steps row by row compete (`_packed_tiles`,
        `steps_by_rows`): on hosts without AVX-512, where they were measured."""
        return self.vector_width < AVX512_LANES

    @property
    def l1_sets(self) -> int:
        return max(1, self.l1_bytes // (self.l1_ways * CACHE_LINE_BYTES))


@dataclass(frozen=True)
class Tile:
    """A register tile: `rows` x `cols` accumulators (`cols` a multiple of the vector width)."""

    rows: int
    cols: int


def host_features() -> str:
    """The features of the CPU compiled for, as LLVM spells them (`+avx2,+fma,-avx512f,...`):
    this machine's, or `FUSION_TARGET_FEATURES` (`lowering.jit.CodegenTarget.host`)."""
    from fusion_compiler.lowering.jit import CodegenTarget

    return CodegenTarget.host().features


def _cache_fact(level: int, fact: str) -> str | None:
    """A fact (`size`, `ways_of_associativity`) of cpu0's level-`level` data (or unified)
    cache, as the OS words it, if it says."""
    for index in sorted(CACHE_DIR.glob("index*")):
        try:
            if int((index / "level").read_text()) != level:
                continue
            if (index / "type").read_text().strip() == "Instruction":
                continue
            return (index / fact).read_text().strip()
        except (OSError, ValueError):
            continue
    return None


def _cache_size(level: int) -> int | None:
    """The size in bytes of the level-`level` data (or unified) cache of cpu0, if the OS says."""
    size = _cache_fact(level, "size") or ""
    units = {"K": 1024, "M": 1024 * 1024}
    if size[-1:] in units and size[:-1].isdigit():
        return int(size[:-1]) * units[size[-1]]
    return int(size) if size.isdigit() else None


def _cache_ways(level: int) -> int | None:
    ways = _cache_fact(level, "ways_of_associativity") or ""
    return int(ways) if ways.isdigit() and int(ways) > 0 else None


def host_model() -> HostModel:
    """The facts of the CPU compiled for (`lowering.jit.CodegenTarget.host`: this machine's,
    or `FUSION_TARGET_CPU`'s): its vector width and registers (from its features), this
    machine's caches and cores (read once per target), and the costs measured on that CPU, by
    LLVM's name of it (`CPU_CALIBRATIONS`)."""
    from fusion_compiler.lowering.jit import CodegenTarget

    target = CodegenTarget.host()
    return _host_model(target.features, target.cpu)


CPU_CALIBRATIONS: dict[str, HostCosts] = {
    "znver4": HostCosts(fma_units=1, missed_store_cycles=5.0, far_window_pack_cycles=1.0),
}
"""The tile model's costs measured on a CPU, by LLVM's name for it, where they differ from the
defaults. Zen 4 (AVX-512 on two 256-bit halves, 32 KiB 8-way L1, 1 MiB L2; 1 thread): a 3x3
convolution's im2col whose input exceeds L2 spends about a cycle per packed element (the
window's three rows, read with shifted loads from beyond L2: 14.5% of conv3x3 64x224x224 ->
64 in a sampled profile, 0.8 cycles per element), where its weights' plan spends about 4
cycles per output element on its scattered stores beyond its FMAs (7 in 8 of them missing
L1; the model's 2 + 5 per missing store comes to 6.4), not `MISSED_STORE_CYCLES`' 20 (19.5
there). The two plans' FMAs are the same, so those two costs decide between them. With these
figures three layers of `bench/layers.py` change plan, each measured faster
(`contraction_schedule.packed_plan`); with 4 to 6 store cycles those three alone change, with
8 the 64x112x112 -> 128 layer keeps its im2col, and with 2.5 the 7x7 stem of 3 channels took
its weights' plan too and ran 0.92x as fast (one paired run). Its FMA peak, 32 flops a cycle, is one 512-bit
FMA per cycle: with that (`fma_units`, so that a tile's loads weigh less beside its FMAs and
8 accumulators are not needed to cover their latency) 28 more plans change, geometric mean
1.025x and 1.031x faster in two runs (1 thread, both models in one process timed alternately
with onnxruntime, 11 rounds): 1x1 layers of 384-528 channels on 13 x 13 and 14 x 14 pixels
along their output channels 1.03-1.14x, the grouped 544x7x7 one 1.09x, 3x3 48x13x13 -> 192
1.03-1.04x; 0.97-0.98x for the 3x3 layers of 64 to 192 channels on 55 x 55 and 56 x 56 pixels,
0.98-1.00x for the 1x1 ones of 256-352 channels on 14 x 14 (tiles of 6 x 4 vectors, not 7 x
3), 0.92-0.95x for a grouped 136x14x14 layer of 0.024 ms."""


@cache
def _host_model(flat_features: str, cpu: str) -> HostModel:
    features = set(flat_features.split(","))
    if "+avx512f" in features:
        width, registers = AVX512_LANES, 32
    elif "+avx" in features:
        width, registers = 8, 16
    else:
        width, registers = 4, 16
    return HostModel(
        width,
        registers,
        _cache_size(1) or DEFAULT_L1_BYTES,
        _cache_size(2) or DEFAULT_L2_BYTES,
        _cache_ways(1) or DEFAULT_L1_WAYS,
        usable_cores(),
        CPU_CALIBRATIONS.get(cpu, HostCosts()),
    )


def _fits(rows: int, vectors: int, registers: int) -> bool:
    """Whether a `rows x vectors` tile and one step's operands fit `registers` as LLVM
    schedules the step (module docstring)."""
    return rows * vectors + rows + 1 <= registers


def steps_by_rows(rows: int, vectors: int, registers: int) -> bool:
    """Whether a packed tile issues its reduction steps row by row (module docstring): where
    its broadcasts all live at once would not fit `registers` (`_fits`) but its panel's
    vectors do: `rows * vectors + vectors + 1`.

    Measured on a Zen 3 (AVX2, 1 thread): conv1x1 832x6x6 -> 384 in 6 x 2 vectors, 0.30 ->
    0.27 ms (onnxruntime 0.26; forced, paired). With such tiles in the model (and the
    remainder rule of `contraction_schedule.packed_plan`) 141 of `bench/layers.py`'s 229
    plans change; both models compiled in one process and timed alternately with
    onnxruntime, 20 samples each, one run: geometric mean 1.023x faster, 51 layers faster
    by 3% or more (up to 1.13x: 20 of the 23 1x1 layers of 512-1024 channels on 14 x 14
    pixels 1.03-1.09x, the other three 0.99-1.00x; 832 on 6 x 6 to 160-384 channels
    1.04-1.08x; the 3x3 ones of 256-512 channels on 12 x 12 to 56 x 56 1.02-1.08x), 6 slower
    by 3% or more (832x6x6 -> 32 and -> 48 0.86x and 0.94x, layers of 0.03-0.05 ms whose
    pixels become the panel; 384 and 416x14x14 -> 128 0.93x and 0.97x; 3x224x224 -> 64
    0.96x; 320x28x28 -> 64 0.97x), none under 0.9 of onnxruntime's speed (two were: 832x6x6
    -> 256 and -> 384, now 0.94 and 0.93); the same bits everywhere."""
    return not _fits(rows, vectors, registers) and rows * vectors + vectors + 1 <= registers


MAX_ROWS = 12
"""Most rows of a tile: each row is one broadcast per reduction step."""


def _most_rows(vectors: int, registers: int) -> int:
    return max((r for r in range(1, MAX_ROWS + 1) if _fits(r, vectors, registers)), default=1)


def register_tile(host: HostModel, max_vectors: int = 4) -> Tile:
    """The tile with the most FMAs per load that fits the register file (module docstring)."""
    candidates = []
    for vectors in range(1, max_vectors + 1):
        rows = _most_rows(vectors, host.registers)
        candidates.append((rows * vectors / (rows + vectors), rows * vectors, rows, vectors))
    _, _, rows, vectors = max(candidates)
    return Tile(rows, vectors * host.vector_width)


def fit_tile(host: HostModel, tile: Tile, rows_extent: int, cols_extent: int) -> Tile:
    """`tile` shrunk to the iteration space: a column extent shorter than the tile takes the
    whole vectors covering it and as many rows as the freed registers allow; rows are capped
    by the row extent."""
    if cols_extent < tile.cols:
        vectors = -(-cols_extent // host.vector_width)
        tile = Tile(_most_rows(vectors, host.registers), cols_extent)
    return Tile(max(1, min(tile.rows, rows_extent)), tile.cols)


# --- The packed-panel schedule (contraction_pack_schedule.py) -------------------------------------

FMA_LATENCY = 4
"""Cycles from an FMA to the next FMA of its accumulator."""
LOAD_UNITS = 2
"""Vector loads or broadcasts issued per cycle."""


def step_cycles(rows: int, vectors: int, fma_units: int = FMA_UNITS) -> float:
    """Cycles of one reduction step of a `rows x vectors` tile: its FMAs (`fma_units` a
    cycle), its loads (one broadcast per row, one vector of the panel per column vector), or
    the latency of one accumulator's chain, whichever binds."""
    return max(rows * vectors / fma_units, (rows + vectors) / LOAD_UNITS, FMA_LATENCY)


def _grid(host: HostModel, rows: int, vectors: int, rows_extent: int, cols_extent: int):
    """The tiles of the iteration space tiled by `rows x vectors`, as `(rows, vectors, count)`:
    full tiles, the remainder rows, and the remainder columns (padded to whole vectors)."""
    width = vectors * host.vector_width
    row_tiles = [(rows, rows_extent // rows)] + [(rows_extent % rows, 1)] * bool(rows_extent % rows)
    rest = cols_extent % width
    col_tiles = [(vectors, cols_extent // width)] + [(-(-rest // host.vector_width), 1)] * bool(
        rest
    )
    return [
        (r, v, r_count * v_count)
        for r, r_count in row_tiles
        for v, v_count in col_tiles
        if r_count and v_count
    ]


def _grid_cycles(host: HostModel, rows: int, vectors: int, rows_extent: int, cols_extent: int):
    """Cycles per reduction step of the whole iteration space tiled by `rows x vectors`."""
    grid = _grid(host, rows, vectors, rows_extent, cols_extent)
    return sum(step_cycles(r, v, host.costs.fma_units) * count for r, v, count in grid)


def _grid_reuse(host: HostModel, rows: int, vectors: int, rows_extent: int, cols_extent: int):
    """FMAs per load (broadcast or panel vector) of one reduction step over the whole grid."""
    grid = _grid(host, rows, vectors, rows_extent, cols_extent)
    fmas = sum(r * v * count for r, v, count in grid)
    return fmas / sum((r + v) * count for r, v, count in grid)


CYCLES_TOLERANCE = 0.02
"""Grids within this fraction of the fewest cycles count as equally fast (`packed_tile`)."""

PANEL_L2_FRACTION = 0.5
"""The share of the L2 cache a tile's panel (`steps x cols` floats, read once per register
tile of its column) may take (`packed_tile`): the rest holds the broadcast operand's rows."""

MIN_PANEL_VECTORS = 2
"""The narrowest panel `packed_tile` narrows to when no panel fits the L2 share: a 1-vector
tile issues a load per FMA (7 x 1 vectors ran 1.1-1.25x slower than 4 x 2 on Zen 3's
3x3 convolutions of 512 channels)."""


def _panel_fits_l2(host: HostModel, steps: int, cols: int) -> bool:
    return steps * cols * F32_BYTES <= PANEL_L2_FRACTION * host.l2_bytes


def _cache_friendly(host: HostModel, tiles: list[Tile], steps: int) -> list[Tile]:
    """`tiles` whose panel of `steps` reduction steps fits the L2 share; when none of
    `MIN_PANEL_VECTORS` vectors or more does, the narrowest of those (`packed_tile`)."""
    if not steps or all(_panel_fits_l2(host, steps, t.cols) for t in tiles):
        return tiles
    wide = [t for t in tiles if t.cols >= MIN_PANEL_VECTORS * host.vector_width] or tiles
    fitting = [t for t in wide if _panel_fits_l2(host, steps, t.cols)]
    narrowest = min(t.cols for t in wide)
    return fitting or [t for t in wide if t.cols == narrowest]


SINGLE_ROW_VECTORS = FMA_LATENCY * FMA_UNITS
"""The most vectors of a tile over a single row (`packed_tile`): the accumulators it takes to
keep the FMA units busy when each takes one FMA per reduction step, with the default two
units (a Zen 4, which issues one 512-bit FMA a cycle, keeps 8 too: its single rows stream
their panel from memory, and ran 1.18-2.42x onnxruntime's speed so; 4 was not measured)."""


def packed_tile(
    host: HostModel, rows_extent: int, cols_extent: int, max_vectors: int = 4, steps: int = 0
) -> Tile:
    """The register tile of the packed-panel schedule for a `rows_extent x cols_extent`
    iteration space. Among the tiles that fit the register file (`_fits`): the fewest cycles
    per reduction step of the whole grid (`_grid_cycles`: full and remainder tiles,
    `step_cycles` each), where grids within `CYCLES_TOLERANCE` of the fewest tie, and ties go
    to the most FMAs per load over the grid (`_grid_reuse`, remainder tiles included), then to
    the fewer cycles. So a short row of 7 pixels gets 7 rows rather than 6 + 1, and 512 output channels 3 or 2 vectors beside them rather than
    4. The tolerance matters because the grids of most tiles are FMA-bound by the model and
    differ only in their remainders, while the measured speed follows the loads: on
    ResNet-50's 1x1 layers (AVX-512) 6 x 4 and 7 x 3 vectors run 10-25% faster than the
    2-vector tiles whose remainders are a fraction of a percent cheaper.

    A panel of `steps` reduction steps (0: not known) that would not fit its share of the L2
    cache (`PANEL_L2_FRACTION`) streams from further out once per register tile: the tiles
    whose panel fits come first; when none does, the narrowest of at least
    `MIN_PANEL_VECTORS` vectors. Measured on Zen 3 (512 KB of L2; 1 thread, the 3x3
    convolutions of 256 and 512 channels, panels of 2304 and 4608 steps): 4 or 5 x 2 vectors
    rather than 3 x 4, 1.1-1.5x faster on 56 x 56, 14 x 14, 12 x 12 and 7 x 7 pixels, as
    fast on 28 x 28.

    A single row (a matrix-vector product by a weight, `normalize_kernels.
    vector_product_rows`) is one row of tiles: each panel streams once whatever its width,
    so the L2 share does not apply, and its tile may be `SINGLE_ROW_VECTORS` wide, where four
    vectors leave each FMA waiting for its accumulator's last one (`step_cycles`). On a Zen 3
    the classifiers' products of 4096 to 25,088 inputs, which the L2 share had narrowed to 2
    vectors, took 8 and ran, as the old tile's time over the new (two runs of `bench/layers.py
    --no-bert --match matmul_1x --against contraction-cols=16`, each the median of 9-11
    paired rounds), on 1 thread 0.98-1.11x (1x9216x4096), 0.90-1.01x (1x4096x4096),
    1.07-1.29x (1x4096x1000), 0.99-1.09x (1x18432x4096), 1.26-1.92x (1x4096x1024) and
    1.16-1.18x (1x25088x4096), on 2 threads 1.05-1.12x, 1.07-1.35x, 1.32-1.39x, 1.26-1.32x,
    1.48-1.71x and 0.97-1.14x; those of 544 to 2048 inputs, 4 vectors before, 1.01-1.05x
    (against `contraction-cols=32`, one run). The same bits: each column sums in order."""
    if rows_extent == 1:
        max_vectors, steps = max(max_vectors, SINGLE_ROW_VECTORS), 0
    tiles = _packed_tiles(host, rows_extent, cols_extent, max_vectors)
    candidates = []
    for tile in _cache_friendly(host, tiles, steps):
        vectors = tile.cols // host.vector_width
        cycles = _grid_cycles(host, tile.rows, vectors, rows_extent, cols_extent)
        reuse = _grid_reuse(host, tile.rows, vectors, rows_extent, cols_extent)
        candidates.append((cycles, reuse, tile))
    return _fastest(candidates)


def _fastest(candidates: list[tuple[float, float, Tile]]) -> Tile:
    """The tile of the fewest `(cycles, FMAs per load, tile)`: those within
    `CYCLES_TOLERANCE` of the fewest cycles tie, and ties go to the most FMAs per load, then
    to the fewer cycles."""
    fewest = min(c[0] for c in candidates)
    ties = [c for c in candidates if c[0] <= fewest * (1 + CYCLES_TOLERANCE)]
    return max(ties, key=lambda c: (c[1], -c[0]))[2]


def _packed_tiles(host: HostModel, rows_extent: int, cols_extent: int, max_vectors: int):
    """The tiles of a `rows_extent x cols_extent` grid that fit the register file in either
    order of their steps (`_fits`, `steps_by_rows`), with no whole vector more than the
    columns need."""
    tiles = [
        Tile(rows, vectors * host.vector_width)
        for vectors in range(1, max_vectors + 1)
        if (vectors - 1) * host.vector_width < cols_extent
        for rows in range(1, min(MAX_ROWS, rows_extent) + 1)
        if _fits(rows, vectors, host.registers)
        or (host.tiles_by_rows and steps_by_rows(rows, vectors, host.registers))
    ]
    assert tiles
    return tiles


def strided_broadcast_tile(host: HostModel, shape: PackedShape, max_vectors: int = 4) -> Tile:
    """The tile of a plan whose broadcasts are strided (`PackedShape.broadcast_lines`) and
    come from beyond L2 (`broadcasts_beyond_l2`), on a host that charges them
    (`HostModel.strided_broadcast_cycles`): the cheapest by `packed_cost`, which counts the
    broadcasts' wait that `packed_tile`'s grid cycles leave out (each column tile reads every
    broadcast line again: 2-vector tiles twice as often as 4-vector ones), ties as in
    `packed_tile` (`_fastest`). Every tile that fits the registers competes, whatever its
    panel: one past L2 is read in blocks (`contraction_schedule.reduction_block`).

    On a Zen 3 (1 thread, both tiles in one process, paired with onnxruntime, two runs):
    conv3x3 256x28x28 -> 256 and 512x14x14 -> 512, stride 2, take 3 x 4 vectors for 5 x 2
    and run 1.08-1.15x faster (onnxruntime / ours 0.84-0.88 -> 0.93-0.98); on 7 x 7 planes,
    whose broadcasts stay in L2, the same choice ran 1.08-1.11x slower, hence only from
    beyond L2."""
    candidates = []
    for tile in _packed_tiles(host, shape.rows, shape.cols, max_vectors):
        vectors = tile.cols // host.vector_width
        reuse = _grid_reuse(host, tile.rows, vectors, shape.rows, shape.cols)
        candidates.append((packed_cost(host, tile, shape), reuse, tile))
    return _fastest(candidates)


PACK_CYCLES = 1.0
"""Cycles to pack one element of a panel read with a stride (a scalar or gathered copy)."""
CONTIGUOUS_PACK_CYCLES = 0.125
"""Cycles to pack one element of a panel read contiguously (a vector copy)."""
SCATTERED_STORE_CYCLES = 2.0
"""Cycles to store one output element the tile holds across its contiguous dimension."""
CONTIGUOUS_STORE_CYCLES = 0.25
"""Cycles to store one output element from a vector along its contiguous dimension."""


@dataclass(frozen=True)
class PackedShape:
    """The iteration space of a packed-panel schedule: rows x columns per iteration of the
    other spatial loops (`repeats` of them), a reduction of `steps`, the panel packed
    `pack_repeats` times a run (once, per iteration of the other loops it depends on, or
    never: weights packed at load time); whether
    the panel is read, and the output written, contiguously along the columns."""

    rows: int
    cols: int
    steps: int
    repeats: int
    pack_repeats: int
    panel_contiguous: bool = False
    output_contiguous: bool = False
    output_stride: int = 0
    """Elements of the output between consecutive columns where it is not contiguous along
    them (0: not known)."""
    broadcast_lines: int = 0
    """The cache lines one register tile's broadcasts read over the reduction when they do
    not read it contiguously (`PackedContraction.strided_broadcast`; 0: they do)."""
    broadcast_steps_per_line: int = 1
    broadcast_bytes: int = 0
    """The size of the buffer those broadcasts read."""
    packed_broadcasts: int = 0
    """The broadcast elements packed once per launch (`PackedContraction.packs_broadcasts`:
    then the tiles' broadcasts read the packed buffer sequentially and wait for nothing)."""
    window_source_bytes: int = 0
    """The size of the buffer a window's im2col is packed from at every run (0: the panel is
    no window's im2col, or it is packed at load time)."""


def _store_misses(host: HostModel, cols: int, stride: int) -> float:
    """The fraction of a tile's scattered stores taken to miss L1: the tile writes `cols`
    lines, `stride` elements apart; where more of them map to one L1 set than it has ways,
    the lines beyond the ways of the busiest set."""
    if stride <= 0:
        return 0.0
    per_set: dict[int, int] = {}
    for col in range(cols):
        line = col * stride * F32_BYTES // CACHE_LINE_BYTES
        per_set[line % host.l1_sets] = per_set.get(line % host.l1_sets, 0) + 1
    busiest = max(per_set.values())
    return max(0.0, 1.0 - host.l1_ways / busiest)


STRIDED_BROADCAST_CYCLES = 1.0
"""Cycles a register tile waits per cache line its broadcasts read, when they read the
reduction with strides (`PackedShape.broadcast_lines`: a convolution's input pixels, one
channel plane apart per step, multiplied by its weights' panel) over as many lines as L1
holds or more, so that each line comes back from L2 at every row tile, on a pattern the
prefetchers (which follow sequential streams) do not predict; `FAR_BROADCAST_FACTOR` times
that when the lines come from beyond L2 (`_broadcast_wait`). Contiguous broadcasts (the
weights, when the panel is the collapsed pixels; a matmul's rows) wait for nothing.
Measured on Zen 3 (32 KiB L1, 512 KiB L2; 1 thread, `bench/layers.py` shapes, the weights'
panel against the collapsed pixels' panel, paired with onnxruntime, one run per layer): the weights' panel ran
0.9 cycles per line slower than the model's FMAs on 1x1 layers of 1024 channels on 14 x 14
pixels (lines from L2) and 2.9 on the 3x3 layer of 512 channels there (lines from L3).
Charging it moves 35 of the zoo's layers to the collapsed pixels' panel, each as fast
(within 1%) or faster: 1x1 layers of 512-1024 channels on 14 x 14 pixels 1.02-1.15x faster, the 3x3 ones
of 192-512 channels on 7 x 7 to 56 x 56 pixels 1.07-1.37x; at the threshold of half of L1
instead, 3x3 layers of 96 to 128 channels ran 1.04-1.10x slower. Charged on hosts without
AVX-512 (`HostModel.strided_broadcast_cycles`): an AVX-512 step does twice the FMAs per line,
and there the weights' panels of those layers measured 0.9-1.2 of onnxruntime's speed
(Zen 4 and Zen 5, 1 thread), so their plans stay as they were until an AVX-512 host
measures the alternative."""

FAR_BROADCAST_FACTOR = 3.0
"""How much longer a strided broadcast waits for a line from beyond L2 than from L2
(`STRIDED_BROADCAST_CYCLES`)."""


def broadcasts_overflow_l1(host: HostModel, lines: int) -> bool:
    """Whether a register tile's strided broadcasts read as many lines as L1 holds, so that
    they wait for them (`_broadcast_wait`) and push out of L1 what the tile reads besides."""
    return lines * CACHE_LINE_BYTES >= host.l1_bytes


def broadcasts_beyond_l2(host: HostModel, tile: Tile, shape: PackedShape) -> bool:
    """Whether the strided broadcasts' buffer and one column tile's panel (read in turn for
    every row tile) exceed L2, so that the broadcasts' lines come from further out."""
    return shape.broadcast_bytes + shape.steps * tile.cols * F32_BYTES > host.l2_bytes


def _broadcast_wait(host: HostModel, tile: Tile, shape: PackedShape) -> float:
    """Cycles per reduction step that the register tiles of the grid wait for their strided
    broadcasts' lines (`STRIDED_BROADCAST_CYCLES`): none while one tile's lines are fewer
    than L1 holds; from L2 while the broadcasts' buffer and one column tile's panel (read in
    turn for every row tile) fit it, else from further out."""
    if not broadcasts_overflow_l1(host, shape.broadcast_lines):
        return 0.0
    far = broadcasts_beyond_l2(host, tile, shape)
    per_line = host.strided_broadcast_cycles * (FAR_BROADCAST_FACTOR if far else 1.0)
    vectors = -(-tile.cols // host.vector_width)
    tiles = sum(count for _, _, count in _grid(host, tile.rows, vectors, shape.rows, shape.cols))
    return tiles * per_line / shape.broadcast_steps_per_line


def packed_cost(host: HostModel, tile: Tile, shape: PackedShape) -> float:
    """Estimated cycles of the whole contraction: the grid of register tiles (`_grid_cycles`)
    over every reduction step and repeat, with the waits of strided broadcasts
    (`_broadcast_wait`), packing every panel element (columns padded to whole vectors; a
    window's im2col from beyond L2 at the host's `far_window_pack_cycles`) and
    every packed broadcast element, and storing every output element (a vector store along
    the output's contiguous dimension, or a scatter; a scatter whose lines conflict in L1
    misses)."""
    vectors = -(-tile.cols // host.vector_width)
    grid = _grid_cycles(host, tile.rows, vectors, shape.rows, shape.cols)
    grid += _broadcast_wait(host, tile, shape)
    padded = -(-shape.cols // host.vector_width) * host.vector_width
    per_element = CONTIGUOUS_PACK_CYCLES if shape.panel_contiguous else PACK_CYCLES
    if shape.window_source_bytes > host.l2_bytes:
        per_element = max(per_element, host.costs.far_window_pack_cycles)
    packing = shape.steps * padded * shape.pack_repeats * per_element
    if shape.output_contiguous:
        store = CONTIGUOUS_STORE_CYCLES
    else:
        misses = _store_misses(host, tile.cols, shape.output_stride)
        store = SCATTERED_STORE_CYCLES + misses * host.costs.missed_store_cycles
    stores = shape.rows * shape.cols * shape.repeats * store
    packing += shape.packed_broadcasts * BROADCAST_PACK_CYCLES
    return grid * shape.steps * shape.repeats + packing + stores


BROADCAST_PACK_CYCLES = 0.5
"""Cycles to pack one broadcast element (`PackedShape.packed_broadcasts`): for each reduction
step, a copy of a tile's rows, contiguous along them (between `CONTIGUOUS_PACK_CYCLES`' vector
copy and `PACK_CYCLES`' gather: a few elements per line). Not fitted: with it the model packs
the broadcasts of 28 of `bench/layers.py`'s shapes on a Zen 3, 26 and 28 of them measured
faster in two runs (`contraction_pack_schedule`)."""
