"""One core's f32 FMA peak, measured: independent vector FMA chains in a loop, JIT-compiled.

    python bench/fma_peak.py

The kernel keeps `chains(lanes)` accumulators of the host's widest vector (16 lanes with
AVX-512, 8 with AVX, else 4), each updated by one `llvm.fma` per iteration: enough independent
chains to hide the FMA latency on every x86 core we meet (4 cycles x 2 units = 8 needed), and
few enough to stay in the register file with the two operands (24 of AVX-512's 32 registers,
12 of AVX2's 16: 24 there spilled and measured 54 instead of 95 GFLOP/s on Zen 3).
GFLOP/s = iterations x chains x lanes x 2 / seconds, the best of a few runs. This is the
roof `bench/layers.py` reports percentages of.
"""

from __future__ import annotations

import ctypes
import sys
import time
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

ITERATIONS = 5_000_000


def chains(lanes: int) -> int:
    """Independent accumulators of the kernel: within the register file of the ISA that
    has `lanes` f32 lanes (32 registers with AVX-512, 16 otherwise)."""
    return 24 if lanes == 16 else 12


def _kernel_ir(lanes: int) -> str:
    vec = f"<{lanes} x float>"
    splat = lambda v: "<" + ", ".join(f"float {v}" for _ in range(lanes)) + ">"  # noqa: E731
    phis, fmas, stores = [], [], []
    for c in range(chains(lanes)):
        phis.append(f"  %a{c} = phi {vec} [ {splat('0.0')}, %entry ], [ %b{c}, %loop ]")
        fmas.append(f"  %b{c} = call {vec} @llvm.fma.v{lanes}f32({vec} %a{c}, {vec} %x, {vec} %y)")
        stores.append(
            f"  %p{c} = getelementptr {vec}, ptr %out, i64 {c}\n  store {vec} %b{c}, ptr %p{c}, align 4"
        )
    return "\n".join(
        [
            f"declare {vec} @llvm.fma.v{lanes}f32({vec}, {vec}, {vec})",
            "define void @peak(i64 %n, ptr %out, float %s) #0 {",
            "entry:",
            f"  %x0 = insertelement {vec} poison, float %s, i64 0",
            f"  %x = shufflevector {vec} %x0, {vec} poison, <{lanes} x i32> zeroinitializer",
            f"  %y = fsub {vec} {splat('1.0')}, %x",
            "  br label %loop",
            "loop:",
            "  %i = phi i64 [ 0, %entry ], [ %j, %loop ]",
            *phis,
            *fmas,
            "  %j = add i64 %i, 1",
            "  %done = icmp eq i64 %j, %n",
            "  br i1 %done, label %exit, label %loop",
            "exit:",
            *stores,
            "  ret void",
            "}",
            f'attributes #0 = {{ "min-legal-vector-width"="{lanes * 32}" '
            f'"prefer-vector-width"="{lanes * 32}" }}',
        ]
    )


@cache
def fma_peak_gflops(iterations: int = ITERATIONS, repeats: int = 9) -> float:
    import llvmlite.binding as llvm

    from fusion_compiler.lowering.jit import host_target_machine

    machine = host_target_machine()
    features = llvm.get_host_cpu_features().flatten()
    lanes = 16 if "+avx512f" in features else 8 if "+avx" in features else 4
    module = llvm.parse_assembly(_kernel_ir(lanes))
    module.triple = machine.triple
    module.data_layout = str(machine.target_data)
    module.verify()
    engine = llvm.create_mcjit_compiler(module, machine)
    engine.finalize_object()
    kernel = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_void_p, ctypes.c_float)(
        engine.get_function_address("peak")
    )
    out = (ctypes.c_float * (chains(lanes) * lanes))()
    kernel(1000, ctypes.addressof(out), 0.5)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        kernel(iterations, ctypes.addressof(out), 0.5)
        best = min(best, time.perf_counter() - start)
    return iterations * chains(lanes) * lanes * 2 / best / 1e9


if __name__ == "__main__":
    print(f"{fma_peak_gflops():.1f} GFLOP/s (f32 FMA, one core)")
