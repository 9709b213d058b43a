"""`fusion-opt`, with the pattern tables of TVM's test_transform_fuse_ops_by_pattern.py registered.

    python tvm_tables.py FILE -p 'fuse-ops-by-pattern{patterns=dnnl}' ...

Tables (TVM's `make_fused_bias_activation_pattern` over `graph.conv2d`):
- `dnnl`: dnnl.conv2d_relu;
- `dnnl-relu-first`: dnnl.conv2d_relu, then dnnl.conv2d;
- `dnnl-conv-first`: dnnl.conv2d, then dnnl.conv2d_relu;
- `cutlass`: cutlass.conv2d;
- `compiler_A`: compiler_A.conv2d_relu_add, add(relu(conv2d), wildcard);
- `reject`: cutlass.conv2d whose check prints what it was given on stderr, then rejects.
"""

import sys

from fusion_compiler.dialects.graph import Conv2DOp
from fusion_compiler.passes.patterns import (
    FusionPattern,
    PatternCheckContext,
    is_op,
    register_patterns,
    wildcard,
)
from fusion_compiler.tools.fusion_opt import main


def fused_bias_activation(op, with_bias=False, activation=None):
    """TVM's `make_fused_bias_activation_pattern`."""
    out = is_op(op)(wildcard(), wildcard())
    if with_bias:
        out = is_op("graph.add")(out, wildcard())
    if activation:
        out = is_op(activation)(out)
    return out


conv2d = fused_bias_activation("graph.conv2d")
conv2d_relu = fused_bias_activation("graph.conv2d", activation="graph.relu")


def rejecting_check(context: PatternCheckContext) -> bool:
    lhs, rhs = context.annotated_expr["lhs"], context.annotated_expr["rhs"]
    root = context.annotated_expr["root"]
    assert isinstance(context.matched_expr, Conv2DOp)
    assert context.matched_bindings[root] is context.matched_expr
    assert context.value_to_bound_var[root] is context.matched_expr
    users = [op.name for op in context.var_usages[root]]
    print(
        f"check: root {context.matched_expr.name}, lhs %{lhs.name_hint}, "
        f"rhs %{rhs.name_hint}, root used by {users}",
        file=sys.stderr,
    )
    return False


lhs, rhs = wildcard(), wildcard()
checked = is_op("graph.conv2d")(lhs, rhs)

register_patterns("dnnl", [FusionPattern("dnnl.conv2d_relu", conv2d_relu)])
register_patterns(
    "dnnl-relu-first",
    [FusionPattern("dnnl.conv2d_relu", conv2d_relu), FusionPattern("dnnl.conv2d", conv2d)],
)
register_patterns(
    "dnnl-conv-first",
    [FusionPattern("dnnl.conv2d", conv2d), FusionPattern("dnnl.conv2d_relu", conv2d_relu)],
)
register_patterns("cutlass", [FusionPattern("cutlass.conv2d", conv2d)])
register_patterns(
    "compiler_A",
    [
        FusionPattern(
            "compiler_A.conv2d_relu_add",
            is_op("graph.add")(is_op("graph.relu")(conv2d), wildcard()),
        )
    ],
)
register_patterns(
    "reject",
    [
        FusionPattern(
            "cutlass.conv2d",
            checked,
            {"root": checked, "lhs": lhs, "rhs": rhs},
            rejecting_check,
        )
    ],
)

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
