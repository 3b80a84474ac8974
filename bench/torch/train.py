"""Baseline for the trainer's benchmark: PyTorch + PEFT on Qwen2.5-0.5B-shaped random weights,
LoRA r=16 alpha=32 on q,k,v,o,gate,up,down, AdamW (lr 1e-5, fused off, default betas), bf16 autocast
over f32 base weights, eager attention. One step = forward + a GRPO-like loss (log_softmax + gather of
the token log-probs, advantages +-1 per sequence, completion = second half of each row, mean over
completion tokens) + backward + optimizer step + zero_grad. Tokens/s counts every B x T token.
Main configuration 8 x 768 (median of --iters after --warmup), then the sweep: T in 256,512,1024,2048
at B=8, and B in 1,4,8,16 at T=512 (--sweep-iters each, after one warm-up). Peak memory:
torch.cuda.max_memory_allocated of the measured steps (weights included).
Usage: python3 bench/torch/train.py --out DIR [--iters 5] [--warmup 2] [--sweep-iters 2] [--attn eager]
       [--preset qwen2.5-0.5b|qwen2.5-1.5b|demo] [--no-sweep] [--name train.json] [--logits-to-keep]
"""
import argparse
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import qwen_05b, write_json  # noqa: E402

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--sweep-iters", type=int, default=2)
    ap.add_argument("--attn", default="eager")
    ap.add_argument("--no-sweep", action="store_true")
    ap.add_argument("--preset", default="qwen2.5-0.5b")
    ap.add_argument("--name", default="train.json", help="file name of the JSON written under --out")
    ap.add_argument("--logits-to-keep", action="store_true",
                    help="logits of the completion positions only (transformers' logits_to_keep, as TRL's GRPO computes them)")
    a = ap.parse_args()
    import torch
    import peft
    import transformers
    from peft import LoraConfig, get_peft_model

    res = {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__,
           "device": torch.cuda.get_device_name(0), "base": "float32 weights, bf16 autocast", "attention": a.attn,
           "lora": {"r": 16, "alpha": 32, "targets": TARGETS}, "optimizer": "AdamW lr 1e-5", "main": None, "sweep": [], "errors": []}
    res["preset"] = a.preset
    res["logitsToKeep"] = "completion" if a.logits_to_keep else "all"
    base = qwen_05b(torch.float32, a.attn, preset=a.preset)
    m = get_peft_model(base, LoraConfig(r=16, lora_alpha=32, target_modules=TARGETS, lora_dropout=0.0, bias="none", task_type="CAUSAL_LM"))
    m.train()
    trainable = sum(p.numel() for p in m.parameters() if p.requires_grad)
    res["trainableParams"] = trainable
    print(f"PEFT model: {trainable / 1e6:.2f}M trainable LoRA parameters, base f32 + bf16 autocast, {a.attn} attention", flush=True)
    opt = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=1e-5)
    gen = torch.Generator(device="cpu").manual_seed(3)

    def step(ids, adv, comp_mask):
        T = ids.shape[1]
        # Completion = tokens T/2 .. T-1, predicted at positions T/2-1 .. T-2: the last T/2 + 1 positions hold them.
        keep = T - (T // 2 - 1) if a.logits_to_keep else 0
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = m(input_ids=ids, logits_to_keep=keep).logits if keep else m(input_ids=ids).logits
        lp = torch.log_softmax(logits[:, :-1].float(), dim=-1).gather(-1, ids[:, T - logits.shape[1] + 1:, None])[..., 0]
        mask = comp_mask[:, T - logits.shape[1]:]
        loss = -(adv[:, None] * lp * mask).sum() / mask.sum()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    def measure(B, T, iters, warmup):
        ids = torch.randint(0, base.config.vocab_size, (B, T), generator=gen).cuda()
        adv = torch.tensor([1.0 if i % 2 else -1.0 for i in range(B)], device="cuda")
        comp = torch.zeros(B, T - 1, device="cuda")
        comp[:, T // 2 - 1:] = 1.0  # predictions of tokens T/2 .. T-1
        for _ in range(warmup):
            step(ids, adv, comp)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        ts = []
        for _ in range(iters):
            s = time.perf_counter()
            loss = step(ids, adv, comp)
            torch.cuda.synchronize()
            ts.append(time.perf_counter() - s)
        med = statistics.median(ts)
        r = {"B": B, "T": T, "medianSeconds": med, "allSeconds": ts, "tokensPerSecond": B * T / med,
             "peakAllocated": torch.cuda.max_memory_allocated(), "peakReserved": torch.cuda.max_memory_reserved(), "loss": float(loss)}
        print(f"B={B} T={T}: step {med * 1000:.1f} ms (median of {iters}), {r['tokensPerSecond']:.0f} tokens/s, "
              f"peak allocated {r['peakAllocated'] / 2**30:.2f} GiB", flush=True)
        return r

    try:
        res["main"] = measure(8, 768, a.iters, a.warmup)
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        res["errors"].append(f"main: {e!r}")
    write_json(a.out, a.name, res)
    if not a.no_sweep:
        for B, T in [(8, 256), (8, 512), (8, 1024), (8, 2048), (1, 512), (4, 512), (16, 512)]:
            try:
                res["sweep"].append(measure(B, T, a.sweep_iters, 1))
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                res["errors"].append(f"B={B} T={T}: {e!r}")
                torch.cuda.empty_cache()
            write_json(a.out, a.name, res)
    print("\n| B | T | step ms | tokens/s | peak GiB |", flush=True)
    for r in ([res["main"]] if res["main"] else []) + res["sweep"]:
        print(f"| {r['B']} | {r['T']} | {r['medianSeconds'] * 1000:.1f} | {r['tokensPerSecond']:.0f} | {r['peakAllocated'] / 2**30:.2f} |", flush=True)


if __name__ == "__main__":
    try:
        main()
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        sys.exit(1)
