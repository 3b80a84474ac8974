"""Baseline for the demo model's pretraining step (bench/profile.bench.ts pretrain 16 1024 16): PyTorch full
fine-tuning of the demo shape (common.DEMO: Qwen2, 8 layers, hidden 384, 6 heads / 2 kv heads, intermediate 1024,
vocabulary 8,192, tied embeddings; random init), f32 weights under bf16 autocast, next-token cross-entropy over
every position, backward, gradient clipping at 1.0, AdamW (lr 6e-4, betas 0.9/0.95, weight decay 0.1 on matrices,
as src/runtime/pretrain/step.ts), zero_grad. Tokens/s counts B x (T - 1) predicted tokens, as ours does.
Median of --iters after --warmup, per attention implementation (sdpa, eager by default).
Usage: python3 bench/torch/pretrain.py --out DIR [--B 16] [--T 1024] [--iters 10] [--warmup 3] [--attn sdpa,eager]
"""
import argparse
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import median_time, qwen_05b, run, write_json  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--B", type=int, default=16)
    ap.add_argument("--T", type=int, default=1024)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--attn", default="sdpa,eager")
    a = ap.parse_args()
    import torch
    import transformers

    res = {"torch": torch.__version__, "transformers": transformers.__version__, "device": torch.cuda.get_device_name(0),
           "preset": "demo", "base": "float32 weights, bf16 autocast, full fine-tuning", "B": a.B, "T": a.T, "runs": {}, "errors": []}
    for attn in a.attn.split(","):
        try:
            m = qwen_05b(torch.float32, attn, preset="demo")
            m.train()
            params = sum(p.numel() for p in m.parameters())
            decay = [p for p in m.parameters() if p.dim() >= 2]
            rest = [p for p in m.parameters() if p.dim() < 2]
            opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                                    lr=6e-4, betas=(0.9, 0.95))
            gen = torch.Generator(device="cpu").manual_seed(5)
            ids = torch.randint(0, m.config.vocab_size, (a.B, a.T), generator=gen).cuda()

            def step():
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = m(input_ids=ids).logits
                loss = torch.nn.functional.cross_entropy(logits[:, :-1].float().reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
                loss.backward()
                torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
                opt.step()
                opt.zero_grad(set_to_none=True)
                return loss

            med, ts, loss = median_time(step, a.iters, a.warmup)
            tok = a.B * (a.T - 1)
            r = {"params": params, "medianSeconds": med, "allSeconds": ts, "tokensPerSecond": tok / med,
                 "peakAllocated": torch.cuda.max_memory_allocated(), "loss": float(loss)}
            res["runs"][attn] = r
            print(f"pretrain demo {a.B}x{a.T}, {attn}: {params / 1e6:.2f}M parameters, step {med * 1000:.1f} ms (median of {a.iters}), "
                  f"{r['tokensPerSecond']:.0f} tokens/s, peak {r['peakAllocated'] / 2**30:.2f} GiB", flush=True)
            del m, opt
            torch.cuda.empty_cache()
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            res["errors"].append(f"{attn}: {e!r}")
        write_json(a.out, "pretrain.json", res)


if __name__ == "__main__":
    run(main)
