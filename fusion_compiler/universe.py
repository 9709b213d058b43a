"""What `xdsl-opt` (and every xDSL tool) discovers once the package is installed.

pyproject.toml registers `UNIVERSE` under the `xdsl.universe` entry-point group, so
`xdsl-opt -p fuse-ops file.mlir` parses the graph and loop dialects and runs the project's
passes. Dialects and passes are loaded on first use.
"""

from __future__ import annotations

from xdsl.ir import Dialect
from xdsl.universe import Universe

from fusion_compiler.driver import PASSES


def _graph() -> Dialect:
    from fusion_compiler.dialects.graph import Graph

    return Graph


def _loop() -> Dialect:
    from fusion_compiler.dialects.loop import Loop

    return Loop


UNIVERSE = Universe(all_dialects={"graph": _graph, "loop": _loop}, all_passes=dict(PASSES))
