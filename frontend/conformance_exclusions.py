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
run of the suite on onnx 1.23 (reasons from the first problem each error reports), and
those of the tests once excluded for int64, int32 or bool inputs or for comparisons and Where
on run-time tensors again from a run of each of them once the importer took those types;
re-run the suite without exclusions when onnx is upgraded or the importer learns an op.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

__all__ = ["EXCLUDED", "excluded_entries", "exclusion_patterns", "reason_for"]

EXCLUDED: dict[str, str] = {
    # --- Op types the importer has no converter for ---
    "Adagrad: unsupported op type": "test_adagrad*",
    "Adam: unsupported op type": "test_adam*",
    "ArrayFeatureExtractor: unsupported op type": "test_ai_onnx_ml_array_feature_extractor",
    "Bernoulli: unsupported op type": "test_bernoulli_double test_bernoulli_seed",
    "BitCast: unsupported op type": """
        test_bitcast_2d* test_bitcast_bool_to_uint8 test_bitcast_float32*
        test_bitcast_int32_to_float32 test_bitcast_int64_to_float64 test_bitcast_scalar*
    """,
    "BitShift: unsupported op type": """
        test_bitshift_left_int32* test_bitshift_left_int64 test_bitshift_right_int32*
        test_bitshift_right_int64
    """,
    "BitwiseAnd: unsupported op type": "test_bitwise_and_i32_2d",
    "BitwiseNot: unsupported op type": "test_bitwise_not_2d",
    "BitwiseOr: unsupported op type": "test_bitwise_or_i32_2d",
    "BitwiseXor: unsupported op type": "test_bitwise_xor_i32_2d",
    "Col2Im: unsupported op type": "test_col2im*",
    "Compress: unsupported op type": """
        test_compress_0 test_compress_1 test_compress_default_axis test_compress_negative_axis
    """,
    "CumProd: unsupported op type": "test_cumprod_1d_int32_exclusive test_cumprod_2d_int32",
    "DeformConv: unsupported op type": "test_basic_deform* test_deform*",
    "Det: unsupported op type": "test_det*",
    "DFT: unsupported op type": "test_dft*",
    "GridSample: unsupported op type": "test_gridsample*",
    "GRU: unsupported op type": "test_gru*",
    "Hardmax: unsupported op type": "test_hardmax*",
    "If: unsupported op type": """
        test_affine_grid_2d_align_corners_expanded test_affine_grid_2d_expanded
        test_affine_grid_3d_align_corners_expanded test_affine_grid_3d_expanded test_if*
    """,
    "Loop: unsupported op type": "test_loop11",
    "LpPool: unsupported op type": "test_lppool*",
    "LSTM: unsupported op type": """
        test_lstm_batchwise test_lstm_bidirectional test_lstm_defaults test_lstm_reverse
        test_lstm_with_initial* test_lstm_with_peepholes
    """,
    "MaxUnpool: unsupported op type": "test_maxunpool*",
    "MelWeightMatrix: unsupported op type": "test_melweightmatrix",
    "Momentum: unsupported op type": "test_momentum* test_nesterov_momentum",
    "NonMaxSuppression: unsupported op type": "test_nonmaxsuppression*",
    "NonZero: unsupported op type": "test_nonzero_example",
    "OptionalGetElement: unsupported op type": "test_optional_get_element_tensor",
    "OptionalHasElement: unsupported op type": "test_optional_has_element_empty_no*",
    "QuantizeLinear: unsupported op type": "test_quantizelinear_blocked_symmetric",
    "RandomUniformLike: unsupported op type": """
        test_bernoulli_double_expanded test_bernoulli_seed_expanded
    """,
    "Resize: unsupported op type": """
        test_resize_downsample_scales* test_resize_downsample_sizes* test_resize_tf*
        test_resize_upsample_scales* test_resize_upsample_sizes*
    """,
    "ReverseSequence: unsupported op type": "test_reversesequence_batch test_reversesequence_time",
    "RNN: unsupported op type": "test_rnn* test_simple*",
    "RoiAlign: unsupported op type": "test_roialign*",
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
    "Scatter: unsupported op type": "test_scatter_with_axis test_scatter_without_axis",
    "ScatterElements: unsupported op type": "test_scatter_elements*",
    "ScatterND: unsupported op type": "test_scatternd*",
    "SequenceConstruct: unsupported op type": """
        test_sequence_model2 test_sequence_model3 test_sequence_model4 test_sequence_model5
    """,
    "SequenceEmpty: unsupported op type": "test_sequence_model1",
    "SplitToSequence: unsupported op type": """
        test_sequence_model6 test_sequence_model8 test_split_to*
    """,
    "STFT: unsupported op type": "test_stft*",
    "TensorScatter: unsupported op type": "test_tensorscatter*",
    "TfIdfVectorizer: unsupported op type": "test_tfidfvectorizer*",
    "TopK: unsupported op type": """
        test_top_k test_top_k_negative_axis test_top_k_same* test_top_k_smallest
    """,
    "Unique: unsupported op type": "test_unique_length_1 test_unique_not* test_unique_sorted*",
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
    "ai.onnx.preview.training.Gradient: op of a domain other than the default one": """
        test_gradient*
    """,
    # --- Supported op types, unsupported variants ---
    "BatchNormalization: training_mode=1 is not supported (inference only)": """
        test_batchnorm_epsilon_training* test_batchnorm_example_training*
    """,
    "Clip: the maximum must be known at import time, but it is computed at run time": """
        test_clip_default_max
    """,
    "ConstantOfShape: the shape is the value of a graph input (specialize-shapes specialises on input shapes, not values)": """
        test_constantofshape*
    """,
    "CumSum: the axis must be known at import time, but it is computed at run time": """
        test_cumsum_1d_int32_exclusive test_cumsum_2d_int32
    """,
    "Dropout: output #1 (e.g. a mask or indices) is not supported": "test_dropout_default_mask*",
    "Dropout: training_mode must be known at import time, but it is computed at run time": """
        test_training*
    """,
    "Expand: the shape is the value of a graph input (specialize-shapes specialises on input shapes, not values)": """
        test_expand*
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
    "MaxPool: output #1 (e.g. a mask or indices) is not supported": "test_maxpool_with*",
    "Mod on run-time tensors: only folded when its inputs are known at import time": """
        test_mod_broadcast test_mod_float32* test_mod_float_edge_cases_fmod_0_float32
        test_mod_int64_fmod test_mod_mixed_sign_float32 test_mod_mixed_sign_int32
        test_mod_mixed_sign_int64
    """,
    "OneHot: the depth must be known at import time, but it is computed at run time": """
        test_onehot_negative_indices test_onehot_out_of_range_indices test_onehot_with_axis
        test_onehot_with_negative* test_onehot_without_axis
    """,
    "Pad: mode='wrap' is not supported": "test_wrap_pad",
    "Pad: the pads must be known at import time, but it is computed at run time": """
        test_constant_pad* test_edge_pad test_reflect_pad test_center_crop_pad_crop_and_pad_expanded
        test_center_crop_pad_crop_axes_chw_expanded test_center_crop_pad_crop_axes_hwc_expanded
        test_center_crop_pad_crop_expanded test_center_crop_pad_crop_negative_axes_hwc_expanded
        test_center_crop_pad_pad_expanded
    """,
    "Pow of integer tensors: graph.pow takes f32 only": """
        test_pow_types_float32_int32 test_pow_types_float32_int64 test_pow_types_int32*
        test_pow_types_int64*
    """,
    "Range: the bounds are values of graph inputs (specialize-shapes specialises on input shapes, not values)": """
        test_range_float_type_positive_delta test_range_int32_type_negative_delta
        test_range_float_type_positive_delta_expanded test_range_int32_type_negative_delta_expanded
        test_blackmanwindow_expanded test_blackmanwindow_symmetric_expanded
        test_hammingwindow_expanded test_hammingwindow_symmetric_expanded test_hannwindow_expanded
        test_hannwindow_symmetric_expanded
    """,
    "ReduceL1: the axes must be known at import time, but it is computed at run time": """
        test_reduce_l1_default_axes_keepdims_example test_reduce_l1_default_axes_keepdims_random
        test_reduce_l1_do_not_keepdims_example test_reduce_l1_do_not_keepdims_random
        test_reduce_l1_empty_set test_reduce_l1_keep_dims_example test_reduce_l1_keep_dims_random
        test_reduce_l1_negative_axes_keep_dims_example test_reduce_l1_negative_axes_keep_dims_random
    """,
    "ReduceL2: the axes must be known at import time, but it is computed at run time": """
        test_reduce_l2_default_axes_keepdims_example test_reduce_l2_default_axes_keepdims_random
        test_reduce_l2_do_not_keepdims_example test_reduce_l2_do_not_keepdims_random
        test_reduce_l2_empty_set test_reduce_l2_keep_dims_example test_reduce_l2_keep_dims_random
        test_reduce_l2_negative_axes_keep_dims_example test_reduce_l2_negative_axes_keep_dims_random
    """,
    "ReduceLogSum: the axes must be known at import time, but it is computed at run time": """
        test_reduce_log_sum_asc_axes test_reduce_log_sum_default test_reduce_log_sum_desc_axes
        test_reduce_log_sum_empty_set test_reduce_log_sum_negative_axes
    """,
    "ReduceLogSumExp: the axes must be known at import time, but it is computed at run time": """
        test_reduce_log_sum_exp_empty_set
    """,
    "ReduceMax: the axes must be known at import time, but it is computed at run time": """
        test_reduce_max_bool_inputs test_reduce_max_do* test_reduce_max_empty*
        test_reduce_max_keepdims* test_reduce_max_negative*
    """,
    "ReduceMean: the axes must be known at import time, but it is computed at run time": """
        test_reduce_mean*
    """,
    "ReduceMin: the axes must be known at import time, but it is computed at run time": """
        test_reduce_min_bool_inputs test_reduce_min_do* test_reduce_min_empty_set
        test_reduce_min_keepdims* test_reduce_min_negative*
    """,
    "ReduceProd on run-time tensors: only folded when its inputs are known at import time": """
        test_reduce_prod_default* test_reduce_prod_do* test_reduce_prod_empty_set
        test_reduce_prod_keepdims* test_reduce_prod_negative*
    """,
    "ReduceSum: the axes must be known at import time, but it is computed at run time": """
        test_reduce_l1_default_axes_keepdims_example_expanded
        test_reduce_l1_default_axes_keepdims_random_expanded
        test_reduce_l1_do_not_keepdims_example_expanded
        test_reduce_l1_do_not_keepdims_random_expanded test_reduce_l1_empty_set_expanded
        test_reduce_l1_keep_dims_example_expanded test_reduce_l1_keep_dims_random_expanded
        test_reduce_l1_negative_axes_keep_dims_example_expanded
        test_reduce_l1_negative_axes_keep_dims_random_expanded
        test_reduce_l2_default_axes_keepdims_example_expanded
        test_reduce_l2_default_axes_keepdims_random_expanded
        test_reduce_l2_do_not_keepdims_example_expanded
        test_reduce_l2_do_not_keepdims_random_expanded test_reduce_l2_empty_set_expanded
        test_reduce_l2_keep_dims_example_expanded test_reduce_l2_keep_dims_random_expanded
        test_reduce_l2_negative_axes_keep_dims_example_expanded
        test_reduce_l2_negative_axes_keep_dims_random_expanded test_reduce_log_sum_asc_axes_expanded
        test_reduce_log_sum_default_expanded test_reduce_log_sum_desc_axes_expanded
        test_reduce_log_sum_empty_set_expanded test_reduce_log_sum_negative_axes_expanded
        test_reduce_sum_default* test_reduce_sum_do* test_reduce_sum_empty*
        test_reduce_sum_keepdims* test_reduce_sum_negative*
        test_reduce_sum_square_default_axes_keepdims_example_expanded
        test_reduce_sum_square_default_axes_keepdims_random_expanded
        test_reduce_sum_square_do_not_keepdims_example_expanded
        test_reduce_sum_square_do_not_keepdims_random_expanded
        test_reduce_sum_square_empty_set_expanded test_reduce_sum_square_keepdims_example_expanded
        test_reduce_sum_square_keepdims_random_expanded
        test_reduce_sum_square_negative_axes_keepdims_example_expanded
        test_reduce_sum_square_negative_axes_keepdims_random_expanded
    """,
    "ReduceSumSquare: the axes must be known at import time, but it is computed at run time": """
        test_reduce_sum_square_default_axes_keepdims_example
        test_reduce_sum_square_default_axes_keepdims_random
        test_reduce_sum_square_do_not_keepdims_example test_reduce_sum_square_do_not_keepdims_random
        test_reduce_sum_square_empty_set test_reduce_sum_square_keepdims_example
        test_reduce_sum_square_keepdims_random test_reduce_sum_square_negative_axes_keepdims_example
        test_reduce_sum_square_negative_axes_keepdims_random
    """,
    "Reshape: the target shape is the value of a graph input (specialize-shapes specialises on input shapes, not values)": """
        test_reshape*
    """,
    "Slice: the axes must be known at import time, but it is computed at run time": """
        test_slice test_slice_default_steps test_slice_end_out_of_bounds test_slice_neg
        test_slice_neg_steps test_slice_negative_axes test_slice_start_out_of_bounds
    """,
    "Slice: the starts and ends are values of graph inputs (specialize-shapes specialises on input shapes, not values)": """
        test_slice_default_axes
    """,
    "Split: the split sizes must be known at import time, but it is computed at run time": """
        test_split_variable* test_split_zero*
    """,
    "Squeeze: the axes must be known at import time, but it is computed at run time": """
        test_squeeze*
    """,
    "Tile: the repeats must be known at import time, but it is computed at run time": "test_tile*",
    "Trilu: k must be known at import time, but it is computed at run time": """
        test_tril_neg test_tril_out_neg test_tril_out_pos test_tril_pos test_tril_square_neg
        test_tril_zero test_triu_neg test_triu_one_row test_triu_out_neg_out test_triu_out_pos
        test_triu_pos test_triu_square_neg test_triu_zero
    """,
    "Unsqueeze: the axes must be known at import time, but it is computed at run time": """
        test_unsqueeze*
    """,
    # --- Element types: only float32, int64, int32 and bool tensors are computed at run time ---
    "optional or sequence inputs: only tensors are supported": """
        test_identity_opt test_identity_sequence test_loop13* test_loop16*
        test_optional_get_element_optional* test_optional_get_element_sequence
        test_optional_has_element_empty_optional* test_optional_has_element_optional*
        test_optional_has_element_tensor* test_sequence_insert* test_sequence_map*
    """,
    "bfloat16 inputs: only float32, int64, int32 and bool tensors are supported": """
        test_attention_3d_causal_bf16* test_attention_4d_attn_mask_causal*
        test_attention_4d_causal_bf16* test_attention_4d_causal_padded* test_attention_4d_padded*
        test_cast_BFLOAT16* test_castlike_BFLOAT16* test_castlike_FLOAT_to_BFLOAT16*
        test_celu_bfloat16* test_compress_bfloat16 test_einsum_batch_matmul_bfloat16
        test_einsum_sum_bfloat16 test_einsum_transpose_bfloat16 test_onehot_with_bfloat16_values
        test_range_bfloat16* test_reversesequence_bfloat16 test_unique_bfloat16*
    """,
    "AffineGrid: its ONNX function uses If (unsupported op type)": """
        test_affine_grid_2d test_affine_grid_2d_align_corners test_affine_grid_3d
        test_affine_grid_3d_align_corners
    """,
    "Attention: its ONNX function casts a run-time tensor to float64 (only float32, int64, int32 and bool are supported)": """
        test_attention_local_window_gqa_rank4_mask
    """,
    "BlackmanWindow, HammingWindow, HannWindow: the window size is the value of a graph input (specialize-shapes specialises on input shapes, not values)": """
        test_blackmanwindow test_blackmanwindow_symmetric test_hammingwindow
        test_hammingwindow_symmetric test_hannwindow test_hannwindow_symmetric
    """,
    "CenterCropPad: its ONNX function pads by amounts computed at run time (Pad needs them at import time)": """
        test_center_crop_pad_crop test_center_crop_pad_crop_and_pad
        test_center_crop_pad_crop_axes_chw test_center_crop_pad_crop_axes_hwc
        test_center_crop_pad_crop_negative_axes_hwc test_center_crop_pad_pad
    """,
    "DynamicQuantizeLinear: its ONNX function casts a run-time tensor to uint8 (only float32, int64, int32 and bool are supported)": """
        test_dynamicquantizelinear test_dynamicquantizelinear_max_adjusted
        test_dynamicquantizelinear_min_adjusted
    """,
    "LinearAttention: its ONNX function uses Scan (unsupported op type)": """
        test_linear_attention_decode_step test_linear_attention_delta
        test_linear_attention_explicit_scale test_linear_attention_gated
        test_linear_attention_gated_delta test_linear_attention_gated_delta_beta_scalar
        test_linear_attention_gated_delta_gqa test_linear_attention_gated_delta_mqa
        test_linear_attention_gated_per_head_decay test_linear_attention_linear
        test_linear_attention_linear_t1_no_past test_linear_attention_no_past_explicit_zeros
        test_linear_attention_prefill_with_past
    """,
    "Cast of a run-time tensor to bfloat16: only float32, int64, int32 and bool are supported": """
        test_cast_FLOAT_to_BFLOAT16
    """,
    "Cast of a run-time tensor to float16: only float32, int64, int32 and bool are supported": """
        test_cast_FLOAT_to_FLOAT16
    """,
    "Cast of a run-time tensor to float4_e2m1fn: only float32, int64, int32 and bool are supported": """
        test_cast_FLOAT_to_FLOAT4E2M1
    """,
    "Cast of a run-time tensor to float64: only float32, int64, int32 and bool are supported": """
        test_attention_local_window_gqa_rank4_mask_expanded test_cast_FLOAT_to_DOUBLE
        test_reduce_log_sum_exp_empty_set_expanded
    """,
    "Cast of a run-time tensor to float8_e4m3fn: only float32, int64, int32 and bool are supported": """
        test_cast_FLOAT_to_FLOAT8E4M3FN test_cast_no_saturate_FLOAT_to_FLOAT8E4M3FN
    """,
    "Cast of a run-time tensor to float8_e4m3fnuz: only float32, int64, int32 and bool are supported": """
        test_cast_FLOAT_to_FLOAT8E4M3FNUZ test_cast_no_saturate_FLOAT_to_FLOAT8E4M3FNUZ
    """,
    "Cast of a run-time tensor to float8_e5m2: only float32, int64, int32 and bool are supported": """
        test_cast_FLOAT_to_FLOAT8E5M2 test_cast_no_saturate_FLOAT_to_FLOAT8E5M2
    """,
    "Cast of a run-time tensor to float8_e5m2fnuz: only float32, int64, int32 and bool are supported": """
        test_cast_FLOAT_to_FLOAT8E5M2FNUZ test_cast_no_saturate_FLOAT_to_FLOAT8E5M2FNUZ
    """,
    "Cast of a run-time tensor to float8_e8m0fnu: only float32, int64, int32 and bool are supported": """
        test_cast_e8m0_FLOAT*
    """,
    "Cast of a run-time tensor to uint8: only float32, int64, int32 and bool are supported": """
        test_dynamicquantizelinear_expanded test_dynamicquantizelinear_max_adjusted_expanded
        test_dynamicquantizelinear_min_adjusted_expanded
    """,
    "Cast of a run-time tensor to int2: only float32, int64, int32 and bool are supported": """
        test_cast_FLOAT_to_INT2
    """,
    "Cast of a run-time tensor to int4: only float32, int64, int32 and bool are supported": """
        test_cast_FLOAT_to_INT4
    """,
    "Cast of a run-time tensor to uint2: only float32, int64, int32 and bool are supported": """
        test_cast_FLOAT_to_UINT2
    """,
    "Cast of a run-time tensor to uint4: only float32, int64, int32 and bool are supported": """
        test_cast_FLOAT_to_UINT4
    """,
    "double inputs: only float32, int64, int32 and bool tensors are supported": """
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
    "float16 inputs: only float32, int64, int32 and bool tensors are supported": """
        test_attention_24_qk* test_attention_4d_causal_fp16* test_attention_4d_fp16*
        test_attention_4d_gqa_causal_nonpad_decode_fp16*
        test_attention_4d_gqa_with_past_and_present_fp16*
        test_attention_local_window_ext_cache_float16* test_cast_e8m0_FLOAT16* test_cast_FLOAT16*
        test_cast_no_saturate_FLOAT16* test_castlike_FLOAT16* test_castlike_FLOAT_to_FLOAT16*
        test_castlike_no_saturate_FLOAT16* test_causal_conv_with_state_fp16*
        test_causal_conv_with_state_silu_fp16* test_celu_float16* test_flexattention_fp16*
        test_isinf_float16 test_isnan_float16 test_linear_attention_fp16* test_max_float16
        test_min_float16 test_mod_float16* test_mod_float_edge_cases_fmod_0_float16
        test_mod_mixed_sign_float16 test_range_float16* test_swiglu_float16*
    """,
    "float4e2m1 inputs: only float32, int64, int32 and bool tensors are supported": """
        test_cast_FLOAT4E2M1* test_castlike_FLOAT4E2M1* test_castlike_FLOAT_to_FLOAT4E2M1*
        test_dequantizelinear_float4e2m1 test_quantizelinear_float4e2m1
    """,
    "float8e4m3fn inputs: only float32, int64, int32 and bool tensors are supported": """
        test_cast_FLOAT8E4M3FN* test_castlike_FLOAT8E4M3FN* test_castlike_FLOAT_to_FLOAT8E4M3FN*
        test_castlike_no_saturate_FLOAT_to_FLOAT8E4M3FN* test_dequantizelinear_e4m3fn*
        test_quantizelinear_e4m3fn
    """,
    "float8e4m3fnuz inputs: only float32, int64, int32 and bool tensors are supported": """
        test_cast_FLOAT8E4M3FNUZ* test_castlike_FLOAT8E4M3FNUZ*
        test_castlike_FLOAT_to_FLOAT8E4M3FNUZ* test_castlike_no_saturate_FLOAT_to_FLOAT8E4M3FNUZ*
    """,
    "float8e5m2 inputs: only float32, int64, int32 and bool tensors are supported": """
        test_cast_FLOAT8E5M2* test_castlike_FLOAT8E5M2* test_castlike_FLOAT_to_FLOAT8E5M2*
        test_castlike_no_saturate_FLOAT_to_FLOAT8E5M2* test_dequantizelinear_e5m2
        test_quantizelinear_e5m2
    """,
    "float8e5m2fnuz inputs: only float32, int64, int32 and bool tensors are supported": """
        test_cast_FLOAT8E5M2FNUZ* test_castlike_FLOAT8E5M2FNUZ*
        test_castlike_FLOAT_to_FLOAT8E5M2FNUZ* test_castlike_no_saturate_FLOAT_to_FLOAT8E5M2FNUZ*
    """,
    "float8e8m0 inputs: only float32, int64, int32 and bool tensors are supported": """
        test_cast_e8m0_FLOAT8E8M0*
    """,
    "int16 inputs: only float32, int64, int32 and bool tensors are supported": """
        test_add_int16 test_bitshift_left_int16 test_bitshift_right_int16 test_bitwise_and_i16*
        test_bitwise_xor_i16* test_dequantizelinear_int16 test_div_int16 test_equal_int16
        test_greater_equal_int16* test_greater_int16 test_less_equal_int16* test_less_int16
        test_max_int16 test_min_int16 test_mod_mixed_sign_int16 test_mul_int16
        test_quantizelinear_int16 test_sub_int16
    """,
    "int2 inputs: only float32, int64, int32 and bool tensors are supported": """
        test_cast_INT2* test_castlike_FLOAT_to_INT2* test_castlike_INT2* test_dequantizelinear_int2
        test_quantizelinear_int2
    """,
    "int4 inputs: only float32, int64, int32 and bool tensors are supported": """
        test_cast_INT4* test_castlike_FLOAT_to_INT4* test_castlike_INT4* test_dequantizelinear_int4
        test_quantizelinear_int4
    """,
    "int8 inputs: only float32, int64, int32 and bool tensors are supported": """
        test_add_int8 test_bitcast_int8* test_bitshift_left_int8* test_bitshift_right_int8*
        test_bitwise_or_i16* test_clip_default_int8* test_div_int8 test_equal_int8
        test_greater_equal_int8* test_greater_int8 test_less_equal_int8* test_less_int8
        test_max_int8 test_min_int8 test_mod_mixed_sign_int8 test_mul_int8
        test_qlinearmatmul_2D_int8* test_qlinearmatmul_3D_int8* test_sub_int8
    """,
    "string inputs: only float32, int64, int32 and bool tensors are supported": """
        test_ai_onnx_ml_label* test_equal_string* test_regex* test_string* test_strnorm*
        test_strnormalizer*
    """,
    "uint16 inputs: only float32, int64, int32 and bool tensors are supported": """
        test_add_uint16 test_bitcast_uint16* test_bitshift_left_uint16 test_bitshift_right_uint16
        test_bitwise_not_3d test_dequantizelinear_uint16 test_div_uint16 test_equal_uint16
        test_greater_equal_uint16* test_greater_uint16 test_less_equal_uint16* test_less_uint16
        test_max_uint16 test_min_uint16 test_mod_uint16 test_mul_uint16 test_quantizelinear_uint16
        test_sub_uint16
    """,
    "uint2 inputs: only float32, int64, int32 and bool tensors are supported": """
        test_cast_UINT2* test_castlike_FLOAT_to_UINT2* test_castlike_UINT2*
        test_dequantizelinear_uint2 test_quantizelinear_uint2
    """,
    "uint32 inputs: only float32, int64, int32 and bool tensors are supported": """
        test_add_uint32 test_bitcast_uint32_to_int32 test_bitshift_left_uint32
        test_bitshift_right_uint32 test_div_uint32 test_equal_uint32 test_greater_equal_uint32*
        test_greater_uint32 test_less_equal_uint32* test_less_uint32 test_max_uint32 test_min_uint32
        test_mod_uint32 test_mul_uint32 test_pow_types_float32_uint32 test_sub_uint32
    """,
    "uint4 inputs: only float32, int64, int32 and bool tensors are supported": """
        test_cast_UINT4* test_castlike_FLOAT_to_UINT4* test_castlike_UINT4*
        test_dequantizelinear_uint4 test_quantizelinear_uint4
    """,
    "uint64 inputs: only float32, int64, int32 and bool tensors are supported": """
        test_add_uint64 test_bitshift_left_uint64 test_bitshift_right_uint64
        test_bitwise_and_ui64_bcast_3v1d test_bitwise_or_ui64_bcast_3v1d
        test_bitwise_xor_ui64_bcast_3v1d test_div_uint64 test_equal_uint64
        test_greater_equal_uint64* test_greater_uint64 test_less_equal_uint64* test_less_uint64
        test_max_uint64 test_min_uint64 test_mod_uint64 test_mul_uint64
        test_pow_types_float32_uint64 test_sub_uint64 test_top_k_uint64
    """,
    "uint8 inputs: only float32, int64, int32 and bool tensors are supported": """
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
