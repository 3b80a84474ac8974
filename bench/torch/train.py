"""Baseline for the trainer's benchmark: PyTorch + PEFT on Qwen2.5-0.5B-shaped random weights,
LoRA r=16 alpha=32 on q,k,v,o,gate,up,down, AdamW (lr 1e-5, fused off, default betas), bf16 autocast
over f32 base weights, eager attention. One step = forward + a GRPO-like loss (log_softmax + gather of
the token log-probs, advantages +-1 per sequence, completion = second half of each row, mean over
completion tokens) + backward + optimizer step + zero_grad. Tokens/s counts every B x T token.
8 x 768, median of --iters after --warmup. Peak memory: torch.cuda.max_memory_allocated of the measured steps (weights
included). The sweep over B and T and --logits-to-keep are in this file at cd61a24.
Usage: python3 bench/torch/train.py --out DIR [--iters 5] [--warmup 2] [--attn eager]
       [--preset qwen2.5-0.5b|qwen2.5-1.5b|demo] [--no-sweep]
"""
import argparse
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import TARGETS, lora, median_time, qwen_05b, run, write_json  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--attn", default="eager")
    ap.add_argument("--no-sweep", action="store_true", help="accepted (the train-step suite passes it); no sweep runs")
    ap.add_argument("--preset", default="qwen2.5-0.5b")
    a = ap.parse_args()
    import torch
    import peft
    import transformers

    res = {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__,
           "device": torch.cuda.get_device_name(0), "base": "float32 weights, bf16 autocast", "attention": a.attn,
           "lora": {"r": 16, "alpha": 32, "targets": TARGETS}, "optimizer": "AdamW lr 1e-5", "main": None, "errors": []}
    res["preset"] = a.preset
    base = qwen_05b(torch.float32, a.attn, preset=a.preset)
    m = lora(base)
    m.train()
    trainable = sum(p.numel() for p in m.parameters() if p.requires_grad)
    res["trainableParams"] = trainable
    print(f"PEFT model: {trainable / 1e6:.2f}M trainable LoRA parameters, base f32 + bf16 autocast, {a.attn} attention", flush=True)
    opt = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=1e-5)
    gen = torch.Generator(device="cpu").manual_seed(3)

    def step(ids, adv, mask):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = m(input_ids=ids).logits
        lp = torch.log_softmax(logits[:, :-1].float(), dim=-1).gather(-1, ids[:, 1:, None])[..., 0]
        loss = -(adv[:, None] * lp * mask).sum() / mask.sum()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    B, T = 8, 768
    try:
        ids = torch.randint(0, base.config.vocab_size, (B, T), generator=gen).cuda()
        adv = torch.tensor([1.0 if i % 2 else -1.0 for i in range(B)], device="cuda")
        comp = torch.zeros(B, T - 1, device="cuda")
        comp[:, T // 2 - 1:] = 1.0  # predictions of tokens T/2 .. T-1
        med, ts, loss = median_time(lambda: step(ids, adv, comp), a.iters, a.warmup)
        r = {"B": B, "T": T, "medianSeconds": med, "allSeconds": ts, "tokensPerSecond": B * T / med,
             "peakAllocated": torch.cuda.max_memory_allocated(), "peakReserved": torch.cuda.max_memory_reserved(), "loss": float(loss)}
        print(f"B={B} T={T}: step {med * 1000:.1f} ms (median of {a.iters}), {r['tokensPerSecond']:.0f} tokens/s, "
              f"peak allocated {r['peakAllocated'] / 2**30:.2f} GiB", flush=True)
        res["main"] = r
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        res["errors"].append(f"main: {e!r}")
    write_json(a.out, "train.json", res)


if __name__ == "__main__":
    run(main)
