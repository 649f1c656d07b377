// Package hf turns a Hugging Face config.json (and, for ModelOpt checkpoints, hf_quant_config.json)
// into a normalized arch.Arch: the layer groups, attention kinds, MoE shapes, projection weight
// counts and weight formats the simulator and the planner work from, and the checkpoint facts vLLM
// derives from it (quantization method, max_model_len, MTP layers). It also holds the built-in
// model registry: published configs embedded in the binary, looked up by Hugging Face id.
//
// Reading order: hf.go (Parse, ParseWithQuant, Load, the supported families, the raw config
// fields), families.go (one builder per family shape: dense GQA, MoE GQA, Llama 4, MLA / sparse
// MLA with optional KDA layers, Qwen3-Next), quant.go (quantization_config, compression_config and
// hf_quant_config.json), meta.go (max_model_len, MTP layers), registry.go (Builtin, List,
// BuiltinIDs; data/models holds the configs, registry.toml the index, README.md the provenance).
// The KV bytes per token of a parsed model come from arch.Arch.KVBytesPerToken, the formula the
// simulator uses.
//
// # Families
//
// Selected by model_type, or by architectures[] when model_type is missing:
//
//	llama, mistral, qwen2, qwen3   dense GQA; sliding windows from layer_types, sliding_window
//	                               (Mistral: every layer) or use_sliding_window + max_window_layers (Qwen)
//	mixtral, qwen3_moe             MoE GQA; qwen3_moe honours mlp_only_layers and decoder_sparse_step
//	gpt_oss                        MoE GQA with attention sinks, sliding (even layers, 128) and full
//	                               attention alternating, biases on q/k/v/o and on every expert
//	minimax_m2                     MoE GQA on every layer, q/k RMSNorms over all heads, routing bias;
//	                               attn_type_list must be all softmax (MiniMax-01's lightning attention is refused)
//	llama4, llama4_text            the decoder in text_config (or at the top level): MoE with a shared
//	                               expert on moe_layers (default every interleave_moe_layer_step-th),
//	                               dense intermediate_size_mlp elsewhere; NoPE on no_rope_layers zeros
//	                               (default every 4th layer) with global attention, chunked local
//	                               attention (attention_chunk_size) on the others; the vision tower
//	                               is counted as encoder weights (memory, not compute)
//	deepseek_v3, kimi_k2           MLA; dense for i < first_k_dense_replace or i % moe_layer_freq != 0
//	deepseek_v32, glm_moe_dsa      MLA + DSA lightning indexer (sparse_mla)
//	qwen3_next                     Gated DeltaNet (linear) with a gated-attention layer every
//	                               full_attention_interval layers (3:1); MoE with a shared expert
//	kimi_linear                    KDA (linear) on linear_attn_config.kda_layers (1-based), MLA elsewhere
//
// Each layer is built on its own, then identical layers are grouped (order is not kept; counts are).
// Multi-token-prediction layers (num_nextn_predict_layers, mtp_num_hidden_layers, MiniMax's
// num_mtp_modules) are not part of the served model: they are recorded as Arch.MTPLayers and left
// out of the weights; vLLM loads them only as the mtp speculative drafter.
//
// max_model_len is vLLM's derivation (vllm/config/model.py, _get_and_verify_max_len): the smallest
// length key, model_max_length when set, 2,048 without any; times the RoPE factor unless the type
// is llama3, su or longrope (yarn from original_max_position_embeddings).
//
// # Weight counts
//
// Every family sets Attention.ProjParams itself, from the module list of its transformers (or
// remote-code) implementation, so Arch.Params matches published totals:
//
//	GQA         h*q + 2*h*kv + q*h, q = heads*head_dim, kv = kv_heads*head_dim; plus q/k/v (and o)
//	            biases (qwen2, gpt_oss, attention_bias), q/k RMSNorms (qwen3*, per head; minimax_m2,
//	            over all heads), sinks (gpt_oss), and a doubled q_proj for the output gate (qwen3_next)
//	MLA         q (h*H*qk, or q_a + norm + q_b), kv_a (h*(kv_lora+rope)) + norm, kv_b
//	            (kv_lora*H*(nope+v)), o (H*v*h); DSA adds wq_b (q_lora*ih*id), wk (h*id), k_norm, and
//	            weights_proj (h*ih)
//	GDN         in_proj_qkvz h*(2K+2V), in_proj_ba h*2Hv, conv (2K+V)*kernel, dt_bias, A_log, norm,
//	            out_proj V*h, with K = key heads*key dim, V = value heads*value dim
//	KDA         q, k, v 3*h*P with short convs 3*P*kernel, f and g low-rank 2*(h*d + d*P), b_proj h*H,
//	            A_log, dt_bias, o_norm, o_proj P*h, with P = H*d
//	vision      (Llama 4) patch projection, class and positional embeddings, LayerNorms, per layer
//	            q/k/v/o and fc1/fc2 with biases, the pixel-shuffle MLP and the projector
//
// Norms (2 per layer and the final one), router score biases and gpt-oss's expert biases are summed
// and spread over the layers as ExtraParamsPerLayer. Routers are counted by Arch.Params.
//
// # Weight formats
//
// torch_dtype (or dtype; for Llama 4 text_config's, else the top level's) sets the unquantized
// format (bf16 when absent) and EmbedDType. quantization_config (else compression_config; a
// ModelOpt hf_quant_config.json wins over both) sets the quantized parts and the method vLLM
// resolves (Arch.Quantization; vllm/config/model.py, _verify_quantization, then each method's
// override_quantization_method for a GPU of compute capability 8.0 or newer):
//
//	fp8                fp8; one scale per tensor (fp8-tensor), or per weight_block_size block
//	                   (128x128: fp8 at 1.0002 bytes; others fp8-bMxN)
//	fbgemm_fp8         fp8-channel: one fp32 scale per output row
//	mxfp4              routed experts only (transformers' Mxfp4 converts nothing else)
//	modelopt           quant_algo FP8: fp8-tensor ("modelopt"); NVFP4: nvfp4 ("modelopt_fp4");
//	                   kv_cache_quant_algo FP8 sets Arch.KVCacheDType
//	compressed-tensors config_groups, in key order: a group targeting a module by name or "re:"
//	                   regex wins over one targeting a class ("Linear"); weights float 8 bits
//	                   (tensor, channel, block, group), int 8 bits, int 4 bits (group or channel;
//	                   uint when asymmetric), float 4 bits (group 16: nvfp4, 32: mxfp4); no
//	                   input_activations makes a weight-only format (-a16: dequantized for the
//	                   MMA); kv_cache_scheme float 8 sets Arch.KVCacheDType
//	gptq               uint4/uint8 with group_size (-1: channel): packed values, zeros and fp16
//	                   scales ("gptq_marlin" when bits 4/8, group -1/32/64/128 and sym)
//	awq                uint4 (int4 without zero_point) with group_size ("awq_marlin")
//	bitsandbytes       load_in_4bit: bnb-nf4 or bnb-fp4 (fp32 absmax per 64; -dq with double
//	                   quantization); load_in_8bit: bnb-int8 (fp32 absmax per row). Stored bytes
//	                   exact; the GEMMs dequantize to bf16 (said in Arch.Notes); fused expert
//	                   tensors (gpt_oss, llama4) are not nn.Linear and stay 16-bit
//
// Bytes per weight, scales included, are arch.DType's (arch.Format); per-row scales are counted per
// output row. Exclusion lists (modules_to_not_convert, ignored_layers, ignore, exclude_modules,
// llm_int8_skip_modules) are matched as fnmatch globs, "re:" regexes (anchored at the start, as
// Python's re.match) or class names against module names, per layer and coarsely: a part
// (attention, dense/shared MLP, routed experts) stays in torch_dtype if any of its large
// projections is excluded. Routers, norms, the embedding table and lm_head are always in
// torch_dtype (a quantized lm_head, GPTQ's lm_head: true, is noted, not represented).
//
// # Registry
//
// Builtin(id) returns a built-in model by Hugging Face id (case-insensitive; aliases for renamed
// repositories; "org--name" and huggingface.co URLs too) with its Provenance (repository, path,
// commit, or a note for transcribed values); List and BuiltinIDs enumerate them. The servesim TOML
// descriptions (GLM-5.3-Flash and its drafter) are listed too and come from arch.Builtin unchanged.
// An unknown id is an error; nothing is substituted.
//
// Errors name the file and the field. Parse never panics on any input (FuzzParse); values are
// bounded (sanity limits in hf.go) so that weight counts stay inside int64.
package hf
