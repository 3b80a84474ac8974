"""The reference GRPO step (issue 51): the loop a user writes with TRL without vLLM, in PyTorch on the same GPU.
Qwen2.5-0.5B-shaped random weights in bf16 with sdpa attention, PEFT LoRA r=16 alpha=32 on the seven
projections; per step, for Q prompts x G samples:
  sample  transformers `generate` (do_sample, temperature 1, top_k 0, top_p 1, KV cache, max_new_tokens N, no EOS
          in reach of random weights: rows run to N, as ours do), the PEFT model itself (adapters on, as TRL does);
  score   the SQL of each completion (the last ```sql block, else the text after the answer prefix) run with
          python's sqlite3 on the question's database and compared with the gold SQL's rows as sets (1 / 0),
          -1 where there is no SQL or it fails (the reward of ours: execution, set comparison);
  train   one forward/backward of the Q G sequences (prompt + completion, right-padded) under bf16 autocast, the
          GRPO loss (group-normalised advantages, token-level mean over completion tokens, ratio to the detached
          log-probs: one update per batch, clip 0.2), AdamW, zero_grad.
The prompts are ours: the prompt texts of our run's samples (samples.jsonl of `rlvr run`, phase grpo), tokenized with
the same tokenizer.json (the tokenizers library), so both sides decode after the same prompt lengths.
Usage: python3 bench/torch/grpo_step.py --out DIR --run RUN_DIR --tokenizer TOKENIZER_JSON --questions Q.jsonl --db-root DIR
         [--steps 3] [--new 320] [--G 6] [--questions-per-step 2] [--name grpo-step-torch.json]
"""
import argparse
import json
import os
import re
import sqlite3
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import TARGETS, lora, qwen_05b, run, timed, write_json  # noqa: E402


def extract_sql(text):
    blocks = re.findall(r"```sql\s*(.*?)(?:```|$)", text, flags=re.S | re.I)
    sql = blocks[-1].strip() if blocks else ""
    return sql or None


def run_sql(db, sql, timeout_s=30.0):
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    start = time.time()
    con.set_progress_handler(lambda: 1 if time.time() - start > timeout_s else 0, 10000)
    try:
        return set(map(tuple, con.execute(sql).fetchall()))
    finally:
        con.close()


def reward(db, sql, gold_rows):
    if not sql:
        return -1.0
    try:
        rows = run_sql(db, sql)
    except Exception:  # noqa: BLE001
        return -1.0
    return 1.0 if rows == gold_rows else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--run", required=True, help="our rlvr run folder (its samples.jsonl gives the prompts)")
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--questions", required=True)
    ap.add_argument("--db-root", required=True)
    ap.add_argument("--steps", type=int, default=3, help="measured steps after one warm-up step")
    ap.add_argument("--new", type=int, default=320)
    ap.add_argument("--G", type=int, default=6)
    ap.add_argument("--questions-per-step", type=int, default=2)
    ap.add_argument("--lr", type=float, default=2e-5)
    ap.add_argument("--name", default="grpo-step-torch.json")
    a = ap.parse_args()
    import torch
    import peft
    import transformers
    from tokenizers import Tokenizer

    samples = [json.loads(l) for l in open(os.path.join(a.run, "samples.jsonl")) if l.strip()]
    samples = [s for s in samples if s.get("phase") == "grpo"]
    prompts, seen = [], set()
    for s in samples:
        if s["prompt"] not in seen:
            seen.add(s["prompt"])
            prompts.append(s)
    if not prompts:
        raise RuntimeError(f"no grpo samples in {a.run}/samples.jsonl")
    gold = {}
    for l in open(a.questions):
        if l.strip():
            q = json.loads(l)
            gold[(q["db_id"], q["question"])] = q.get("query") or q.get("gold_sql") or q.get("SQL")
    tok = Tokenizer.from_file(a.tokenizer)
    res = {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__,
           "device": torch.cuda.get_device_name(0), "dtype": "bfloat16 weights, bf16 autocast for the loss", "attention": "sdpa",
           "lora": {"r": 16, "alpha": 32, "targets": TARGETS}, "optimizer": f"AdamW lr {a.lr}", "G": a.G,
           "questionsPerStep": a.questions_per_step, "newTokens": a.new, "steps": [], "errors": []}
    t0 = time.time()
    m = lora(qwen_05b(torch.bfloat16, "sdpa"))
    opt = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=a.lr)
    print(f"PEFT model (bf16, sdpa) in {time.time() - t0:.1f} s; {len(prompts)} distinct prompts from our run", flush=True)
    gen = dict(do_sample=True, temperature=1.0, top_k=0, top_p=1.0, eos_token_id=None, pad_token_id=0,
               max_new_tokens=a.new, min_new_tokens=a.new)

    def one_step(i):
        Q, G = a.questions_per_step, a.G
        chosen = [prompts[(i * Q + k) % len(prompts)] for k in range(Q)]
        ids = [tok.encode(s["prompt"], add_special_tokens=False).ids for s in chosen]
        P = max(len(x) for x in ids)
        # Left-padded prompts, G copies each (generate's layout for a batch of unequal prompts).
        inp = torch.zeros(Q * G, P, dtype=torch.long)
        mask = torch.zeros(Q * G, P, dtype=torch.long)
        for q, x in enumerate(ids):
            for g in range(G):
                inp[q * G + g, P - len(x):] = torch.tensor(x)
                mask[q * G + g, P - len(x):] = 1
        inp, mask = inp.cuda(), mask.cuda()
        m.eval()
        with torch.no_grad():
            out, t_sample = timed(lambda: m.generate(input_ids=inp, attention_mask=mask, **gen))
        comp = out[:, P:]
        ts = time.perf_counter()
        texts = [tok.decode(c.tolist(), skip_special_tokens=False) for c in comp]
        rewards = []
        for q, s in enumerate(chosen):
            db = os.path.join(a.db_root, s["dbId"], f"{s['dbId']}.sqlite")
            g_sql = gold.get((s["dbId"], s["question"]))
            try:
                g_rows = run_sql(db, g_sql) if g_sql else None
            except Exception:  # noqa: BLE001
                g_rows = None
            for g in range(G):
                rewards.append(reward(db, extract_sql((s.get("answerPrefix") or "") + texts[q * G + g]), g_rows) if g_rows is not None else -1.0)
        t_score = time.perf_counter() - ts

        def train():
            r = torch.tensor(rewards, device="cuda").view(Q, G)
            adv = ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-4)).view(-1)
            m.train()
            full_mask = torch.cat([mask, torch.ones_like(comp)], 1)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = m(input_ids=out, attention_mask=full_mask, logits_to_keep=a.new + 1).logits
            lp = torch.log_softmax(logits[:, :-1].float(), -1).gather(-1, comp[..., None])[..., 0]
            ratio = torch.exp(lp - lp.detach())
            loss = -torch.min(ratio * adv[:, None], torch.clamp(ratio, 0.8, 1.2) * adv[:, None]).mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            return loss

        loss, t_train = timed(train)
        row = {"step": i + 1, "sample": t_sample, "score": t_score, "train": t_train, "total": t_sample + t_score + t_train,
               "promptTokens": [len(x) for x in ids], "paddedPrompt": P, "sequences": Q * G, "newTokens": comp.shape[1],
               "sampleTokensPerSecond": Q * G * comp.shape[1] / t_sample, "trainTokensPerSecond": Q * G * (P + comp.shape[1]) / t_train,
               "rewardMean": float(sum(rewards) / len(rewards)), "loss": float(loss), "peakAllocated": torch.cuda.max_memory_allocated()}
        print(f"torch step {i + 1}: sample {t_sample:.2f} s ({row['sampleTokensPerSecond']:.0f} tok/s), score {t_score:.3f} s, "
              f"train {t_train:.3f} s ({row['trainTokensPerSecond']:.0f} tok/s); total {row['total']:.2f} s; prompts {row['promptTokens']}", flush=True)
        return row

    try:
        res["warmup"] = one_step(0)
        for i in range(a.steps):
            res["steps"].append(one_step(i + 1))
            write_json(a.out, a.name, res)
        tot = [r["total"] for r in res["steps"]]
        res["min"] = min(tot)
        res["median"] = statistics.median(tot)
        res["phasesMedian"] = {k: statistics.median(r[k] for r in res["steps"]) for k in ("sample", "score", "train")}
        print(f"torch GRPO step: min {res['min']:.2f} s, median {res['median']:.2f} s of {len(tot)} after a warm-up step", flush=True)
    except Exception as e:  # noqa: BLE001
        traceback.print_exc()
        res["errors"].append(repr(e))
    write_json(a.out, a.name, res)


if __name__ == "__main__":
    run(main)
