"""The tests of onnx's backend conformance suite that the compiler does not run, and why.

`tests/frontend/test_backend_conformance.py` runs onnx's own backend test runner
(`onnx.backend.test.BackendTest`) over `fusion_compiler.frontend.backend.FusionBackend` for the node,
simple, pytorch-converted and pytorch-operator test sets, excluding what is listed here.
Every test the list leaves in passes; every test it names fails to import or compile with
the error its reason describes (the backend refuses it: it never returns a wrong answer).

`EXCLUDED` maps each reason to its tests: names without the device suffix (`_cpu`), separated
by blanks; `name*` stands for `name` and every test whose name continues with `_` (its
variants: `test_acos*` is `test_acos` and `test_acos_example`). A reason starting with an op
type names the op whose node the importer reports first. The entries were made from a full
run of the suite on onnx 1.23 (reasons from the first problem each error reports);
re-run the suite without exclusions when onnx is upgraded or the importer learns an op.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["EXCLUDED", "excluded_entries", "exclusion_patterns", "reason_for"]

EXCLUDED: dict[str, str] = {
    # --- Op types the importer has no converter for ---
    "Acos: unsupported op type": "test_acos*",
    "Acosh: unsupported op type": "test_acosh*",
    "ArgMax: unsupported op type": "test_argmax*",
    "ArgMin: unsupported op type": "test_argmin*",
    "Asin: unsupported op type": "test_asin*",
    "Asinh: unsupported op type": "test_asinh*",
    "Atan: unsupported op type": "test_atan*",
    "Atanh: unsupported op type": "test_atanh*",
    "Attention: unsupported op type": """
        test_attention_3d test_attention_3d_attn_mask test_attention_3d_causal
        test_attention_3d_diff_heads_sizes test_attention_3d_diff_heads_sizes_attn_mask
        test_attention_3d_diff_heads_sizes_causal test_attention_3d_diff_heads_sizes_scaled
        test_attention_3d_diff_heads_sizes_softcap
        test_attention_3d_diff_heads_with_past_and_present test_attention_3d_gqa
        test_attention_3d_gqa_attn_mask test_attention_3d_gqa_causal test_attention_3d_gqa_scaled
        test_attention_3d_gqa_softcap test_attention_3d_gqa_with_past_and_present
        test_attention_3d_local_window test_attention_3d_scaled test_attention_3d_softcap
        test_attention_3d_transpose_verification test_attention_3d_with_past_and_present
        test_attention_3d_with_past_and_present_qk_matmul
        test_attention_3d_with_past_and_present_qk_matmul_bias
        test_attention_3d_with_past_and_present_qk_matmul_softcap
        test_attention_3d_with_past_and_present_qk_matmul_softmax test_attention_4d
        test_attention_4d_attn_mask test_attention_4d_attn_mask_3d
        test_attention_4d_attn_mask_3d_causal test_attention_4d_attn_mask_4d
        test_attention_4d_attn_mask_4d_causal test_attention_4d_causal
        test_attention_4d_causal_with_past_and_present test_attention_4d_diff_heads_sizes
        test_attention_4d_diff_heads_sizes_attn_mask test_attention_4d_diff_heads_sizes_causal
        test_attention_4d_diff_heads_sizes_scaled test_attention_4d_diff_heads_sizes_softcap
        test_attention_4d_diff_heads_with_past_and_present
        test_attention_4d_diff_heads_with_past_and_present_mask3d
        test_attention_4d_diff_heads_with_past_and_present_mask4d test_attention_4d_gqa
        test_attention_4d_gqa_attn_mask test_attention_4d_gqa_causal test_attention_4d_gqa_scaled
        test_attention_4d_gqa_softcap test_attention_4d_gqa_with_past_and_present
        test_attention_4d_scaled test_attention_4d_softcap test_attention_4d_softcap_neginf_mask
        test_attention_4d_softcap_neginf_mask_poison test_attention_4d_with_past_and_present
        test_attention_4d_with_past_and_present_qk_matmul
        test_attention_4d_with_past_and_present_qk_matmul_bias
        test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask
        test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_causal
        test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask
        test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask_causal
        test_attention_4d_with_qk_matmul test_attention_4d_with_qk_matmul_bias
        test_attention_4d_with_qk_matmul_softcap test_attention_4d_with_qk_matmul_softmax
        test_attention_bidirectional_window test_attention_local_window
        test_attention_local_window_default test_attention_local_window_with_past
    """,
    "Bernoulli: unsupported op type": "test_bernoulli_double test_bernoulli_seed",
    "BitCast: unsupported op type": "test_bitcast_2d* test_bitcast_float32* test_bitcast_scalar*",
    "CausalConvWithState: unsupported op type": """
        test_causal_conv_with_state_b1_c1_degenerate test_causal_conv_with_state_basic
        test_causal_conv_with_state_decode_step test_causal_conv_with_state_kernel_size_one
        test_causal_conv_with_state_short_input_no_past_state test_causal_conv_with_state_silu
        test_causal_conv_with_state_silu_with_past_state test_causal_conv_with_state_swish_alias
        test_causal_conv_with_state_with_bias test_causal_conv_with_state_with_bias_and_past_state
        test_causal_conv_with_state_with_past_state
    """,
    "Celu: unsupported op type": "test_celu",
    "ConvTranspose: unsupported op type": """
        test_ConvTranspose2d* test_convtranspose* test_operator_convtranspose
    """,
    "Cos: unsupported op type": "test_cos*",
    "Cosh: unsupported op type": "test_cosh*",
    "DFT: unsupported op type": """
        test_dft_axis_opset19 test_dft_inverse_opset19 test_dft_irfft_opset19 test_dft_opset19
        test_dft_rfft_opset19
    """,
    "DeformConv: unsupported op type": "test_basic_deform* test_deform*",
    "Det: unsupported op type": "test_det*",
    "DynamicQuantizeLinear: unsupported op type": """
        test_dynamicquantizelinear test_dynamicquantizelinear_max_adjusted
        test_dynamicquantizelinear_min_adjusted
    """,
    "GRU: unsupported op type": "test_gru*",
    "GridSample: unsupported op type": "test_gridsample*",
    "GroupNormalization: unsupported op type": """
        test_group_normalization_epsilon test_group_normalization_example
    """,
    "Hardmax: unsupported op type": "test_hardmax*",
    "IsInf: unsupported op type": "test_isinf test_isinf_negative test_isinf_positive",
    "IsNaN: unsupported op type": "test_isnan",
    "LSTM: unsupported op type": """
        test_lstm_batchwise test_lstm_bidirectional test_lstm_defaults test_lstm_reverse
        test_lstm_with_initial*
    """,
    "LinearAttention: unsupported op type": """
        test_linear_attention_decode_step test_linear_attention_delta
        test_linear_attention_explicit_scale test_linear_attention_gated
        test_linear_attention_gated_delta test_linear_attention_gated_delta_beta_scalar
        test_linear_attention_gated_delta_gqa test_linear_attention_gated_delta_mqa
        test_linear_attention_gated_per_head_decay test_linear_attention_linear
        test_linear_attention_linear_t1_no_past test_linear_attention_no_past_explicit_zeros
        test_linear_attention_prefill_with_past
    """,
    "LpNormalization: unsupported op type": """
        test_l1normalization* test_l2normalization* test_lpnormalization*
    """,
    "LpPool: unsupported op type": "test_lppool*",
    "MeanVarianceNormalization: unsupported op type": "test_mvn",
    "Mish: unsupported op type": "test_mish",
    "OneHot: unsupported op type": "test_onehot_with_axis test_onehot_with_negative*",
    "OptionalGetElement: unsupported op type": "test_optional_get_element_tensor",
    "OptionalHasElement: unsupported op type": "test_optional_has_element_empty_no*",
    "QuantizeLinear: unsupported op type": "test_quantizelinear_blocked_symmetric",
    "RMSNormalization: unsupported op type": """
        test_rms_normalization_2d_axis0 test_rms_normalization_2d_axis1
        test_rms_normalization_2d_axis_negative_1 test_rms_normalization_2d_axis_negative_2
        test_rms_normalization_3d_axis0_epsilon test_rms_normalization_3d_axis1_epsilon
        test_rms_normalization_3d_axis2_epsilon test_rms_normalization_3d_axis_negative_1_epsilon
        test_rms_normalization_3d_axis_negative_2_epsilon
        test_rms_normalization_3d_axis_negative_3_epsilon test_rms_normalization_4d_axis0
        test_rms_normalization_4d_axis1 test_rms_normalization_4d_axis2
        test_rms_normalization_4d_axis3 test_rms_normalization_4d_axis_negative_1
        test_rms_normalization_4d_axis_negative_2 test_rms_normalization_4d_axis_negative_3
        test_rms_normalization_4d_axis_negative_4 test_rms_normalization_default_axis
    """,
    "RNN: unsupported op type": "test_rnn* test_simple*",
    "RandomUniformLike: unsupported op type": """
        test_bernoulli_double_expanded test_bernoulli_seed_expanded
    """,
    "Resize: unsupported op type": "test_resize_downsample_scales* test_resize_upsample_scales*",
    "RotaryEmbedding: unsupported op type": """
        test_rotary_embedding_no_position_ids test_rotary_embedding_no_position_ids_interleaved
        test_rotary_embedding_no_position_ids_rotary_dim
    """,
    "Round: unsupported op type": """
        test_dynamicquantizelinear_expanded test_dynamicquantizelinear_max_adjusted_expanded
        test_dynamicquantizelinear_min_adjusted_expanded test_round
    """,
    "Scan: unsupported op type": """
        test_linear_attention_decode_step_expanded test_linear_attention_delta_expanded
        test_linear_attention_explicit_scale_expanded
        test_linear_attention_gated_delta_beta_scalar_expanded
        test_linear_attention_gated_delta_expanded test_linear_attention_gated_delta_gqa_expanded
        test_linear_attention_gated_delta_mqa_expanded test_linear_attention_gated_expanded
        test_linear_attention_gated_per_head_decay_expanded test_linear_attention_linear_expanded
        test_linear_attention_linear_t1_no_past_expanded
        test_linear_attention_no_past_explicit_zeros_expanded
        test_linear_attention_prefill_with_past_expanded test_scan* test_scan9*
    """,
    "SequenceConstruct: unsupported op type": """
        test_sequence_model2 test_sequence_model3 test_sequence_model4 test_sequence_model5
    """,
    "SequenceEmpty: unsupported op type": "test_sequence_model1",
    "Shrink: unsupported op type": "test_shrink test_shrink_hard test_shrink_soft",
    "Sign: unsupported op type": "test_sign*",
    "Sin: unsupported op type": "test_sin*",
    "Sinh: unsupported op type": "test_sinh*",
    "SplitToSequence: unsupported op type": """
        test_sequence_model6 test_split_to_sequence_nokeepdims
    """,
    "SwiGLU: unsupported op type": "test_swiglu test_swiglu_alpha",
    "Swish: unsupported op type": "test_swiglu_alpha_expanded test_swiglu_expanded test_swish",
    "Tan: unsupported op type": "test_tan*",
    "ThresholdedRelu: unsupported op type": """
        test_thresholdedrelu test_thresholdedrelu_default test_thresholdedrelu_example
    """,
    "Unique: unsupported op type": "test_unique_not* test_unique_sorted*",
    "Upsample: unsupported op type": "test_upsample*",
    # --- Ops of other domains ---
    "ai.onnx.ml.Binarizer: op of a domain other than the default one": "test_ai_onnx_ml_binarizer",
    "ai.onnx.ml.TreeEnsemble: op of a domain other than the default one": """
        test_ai_onnx_ml_tree_ensemble_set*
    """,
    "ai.onnx.preview.FlexAttention: op of a domain other than the default one": """
        test_flexattention test_flexattention_causal_mask test_flexattention_diff_head_sizes
        test_flexattention_gqa test_flexattention_prob_mod test_flexattention_relative_positional
        test_flexattention_scaled test_flexattention_score_mod test_flexattention_soft_cap
    """,
    "ai.onnx.preview.training.Gradient: op of a domain other than the default one": "test_gradient*",
    # --- Supported op types, unsupported variants ---
    "AveragePool: dilations is not supported": "test_averagepool_2d_dilations",
    "AveragePool: only 1-D and 2-D pooling is supported": "test_AvgPool3d* test_averagepool_3d*",
    "BatchNormalization: training_mode=1 is not supported (inference only)": """
        test_batchnorm_epsilon_training* test_batchnorm_example_training*
    """,
    "Ceil on run-time tensors: only folded when its inputs are known at import time": """
        test_ceil* test_range_float_type_positive_delta_expanded
    """,
    "Clip: the maximum must be known at import time, but it is computed at run time": """
        test_clip_default_max
    """,
    "Clip: the minimum must be known at import time, but it is computed at run time": """
        test_clip test_clip_default_min test_clip_example test_clip_inbounds
        test_clip_min_greater_than_max test_clip_outbounds test_clip_splitbounds
    """,
    "Conv: only 1-D and 2-D convolutions are supported": "test_Conv3d*",
    "Dropout: output #1 (e.g. a mask or indices) is not supported": "test_dropout_default_mask*",
    "Equal on run-time tensors: only folded when its inputs are known at import time": """
        test_attention_3d_attn_mask_expanded test_attention_3d_diff_heads_sizes_attn_mask_expanded
        test_attention_3d_diff_heads_with_past_and_present_expanded
        test_attention_3d_gqa_attn_mask_expanded
        test_attention_3d_gqa_with_past_and_present_expanded
        test_attention_3d_with_past_and_present_expanded
        test_attention_3d_with_past_and_present_qk_matmul_bias_expanded
        test_attention_3d_with_past_and_present_qk_matmul_expanded
        test_attention_3d_with_past_and_present_qk_matmul_softcap_expanded
        test_attention_3d_with_past_and_present_qk_matmul_softmax_expanded
        test_attention_4d_attn_mask_3d_causal_expanded test_attention_4d_attn_mask_3d_expanded
        test_attention_4d_attn_mask_4d_causal_expanded test_attention_4d_attn_mask_4d_expanded
        test_attention_4d_attn_mask_expanded test_attention_4d_diff_heads_sizes_attn_mask_expanded
        test_attention_4d_diff_heads_with_past_and_present_expanded
        test_attention_4d_diff_heads_with_past_and_present_mask3d_expanded
        test_attention_4d_diff_heads_with_past_and_present_mask4d_expanded
        test_attention_4d_gqa_attn_mask_expanded
        test_attention_4d_gqa_with_past_and_present_expanded
        test_attention_4d_softcap_neginf_mask_expanded
        test_attention_4d_softcap_neginf_mask_poison_expanded
        test_attention_4d_with_past_and_present_expanded
        test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_causal_expanded
        test_attention_4d_with_past_and_present_qk_matmul_bias_3d_mask_expanded
        test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask_causal_expanded
        test_attention_4d_with_past_and_present_qk_matmul_bias_4d_mask_expanded
        test_attention_4d_with_past_and_present_qk_matmul_bias_expanded
        test_attention_4d_with_past_and_present_qk_matmul_expanded
        test_attention_4d_with_qk_matmul_bias_expanded
        test_attention_4d_with_qk_matmul_softcap_expanded
        test_attention_4d_with_qk_matmul_softmax_expanded
    """,
    "Floor on run-time tensors: only folded when its inputs are known at import time": """
        test_floor*
    """,
    "Greater on run-time tensors: only folded when its inputs are known at import time": """
        test_greater test_greater_bcast test_greater_equal_bcast_expanded
        test_greater_equal_expanded
    """,
    "GreaterOrEqual on run-time tensors: only folded when its inputs are known at import time": """
        test_greater_equal test_greater_equal_bcast
    """,
    "LayerNormalization: output #1 (e.g. a mask or indices) is not supported": """
        test_layer_normalization_2d_axis0 test_layer_normalization_2d_axis1
        test_layer_normalization_2d_axis_negative_1 test_layer_normalization_2d_axis_negative_2
        test_layer_normalization_3d_axis0_epsilon test_layer_normalization_3d_axis1_epsilon
        test_layer_normalization_3d_axis2_epsilon
        test_layer_normalization_3d_axis_negative_1_epsilon
        test_layer_normalization_3d_axis_negative_2_epsilon
        test_layer_normalization_3d_axis_negative_3_epsilon test_layer_normalization_4d_axis0
        test_layer_normalization_4d_axis1 test_layer_normalization_4d_axis2
        test_layer_normalization_4d_axis3 test_layer_normalization_4d_axis_negative_1
        test_layer_normalization_4d_axis_negative_2 test_layer_normalization_4d_axis_negative_3
        test_layer_normalization_4d_axis_negative_4 test_layer_normalization_default_axis
    """,
    "Less on run-time tensors: only folded when its inputs are known at import time": """
        test_clip_default_max_expanded test_clip_default_min_expanded test_clip_example_expanded
        test_clip_expanded test_clip_inbounds_expanded test_clip_min_greater_than_max_expanded
        test_clip_outbounds_expanded test_clip_splitbounds_expanded test_elu_default_expanded*
        test_elu_example_expanded* test_elu_expanded* test_leakyrelu_default_expanded
        test_leakyrelu_example_expanded test_leakyrelu_expanded test_less test_less_bcast
        test_less_equal_bcast_expanded test_less_equal_expanded test_prelu_broadcast_expanded
        test_prelu_example_expanded test_selu_default_expanded* test_selu_example_expanded*
        test_selu_expanded* test_shrink_hard_expanded* test_shrink_soft_expanded*
        test_thresholdedrelu_default_expanded* test_thresholdedrelu_example_expanded*
        test_thresholdedrelu_expanded*
    """,
    "LessOrEqual on run-time tensors: only folded when its inputs are known at import time": """
        test_less_equal test_less_equal_bcast
    """,
    "MaxPool: dilations is not supported": """
        test_MaxPool1d_stride_padding* test_MaxPool2d_stride* test_maxpool_2d_dilations
    """,
    "MaxPool: only 1-D and 2-D pooling is supported": "test_MaxPool3d* test_maxpool_3d*",
    "MaxPool: output #1 (e.g. a mask or indices) is not supported": "test_maxpool_with*",
    "Mod on run-time tensors: only folded when its inputs are known at import time": """
        test_mod_float32* test_mod_float_edge_cases_fmod_0_float32 test_mod_mixed_sign_float32
    """,
    "Range on run-time tensors: only folded when its inputs are known at import time": """
        test_range_float_type_positive_delta
    """,
    "ReduceProd on run-time tensors: only folded when its inputs are known at import time": """
        test_reduce_prod_default*
    """,
    "Where on run-time tensors: only folded when its inputs are known at import time": """
        test_attention_3d_causal_expanded test_attention_3d_diff_heads_sizes_causal_expanded
        test_attention_3d_diff_heads_sizes_expanded
        test_attention_3d_diff_heads_sizes_scaled_expanded
        test_attention_3d_diff_heads_sizes_softcap_expanded test_attention_3d_expanded
        test_attention_3d_gqa_causal_expanded test_attention_3d_gqa_expanded
        test_attention_3d_gqa_scaled_expanded test_attention_3d_gqa_softcap_expanded
        test_attention_3d_local_window_expanded test_attention_3d_scaled_expanded
        test_attention_3d_softcap_expanded test_attention_3d_transpose_verification_expanded
        test_attention_4d_causal_expanded test_attention_4d_causal_with_past_and_present_expanded
        test_attention_4d_diff_heads_sizes_causal_expanded
        test_attention_4d_diff_heads_sizes_expanded
        test_attention_4d_diff_heads_sizes_scaled_expanded
        test_attention_4d_diff_heads_sizes_softcap_expanded test_attention_4d_expanded
        test_attention_4d_gqa_causal_expanded test_attention_4d_gqa_expanded
        test_attention_4d_gqa_scaled_expanded test_attention_4d_gqa_softcap_expanded
        test_attention_4d_scaled_expanded test_attention_4d_softcap_expanded
        test_attention_4d_with_qk_matmul_expanded test_attention_bidirectional_window_expanded
        test_attention_local_window_default_expanded test_attention_local_window_expanded
        test_attention_local_window_with_past_expanded test_flexattention_causal_mask_expanded*
    """,
    "zero-size tensors: legalize-ops does not support them": """
        test_causal_conv_with_state_kernel_size_one_expanded
        test_rotary_embedding_no_position_ids_expanded
        test_rotary_embedding_no_position_ids_interleaved_expanded
    """,
    # --- Element types: only float32 tensors are computed at run time ---
    "Cast of a run-time tensor to bfloat16: only float32 tensors are supported": """
        test_cast_FLOAT_to_BFLOAT16
    """,
    "Cast of a run-time tensor to float16: only float32 tensors are supported": """
        test_cast_FLOAT_to_FLOAT16
    """,
    "Cast of a run-time tensor to float4_e2m1fn: only float32 tensors are supported": """
        test_cast_FLOAT_to_FLOAT4E2M1
    """,
    "Cast of a run-time tensor to float64: only float32 tensors are supported": """
        test_cast_FLOAT_to_DOUBLE
    """,
    "Cast of a run-time tensor to float8_e4m3fn: only float32 tensors are supported": """
        test_cast_FLOAT_to_FLOAT8E4M3FN test_cast_no_saturate_FLOAT_to_FLOAT8E4M3FN
    """,
    "Cast of a run-time tensor to float8_e4m3fnuz: only float32 tensors are supported": """
        test_cast_FLOAT_to_FLOAT8E4M3FNUZ test_cast_no_saturate_FLOAT_to_FLOAT8E4M3FNUZ
    """,
    "Cast of a run-time tensor to float8_e5m2: only float32 tensors are supported": """
        test_cast_FLOAT_to_FLOAT8E5M2 test_cast_no_saturate_FLOAT_to_FLOAT8E5M2
    """,
    "Cast of a run-time tensor to float8_e5m2fnuz: only float32 tensors are supported": """
        test_cast_FLOAT_to_FLOAT8E5M2FNUZ test_cast_no_saturate_FLOAT_to_FLOAT8E5M2FNUZ
    """,
    "Cast of a run-time tensor to float8_e8m0fnu: only float32 tensors are supported": """
        test_cast_e8m0_FLOAT*
    """,
    "Cast of a run-time tensor to int2: only float32 tensors are supported": """
        test_cast_FLOAT_to_INT2
    """,
    "Cast of a run-time tensor to int4: only float32 tensors are supported": """
        test_cast_FLOAT_to_INT4
    """,
    "Cast of a run-time tensor to uint2: only float32 tensors are supported": """
        test_cast_FLOAT_to_UINT2
    """,
    "Cast of a run-time tensor to uint4: only float32 tensors are supported": """
        test_cast_FLOAT_to_UINT4
    """,
    "bfloat16 inputs: only float32 tensors are supported": """
        test_attention_3d_causal_bf16* test_attention_4d_attn_mask_causal*
        test_attention_4d_causal_bf16* test_attention_4d_causal_padded* test_attention_4d_padded*
        test_cast_BFLOAT16* test_castlike_BFLOAT16* test_castlike_FLOAT_to_BFLOAT16*
        test_celu_bfloat16* test_compress_bfloat16 test_einsum_batch_matmul_bfloat16
        test_einsum_sum_bfloat16 test_einsum_transpose_bfloat16 test_range_bfloat16*
        test_reversesequence_bfloat16 test_unique_bfloat16*
    """,
    "bool inputs: only float32 tensors are supported": """
        test_and* test_and2d test_and3d test_and4d test_attention_23* test_attention_24_fullymasked*
        test_attention_4d_attn_mask_bool* test_attention_4d_causal_nonpad_attn*
        test_attention_causal* test_attention_local_window_gqa* test_attention_local_window_rank1*
        test_bitcast_bool* test_compress_0 test_compress_1 test_compress_default*
        test_compress_negative* test_if* test_nonzero* test_not* test_or* test_or2d test_or3d
        test_or4d test_reduce_max_bool* test_reduce_max_empty_set_bool test_reduce_min_bool*
        test_training* test_where* test_xor* test_xor2d test_xor3d test_xor4d
    """,
    "double inputs: only float32 tensors are supported": """
        test_ai_onnx_ml_tree_ensemble_single* test_bernoulli test_bernoulli_expanded
        test_bitcast_float64* test_cast_DOUBLE* test_castlike_DOUBLE* test_castlike_FLOAT_to_DOUBLE*
        test_cumprod_1d test_cumprod_1d_exclusive test_cumprod_1d_reverse* test_cumprod_2d_axis*
        test_cumprod_2d_negative* test_cumsum_1d test_cumsum_1d_exclusive test_cumsum_1d_reverse*
        test_cumsum_2d_axis* test_cumsum_2d_negative* test_einsum_batch_diagonal
        test_einsum_batch_matmul test_einsum_inner* test_einsum_scalar test_einsum_sum
        test_einsum_transpose test_flexattention_double* test_max_float64 test_min_float64
        test_mod_float64* test_mod_float_edge_cases_fmod_0_float64 test_mod_mixed_sign_float64
        test_operator_add* test_operator_addconstant test_reduce_log_sum_exp_default*
        test_reduce_log_sum_exp_do* test_reduce_log_sum_exp_keepdims*
        test_reduce_log_sum_exp_negative* test_sequence_model7
    """,
    "float16 inputs: only float32 tensors are supported": """
        test_attention_24_qk* test_attention_4d_causal_fp16* test_attention_4d_fp16*
        test_attention_4d_gqa_causal_nonpad_decode_fp16*
        test_attention_4d_gqa_with_past_and_present_fp16*
        test_attention_local_window_ext_cache_float16* test_cast_FLOAT16* test_cast_e8m0_FLOAT16*
        test_cast_no_saturate_FLOAT16* test_castlike_FLOAT16* test_castlike_FLOAT_to_FLOAT16*
        test_castlike_no_saturate_FLOAT16* test_causal_conv_with_state_fp16*
        test_causal_conv_with_state_silu_fp16* test_celu_float16* test_flexattention_fp16*
        test_isinf_float16 test_isnan_float16 test_linear_attention_fp16* test_max_float16
        test_min_float16 test_mod_float16* test_mod_float_edge_cases_fmod_0_float16
        test_mod_mixed_sign_float16 test_range_float16* test_swiglu_float16*
    """,
    "float4e2m1 inputs: only float32 tensors are supported": """
        test_cast_FLOAT4E2M1* test_castlike_FLOAT4E2M1* test_castlike_FLOAT_to_FLOAT4E2M1*
        test_dequantizelinear_float4e2m1 test_quantizelinear_float4e2m1
    """,
    "float8e4m3fn inputs: only float32 tensors are supported": """
        test_cast_FLOAT8E4M3FN* test_castlike_FLOAT8E4M3FN* test_castlike_FLOAT_to_FLOAT8E4M3FN*
        test_castlike_no_saturate_FLOAT_to_FLOAT8E4M3FN* test_dequantizelinear_e4m3fn*
        test_quantizelinear_e4m3fn
    """,
    "float8e4m3fnuz inputs: only float32 tensors are supported": """
        test_cast_FLOAT8E4M3FNUZ* test_castlike_FLOAT8E4M3FNUZ*
        test_castlike_FLOAT_to_FLOAT8E4M3FNUZ* test_castlike_no_saturate_FLOAT_to_FLOAT8E4M3FNUZ*
    """,
    "float8e5m2 inputs: only float32 tensors are supported": """
        test_cast_FLOAT8E5M2* test_castlike_FLOAT8E5M2* test_castlike_FLOAT_to_FLOAT8E5M2*
        test_castlike_no_saturate_FLOAT_to_FLOAT8E5M2* test_dequantizelinear_e5m2
        test_quantizelinear_e5m2
    """,
    "float8e5m2fnuz inputs: only float32 tensors are supported": """
        test_cast_FLOAT8E5M2FNUZ* test_castlike_FLOAT8E5M2FNUZ*
        test_castlike_FLOAT_to_FLOAT8E5M2FNUZ* test_castlike_no_saturate_FLOAT_to_FLOAT8E5M2FNUZ*
    """,
    "float8e8m0 inputs: only float32 tensors are supported": "test_cast_e8m0_FLOAT8E8M0*",
    "int16 inputs: only float32 tensors are supported": """
        test_add_int16 test_bitshift_left_int16 test_bitshift_right_int16 test_bitwise_and_i16*
        test_bitwise_xor_i16* test_dequantizelinear_int16 test_div_int16 test_equal_int16
        test_greater_equal_int16* test_greater_int16 test_less_equal_int16* test_less_int16
        test_max_int16 test_min_int16 test_mod_mixed_sign_int16 test_mul_int16
        test_quantizelinear_int16 test_sub_int16
    """,
    "int2 inputs: only float32 tensors are supported": """
        test_cast_INT2* test_castlike_FLOAT_to_INT2* test_castlike_INT2* test_dequantizelinear_int2
        test_quantizelinear_int2
    """,
    "int32 inputs: only float32 tensors are supported": """
        test_bitcast_int32* test_bitshift_left_int32* test_bitshift_right_int32*
        test_bitwise_and_i32* test_bitwise_not_2d test_bitwise_or_i32* test_bitwise_xor_i32*
        test_blackmanwindow* test_cumprod_1d_int32* test_cumprod_2d_int32 test_cumsum_1d_int32*
        test_cumsum_2d_int32 test_div_int32* test_edge* test_equal test_equal_bcast test_eyelike*
        test_gathernd_example_int32* test_hammingwindow* test_hannwindow* test_lstm_with_peepholes
        test_max_int32 test_melweightmatrix test_min_int32 test_mod_broadcast
        test_mod_mixed_sign_int32 test_pow_types_float32_int32 test_pow_types_int32*
        test_range_int32* test_reflect* test_tfidfvectorizer* test_wrap*
    """,
    "int4 inputs: only float32 tensors are supported": """
        test_cast_INT4* test_castlike_FLOAT_to_INT4* test_castlike_INT4* test_dequantizelinear_int4
        test_quantizelinear_int4
    """,
    "int64 inputs: only float32 tensors are supported": """
        test_Embedding* test_adagrad* test_adam* test_affine* test_ai_onnx_ml_array*
        test_attention_4d_causal_nonpad_batch* test_attention_4d_causal_nonpad_continued*
        test_attention_4d_causal_nonpad_negative* test_attention_4d_diff_heads_mask4d*
        test_attention_4d_gqa_causal_nonpad_decode
        test_attention_4d_gqa_causal_nonpad_decode_expanded
        test_attention_local_window_ext_cache_rank2* test_attention_local_window_ext_cache_rank3*
        test_attention_local_window_ext_cache_rank4* test_bitcast_int64* test_bitshift_left_int64
        test_bitshift_right_int64 test_center* test_col2im* test_constant_pad* test_constantofshape*
        test_dft test_dft_axis test_dft_inverse test_dft_irfft test_dft_rfft test_expand*
        test_gather* test_gathernd_example_float32 test_loop11 test_max_int64 test_maxunpool*
        test_min_int64 test_mod_int64* test_mod_mixed_sign_int64 test_momentum* test_nesterov*
        test_nllloss* test_nonmaxsuppression* test_onehot_negative* test_onehot_out*
        test_onehot_with_bfloat16* test_onehot_without* test_operator_non*
        test_pow_types_float32_int64 test_pow_types_int64* test_reduce_l1* test_reduce_l2*
        test_reduce_log_sum_asc* test_reduce_log_sum_default* test_reduce_log_sum_desc*
        test_reduce_log_sum_empty* test_reduce_log_sum_exp_empty* test_reduce_log_sum_negative*
        test_reduce_max_do* test_reduce_max_empty_set test_reduce_max_keepdims*
        test_reduce_max_negative* test_reduce_mean* test_reduce_min_do* test_reduce_min_empty*
        test_reduce_min_keepdims* test_reduce_min_negative* test_reduce_prod_do*
        test_reduce_prod_empty* test_reduce_prod_keepdims* test_reduce_prod_negative*
        test_reduce_sum* test_reshape* test_resize_downsample_sizes* test_resize_tf*
        test_resize_upsample_sizes* test_reversesequence_batch test_reversesequence_time
        test_roialign* test_rotary_embedding test_rotary_embedding_3d*
        test_rotary_embedding_expanded test_rotary_embedding_interleaved*
        test_rotary_embedding_with* test_scatter* test_scatternd* test_sce* test_sequence_model8
        test_slice* test_split_to_sequence_1 test_split_to_sequence_2 test_split_variable*
        test_split_zero* test_squeeze* test_stft* test_tensorscatter* test_tile* test_top_k
        test_top_k_negative* test_top_k_same* test_top_k_smallest test_tril* test_triu*
        test_unique_length* test_unsqueeze*
    """,
    "int8 inputs: only float32 tensors are supported": """
        test_add_int8 test_bitcast_int8* test_bitshift_left_int8* test_bitshift_right_int8*
        test_bitwise_or_i16* test_clip_default_int8* test_div_int8 test_equal_int8
        test_greater_equal_int8* test_greater_int8 test_less_equal_int8* test_less_int8
        test_max_int8 test_min_int8 test_mod_mixed_sign_int8 test_mul_int8
        test_qlinearmatmul_2D_int8* test_qlinearmatmul_3D_int8* test_sub_int8
    """,
    "optional or sequence inputs: only tensors are supported": """
        test_identity_opt test_identity_sequence test_loop13* test_loop16*
        test_optional_get_element_optional* test_optional_get_element_sequence
        test_optional_has_element_empty_optional* test_optional_has_element_optional*
        test_optional_has_element_tensor* test_sequence_insert* test_sequence_map*
    """,
    "string inputs: only float32 tensors are supported": """
        test_ai_onnx_ml_label* test_equal_string* test_regex* test_string* test_strnorm*
        test_strnormalizer*
    """,
    "uint16 inputs: only float32 tensors are supported": """
        test_add_uint16 test_bitcast_uint16* test_bitshift_left_uint16 test_bitshift_right_uint16
        test_bitwise_not_3d test_dequantizelinear_uint16 test_div_uint16 test_equal_uint16
        test_greater_equal_uint16* test_greater_uint16 test_less_equal_uint16* test_less_uint16
        test_max_uint16 test_min_uint16 test_mod_uint16 test_mul_uint16 test_quantizelinear_uint16
        test_sub_uint16
    """,
    "uint2 inputs: only float32 tensors are supported": """
        test_cast_UINT2* test_castlike_FLOAT_to_UINT2* test_castlike_UINT2*
        test_dequantizelinear_uint2 test_quantizelinear_uint2
    """,
    "uint32 inputs: only float32 tensors are supported": """
        test_add_uint32 test_bitcast_uint32* test_bitshift_left_uint32 test_bitshift_right_uint32
        test_div_uint32 test_equal_uint32 test_greater_equal_uint32* test_greater_uint32
        test_less_equal_uint32* test_less_uint32 test_max_uint32 test_min_uint32 test_mod_uint32
        test_mul_uint32 test_pow_types_float32_uint32 test_sub_uint32
    """,
    "uint4 inputs: only float32 tensors are supported": """
        test_cast_UINT4* test_castlike_FLOAT_to_UINT4* test_castlike_UINT4*
        test_dequantizelinear_uint4 test_quantizelinear_uint4
    """,
    "uint64 inputs: only float32 tensors are supported": """
        test_add_uint64 test_bitshift_left_uint64 test_bitshift_right_uint64 test_bitwise_and_ui64*
        test_bitwise_or_ui64* test_bitwise_xor_ui64* test_div_uint64 test_equal_uint64
        test_greater_equal_uint64* test_greater_uint64 test_less_equal_uint64* test_less_uint64
        test_max_uint64 test_min_uint64 test_mod_uint64 test_mul_uint64
        test_pow_types_float32_uint64 test_sub_uint64 test_top_k_uint64
    """,
    "uint8 inputs: only float32 tensors are supported": """
        test_add_uint8 test_bitshift_left_uint8 test_bitshift_right_uint8 test_bitwise_and_ui8*
        test_bitwise_not_4d test_bitwise_or_ui8* test_bitwise_xor_ui8* test_convinteger*
        test_dequantizelinear test_dequantizelinear_axis test_dequantizelinear_blocked
        test_div_uint8 test_equal_uint8 test_greater_equal_uint8* test_greater_uint8 test_image*
        test_less_equal_uint8* test_less_uint8 test_matmulinteger test_max_uint8
        test_maxpool_2d_uint8 test_min_uint8 test_mod_uint8 test_mul_uint8 test_qlinearconv
        test_qlinearmatmul_2D_uint8* test_qlinearmatmul_3D_uint8* test_quantizelinear
        test_quantizelinear_axis test_quantizelinear_blocked_asymmetric test_sub_uint8
    """,
    # --- Covered elsewhere ---
    "real models: tests/frontend/test_zoo_native.py and bench/zoo.py (slow natively)": """
        test_bvlc* test_densenet121 test_inception* test_resnet50 test_shufflenet test_squeezenet
        test_vgg19 test_zfnet512
    """,
}


def excluded_entries() -> Iterator[tuple[str, str]]:
    """Every (entry, reason) of `EXCLUDED`, in order."""
    for reason, names in EXCLUDED.items():
        for entry in names.split():
            yield entry, reason


def _pattern(entry: str, device: str) -> str:
    if entry.endswith("*"):
        return f"^{re.escape(entry[:-1])}(_.*)?_{device}$"
    return f"^{re.escape(entry)}_{device}$"


def exclusion_patterns(device: str = "cpu") -> list[str]:
    """The regular expressions, one per entry, for `BackendTest.exclude`."""
    return [_pattern(entry, device) for entry, _ in excluded_entries()]


def reason_for(test_name: str, device: str = "cpu") -> str | None:
    """Why the runner's test `test_name` (with its device suffix) is excluded, or None."""
    for entry, reason in excluded_entries():
        if re.match(_pattern(entry, device), test_name):
            return reason
    return None
