"""What a packed, register-tiled matmul schedule would give, against schedule-kernels' matmul.

    python bench/packed_matmul.py [--shape 128x768x3072] [--tiles 4x48 8x16 ...] [--runs 10]

schedule-kernels runs a matmul as (i by 8 rows | k by 8 steps | j vectorised): 64 FMAs per
vector of B, whose 64 broadcasts of A do not fit in registers (one load per FMA). This script
writes, as `loop` dialect text, the schedule a BLAS-style micro-kernel uses: for each panel of
T columns, B's panel is packed contiguously (K x T), then for each block of R rows the R x T
accumulators stay in registers over the whole k loop (LLVM promotes them: R x T/8 ymm
registers), one broadcast of A per row and T/8 loads of packed B per k. It compiles that
kernel through convert-loop-to-llvm and the JIT, checks it against numpy (float64), and
prints its time next to the default pipeline's matmul of the same shape (single kernel, same
arrays). The numbers are the target for a packing + register-tiling stage in schedule-kernels.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fusion_compiler.dialects.context import make_context  # noqa: E402
from fusion_compiler.dialects.diagnostics import parse_source  # noqa: E402
from fusion_compiler.driver import compile_module  # noqa: E402
from fusion_compiler.lowering.convert_loop_to_llvm import ConvertLoopToLLVMPass  # noqa: E402
from fusion_compiler.lowering.jit import aligned_empty  # noqa: E402
from fusion_compiler.lowering.llvm_codegen import compile_llvm_module  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from timing import median_seconds  # noqa: E402


def packed_kernel(m: int, k: int, n: int, rows: int, tile: int) -> str:
    """The packed, register-tiled matmul kernel `@mm` as `loop` dialect text."""
    if m % rows or n % tile:
        raise SystemExit(f"tile {rows}x{tile} does not divide the {m}x{n} output")
    a_type, b_type, c_type = f"memref<{m}x{k}xf32>", f"memref<{k}x{n}xf32>", f"memref<{m}x{n}xf32>"
    constants = sorted({0, 1, rows, tile, k, m, n, *range(rows)})
    lines = [
        f"loop.func @mm(%a: {a_type}, %b: {b_type}) outs(%c: {c_type}) {{",
        f"  %pack = loop.alloc : memref<{k}x{tile}xf32>",
        *(f"  %c{v} = arith.constant {v} : index" for v in constants),
        "  %zero = arith.constant 0.0 : f32",
        f"  loop.for %jt = %c0 to %c{n} step %c{tile} {{",
        f"    loop.for %kp = %c0 to %c{k} step %c1 {{",
        f"      loop.for %jp = %c0 to %c{tile} step %c1 {{",
        "        %jb = arith.addi %jt, %jp : index",
        f"        %v = memref.load %b[%kp, %jb] : {b_type}",
        f"        memref.store %v, %pack[%kp, %jp] : memref<{k}x{tile}xf32>",
        "      }",
        "    }",
        f"    loop.for %i = %c0 to %c{m} step %c{rows} {{",
        f"      loop.for %jz = %c0 to %c{tile} step %c1 {{",
        "        %jc = arith.addi %jt, %jz : index",
    ]
    for r in range(rows):
        lines += [
            f"        %z{r} = arith.addi %i, %c{r} : index",
            f"        memref.store %zero, %c[%z{r}, %jc] : {c_type}",
        ]
    lines += [
        "      }",
        f"      loop.for %k = %c0 to %c{k} step %c1 {{",
        f"        loop.for %jj = %c0 to %c{tile} step %c1 {{",
        "          %j = arith.addi %jt, %jj : index",
        f"          %bv = memref.load %pack[%k, %jj] : memref<{k}x{tile}xf32>",
    ]
    for r in range(rows):
        lines += [
            f"          %r{r} = arith.addi %i, %c{r} : index",
            f"          %a{r} = memref.load %a[%r{r}, %k] : {a_type}",
            f"          %p{r} = arith.mulf %a{r}, %bv fastmath<contract> : f32",
            f"          %o{r} = memref.load %c[%r{r}, %j] : {c_type}",
            f"          %s{r} = arith.addf %o{r}, %p{r} fastmath<contract> : f32",
            f"          memref.store %s{r}, %c[%r{r}, %j] : {c_type}",
        ]
    lines += ["        }", "      }", "    }", "  }", "}"]
    return "\n".join(lines)


def median_ms(run, runs: int) -> float:
    return 1e3 * median_seconds(run, runs)


def default_matmul(m: int, k: int, n: int):
    """The default pipeline's compiled `@main` for one matmul of this shape."""
    text = (
        f"func.func @main(%a: tensor<{m}x{k}xf32>, %b: tensor<{k}x{n}xf32>) -> "
        f"tensor<{m}x{n}xf32> {{\n  %c = graph.matmul %a, %b : (tensor<{m}x{k}xf32>, "
        f"tensor<{k}x{n}xf32>) -> tensor<{m}x{n}xf32>\n  func.return %c : tensor<{m}x{n}xf32>\n}}"
    )
    return compile_module(parse_source(make_context(), text, "matmul.mlir"), cache=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="128x768x3072", help="M x K x N")
    parser.add_argument("--tiles", nargs="*", default=["4x48", "4x32", "8x16"], help="R x T")
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    m, k, n = (int(v) for v in args.shape.split("x"))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k), np.float32)
    b = rng.standard_normal((k, n), np.float32)
    exact = a.astype(np.float64) @ b
    flops = 2.0 * m * k * n
    model = default_matmul(m, k, n)
    ms = median_ms(lambda: model.run("main", a, b), args.runs)
    print(f"matmul {m}x{k} @ {k}x{n}, single kernel, median of {args.runs} runs")
    print(f"  default schedule      {ms:7.2f} ms  {flops / ms / 1e6:5.0f} GFLOPS")
    ctx = make_context()
    for spec in args.tiles:
        rows, tile = (int(v) for v in spec.split("x"))
        module = parse_source(ctx, packed_kernel(m, k, n, rows, tile), f"packed_{spec}.mlir")
        ConvertLoopToLLVMPass().apply(ctx, module)
        jit = compile_llvm_module(module)
        c = aligned_empty((m, n))
        ms = median_ms(lambda jit=jit, c=c: jit.call_kernel("mm", a, b, c), args.runs)
        error = float(np.max(np.abs(c - exact)))
        print(
            f"  packed, {rows} rows x {tile} columns  {ms:7.2f} ms  {flops / ms / 1e6:5.0f} "
            f"GFLOPS  (max abs error {error:.1e})"
        )


if __name__ == "__main__":
    main()
