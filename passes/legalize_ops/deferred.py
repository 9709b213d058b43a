"""Kernels legalize-ops leaves unbuilt until their body is needed: deferred kernels.

Building kernels is most of legalize-ops' time (densenet121: 454 kernels, 0.45 s), and in a
compile with the schedule memo most of them are never read: fuse-ops needs only each kernel's
pattern kind, and a group whose fused kernel the memo holds is replaced by a stub before
fuse-tir reads its members (`lowering/schedule_memo.py`). So when the compile knows the pattern
kind of a kernel's source digest from an earlier compile (`kernel_sources`: the kind is a
function of the body, which is one of the digest), legalize-ops makes the kernel as a
*deferred kernel*: the `loop.func` of its type, with its `pattern`, its `concat_axis` (what
lower-graph reads of a concat) and an empty body, and keeps beside the module the *recipe*
of its body: a copy of its op on placeholder operands (and the scalar constants it holds
as literals). `materialize` builds the body from the recipe, exactly as legalize-ops would
have built it (`build_kernel` reads nothing of an op but what `kernel_key` holds), and gives it
to the same kernel op.

The compile offers the kinds it knows (`offer_kinds`) only to a pipeline whose passes before
fuse-tir are legalize-ops, annotate-pattern (without `force`, which would analyse an empty
body) and passes that keep kernel bodies (`schedule_memo.lazy_legalize_holds`); the schedule
memo materializes every deferred kernel that fuse-tir or scheduling would read, and every
one left at the end of its replay but the concats lower-graph writes in place (it erases
their kernels). `deferred_kernels` lists those still unbuilt: the driver checks that none is
left after lower-graph (else it compiles the module again without the memo).
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.ir import Block, Operation, SSAValue

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.pattern_kind import PatternKind

_KINDS = "_fusion_known_kinds"
_DEFERRED = "_fusion_deferred_kernels"

KnownKind = Callable[[str], PatternKind | None]
"""The pattern kind of the kernel of a source digest, when an earlier compile noted it."""


def offer_kinds(module: Operation, known: KnownKind) -> None:
    """Lets legalize-ops defer the kernels of `module` whose kind `known` gives."""
    module.__dict__[_KINDS] = known


def known_kind(module: Operation, digest: str) -> PatternKind | None:
    """The kind offered for a source digest (None: the kernel is to be built now)."""
    known = module.__dict__.get(_KINDS)
    return None if known is None else known(digest)


def recipe(op: Operation, literals: dict[int, Operation]) -> Operation:
    """A copy of `op` (class, types, properties, attributes, location) on placeholder
    operands: block arguments of its operand types, but the scalar constants at the positions
    of `literals` (copies of those ops), which its kernel holds as literals."""
    block = Block(arg_types=[operand.type for operand in op.operands])
    operands: list[SSAValue] = list(block.args)
    for position, constant in literals.items():
        copy = constant.clone()
        block.add_op(copy)
        operands[position] = copy.results[0]
    made = type(op).create(
        operands=operands,
        result_types=[result.type for result in op.results],
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    made.location = op.location
    block.add_op(made)
    return made


def defer(module: Operation, kernel: loop.FuncOp, made_from: Operation, kind: PatternKind) -> None:
    """Keeps `made_from` (a `recipe`) as the body-to-be of the bodiless `kernel` of kind
    `kind`."""
    kernel.pattern = loop.PatternKindAttr(kind)
    module.__dict__.setdefault(_DEFERRED, {})[kernel.sym_name.data] = (kernel, made_from)


def deferred_kernels(module: Operation) -> list[loop.FuncOp]:
    """The deferred kernels of `module` not built yet (still its ops)."""
    noted = module.__dict__.get(_DEFERRED, {})
    return [kernel for kernel, _ in noted.values() if kernel.parent is module.regions[0].block]


def is_deferred(module: Operation, kernel: loop.FuncOp) -> bool:
    noted = module.__dict__.get(_DEFERRED, {}).get(kernel.sym_name.data)
    return noted is not None and noted[0] is kernel


def materialize(module: Operation, kernel: loop.FuncOp) -> None:
    """Builds the body of the deferred `kernel` from its recipe (nothing for any other)."""
    from fusion_compiler.passes.legalize_ops.kernels import build_kernel

    noted = module.__dict__.get(_DEFERRED, {})
    entry = noted.get(kernel.sym_name.data)
    if entry is None or entry[0] is not kernel:
        return
    del noted[kernel.sym_name.data]
    built = build_kernel(entry[1], kernel.sym_name.data)
    assert built.function_type == kernel.function_type, "a recipe made another kernel type"
    empty = kernel.body.block
    kernel.body.detach_block(empty)
    empty.erase()
    body = built.body.block
    built.body.detach_block(body)
    kernel.body.add_block(body)
    built.erase()
