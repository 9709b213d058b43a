"""The body of a loop-dialect op written in its custom syntax: one block, whose terminator
may be left implicit."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, Region
from xdsl.parser import Parser


def parse_body(
    parser: Parser, arguments: Sequence[Parser.Argument], terminator: type[Operation], owner: str
) -> Region:
    """The region that follows, whose entry block takes `arguments`, ended by `terminator`
    (added when the text leaves it out). A second block (a label after the first ops) is a
    parse error at the region: the ops' verifiers require one block, and the custom syntax
    has no way to print another."""
    start = parser.pos
    body = parser.parse_region(arguments)
    if len(body.blocks) != 1:
        parser.raise_error(
            f"the body of '{owner}' is one block: it cannot hold a block label", start, parser.pos
        )
    block = body.block
    if not block.ops or not isinstance(block.last_op, terminator):
        block.add_op(terminator())
    return body
