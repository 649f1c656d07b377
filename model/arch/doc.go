// Package arch describes what is served: a decoder-only transformer, possibly hybrid and
// mixture-of-experts, as layer groups of a token mixer (attention kind) and an MLP, with the
// storage formats of its weights; and, for each attention kind, what its layers weigh, cache and
// cost.
//
// Reading order: arch.go (Arch, LayerGroup, Attention, FFN, Normalize), kind.go (Mixer, the
// registry of kinds, Roofline, Seconds), one file per kind (gqa.go, mla.go, sparse_mla.go,
// linear.go), kvspec.go (KVSpec, KVBytesPerToken), weights.go (WeightSets, the one walk over the
// weights, and Params), dtype.go (DType, Format: bytes per element with group, block and per-row
// scales, and the GEMM compute class), step.go (per-step counts: elementwise passes, kernels per
// layer, the MTP layer), builtin.go (the embedded model descriptions under data/models).
//
// Main types:
//
//	Arch       a model: hidden size, vocabulary, layer groups, embeddings; Normalize checks it and fills defaults
//	Attention  one layer group's token mixer as the TOML description spells it (kind + fields)
//	Mixer      the kind's own type (GQA, MLA, SparseMLA, Linear): projection weights, KV spec per GPU,
//	           Prepare(tp, kv dtype) -> LayerCost, one layer's seconds for one request's work, and
//	           Kernels, the GEMM and attention kernels a layer launches per step
//	KVSpec     one layer group's cache footprint per GPU (full, sliding window, or recurrent state)
//	WeightSet  one set of weights (part, dtype, layers, experts, weights per copy)
//
// # Adding an attention kind
//
// Write one file with the kind's name (an AttnKind constant), its type implementing Mixer, a check
// function (validate the Attention fields it uses, fill their defaults) and a constructor, and add
// one line to kinds() in kind.go. Its fields are read from Attention; add TOML fields there if it
// needs new ones. Normalize, the deployment's KV specs and TP check, the cost model, `servesim
// model show` and the KV bytes per token pick it up from the registry.
//
// # Determinism
//
// Pure functions and immutable values after Normalize; no goroutines, no global mutable state
// (the embedded descriptions are read-only), no randomness. Nothing here reads the clock.
//
// # Formulas
//
// KV bytes per token and layer, per GPU of tp ranks (vLLM vllm/v1/kv_cache_interface.py; an fp8
// cache stores 1 byte per value with per-tensor scales):
//
//	GQA         max(1, kv_heads / tp) x (head_dim + v_head_dim) x bytes; sliding-window layers
//	            hold only the last window tokens, chunked-local layers (Llama 4) at most a chunk
//	MLA         (kv_lora_rank + qk_rope_head_dim) x bytes, not split by TP (DeepSeek-V2, 2024)
//	sparse MLA  with fp8, vLLM's fp8_ds_mla page: kv_lora fp8 values + 4 bytes per 128 of them +
//	            2 x max(rope, 64) bytes of bf16 rope (656 for kv_lora 512), plus one indexer key of
//	            index_head_dim fp8 values + 4 bytes per 128 every index_compress tokens (132 bytes);
//	            DeepSeek-V3.2-Exp (2025), FlashMLA's sparse fp8 layout
//	linear      a constant state per request: state_heads / tp x dk x dv x state bytes + (conv
//	            kernel - 1) x conv channels / tp x 2 bytes (vLLM MambaSpec)
//
// Step time of one layer for one request's t new tokens after s cached ones, on the roofline
// max(bytes / bandwidth, FLOPs / peak) (Williams, Waterman and Patterson, CACM 2009), with
// A(s, t, k) = sum over positions p = s+1..s+t of min(p, k) attended tokens:
//
//	GQA         2 x heads/tp x A(s, t, window) x (d + dv) FLOPs (chunked: each position p attends
//	            to ((p - 1) mod chunk) + 1 keys); the held KV read once; / attn_eff (attn_eff is
//	            attn_prefill_eff for prefill entries, attn_decode_eff for decode entries)
//	MLA         absorbed in decode, 2 x heads/tp x A x (2 kv_lora + rope); expanded in prefill,
//	            2 x heads/tp x A x (nope + rope + v); the latent read once; / attn_eff
//	sparse MLA  indexer: 2 x index_heads x index_dim x A(s, t, 0) / compress fp8 FLOPs at
//	            indexer_eff, or reading the keys; attention: absorbed MLA over A(s, t, top_k)
//	            gathered tokens; / attn_eff
//	linear      decode reads the state and writes one per verified position, (1 + t) x state
//	            bytes; prefill runs the chunked delta-rule scan, t x heads/tp x (6 dk dv + 4 x 64
//	            x (dk + dv)) FLOPs at linear_attn_eff, and reads and writes the state (Yang et al.,
//	            NeurIPS 2024)
//
// Weights (Arch.WeightSets): attention projections per kind (Mixer.ProjParams, unless the
// description or model/hf gives them); an MLP has 3 matrices of hidden x intermediate (SwiGLU) or
// 2; a router hidden x experts; the embedding table and an untied lm_head vocab x hidden; a
// modality encoder's weights (loaded, never run for text). Bytes of a set: weights x
// BytesPerParam (elements plus group or block scales and zero points: NVFP4 0.5625, MXFP4
// 0.53125, block fp8 1 + 4/16384, int4 with 16-bit scales per 128 0.5 + 2/128, with 4-bit zeros
// 0.5 + 2.5/128) plus, for per-channel formats, output rows x RowScaleBytes.
package arch
