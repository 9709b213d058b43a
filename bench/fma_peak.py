"""One core's f32 FMA peak, measured: the roof `bench/layers.py` reports percentages of.

    python bench/fma_peak.py

The measurement is the profiler's (`fusion_compiler.lowering.machine_roofs.
measure_core_gflops`: independent vector FMA chains in a loop kernel compiled by our own JIT,
as many as the register file holds on every ISA), so the benchmarks and `fusion-run
--profile` share one roof. (This script had a kernel of its own whose 24 chains spilled on
AVX2: 54 instead of about 100 GFLOP/s on Zen 3.)
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


@cache
def fma_peak_gflops() -> float:
    from fusion_compiler.lowering.machine_roofs import measure_core_gflops

    return measure_core_gflops()


if __name__ == "__main__":
    print(f"{fma_peak_gflops():.1f} GFLOP/s (f32 FMA, one core)")
