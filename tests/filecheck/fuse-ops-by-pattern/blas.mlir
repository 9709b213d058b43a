// The `blas` table on the examples with matrix products: one composite per product (+ bias),
// and automatic fusion (legalize-ops, fuse-ops, fuse-tir) for the rest.
// RUN: fusion-opt %{examples}/ffn.mlir -p 'fuse-ops-by-pattern{patterns=blas annotate-codegen=true},legalize-ops,annotate-pattern,fuse-ops,fuse-tir' | filecheck %s --check-prefix=FFN
// RUN: fusion-opt %{examples}/mlp.mlir -p 'fuse-ops-by-pattern{patterns=blas},legalize-ops,annotate-pattern,fuse-ops,fuse-tir' | filecheck %s --check-prefix=MLP
// RUN: fusion-opt %{examples}/transformer_block.mlir -p 'fuse-ops-by-pattern{patterns=blas}' | filecheck %s --check-prefix=ATTENTION
// RUN: fusion-opt %{examples}/ffn.mlir -p 'fuse-ops-by-pattern{patterns=blas-activations}' | filecheck %s --check-prefix=ACT

// FFN:       loop.func @gelu(
// FFN:       func.func private @fused_matmul_add_blas(%x: tensor<128x768xf32>, %w: tensor<768x3072xf32>, %b: tensor<3072xf32>) -> tensor<128x3072xf32> attributes {graph.codegen = "blas"} {
// FFN-NEXT:    %[[R:.*]] = func.call @fused_matmul_add_blas_composite(%x, %w, %b)
// FFN-NEXT:    func.return %[[R]]
// FFN:       func.func private @fused_matmul_add_blas_composite({{.*}} attributes {graph.primitive, graph.composite = "blas.matmul_bias"} {
// FFN-NEXT:    %mm = graph.matmul %x, %w
// FFN-NEXT:    %biased = graph.add %mm, %b
// FFN-NEXT:    func.return %biased
// FFN-LABEL: func.func @main(
// FFN-NEXT:    %biased = func.call @fused_matmul_add_blas(%x, %w, %b)
// FFN-NEXT:    %y = graph.call_loop @gelu(%biased)
// FFN-NEXT:    func.return %y

// The three layers are structurally identical: one composite, called three times; the relus
// are kernels of their own.
// MLP-COUNT-1: graph.composite = "blas.matmul_bias"
// MLP-NOT:     graph.composite
// MLP-LABEL: func.func @main(
// MLP-NEXT:    %[[A1:.*]] = func.call @fused_matmul_add_blas(%x, %w1, %b1)
// MLP-NEXT:    %[[H1:.*]] = graph.call_loop @relu(%[[A1]])
// MLP-NEXT:    %[[A2:.*]] = func.call @fused_matmul_add_blas(%[[H1]], %w2, %b2)
// MLP-NEXT:    %[[H2:.*]] = graph.call_loop @relu(%[[A2]])
// MLP-NEXT:    %[[A3:.*]] = func.call @fused_matmul_add_blas(%[[H2]], %w3, %b3)
// MLP-NEXT:    %[[Y:.*]] = graph.call_loop @relu(%[[A3]])
// MLP-NEXT:    func.return %[[Y]]

// Attention: the batched products read the heads through their transposes (BLAS strides), so
// the transposes join the composites; the reshapes stay outside.
// ATTENTION:     func.func private @fused_transpose_transpose_matmul_blas(%q3: tensor<128x4x64xf32>, %k3: tensor<128x4x64xf32>) -> tensor<4x128x128xf32> attributes {graph.primitive, graph.composite = "blas.batch_matmul"}
// ATTENTION-NEXT:  %qh = graph.transpose %q3 {perm = array<i64: 1, 0, 2>}
// ATTENTION-NEXT:  %kh = graph.transpose %k3 {perm = array<i64: 1, 2, 0>}
// ATTENTION-NEXT:  %scores = graph.matmul %qh, %kh
// ATTENTION:     func.func private @fused_transpose_matmul_blas(%v3: tensor<128x4x64xf32>, %p: tensor<4x128x128xf32>) -> tensor<4x128x64xf32> attributes {graph.primitive, graph.composite = "blas.batch_matmul"}
// ATTENTION-LABEL: func.func @main(
// ATTENTION:       %q = func.call @fused_matmul_add_blas(%x, %wq, %bq)
// ATTENTION:       %scores = func.call @fused_transpose_transpose_matmul_blas(%q3, %k3)
// ATTENTION-NEXT:  %scale = graph.constant
// ATTENTION-NEXT:  %scaled = graph.mul %scores, %scale
// ATTENTION:       %oh = func.call @fused_transpose_matmul_blas(%v3, %p)

// ACT: graph.composite = "blas.matmul_bias_gelu"
