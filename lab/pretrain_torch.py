"""Issue 49: the demo base model pretrained with PyTorch on the GPU machine (allowed for the pretraining alone where it
buys more training in the same GPU time: bench/torch/pretrain.py runs the demo shape at about 3x our trainer's tokens/s).
`rlvr pretrain`'s job (src/runtime/pretrain/run.deno.ts, step.ts) on demo-prep.sh's corpus cache: its first 32 rows held
out, seeded epochs of 16 rows a step (right-padded, pads out of the loss), the loss averaged over predicted tokens,
f32 weights under bf16 autocast, clipping at 1.0, AdamW (0.9 / 0.95, eps 1e-8, weight decay 0.1 on matrices), 100 warm-up steps then cosine to
10%, init N(0, 0.02); steps planned as tokens/s x seconds / tokens a step, stopped at the seconds if first. Writes OUT as
the demo model's Hugging Face folder (f16, tied head left out) and OUT/train_log.jsonl (the records h200-retrain.sh's
status line reads).
In lab/ until a device call has run it and compared its model with the project trainer's (docs/journal/README.md, "The
next device call"). Usage: python3 lab/pretrain_torch.py --corpus corpus.bin[.xz] --tokenizer DIR --out DIR
         [--size 16m|27m|tiny] [--seconds 330] [--tokens-per-s 450000] [--lr 6e-4] [--seed 1]
"""
import argparse, json, lzma, math, os, shutil, time  # noqa: E401
import numpy as np

SIZES = {"16m": (384, 8, 6, 1024), "27m": (512, 8, 8, 1408), "tiny": (64, 2, 2, 128)}  # hidden, layers, heads, MLP
VOCAB, SEQ, BATCH, EVAL_ROWS, WARMUP, EOS = 8192, 1024, 16, 32, 100, [8187, 8185]


def read_rows(path):
    """The rows of a corpus cache (src/runtime/pretrain/checkpoint.deno.ts writeCorpusCache: n, n lengths, tokens)."""
    u = np.frombuffer((lzma.open if path.endswith(".xz") else open)(path, "rb").read(), dtype="<u4")
    lens = u[1:1 + int(u[0])].astype(np.int64)
    ends = 1 + len(lens) + np.cumsum(lens)
    if ends[-1] != len(u):
        raise ValueError(f"{path}: {len(u)} words, its header says {ends[-1]}")
    return [u[e - n:e] for e, n in zip(ends, lens)]


def config_json(size):  # as `rlvr pretrain` writes it (two kv heads, head dim hidden / heads)
    h, layers, heads, inter = SIZES[size]
    return {"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2", "vocab_size": VOCAB, "hidden_size": h,
            "intermediate_size": inter, "num_hidden_layers": layers, "num_attention_heads": heads,
            "num_key_value_heads": 2 if heads > 2 else 1, "head_dim": h // heads, "hidden_act": "silu",
            "rms_norm_eps": 1e-6, "rope_theta": 10000, "rope_scaling": None, "tie_word_embeddings": True,
            "max_position_embeddings": SEQ, "bos_token_id": None, "eos_token_id": EOS, "torch_dtype": "float16",
            "initializer_range": 0.02, "use_cache": True}


def lr_at(step, base, total):  # src/core/grpo.ts learningRate: linear warm-up, cosine to 10%
    p = min(1.0, max(0.0, (step - WARMUP) / max(1, total - WARMUP)))
    return base * (step + 1) / WARMUP if step < WARMUP else base * (0.1 + 0.9 * (1 + math.cos(math.pi * p)) / 2)


def main():
    ap = argparse.ArgumentParser()
    for k in ("--corpus", "--tokenizer", "--out"):
        ap.add_argument(k, required=True)
    ap.add_argument("--size", default="16m", choices=sorted(SIZES))
    for k, v in (("--seconds", 330.0), ("--tokens-per-s", 450000.0), ("--lr", 6e-4), ("--seed", 1)):
        ap.add_argument(k, type=type(v), default=v)
    a = ap.parse_args()
    import torch
    from safetensors.torch import save_file
    from transformers import Qwen2Config, Qwen2ForCausalLM

    def batch(rows):  # ids, labels (-100 on the pads) of rows right-padded to the longest, and the predicted tokens;
        # causal attention keeps every token from the pads after it, so no attention mask (sdpa keeps its causal kernels)
        ids = torch.zeros((len(rows), max(len(r) for r in rows)), dtype=torch.long)
        for i, r in enumerate(rows):
            ids[i, :len(r)] = torch.from_numpy(r.astype(np.int64))
        pad = torch.arange(ids.shape[1])[None, :] >= torch.tensor([len(r) for r in rows])[:, None]
        return ids.cuda(), ids.masked_fill(pad, -100).cuda(), sum(len(r) - 1 for r in rows)

    rows = read_rows(a.corpus)
    held, train = rows[:EVAL_ROWS], rows[EVAL_ROWS:]
    steps = max(1, round(a.tokens_per_s * a.seconds * len(train) / (BATCH * sum(len(r) for r in train))))
    torch.manual_seed(a.seed)
    cfg = Qwen2Config(**{k: v for k, v in config_json(a.size).items() if k not in ("architectures", "model_type", "torch_dtype")})
    cfg._attn_implementation = "sdpa"
    with torch.device("cuda"):
        m = Qwen2ForCausalLM(cfg)
    flat = {n: p for n, p in m.named_parameters() if n.endswith("norm.weight") or n.endswith(".bias")}
    for n, p in m.named_parameters():  # as src/runtime/pretrain/model.ts initWeights
        torch.nn.init.normal_(p, std=0.02) if n not in flat else torch.nn.init.ones_(p) if "norm" in n else torch.nn.init.zeros_(p)
    opt = torch.optim.AdamW([{"params": [p for n, p in m.named_parameters() if n not in flat], "weight_decay": 0.1},
                             {"params": list(flat.values()), "weight_decay": 0.0}], lr=a.lr, betas=(0.9, 0.95), eps=1e-8, fused=True)
    print(f"model: {a.size}, {sum(p.numel() for p in m.parameters())} parameters; {len(rows)} rows; {steps} steps planned", flush=True)
    os.makedirs(a.out, exist_ok=True)
    log, rng = open(os.path.join(a.out, "train_log.jsonl"), "w"), np.random.default_rng(a.seed)
    order, step, trained, last, stopped = np.empty(0, dtype=np.int64), 0, 0.0, float("nan"), "done"
    while step < steps:
        if trained >= a.seconds:
            stopped = "time"
            break
        if len(order) < BATCH:  # seeded epochs: every row once, each epoch in a new order
            order = np.concatenate([order, rng.permutation(len(train))])
        (ids, labels, tokens), order = batch([train[i] for i in order[:BATCH]]), order[BATCH:]
        for g in opt.param_groups:
            g["lr"] = lr_at(step, a.lr, steps)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = m(input_ids=ids, labels=labels).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        last = float(loss) if step % 50 == 0 or step == steps - 1 else last
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        trained, step = trained + dt, step + 1
        log.write(json.dumps({"event": "step", "step": step, "loss": last, "tokens": tokens, "tokensPerSec": tokens / dt}) + "\n")
        if step % 250 == 1:
            print(f"step {step}/{steps}: loss {last:.4f}, {tokens / dt:.0f} tok/s, {trained:.0f} s", flush=True)
    m.eval()
    nll = n = 0
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for i in range(0, len(held), BATCH):
            ids, labels, k = batch(held[i:i + BATCH])
            nll, n = nll + float(m(input_ids=ids, labels=labels).loss) * k, n + k
    val = nll / max(1, n)
    log.write(json.dumps({"event": "end", "steps": step, "stopped": stopped, "valLoss": val, "lastLoss": last}) + "\n")
    log.close()
    save_file({k: v.detach().half().contiguous() for k, v in m.state_dict().items() if k != "lm_head.weight"},
              os.path.join(a.out, "model.safetensors"), metadata={"format": "pt"})
    json.dump(config_json(a.size), open(os.path.join(a.out, "config.json"), "w"), indent=2)
    json.dump({"eos_token_id": EOS, "bos_token_id": None}, open(os.path.join(a.out, "generation_config.json"), "w"), indent=2)
    for f in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(os.path.join(a.tokenizer, f), a.out)
    print(f"pretrain_torch: {step} steps ({stopped}), {trained:.0f} s of training, val loss {val:.4f}", flush=True)


if __name__ == "__main__":
    main()
