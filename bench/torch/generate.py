"""Baseline for the policy's decode benchmark: transformers' generate on Qwen2.5-0.5B-shaped random
weights, bf16, on one GPU. Batches of 8 and 64 sequences, prompt 128 random ids, 256 new tokens
(min_new_tokens = max_new_tokens = 256 and no EOS, so every row runs to length), pure sampling
(temperature 1, top_k 0, top_p 1), KV cache (transformers' default dynamic cache).
First-token latency: the time of a generate with max_new_tokens=1 (prefill + one sampled token).
Memory: torch.cuda.max_memory_allocated over each measured generate (weights included).
Usage: python3 bench/torch/generate.py --out DIR [--attn sdpa|eager] [--batches 8,64] [--new 256] [--prompt 128] [--reps 1]
"""
import argparse
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import qwen_05b, run, timed, write_json  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--attn", default="sdpa")
    ap.add_argument("--batches", default="8,64")
    ap.add_argument("--new", type=int, default=256)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--reps", type=int, default=1)
    a = ap.parse_args()
    import torch
    import transformers
    res = {"torch": torch.__version__, "transformers": transformers.__version__, "device": torch.cuda.get_device_name(0),
           "dtype": "bfloat16", "attention": a.attn, "prompt": a.prompt, "newTokens": a.new,
           "sampling": "temperature 1, top_k 0, top_p 1", "runs": [], "errors": []}
    t0 = time.time()
    m = qwen_05b(torch.bfloat16, a.attn).eval()
    params = sum(p.numel() for p in m.parameters())
    res["params"] = params
    res["weightsBytes"] = torch.cuda.memory_allocated()
    print(f"model: {params / 1e6:.1f}M parameters, bf16, {a.attn} attention, built in {time.time() - t0:.1f} s", flush=True)
    gen = torch.Generator(device="cpu").manual_seed(3)
    common = dict(do_sample=True, temperature=1.0, top_k=0, top_p=1.0, eos_token_id=None, pad_token_id=0)

    def generate(ids, new):
        with torch.no_grad():
            out, s = timed(lambda: m.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=new, min_new_tokens=new, **common))
        return s, out.shape[1] - ids.shape[1]

    for B in [int(x) for x in a.batches.split(",")]:
        try:
            ids = torch.randint(0, m.config.vocab_size, (B, a.prompt), generator=gen).cuda()
            generate(ids, 4)  # warm-up: kernels, allocator, cache
            generate(ids, 1)
            torch.cuda.reset_peak_memory_stats()
            first = [generate(ids, 1)[0] for _ in range(3)]
            full = []
            for _ in range(a.reps):
                dt, n = generate(ids, a.new)
                if n != a.new:
                    raise RuntimeError(f"generated {n} tokens, expected {a.new}")
                full.append(dt)
            dt = statistics.median(full)
            ft = statistics.median(first)
            r = {"batch": B, "seconds": dt, "tokensPerSecond": B * a.new / dt,
                 "decodeTokensPerSecond": B * (a.new - 1) / (dt - ft), "msPerStep": (dt - ft) * 1000 / (a.new - 1),
                 "firstTokenSeconds": ft, "firstTokenAll": first, "maxMemoryAllocated": torch.cuda.max_memory_allocated(),
                 "maxMemoryReserved": torch.cuda.max_memory_reserved()}
            res["runs"].append(r)
            print(f"B={B}: {B} x {a.new} new in {dt:.2f} s = {r['tokensPerSecond']:.0f} tok/s "
                  f"({r['msPerStep']:.1f} ms/step after the first token); first token {ft * 1000:.0f} ms; "
                  f"max allocated {r['maxMemoryAllocated'] / 2**30:.2f} GiB", flush=True)
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            res["errors"].append(f"B={B}: {e!r}")
        write_json(a.out, "generate.json", res)


if __name__ == "__main__":
    run(main)
