// Package hf turns a Hugging Face config.json (and, for ModelOpt checkpoints, hf_quant_config.json)
// into a normalized arch.Arch: the layer groups, attention kinds, MoE shapes, projection weight
// counts and weight formats the simulator and the planner work from.
//
// Reading order: hf.go (Parse, ParseWithQuant, Load, the supported families, the raw config
// fields), families.go (one builder per family shape: dense GQA, MoE GQA, MLA / sparse MLA with
// optional KDA layers, Qwen3-Next), quant.go (quantization_config and hf_quant_config.json).
// The KV bytes per token of a parsed model come from arch.Arch.KVBytesPerToken, the formula the
// simulator uses.
//
// # Families
//
// Selected by model_type, or by architectures[] when model_type is missing:
//
//	llama, mistral, qwen2, qwen3   dense GQA; sliding windows from layer_types, sliding_window
//	                               (Mistral: every layer) or use_sliding_window + max_window_layers (Qwen)
//	mixtral, qwen3_moe, gpt_oss    MoE GQA; qwen3_moe honours mlp_only_layers and decoder_sparse_step;
//	                               gpt_oss alternates sliding (even layers) and full attention
//	deepseek_v3, kimi_k2           MLA; dense for i < first_k_dense_replace or i % moe_layer_freq != 0
//	deepseek_v32, glm_moe_dsa      MLA + DSA lightning indexer (sparse_mla)
//	qwen3_next                     Gated DeltaNet (linear) with a gated-attention layer every
//	                               full_attention_interval layers; MoE with a shared expert
//	kimi_linear                    KDA (linear) on linear_attn_config.kda_layers (1-based), MLA elsewhere
//
// Each layer is built on its own, then identical layers are grouped (order is not kept; counts are).
// Multi-token-prediction layers (num_nextn_predict_layers) are not part of the served model and are
// left out; vLLM loads them only as a speculative drafter.
//
// # Weight counts
//
// Every family sets Attention.ProjParams itself, from the module list of its transformers (or
// remote-code) implementation, so Arch.Params matches published totals:
//
//	GQA         h*q + 2*h*kv + q*h, q = heads*head_dim, kv = kv_heads*head_dim; plus q/k/v (and o)
//	            biases (qwen2, gpt_oss, attention_bias), q/k RMSNorms (qwen3*), sinks (gpt_oss), and a
//	            doubled q_proj for the output gate (qwen3_next)
//	MLA         q (h*H*qk, or q_a + norm + q_b), kv_a (h*(kv_lora+rope)) + norm, kv_b
//	            (kv_lora*H*(nope+v)), o (H*v*h); DSA adds wq_b (q_lora*ih*id), wk (h*id), k_norm, and
//	            weights_proj (h*ih)
//	GDN         in_proj_qkvz h*(2K+2V), in_proj_ba h*2Hv, conv (2K+V)*kernel, dt_bias, A_log, norm,
//	            out_proj V*h, with K = key heads*key dim, V = value heads*value dim
//	KDA         q, k, v 3*h*P with short convs 3*P*kernel, f and g low-rank 2*(h*d + d*P), b_proj h*H,
//	            A_log, dt_bias, o_norm, o_proj P*h, with P = H*d
//
// Norms (2 per layer and the final one), router score biases and gpt-oss's expert biases are summed
// and spread over the layers as ExtraParamsPerLayer. Routers are counted by Arch.Params.
//
// # Weight formats
//
// torch_dtype (or dtype) sets the unquantized format (bf16 when absent) and EmbedDType. Then:
//
//	quant_method fp8                 attention, dense/shared MLP and experts fp8
//	quant_method mxfp4               routed experts mxfp4 (transformers' Mxfp4 quantizes nothing else)
//	modelopt, quant_algo NVFP4/FP8   attention, MLPs and experts in that format; hf_quant_config.json,
//	                                 when given, wins over config.json
//	gptq, awq                        int4 (bits 4) or int8 (bits 8)
//
// Exclusion lists (modules_to_not_convert, ignored_layers, ignore, exclude_modules) are matched as
// fnmatch globs against module names, per layer and coarsely: a part (attention, dense/shared MLP,
// routed experts) stays in torch_dtype if any of its large projections is excluded. The embedding
// table and lm_head are always in torch_dtype (a quantized lm_head is not represented).
//
// Errors name the file and the field. Parse never panics on any input (FuzzParse); values are
// bounded (sanity limits in hf.go) so that weight counts stay inside int64.
package hf
