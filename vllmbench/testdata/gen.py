#!/usr/bin/env python3
"""Writes the synthetic vllm bench serve --save-result files of this directory.

The files follow vLLM's field layout exactly (vllm/benchmarks/serve.py: the result_json keys, their
order, "inf" for an infinite rate, null goodput without --goodput, percentile keys from
--metric-percentiles, the --save-detailed arrays, --metadata pairs merged at the top level), and
their summary fields are computed from their per-request data the way calculate_metrics computes
them (numpy mean, median, population std and linear percentiles, here in plain Python).

The per-request numbers are MADE UP by a small model below (a prompt-dependent TTFT, chunked
streaming at about 48 ms per step with 1-8 tokens per chunk as with speculative decoding); they are
not measurements of any server. They exist to test the reader and the comparison.

Run: python3 gen.py (writes the three .json files next to it).
"""
import json, math, os, random

def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return 0.0
    k = (len(xs) - 1) * p / 100
    f = math.floor(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)

def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0

def std(xs):
    if not xs:
        return 0.0
    m = mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))

WORDS = "the of and to in is that for it as with was on be by this are at from or an which but not have has were can all one".split()

def run(rng, n, in_lens, out_lens, rate, conc, burst=1.0, prefix_hit0=True):
    # Send times: gamma gaps rescaled to n / rate, as vllm bench serve does.
    if rate == float("inf"):
        due = [0.0] * n
    else:
        gaps = [rng.gammavariate(burst, 1 / (rate * burst)) for _ in range(n)]
        t, cum = 0.0, []
        for g in gaps:
            t += g
            cum.append(t)
        due = [c * (n / rate) / cum[-1] for c in cum]
    slots = [0.0] * (conc or n)
    reqs = []
    for i in range(n):
        k = min(range(len(slots)), key=lambda j: slots[j])
        send = max(due[i], slots[k])
        active = sum(1 for r in reqs if r["end"] > send)
        ttft = 0.045 + 0.000105 * in_lens[i] + 0.004 * active + abs(rng.gauss(0, 0.012))
        if i == 0 and prefix_hit0:
            ttft = 0.05 + abs(rng.gauss(0, 0.005))
        itl, left = [], out_lens[i] - 1
        while left > 0:
            tok = min(left, max(1, min(8, int(rng.expovariate(1 / 3.2)) + 1)))
            left -= tok
            itl.append(0.044 + 0.0011 * active + abs(rng.gauss(0, 0.004)) + (0.03 if rng.random() < 0.02 else 0))
        end = send + ttft + sum(itl)
        slots[k] = end
        reqs.append(dict(send=send, ttft=ttft, itl=itl, end=end, out=out_lens[i], inp=in_lens[i]))
    return reqs

def metrics(reqs, duration, pcts, which, goodput=None):
    ttfts = [r["ttft"] for r in reqs]
    e2els = [r["end"] - r["send"] for r in reqs]
    tpots = [(e - t) / (r["out"] - 1) for r, t, e in zip(reqs, ttfts, e2els) if r["out"] > 1]
    itls = [x for r in reqs for x in r["itl"]]
    res = {}
    total_in = sum(r["inp"] for r in reqs)
    total_out = sum(r["out"] for r in reqs)
    res["duration"] = duration
    res["completed"] = len(reqs)
    res["failed"] = 0
    res["total_input_tokens"] = total_in
    res["total_output_tokens"] = total_out
    res["request_throughput"] = len(reqs) / duration
    if goodput:
        good = sum(1 for r, t, e in zip(reqs, ttfts, e2els)
                   if t * 1000 <= goodput["ttft"] and (r["out"] <= 1 or (e - t) / (r["out"] - 1) * 1000 <= goodput["tpot"]))
        res["request_goodput"] = good / duration
    else:
        res["request_goodput"] = None
    res["output_throughput"] = total_out / duration
    res["total_token_throughput"] = (total_in + total_out) / duration
    return res, dict(ttft=ttfts, tpot=tpots, itl=itls, e2el=e2els)

def write(path, head, reqs, pcts, which, detailed, goodput=None, meta=None):
    duration = max(r["end"] for r in reqs)
    res, series = metrics(reqs, duration, pcts, which, goodput)
    out = dict(head)
    if meta:
        out.update(meta)
    tail = dict(res)
    if detailed:
        tail["input_lens"] = [r["inp"] for r in reqs]
        tail["output_lens"] = [r["out"] for r in reqs]
        tail["ttfts"] = [r["ttft"] for r in reqs]
        tail["itls"] = [r["itl"] for r in reqs]
        tail["generated_texts"] = [" ".join(WORDS[(7 * i + j) % len(WORDS)] for j in range(r["out"] * 3 // 4)) for i, r in enumerate(reqs)]
        tail["errors"] = ["" for _ in reqs]
    # Peaks over 1 s buckets (tokens per chunk counted as one, as vLLM counts chunks).
    buckets, conc = {}, {}
    for r in reqs:
        t = r["send"] + r["ttft"]
        buckets[int(t)] = buckets.get(int(t), 0) + 1
        for x in r["itl"]:
            t += x
            buckets[int(t)] = buckets.get(int(t), 0) + 1
        for s in range(int(r["send"]), int(r["end"]) + 1):
            conc[s] = conc.get(s, 0) + 1
    tail["max_output_tokens_per_s"] = float(max(buckets.values()))
    tail["max_concurrent_requests"] = max(conc.values())
    for m in which:
        xs = series[m]
        tail[f"mean_{m}_ms"] = mean(xs) * 1000
        tail[f"median_{m}_ms"] = pct(xs, 50) * 1000
        tail[f"std_{m}_ms"] = std(xs) * 1000
        for p in pcts:
            word = str(int(p)) if int(p) == p else str(p)
            tail[f"p{word}_{m}_ms"] = pct(xs, p) * 1000
    out.update(tail)
    with open(path, "w") as f:
        json.dump(out, f, indent=None)
        f.write("\n")

def head(rate, conc, n, burst=1.0):
    return {"date": "20260914-101500", "endpoint_type": "openai", "backend": "openai", "label": None,
            "model_id": "nvidia/GLM-5.3-Flash-NVFP4", "tokenizer_id": "nvidia/GLM-5.3-Flash-NVFP4", "num_prompts": n,
            "request_rate": rate if rate != float("inf") else "inf", "burstiness": burst, "max_concurrency": conc}

here = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(20260914)
# A: --random-input-len 1024 --random-output-len 128 --random-range-ratio 0.25 --num-prompts 64
#    --request-rate 4 --save-result --save-detailed  (I' = 1023: one BOS token)
n = 64
ins = [rng.randint(767, 1279) for _ in range(n)]
outs = [rng.randint(96, 160) for _ in range(n)]
write(os.path.join(here, "openai-4.0qps-GLM-5.3-Flash-NVFP4-20260914-101500.json"), head(4.0, None, n),
      run(rng, n, ins, outs, 4.0, None), [99], ["ttft", "tpot", "itl"], True)
# B: --random-input-len 1024 --random-output-len 128 --num-prompts 200 --max-concurrency 16
#    --percentile-metrics ttft,tpot,itl,e2el --metric-percentiles 50,90,99 --metadata gpu=rtx-pro-6000x4 tp=4
n = 200
h = head(float("inf"), 16, n)
h["date"] = "20260914-103000"
h["label"] = "openai"
write(os.path.join(here, "openai-infqps-concurrency16-GLM-5.3-Flash-NVFP4-20260914-103000.json"), h,
      run(rng, n, [1023] * n, [128] * n, float("inf"), 16), [50, 90, 99], ["ttft", "tpot", "itl", "e2el"], False,
      meta={"gpu": "rtx-pro-6000x4", "tp": "4"})
# C: --random-input-len 2048 --random-output-len 256 --num-prompts 100 --request-rate 2 --burstiness 0.5
#    --goodput ttft:300 tpot:20 --metric-percentiles 90,99,99.9
n = 100
h = head(2.0, None, n, 0.5)
h["date"] = "20260914-104500"
h["label"] = "openai"
write(os.path.join(here, "openai-2.0qps-GLM-5.3-Flash-NVFP4-20260914-104500.json"), h,
      run(rng, n, [2047] * n, [256] * n, 2.0, None, burst=0.5), [90, 99, 99.9], ["ttft", "tpot", "itl"], False,
      goodput={"ttft": 300, "tpot": 20})
