"""Where running a `parallel` loop on a thread team starts to pay: serial vs threaded times.

    python bench/parallel_threshold.py [--runs 300] [--threads 0] [--rows 4,16,64,256,1024]

One kernel per body and size, `y[i, j] = body(x[i, j])` over `rows x 256` elements with a
`parallel` row loop, compiled twice by `convert-loop-to-llvm`: serially (`threads=false`) and
outlined onto libgomp whatever its size (`parallel-threshold=0`). Prints the median times in
microseconds and the gain of the threaded build; the size where the gain turns positive is
the break-even that `fusion_compiler.lowering.parallel_to_llvm.PARALLEL_THRESHOLD` is chosen from. Bodies:
`add` (one add, memory-bound) and `exp` (the vectorised exp expansion, compute-bound).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from xdsl.parser import Parser  # noqa: E402

from fusion_compiler.dialects.context import make_context  # noqa: E402
from fusion_compiler.lowering import ConvertLoopToLLVMPass, compile_llvm_module  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from timing import median_seconds  # noqa: E402

COLUMNS = 256
BODIES = {
    "add": "%o = arith.addf %v, %h : f32",
    "exp": "%e = math.exp %v : f32\n%m = arith.mulf %e, %h : f32\n%o = arith.addf %m, %v : f32",
}


def kernel(rows: int, body: str) -> str:
    buffer = f"memref<{rows}x{COLUMNS}xf32>"
    return f"""
loop.func @k(%x: {buffer}) outs(%y: {buffer}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = arith.constant {rows} : index
  %cols = arith.constant {COLUMNS} : index
  %h = arith.constant 0.5 : f32
  loop.for %i = %c0 to %rows step %c1 parallel {{
    loop.for %j = %c0 to %cols step %c1 vectorized {{
      %v = memref.load %x[%i, %j] : {buffer}
      {body}
      memref.store %o, %y[%i, %j] : {buffer}
    }}
  }}
  loop.return
}}"""


def median_us(run, runs: int) -> float:
    return 1e6 * median_seconds(run, runs)


def measure(text: str, threads: bool, team: int, runs: int, rows: int) -> float:
    ctx = make_context()
    module = Parser(ctx, text).parse_module()
    ConvertLoopToLLVMPass(threads=threads, parallel_threshold=0).apply(ctx, module)
    jit = compile_llvm_module(module)
    jit.set_num_threads(team)
    x = np.random.default_rng(0).standard_normal((rows, COLUMNS)).astype(np.float32)
    y = np.empty_like(x)
    return median_us(lambda: jit.call_kernel("k", x, y), runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--threads", type=int, default=0, help="team size (0: every core)")
    parser.add_argument("--rows", default="4,16,64,256,1024")
    args = parser.parse_args(argv)
    print(f"{'body':5} {'elements':>9} {'serial us':>10} {'threaded us':>12} {'gain us':>9}")
    for name, body in BODIES.items():
        for rows in (int(r) for r in args.rows.split(",")):
            text = kernel(rows, body)
            serial = measure(text, False, args.threads, args.runs, rows)
            threaded = measure(text, True, args.threads, args.runs, rows)
            gain = serial - threaded
            print(f"{name:5} {rows * COLUMNS:9d} {serial:10.2f} {threaded:12.2f} {gain:+9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
