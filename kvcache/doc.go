// Package kvcache is vLLM's paged KV cache as a data structure: the layout the engine derives at
// start-up (KV-cache groups, block size, number of blocks, the capacity it reports), the block
// pool shared by every group, and the prefix cache with its hit rules over several groups.
//
// Reading order: layout.go (Layout, Group, Options, NewLayout, BlocksFor), pool.go (Pool, BlockID,
// Hash: reference counts, the LRU free queue, the hash index and its pending lists), hashtab.go
// (the open-addressing index), manager.go (Content, Table, Manager: finding a hit, admission,
// growing, committing computed tokens, freeing).
//
// # Layout
//
// From the per-GPU KV specs of the model (one per layer kind: full attention, sliding window,
// recurrent state) and the bytes left for the cache (vllm/v1/worker/gpu_worker.py,
// determine_available_memory), NewLayout follows vllm/v1/core/kv_cache_utils.py
// (get_kv_cache_config and the helpers it calls) and vllm/v1/kv_cache_interface.py (page sizes):
//
//   - block size: the flag, else 16 tokens or the attention kernel's alignment; with recurrent-state
//     layers (hybrid models) it is raised to the smallest multiple of 16 whose attention page holds
//     a state page (vllm/model_executor/models/config.py, HybridAttentionMambaModelConfig), so
//     every group uses one page size;
//   - one layer kind: one group of every layer, num_blocks = available // (page x layers);
//   - several kinds: group size G = the smallest layer count among the kinds (the largest when all
//     are within 25 % of each other), each kind split into ceil(n / G) groups padded to G layers,
//     num_blocks = available // (page x G); a block is one page in each of the G layer slots;
//   - a token-indexed kind other than the main attention gets the largest block that divides the
//     main block and fits the page, so every hit length the main groups allow is one it can hold;
//   - blocks(L), what one request of L tokens holds: cdiv(L, B_g) per full-attention group,
//     min(cdiv(L, B_g), cdiv(window + max_num_batched_tokens, B_g) + 1) per sliding-window group,
//     and 2 + k per recurrent-state group in prefix-caching "align" mode (1 + k without prefix
//     caching), k the speculative tokens;
//   - the reported capacity, as vLLM logs it ("GPU KV cache size: N tokens", "Maximum
//     concurrency for M tokens per request: X"): max_concurrency = num_blocks /
//     blocks(max_model_len) and kv_cache_size_tokens = int(max_concurrency x max_model_len). The
//     llm-inference-bench Over-capacity rule uses this number (README.md, "What it models").
//
// NewLayout fails, with the numbers, when one max_model_len request does not fit: vLLM refuses to
// start then.
//
// # Block pool
//
// Pool follows vllm/v1/core/block_pool.py (BlockPool) and FreeKVCacheBlockQueue in
// kv_cache_utils.py. All groups draw equal blocks from one pool. vLLM's free queue is a doubly
// linked list; here it is an array in queue order whose entries for blocks taken off the middle
// are left stale and skipped, the same order without chasing links. A block has a reference count; at
// zero it joins the tail of the free queue, and may keep its cached content there. Allocation
// takes the head of the queue (the least recently used block) and only then evicts its content.
// A request frees its blocks in reverse order (vllm/v1/core/single_type_kv_cache_manager.py), so
// the tail of a hash chain is evicted before its head and a later request can still hit the
// chain's beginning. Touching a cached free block takes it off the queue. A request keeps the
// blocks it computed even when the same content is cached elsewhere (vLLM does not deduplicate),
// and every such block stays findable under its hash, as in vLLM's BlockHashToBlockMap
// (block_pool.py): a lookup returns the oldest (get_one_block returns the first in insertion
// order), and evicting one leaves the content cached in the others (testdata/hybrid_prefix.txt,
// commit id=6, shows a hit that depends on it). A request that resumes from a recurrent-state
// checkpoint makes it the most recently used (vLLM references the block while it copies the
// state), and so does computing a cached checkpoint again.
//
// Under Pool.ReuseHot (package sim's fast mode) a block freed without content leaves an anonymous
// entry in the queue and goes on a spare stack; the entry, reaching the front, hands out the most
// recently freed spare block. Blocks without content are interchangeable (nothing finds them,
// allocating them evicts nothing), so only their ids differ from vLLM's order, and the pool
// touches no more blocks than it holds at its busiest. A finished request whose prompt no other
// request has (Content.PromptUnique) drops that prompt's pending content first
// (Manager.ReleaseDone, Pool.Forget): no lookup could find it again. A table's blocks past those
// entered in the cache were allocated for it and never held content: they are freed with
// Pool.FreeBlank, which leaves their metadata as Allocate left it and hands them out again
// without reading it (in a fleet, a request's metadata is long out of the processor's caches
// when it finishes). When the front of the free queue holds no content, Pool.TakeAnonymous hands
// out a block without naming it, for a decoder crossing a block boundary (Manager.OweBlock): the
// caller names it later (TakeOwed).
//
// # Prefix cache
//
// Content names a request's tokens without materialising them: a shared prefix, the prompt, the
// request's own generated tokens. Only full blocks are hashed, and each hash is chained to its
// parent's (vllm/v1/core/kv_cache_utils.py, hash_block_tokens), so a block hits only when every
// block before it has the same content. Hashes are salted with the group, as vLLM keys the pool
// by block hash and group id. They are 64-bit hashes, one splitmix round per block over the
// parent and the block's content id (offset by its position and size), not cryptographic: two
// different contents collide with probability about n^2 / 2^65 over n cached blocks.
//
// The index is lazy. A block's content can only be hit by a request whose block carries the same
// content id (its shared prefix, its prompt, or its own output), so Commit enters a block with
// Pool.SetHashLazy under that id: it joins a per-id list, and enters the hash index only when a
// request with that id looks up (FindHit flushes the prefix, prompt and own ids of the request
// first). An evicted pending block just leaves its list. Sequence numbers keep blocks with the
// same hash in the order vLLM would have entered them, so every lookup answers as with an eager
// index; in a trace where no prompt is shared, no block ever enters it. A pending block does not
// even carry its hash: it keeps the request's content (a chain source) and its block index, and
// the chained hash, the same function of the content as the request's own, is computed when the
// block enters the index. With
// Manager.DeferUnique (package sim's fast mode) a request's generated blocks, and the blocks of a
// unique prompt past what other requests may share, are not even listed until a preemption frees
// them (CommitAll): only that request could hit them.
//
// FindHit (vllm/v1/core/kv_cache_manager.py, get_computed_blocks, and the coordinator in
// vllm/v1/core/kv_cache_coordinator.py) computes, in tokens:
//
//   - the limit: known tokens - 1, because the last token is always recomputed to produce logits;
//   - per group, the longest hit within the limit that the group can serve (full attention: the
//     longest chain of cached blocks; sliding window: the longest block boundary whose last
//     cdiv(window, B) blocks are cached; recurrent state: the longest block boundary with a cached
//     state checkpoint, which exists only at block boundaries inside a prompt);
//   - the minimum over groups, repeated until every group serves it (a fixed point);
//   - with an EAGLE-family drafter (eagle, eagle3, mtp, dflash) one main block less, and the fixed
//     point again, so the drafter recomputes the hidden states before the generation point
//     (use_eagle in single_type_kv_cache_manager.py).
//
// Admission reserves blocks for the whole prompt plus lookahead (CanAdmit), counting cached free
// blocks the hit takes off the queue, before the scheduler admits a request.
//
// # Determinism
//
// Everything here is single-threaded and deterministic: no clock, no goroutines, no random
// source. The pool's maps are only looked up, never iterated for a result, so the same operations
// give the same blocks, hits and evictions. Broken invariants (double free, a free-queue cycle)
// panic with the block id.
package kvcache
