"""`fuse-ops-by-pattern`: group the subgraphs a pattern table names (TVM's FuseOpsByPattern).

The second fusion mechanism beside fuse-ops: rather than deciding what fuses, it groups
exactly the matches of named patterns, mainly to hand them to an external library, and leaves
everything else to legalize-ops and fuse-ops.

    %mm = graph.matmul %x, %w               %y = func.call @fused_matmul_add_blas(%x, %w, %b)
    %y  = graph.add %mm, %b          ==>
                                            func.func private @fused_matmul_add_blas(...)
                                              attributes {graph.composite = "blas.matmul_bias",
                                                          graph.primitive} { <the 2 ops> }

Semantics (`src/relax/transform/fuse_ops.cc`, `PatternBasedPartitioner`):
- the patterns of the table are applied one after the other, in priority order; each one
  visits the ops of every graph-level function in block order and tries to match rooted at
  each op's result; a group is formed at the first accepted match, so an earlier pattern
  wins, and a later root wins nothing an earlier group took (no op is in two groups);
- a match is accepted if the pattern's `check` accepts it, no op it takes (the root aside) is
  in a group already, and no value computed inside it other than the root's is used outside
  it. (TVM's core partitioner would return such values as extra outputs; every backend of
  TVM rejects those matches in its check, with `has_leaking_intermediate_variables`, and ours
  compute one result, so the rule is part of the pass.) The matcher tries the alternatives of
  a pattern in order and the first alternative that is accepted wins;
- wildcards and `is_const()` match the group's inputs: they are never taken into it, so two
  chained matches stay two groups;
- each group is outlined as `func.func private @fused_<ops>_<backend>` with
  `graph.composite = "<pattern name>"`, `graph.primitive` and the `attrs_getter`'s
  attributes, called with `func.call`; structurally identical groups share one function.

Options: `patterns` (the table, registered with `register_patterns`; empty: no-op),
`bind-constants` (constants the group uses are copied into the composite rather than passed
as arguments; the caller keeps them while other ops use them), `annotate-codegen` (each
composite is wrapped in `func.func private @fused_<ops>_<backend>` with
`graph.codegen = "<backend>"` whose body only calls the composite, now named
`@fused_<ops>_<backend>_composite`, as TVM's `CompositeFunctionAnnotator` does).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from fusion_compiler.dialects.graph import (
    CODEGEN_ATTR,
    COMPOSITE_ATTR,
    PRIMITIVE_ATTR,
    ConstantOp,
    is_external_function,
)
from fusion_compiler.passes.fuse_ops import (
    FunctionTable,
    OutlinedGroup,
    build_primitive_function,
    describe_group,
    shorten_name,
)
from fusion_compiler.passes.legalize_ops.kernels import kernel_base_name
from fusion_compiler.passes.patterns.fusion_pattern import (
    FusionPattern,
    PatternCheckContext,
    get_patterns,
)
from fusion_compiler.passes.patterns.matcher import Match, matches
from fusion_compiler.passes.specialize_shapes.static_check import require_static

# ---------------------------------------------------------------------------------------------
# Partition (read-only)
# ---------------------------------------------------------------------------------------------


def is_graph_function(op: Operation) -> bool:
    """A graph-level function the pass partitions (not primitive, composite or a wrapper)."""
    return (
        isinstance(op, func.FuncOp)
        and bool(op.body.blocks)
        and PRIMITIVE_ATTR not in op.attributes
        and not is_external_function(op)
    )


def _context(pattern: FusionPattern, match: Match, function: func.FuncOp) -> PatternCheckContext:
    return PatternCheckContext(match, function, match.bindings(pattern.annotation_patterns))


def _accepted(context: PatternCheckContext, pattern: FusionPattern, taken: set[Operation]) -> bool:
    match = context.match
    if any(op in taken for op in match.ops if op is not match.root):
        return False
    if context.has_leaking_intermediates():
        return False
    return pattern.check is None or bool(pattern.check(context))


def partition_by_pattern(
    function: func.FuncOp, pattern: FusionPattern
) -> list[tuple[Match, PatternCheckContext]]:
    """The accepted matches of `pattern` in `function`, in block order of their roots."""
    taken: set[Operation] = set()
    groups: list[tuple[Match, PatternCheckContext]] = []
    for op in function.body.block.ops:
        if len(op.results) != 1 or op in taken:
            continue
        for match in matches(pattern.pattern, op.results[0]):
            context = _context(pattern, match, function)
            if _accepted(context, pattern, taken):
                groups.append((match, context))
                taken.update(match.ops)
                break
    return groups


def composite_name(match: Match, backend: str) -> str:
    """`fused_<ops>_<backend>`: the matched ops' names in block order, then the backend."""
    names = "_".join(kernel_base_name(op) for op in match.ops)
    return shorten_name(f"fused_{names}_{backend}")


# ---------------------------------------------------------------------------------------------
# Transformation
# ---------------------------------------------------------------------------------------------


def _outlined_group(match: Match, bind_constants: bool) -> OutlinedGroup:
    group = describe_group(match.ops)
    constants = tuple(
        v.owner for v in group.inputs if bind_constants and isinstance(v.owner, ConstantOp)
    )
    inputs = tuple(v for v in group.inputs if v.owner not in constants)
    return OutlinedGroup((*constants, *match.ops), inputs, tuple(match.root.results))


def build_composite(
    name: str, group: OutlinedGroup, pattern: FusionPattern, context: PatternCheckContext
) -> func.FuncOp:
    """The composite function of one match (before it is interned)."""
    function = build_primitive_function(name, group)
    function.attributes[COMPOSITE_ATTR] = StringAttr(pattern.name)
    if pattern.attrs_getter is not None:
        for key, value in pattern.attrs_getter(context).items():
            function.attributes[key] = StringAttr(str(value))
    return function


class FuseFunctionByPattern(RewritePattern):
    """Outline the accepted matches of one fusion pattern in a graph-level function."""

    def __init__(self, pattern: FusionPattern, table: FunctionTable, bind_constants: bool):
        self.pattern = pattern
        self.table = table
        self.bind_constants = bind_constants

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if not is_graph_function(op):
            return
        for match, context in partition_by_pattern(op, self.pattern):
            self._outline(op, match, context, rewriter)

    def _outline(self, function, match: Match, context, rewriter: PatternRewriter) -> None:
        group = _outlined_group(match, self.bind_constants)
        name = composite_name(match, self.pattern.backend)
        composite = build_composite(name, group, self.pattern, context)
        composite = self.table.intern(composite, function, rewriter)
        root = match.root
        call = func.CallOp(
            composite.sym_name.data, list(group.inputs), composite.function_type.outputs.data
        )
        call.location = root.location
        rewriter.insert(call, InsertPoint.before(root))
        for old, new in zip(root.results, call.results, strict=True):
            rewriter.replace_uses_with_if(old, new, lambda use: use.operation not in match.ops)
        for member in reversed(match.ops):
            rewriter.erase(member)
        for member in group.ops:
            if isinstance(member, ConstantOp) and not member.result.uses:
                rewriter.erase(member)


def annotate_codegen(module: ModuleOp) -> None:
    """Wrap each composite in a `graph.codegen` function that takes its name and calls it."""
    taken = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)}
    for composite in [op for op in module.ops if isinstance(op, func.FuncOp)]:
        if COMPOSITE_ATTR not in composite.attributes:
            continue
        name = composite.sym_name.data
        backend = composite.attributes[COMPOSITE_ATTR].data.partition(".")[0]
        inner, suffix = f"{name}_composite", 0
        while inner in taken:
            suffix += 1
            inner = f"{name}_composite_{suffix}"
        taken.add(inner)
        composite.properties["sym_name"] = StringAttr(inner)
        function_type = composite.function_type
        wrapper = func.FuncOp(
            name, (function_type.inputs.data, function_type.outputs.data), visibility="private"
        )
        wrapper.attributes[CODEGEN_ATTR] = StringAttr(backend)
        wrapper.location = composite.location
        block = wrapper.body.block
        for source, arg in zip(composite.body.block.args, block.args, strict=True):
            arg.name_hint = source.name_hint
        call = func.CallOp(inner, list(block.args), function_type.outputs.data)
        block.add_ops([call, func.ReturnOp(*call.results)])
        module.body.block.insert_op_before(wrapper, composite)


@dataclass(frozen=True)
class FuseOpsByPatternPass(ModulePass):
    """Outline the matches of a named pattern table as composite functions.

    Pre-conditions: graph-level `func.func`s of graph ops (before legalize-ops). The table
    `patterns` is registered (`register_patterns`, or a built-in table such as `blas`); an
    unknown name raises a `PatternError` naming the registered tables.
    Post-conditions: every accepted match (see the module docstring) is a `func.call` of a
    `func.func private @fused_<ops>_<backend>` with `graph.composite` and `graph.primitive`
    (with `annotate-codegen`: of its `graph.codegen` wrapper); other ops are unchanged; the IR
    verifies. Composite functions are left alone by legalize-ops, fuse-ops and fuse-tir.
    Follow-up: legalize-ops, annotate-pattern, fuse-ops, fuse-tir for the rest; lower-graph
    hands each composite to its backend.
    """

    name = "fuse-ops-by-pattern"

    patterns: str = ""
    bind_constants: bool = False
    annotate_codegen: bool = False

    def __post_init__(self) -> None:
        if self.patterns:
            get_patterns(self.patterns)  # an unknown table is an error of the pipeline

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_static(op)  # patterns test shapes; specialize-shapes comes first
        table = get_patterns(self.patterns) if self.patterns else ()
        names = {f.sym_name.data for f in op.ops if hasattr(f, "sym_name")}
        functions = FunctionTable({}, names)
        for pattern in table:
            PatternRewriteWalker(
                FuseFunctionByPattern(pattern, functions, self.bind_constants),
                apply_recursively=False,
                walk_regions_first=False,
            ).rewrite_module(op)
        if self.annotate_codegen:
            annotate_codegen(op)
