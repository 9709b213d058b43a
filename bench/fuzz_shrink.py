"""Shrinking a failing random graph (`bench/graph_spec.py`) to a minimal one, and writing it to
`tests/regressions/graphs/` where `tests/test_regressions.py` runs it.

A step removes one node (with every node that reads it, transitively) or replaces a node by
one of its operands of the same shape; the graph's results are then the values nobody reads.
A step is kept when the smaller graph still fails with the same signature (exception class and
the words of its message before the first number). Steps repeat until none applies.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

from graph_spec import GraphSpec, Node, Ref, build_module

REGRESSIONS = Path(__file__).resolve().parents[1] / "tests" / "regressions" / "graphs"


def signature(err: BaseException) -> str:
    words = re.split(r"[\d\n(\[{:]", str(err), maxsplit=1)[0].strip()
    return f"{type(err).__name__}: {words[:60]}"


def _result_shapes(spec: GraphSpec) -> dict[Ref, tuple]:
    module = build_module(spec)
    main = next(iter(module.ops))
    shapes: dict[Ref, tuple] = {}
    for index, op in enumerate(list(main.body.block.ops)[: len(spec.nodes)]):
        for number, result in enumerate(op.results):
            shapes[Ref("node", index, number)] = tuple(result.type.get_shape())
    for index, shape in enumerate(spec.args):
        shapes[Ref("arg", index)] = tuple(shape)
    return shapes


def _rebuild(spec: GraphSpec, keep: list[int], replace: dict[Ref, Ref]) -> GraphSpec | None:
    """`spec` with only the nodes `keep`, reads of `replace`'s keys redirected to its values."""
    renumber = {old: new for new, old in enumerate(keep)}

    def moved(ref: Ref) -> Ref | None:
        ref = replace.get(ref, ref)
        if ref.kind == "arg":
            return ref
        if ref.index not in renumber:
            return None
        return Ref("node", renumber[ref.index], ref.result)

    nodes = []
    for old in keep:
        node = spec.nodes[old]
        operands = tuple(moved(r) for r in node.operands)
        if None in operands:
            return None
        nodes.append(Node(node.op, operands, node.params))
    read = {r for node in nodes for r in node.operands}
    produced = _produced(spec, keep, renumber)
    outputs = [r for r in produced if r not in read and nodes[r.index].op != "constant"]
    if not outputs:
        return None
    return GraphSpec(spec.args, tuple(nodes), tuple(outputs))


def _produced(spec: GraphSpec, keep: list[int], renumber: dict[int, int]) -> list[Ref]:
    refs = [r for node in spec.nodes for r in node.operands] + list(spec.outputs)
    results = {(r.index, r.result) for r in refs if r.kind == "node"}
    out = []
    for old in keep:
        count = max((n for i, n in results if i == old), default=0) + 1
        out.extend(Ref("node", renumber[old], n) for n in range(count))
    return out


def _dependents(spec: GraphSpec, index: int) -> set[int]:
    gone = {index}
    for later in range(index + 1, len(spec.nodes)):
        if any(r.kind == "node" and r.index in gone for r in spec.nodes[later].operands):
            gone.add(later)
    return gone


def candidates(spec: GraphSpec):
    """Smaller graphs, the biggest steps first."""
    shapes = _result_shapes(spec)
    for index in reversed(range(len(spec.nodes))):
        gone = _dependents(spec, index)
        smaller = _rebuild(spec, [i for i in range(len(spec.nodes)) if i not in gone], {})
        if smaller is not None:
            yield smaller
    for index, node in enumerate(spec.nodes):
        me = Ref("node", index)
        for operand in node.operands:
            if shapes.get(operand) == shapes.get(me):
                keep = [i for i in range(len(spec.nodes)) if i != index]
                smaller = _rebuild(spec, keep, {me: operand})
                if smaller is not None:
                    yield smaller


def shrink(spec: GraphSpec, fails: Callable[[GraphSpec], str | None], budget: float = 600.0):
    """The smallest graph found for which `fails` gives the signature `spec` fails with."""
    target = fails(spec)
    deadline = time.monotonic() + budget
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for smaller in candidates(spec):
            if time.monotonic() > deadline:
                break
            if fails(smaller) == target:
                spec, progress = smaller, True
                break
    return spec


def write_regression(spec: GraphSpec, name: str, why: str, directory: Path = REGRESSIONS) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.mlir"
    header = "".join(f"// {line}\n" for line in why.splitlines()[:6])
    path.write_text(header + str(build_module(spec)) + "\n")
    return path
