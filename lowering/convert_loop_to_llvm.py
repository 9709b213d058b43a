"""The `convert-loop-to-llvm` pass: kernels → xDSL's `llvm` dialect."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import cache

from xdsl.context import Context
from xdsl.dialects import arith, math, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
)
from xdsl.utils.exceptions import DiagnosticException

from fusion_compiler.dialects import loop
from fusion_compiler.dialects.diagnostics import CompileError
from fusion_compiler.dialects.graph.preconditions import require_no_graph_functions
from fusion_compiler.errors import PassOptionError, check_option_range
from fusion_compiler.lowering.arith_to_llvm import ARITH_LOWERINGS, LowerArithPattern
from fusion_compiler.lowering.contraction import ContractMultiplyAddPattern
from fusion_compiler.lowering.gemm_to_llvm import LowerGemmPattern
from fusion_compiler.lowering.jit import CodegenTarget
from fusion_compiler.lowering.llvm_builders import indexed_symbols, reconcile_casts
from fusion_compiler.lowering.llvm_types import is_scalar
from fusion_compiler.lowering.loop_to_llvm import (
    LowerCallPattern,
    LowerForPattern,
    LowerFuncPattern,
    LowerReturnPattern,
    LowerViewPattern,
)
from fusion_compiler.lowering.math_approximations import F32_APPROXIMATIONS
from fusion_compiler.lowering.math_to_llvm import (
    INTRINSIC_FUNCTIONS,
    LIBM_FUNCTIONS,
    ExpandMathPattern,
    LowerFPowIPattern,
    LowerMathIntrinsicPattern,
    LowerMathLibmPattern,
    LowerRsqrtPattern,
    SpecializePowFPattern,
)
from fusion_compiler.lowering.memref_to_llvm import (
    DEFAULT_STACK_LIMIT,
    LowerAllocPattern,
    LowerLoadPattern,
    LowerPrefetchPattern,
    LowerStorePattern,
    static_layout,
    window_loads,
)
from fusion_compiler.lowering.parallel_to_llvm import PARALLEL_THRESHOLD, LowerParallelForPattern
from fusion_compiler.lowering.profile_to_llvm import LowerProfiledCallPattern
from fusion_compiler.passes.analysis.ir_walk import walk_ops

# ---------------------------------------------------------------------------------------------
# Pre-conditions (pure predicates: never mutate IR)
# ---------------------------------------------------------------------------------------------

CONVERTIBLE_OPS: frozenset[type[Operation]] = frozenset(
    {
        *loop.Loop.operations,
        memref.LoadOp,
        memref.StoreOp,
        *ARITH_LOWERINGS,
        *F32_APPROXIMATIONS,
        *INTRINSIC_FUNCTIONS,
        *LIBM_FUNCTIONS,
        math.RsqrtOp,
        math.FPowIOp,
    }
)
"""The ops a kernel body may contain."""

LDEXP_CHOICES = ("host", "on", "off")
"""The values of convert-loop-to-llvm's `ldexp` option."""

MATH_OPS: frozenset[type[Operation]] = frozenset(
    {
        *F32_APPROXIMATIONS,
        *INTRINSIC_FUNCTIONS,
        *LIBM_FUNCTIONS,
        math.RsqrtOp,
        math.FPowIOp,
        math.PowFOp,
    }
)
"""The math ops the lowering rewrites (expansions, specialisations, intrinsics, libm calls)."""


@cache
def _type_problem(value_type: Attribute) -> str | None:
    """Why the lowering cannot convert a value of `value_type`, if it cannot (asked once per
    type: a kernel has thousands of values of a few types)."""
    if isinstance(value_type, MemRefType):
        try:
            static_layout(value_type)
        except DiagnosticException as err:
            return str(err)
        return None
    return None if is_scalar(value_type) else f"unsupported type {value_type}"


def check_convertible(module: ModuleOp) -> None:
    """Raises a `CompileError` naming the first op of a kernel the pass cannot lower."""
    for kernel in module.ops:
        if not isinstance(kernel, loop.FuncOp):
            continue
        for op in walk_ops(kernel):
            if type(op) not in CONVERTIBLE_OPS:
                raise CompileError(f"cannot lower '{op.name}'", op)
            values = (*op.operands, *op.results, *(a for r in op.regions for a in r.block.args))
            for value in values:
                problem = _type_problem(value.type)
                if problem is not None:
                    raise CompileError(f"'{op.name}': {problem}", op)


def _walk(module: ModuleOp, roots: Collection[type[Operation]], *patterns: RewritePattern) -> bool:
    """Applies the first of `patterns` that acts on each op of `module` whose class is one of
    `roots`, in pre-order, visiting each op once (the ops a rewrite creates are not visited:
    no worklist, no dead-code test, since LLVM removes what is dead); whether any rewrite
    happened. Skipping the ops of other classes with one set lookup, and one rewriter per op
    visited, make a phase a fraction of the cost of xDSL's greedy driver over the module."""
    changed = False
    for op in list(walk_ops(module)):
        if type(op) not in roots or op.parent is None:  # (erased or moved by an earlier rewrite)
            continue
        rewriter = PatternRewriter(op)
        for pattern in patterns:
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                changed = True
                break
    return changed


def _walk_to_fixpoint(
    module: ModuleOp, roots: Collection[type[Operation]], *patterns: RewritePattern
) -> None:
    """`_walk` again while it rewrites something: a rewrite may create ops of `roots` (an
    expansion or specialisation of a math op holds math ops)."""
    while _walk(module, roots, *patterns):
        pass


def _erase_unused_arithmetic(module: ModuleOp) -> None:
    """Erases the arithmetic ops nothing uses, before they are lowered: the digits of an index
    whose subscripts `undo_delinearization` addressed as one term (`e / n`, `e % n`), and the
    constants an outlined body was given but does not read. LLVM would delete them, but each
    is one more op to build and translate (870 of densenet121's 45,000). Visited in reverse
    pre-order, so a chain of unused ops goes from its end."""
    for op in reversed(list(walk_ops(module))):
        if type(op) in ARITH_LOWERINGS and not op.results[0].uses:
            block = op.parent
            assert block is not None
            block.erase_op(op)


@dataclass(frozen=True)
class ConvertLoopToLLVMPass(ModulePass):
    """Lowers every `loop.func` kernel, with its loops, buffers and scalar code, to `llvm`.

    Pre-conditions: kernels are `loop.func`s over statically shaped memrefs with identity or
    static strided layouts; their bodies hold `loop.for`, `loop.alloc`, `loop.call`,
    `loop.view`, `memref.load`, `memref.store`, and scalar `arith` and `math` ops (those of
    `CONVERTIBLE_OPS`); anything else raises a `CompileError` at the offending op before the
    IR is touched. Other top-level ops are left alone.

    Post-conditions: each kernel is an external `llvm.func` with the same name taking one
    `!llvm.ptr {llvm.noalias, llvm.nocapture}` per buffer (inputs, then outputs) and
    returning nothing, i.e. a C-ABI entry point; loops are basic blocks; `index` is `i64`;
    memory is `llvm.getelementptr`/`load`/`store`; local buffers are `llvm.alloca` or
    `aligned_alloc`/`free`; `loop.gemm` is a call of its BLAS function (`gemm_to_llvm`);
    external functions (`aligned_alloc`, `free`, libm, BLAS) are declared.
    No `loop`, `memref`, `arith`, `math` op or unrealized cast remains. The outermost
    `parallel` loop of a nest with enough work is outlined into an internal `@<kernel>_par<k>`
    and launched with libgomp's `GOMP_parallel`, its team size read from the global
    `@__fusion_num_threads` (`parallel_to_llvm`); every other loop becomes a serial loop
    (`loop_to_llvm`); the JIT forces LLVM to vectorise the `vectorized` ones
    (`vector_loops`). A `loop.call` that `lower-graph{profile=true}` marked is timed
    (`profile_to_llvm`). The math route
    of each function is in `math_to_llvm`. Multiply-adds marked `contract` become
    `llvm.intr.fma` (`contraction`), and LLVM contracts nothing else.

    Follow-up: `llvm_text.module_text` (`-t llvm`), or `fusion_compiler.lowering.jit`.

    Options:
    - `approximate-math` (default true): expand f32 exp/log/tanh/erf into vectorisable
      polynomials (`math_approximations`) rather than calling libm through intrinsics;
    - `stack-limit` (default 4096): the largest local buffer, in bytes, put on the stack;
    - `threads` (default true): run `parallel` loops on a thread team (false: serially);
    - `parallel-threshold` (default 16384): the fewest innermost iterations a `parallel`
      loop must run per launch to be given a team (`parallel_to_llvm.PARALLEL_THRESHOLD`);
    - `ldexp` (`host`, the default, `on` or `off`): exp's expansion scales by LLVM's
      `ldexp`, one `vscalefps` on AVX-512, instead of two powers of two (the same bits;
      exp 0.28-0.33 -> 0.23-0.28 ms and gelu_tanh 0.60-0.63 -> 0.45-0.46 ms on 1024x1024, 1
      thread, Zen 4); `host` where this host has AVX-512 (on AVX2, LLVM calls libm's
      `ldexpf` for each element).
    """

    name = "convert-loop-to-llvm"

    approximate_math: bool = True
    stack_limit: int = DEFAULT_STACK_LIMIT
    threads: bool = True
    parallel_threshold: int = PARALLEL_THRESHOLD
    ldexp: str = "host"

    def __post_init__(self) -> None:
        check_option_range(self.name, "stack-limit", self.stack_limit, 0)
        check_option_range(self.name, "parallel-threshold", self.parallel_threshold, 0)
        if self.ldexp not in LDEXP_CHOICES:
            raise PassOptionError(
                f"{self.name}: option 'ldexp' must be one of {', '.join(LDEXP_CHOICES)}, "
                f"got {self.ldexp!r}"
            )

    def scales_with_ldexp(self) -> bool:
        """Whether exp's expansion scales with `ldexp` (`host`: where this host has AVX-512)."""
        if self.ldexp == "host":
            return CodegenTarget.host().has_avx512
        return self.ldexp == "on"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        require_no_graph_functions(op, "lower-graph (after the fusion pipeline)")
        check_convertible(op)
        with indexed_symbols(op):  # (the lowering looks symbols up in a dictionary)
            self._lower(op)

    def _lower(self, op: ModuleOp) -> None:
        _walk(op, {arith.AddfOp}, ContractMultiplyAddPattern())  # before anything separates pairs
        # Structure first: buffers become pointers and induction variables i64 block
        # arguments, so that every later pattern sees converted operands.
        structure = [LowerFuncPattern(), LowerReturnPattern(), LowerViewPattern()]
        calls = [LowerProfiledCallPattern(), LowerCallPattern()]
        _walk(op, {loop.FuncOp, loop.ReturnOp, loop.ViewOp, loop.CallOp}, *structure, *calls)
        windows = window_loads(op)  # (while the loops still say which ones are vectorized)
        if self.threads:
            _walk(op, {loop.ForOp}, LowerParallelForPattern(self.parallel_threshold))
        _walk(op, {loop.ForOp}, LowerForPattern())
        memory = [
            LowerLoadPattern(windows),
            LowerStorePattern(),
            LowerPrefetchPattern(),
            LowerAllocPattern(self.stack_limit),
        ]
        _walk(
            op,
            {memref.LoadOp, memref.StoreOp, loop.PrefetchOp, loop.AllocOp, loop.GemmOp},
            *memory,
            LowerGemmPattern(),
        )
        expand: list[RewritePattern] = (
            [ExpandMathPattern(self.scales_with_ldexp())] if self.approximate_math else []
        )
        _walk_to_fixpoint(
            op,
            MATH_OPS,
            *expand,
            SpecializePowFPattern(),
            LowerRsqrtPattern(),
            LowerFPowIPattern(),
            LowerMathIntrinsicPattern(),
            LowerMathLibmPattern(),
        )
        _erase_unused_arithmetic(op)
        _walk(op, ARITH_LOWERINGS.keys(), LowerArithPattern())
        reconcile_casts(op)
