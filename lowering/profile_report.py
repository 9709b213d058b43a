"""What a profiled run measured, per kernel, against the roofs of the machine.

`CompiledModel.profile` returns a `Profile`; `Profile.table()` is what `fusion-run --profile`
prints and `Profile.to_json()` what `--profile-json FILE` writes. Per kernel (launches of the
same kernel summed; times and counts are per run, averaged over the runs):

- calls, total ms, and share: the kernel's part of the run's wall time (from the start of its
  first launch to the end of its last, `profiling.py`);
- FLOPs and compulsory bytes (`fusion_dialects.loop.costs`), GFLOP/s and GB/s;
- the roof that bounds it: its arithmetic intensity (FLOPs / byte) against the machine balance
  (compute roof / memory roof) — `compute` at or above it, else `memory` — and the percentage
  of that roof reached. The compute roof is the FMA peak of a core times the run's threads,
  the memory roof the bandwidth measured on as many threads (`machine_roofs`).

The JSON (`SCHEMA`, one object):

```json
{"schema": "fusion-compiler-profile/1", "function": "main", "runs": 10, "threads": 2,
 "run_ms": 3.21, "kernel_ms": 3.18,
 "roofs": {"core_gflops": 235.2, "compute_gflops": 470.4, "memory_gbps": 8.3,
           "balance_flops_per_byte": 56.7, "source": "cached"},
 "kernels": [{"name": "fused_conv2d_add_relu", "calls": 1, "total_ms": 3.18, "share": 0.99,
              "flops": 231211008, "bytes": 1806336, "gflops_per_s": 72.7, "gb_per_s": 0.57,
              "intensity": 128.0, "bound": "compute", "roof_fraction": 0.155}]}
```

Kernels are sorted by total time, longest first. `flops` and the numbers derived from it are
null for a kernel with a loop whose trip count is not constant; rates are null for a kernel
that took no measurable time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from fusion_compiler.lowering.machine_roofs import Roofs

SCHEMA = "fusion-compiler-profile/1"


@dataclass(frozen=True)
class Launch:
    """The counters of one launch site over the profiled runs (`profiling.py`'s row)."""

    kernel: str
    nanoseconds: int
    calls: int
    flops: int | None
    """Of one launch (None: unknown)."""
    bytes: int
    """Of one launch."""


@dataclass(frozen=True)
class KernelProfile:
    """One kernel's launches in one run (averaged over the runs)."""

    name: str
    calls: int
    seconds: float
    flops: int | None
    bytes: int

    @property
    def gflops_per_s(self) -> float | None:
        return None if self.flops is None or self.seconds <= 0 else self.flops / self.seconds / 1e9

    @property
    def gb_per_s(self) -> float | None:
        return None if self.seconds <= 0 else self.bytes / self.seconds / 1e9

    @property
    def intensity(self) -> float | None:
        return None if self.flops is None or self.bytes <= 0 else self.flops / self.bytes


@dataclass(frozen=True)
class Profile:
    function: str
    runs: int
    threads: int
    run_seconds: float
    """The wall time of one run (averaged)."""
    kernels: tuple[KernelProfile, ...]
    roofs: Roofs

    @staticmethod
    def of(
        function: str,
        launches: Sequence[Launch],
        runs: int,
        run_nanoseconds: int,
        threads: int,
        roofs: Roofs,
    ) -> Profile:
        """The profile of `runs` runs whose launch sites counted `launches`."""
        by_name: dict[str, list[Launch]] = {}
        for launch in launches:
            by_name.setdefault(launch.kernel, []).append(launch)
        kernels = [_kernel(name, group, runs) for name, group in by_name.items()]
        kernels.sort(key=lambda k: -k.seconds)  # stable: launch order among equals
        return Profile(function, runs, threads, run_nanoseconds / runs / 1e9, tuple(kernels), roofs)

    @property
    def compute_roof(self) -> float:
        """GFLOP/s: the FMA peak of a core times the threads."""
        return self.roofs.core_gflops * self.threads

    @property
    def balance(self) -> float:
        """FLOPs per byte where the compute roof meets the memory roof."""
        return self.compute_roof / self.roofs.gbps

    def bound(self, kernel: KernelProfile) -> str | None:
        """The roof that bounds `kernel`: "compute" or "memory" (None: FLOPs unknown)."""
        if kernel.flops is None:
            return None
        intensity = kernel.intensity
        return "compute" if intensity is None or intensity >= self.balance else "memory"

    def roof_fraction(self, kernel: KernelProfile) -> float | None:
        """The part of its bounding roof `kernel` reaches."""
        bound = self.bound(kernel)
        if bound == "compute" and kernel.gflops_per_s is not None:
            return kernel.gflops_per_s / self.compute_roof
        if bound == "memory" and kernel.gb_per_s is not None:
            return kernel.gb_per_s / self.roofs.gbps
        return None

    def share(self, kernel: KernelProfile) -> float:
        return kernel.seconds / self.run_seconds if self.run_seconds > 0 else 0.0

    @property
    def kernel_seconds(self) -> float:
        return sum(k.seconds for k in self.kernels)

    def to_json(self) -> dict:
        """The profile as JSON data (the module docstring gives the schema)."""
        return {
            "schema": SCHEMA,
            "function": self.function,
            "runs": self.runs,
            "threads": self.threads,
            "run_ms": self.run_seconds * 1e3,
            "kernel_ms": self.kernel_seconds * 1e3,
            "roofs": {
                "core_gflops": self.roofs.core_gflops,
                "compute_gflops": self.compute_roof,
                "memory_gbps": self.roofs.gbps,
                "balance_flops_per_byte": self.balance,
                "source": self.roofs.source,
            },
            "kernels": [self._kernel_json(k) for k in self.kernels],
        }

    def _kernel_json(self, kernel: KernelProfile) -> dict:
        return {
            "name": kernel.name,
            "calls": kernel.calls,
            "total_ms": kernel.seconds * 1e3,
            "share": self.share(kernel),
            "flops": kernel.flops,
            "bytes": kernel.bytes,
            "gflops_per_s": kernel.gflops_per_s,
            "gb_per_s": kernel.gb_per_s,
            "intensity": kernel.intensity,
            "bound": self.bound(kernel),
            "roof_fraction": self.roof_fraction(kernel),
        }

    def table(self, top: int | None = None) -> str:
        """The profile as text: a heading, the roofs, one line per kernel (the `top`
        longest when given)."""
        shown = self.kernels if top is None else self.kernels[:top]
        rows = [_COLUMNS, *(self._cells(k) for k in shown)]
        width = max(len(r[0]) for r in rows)
        lines = [self._heading(), self._roofs_line()]
        lines += [_line(r, width) for r in rows]
        rest = self.kernels[len(shown) :]
        if rest:
            seconds = sum(k.seconds for k in rest)
            share = seconds / self.run_seconds if self.run_seconds > 0 else 0.0
            lines.append(f"... {len(rest)} more kernels: {seconds * 1e3:.3f} ms, {share:.1%}")
        return "\n".join(lines)

    def _heading(self) -> str:
        runs = f"{self.runs} run" + ("" if self.runs == 1 else "s")
        threads = f"{self.threads} thread" + ("" if self.threads == 1 else "s")
        inside = self.kernel_seconds / self.run_seconds if self.run_seconds > 0 else 0.0
        count = f"{len(self.kernels)} kernel" + ("" if len(self.kernels) == 1 else "s")
        return (
            f"profile of @{self.function}: {runs} on {threads}, {self.run_seconds * 1e3:.3f} ms "
            f"a run, {inside:.1%} of it in {count} (wall time of each launch)"
        )

    def _roofs_line(self) -> str:
        return (
            f"roofs ({self.roofs.source}): compute {self.roofs.core_gflops:.1f} GFLOP/s a core x "
            f"{self.threads} = {self.compute_roof:.1f} GFLOP/s, memory {self.roofs.gbps:.1f} "
            f"GB/s; balance {self.balance:.1f} FLOP/byte"
        )

    def _cells(self, kernel: KernelProfile) -> tuple[str, ...]:
        bound, fraction = self.bound(kernel), self.roof_fraction(kernel)
        return (
            kernel.name,
            str(kernel.calls),
            f"{kernel.seconds * 1e3:.3f}",
            f"{self.share(kernel):.1%}",
            _scaled(kernel.flops, 1e6),
            _scaled(kernel.bytes, 1e6),
            _rate(kernel.gflops_per_s),
            _rate(kernel.gb_per_s),
            bound or "–",
            "–" if fraction is None else f"{fraction:.1%}",
        )


_COLUMNS = (
    "kernel",
    "calls",
    "total ms",
    "share",
    "MFLOP",
    "MB",
    "GFLOP/s",
    "GB/s",
    "bound",
    "% of roof",
)


def _line(cells: Sequence[str], width: int) -> str:
    name, *numbers = cells
    widths = (5, 9, 6, 10, 9, 8, 7, 7, 9)
    return f"{name:<{width}}" + "".join(f" {c:>{w}}" for c, w in zip(numbers, widths, strict=True))


def _scaled(value: float | None, unit: float) -> str:
    return "–" if value is None else f"{value / unit:.2f}"


def _rate(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _kernel(name: str, launches: Sequence[Launch], runs: int) -> KernelProfile:
    """The launches of kernel `name` in one run (every run launches each site once)."""
    flops: int | None = 0
    for launch in launches:
        known = flops is not None and launch.flops is not None
        flops = flops + launch.flops * launch.calls if known else None  # type: ignore[operator]
    return KernelProfile(
        name,
        sum(launch.calls for launch in launches) // runs,
        sum(launch.nanoseconds for launch in launches) / runs / 1e9,
        None if flops is None else flops // runs,
        sum(launch.bytes * launch.calls for launch in launches) // runs,
    )
