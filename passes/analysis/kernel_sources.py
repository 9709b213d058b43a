"""What each kernel legalize-ops made was made from: its *source digest*, kept beside the module.

legalize-ops builds a kernel from its op's class, operand and result types, properties and
scalar literals, and from nothing else (`legalize_ops.kernels.kernel_key`: two ops that agree
on those share one kernel). The source digest is a SHA-256 of exactly those, so it names the
kernel's body without anyone reading the body: the schedule memo keys kernels by it
(`lowering/schedule_memo.py`; hashing densenet121's kernels' IR took 0.25 s of each compile).

The digests are not in the IR: a reader of the IR has no use for them, and a digest printed
into a file could be edited out of step with the body beside it. They are kept on the module
object (`note_source`), each with the kernel op it was made for, and read back
(`source_digest`) only for that same op object: a copy of the module (`clone`) or a kernel
made anew has none. A pass that rewrites a kernel's body in place would leave its digest
stale: whoever reads digests must know that only such passes ran since legalize-ops
(`SOURCE_KEEPING_PASSES`).
"""

from __future__ import annotations

import hashlib

from xdsl.ir import Attribute, Operation

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.printing import attribute_text

SOURCE_KEEPING_PASSES = frozenset(
    {"fuse-ops-by-pattern", "legalize-ops", "annotate-pattern", "fuse-ops", "fuse-tir"}
)
"""The passes after which a kernel legalize-ops made still has the body its source digest
names: they add kernels, set a kernel's `pattern` or move its calls into groups (fuse-tir moves
a kernel's body into a fused kernel and erases the kernel), never change a body."""

_SOURCES = "_fusion_kernel_sources"


def source_text(op: Operation, literals: dict[int, bytes]) -> str:
    """What a kernel of `op` is made from, as text: its class, operand and result types,
    properties (by name) and the bytes of the scalar literals it holds (by operand position).
    Attributes print exactly (xDSL prints a float so that it reads back as the same value)."""
    parts = [
        op.name,
        ",".join(attribute_text(operand.type) for operand in op.operands),
        ",".join(attribute_text(result.type) for result in op.results),
        ",".join(f"{k}={attribute_text(v)}" for k, v in sorted(op.properties.items())),
        ",".join(f"{position}={literals[position].hex()}" for position in sorted(literals)),
    ]
    return "\0".join(parts)


def text_digest(text: str) -> str:
    """The source digest of a `source_text`."""
    return hashlib.sha256(text.encode()).hexdigest()


def note_source(module: Operation, kernel: loop.FuncOp, digest: str) -> None:
    """Keeps the source digest of `kernel` (`text_digest`) with `module`."""
    module.__dict__.setdefault(_SOURCES, {})[kernel.sym_name.data] = (kernel, digest)


def source_digest(module: Operation, kernel: loop.FuncOp) -> str | None:
    """The source digest noted for this very `kernel` op of `module`, or None."""
    noted = module.__dict__.get(_SOURCES, {}).get(kernel.sym_name.data)
    return noted[1] if noted is not None and noted[0] is kernel else None


def kernel_source_key(module: Operation, kernel: loop.FuncOp) -> str | None:
    """A digest of `kernel` as it is now, from its source digest and its properties and
    attributes (its `pattern` among them) but its name; None without a source digest."""
    digest = source_digest(module, kernel)
    if digest is None:
        return None
    entries: list[tuple[str, Attribute]] = [
        *(("p." + k, v) for k, v in kernel.properties.items() if k != "sym_name"),
        *(("a." + k, v) for k, v in kernel.attributes.items()),
    ]
    text = ",".join(f"{k}={attribute_text(v)}" for k, v in sorted(entries, key=lambda e: e[0]))
    return hashlib.sha256(f"kernel source 1\0{digest}\0{text}".encode()).hexdigest()
