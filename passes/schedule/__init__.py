"""Scheduling passes on fused `loop.func` kernels (see `schedule_kernels.py`)."""

from passes.schedule.schedule_kernels import ScheduleKernelsPass

__all__ = ["ScheduleKernelsPass"]
