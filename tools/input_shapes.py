"""The `--input-shape NAME=DIMS` option of the tools (`fusion-import`, `fusion-run`,
`fusion-report`)."""

from __future__ import annotations

import argparse

__all__ = ["parse_input_shape"]


def parse_input_shape(text: str) -> tuple[str, tuple[int, ...]]:
    """`name=1x3x224x224` → ("name", (1, 3, 224, 224)); `name=` is a scalar."""
    name, sep, dims = text.rpartition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"expected NAME=DIMS such as x=1x3x224x224, got '{text}'")
    try:
        shape = tuple(int(d) for d in dims.split("x")) if dims else ()
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"dimensions must be integers like 1x3x224x224, got '{dims}'"
        ) from None
    if any(d < 0 for d in shape):  # (0 is a size: a decoder's empty key/value cache)
        raise argparse.ArgumentTypeError(f"dimensions must be 0 or more, got '{dims}'")
    return name, shape
