"""Scheduling passes on fused `loop.func` kernels (see `schedule_kernels.py`)."""

from fusion_compiler.passes.schedule.schedule_kernels import ScheduleKernelsPass

__all__ = ["ScheduleKernelsPass"]
