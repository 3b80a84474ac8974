#!/usr/bin/env python3
"""Summary of a bench/h200.sh run: summary.json (every part's status and GPU memory, every JSON the
parts wrote), h200.json (the figures of record, the schema below; commit it as
bench/results/<date>-h200.json) and short tables printed last.

h200.json: {"date", "webgpu": <the first engine of ENGINES: the product's figure>, "engines": [...],
  "commands": {...}, "torch": {"train_tok_s", "generate_tok_s": {"8", "64"}, ...},
  "ours": {"train_tok_s", "train_recompute_tok_s", "decode_tok_s": {"8", "64"}, ...},   (first engine)
  "by_engine": {"dawn": {same as ours}, "deno": {...}}, "check": {...}}
Decode rates are per step after the first token (batch / step time), as transformers' msPerStep in
bench/torch/generate.py: both sides' "decode_tok_s". Usage: h200-summary.py OUT parts.tsv
(ENGINES, DECODE_ARGS, TRAIN_ARGS from the environment)."""
import datetime
import json
import os
import sys

out, status = sys.argv[1], sys.argv[2]
engines = os.environ.get("ENGINES", "dawn").split()


def load(fn):
    try:
        with open(os.path.join(out, fn)) as f:
            return json.load(f)
    except Exception as e:  # noqa: BLE001
        return {"missing": f"{fn}: {e!r}"}


def g(d, *ks):
    for k in ks:
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def f(x, fmt="{:.0f}"):
    return "-" if x is None else fmt.format(x)


parts = {}
for line in open(status):
    fs = (line.rstrip("\n").split("\t") + [""] * 5)[:5]
    name, rc, secs, base, peak = fs
    p = {"rc": rc, "seconds": float(secs) if secs else None, "gpuMemUsedBeforeMiB": int(base) if base.isdigit() else None,
         "gpuMemUsedPeakMiB": int(peak) if peak.isdigit() else None}
    if p["gpuMemUsedPeakMiB"] is not None and p["gpuMemUsedBeforeMiB"] is not None:
        p["gpuMemPeakOverBaseMiB"] = p["gpuMemUsedPeakMiB"] - p["gpuMemUsedBeforeMiB"]
    if rc in ("124", "137"):
        p["note"] = "stopped by its time limit"
    parts[name] = p

summary = {"parts": parts, "check": load("check.json"), "torchGenerate": load("generate.json"), "torchTrain": load("train.json")}
for e in engines:
    summary[f"oursDecode-{e}"] = load(f"decode-{e}.json")
    summary[f"oursTrain-{e}"] = load(f"train-bench-{e}.json")
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)


def decode_rates(runs, key="batch"):
    """{batch: {"decode_tok_s", "ms_per_step", "end_to_end_tok_s", "first_token_s", "partial", "sampler"}}: per batch
    the fastest run (decode.bench.ts runs every sampler of its list on each batch; "sampler" names the one kept)."""
    rows = {}
    for r in runs or []:
        b, ms = r.get(key), r.get("msPerStep")
        if b is None or not ms:
            continue
        row = {"decode_tok_s": b * 1000 / ms, "ms_per_step": ms, "end_to_end_tok_s": r.get("tokensPerSecond"),
               "first_token_s": r.get("firstTokenSeconds"), "partial": bool(r.get("partial"))}
        if r.get("sampler"):
            row["sampler"] = r.get("ran") or r["sampler"]
        if str(b) not in rows or row["decode_tok_s"] > rows[str(b)]["decode_tok_s"]:
            rows[str(b)] = row
    return rows


def sess(x):
    """Session creation seconds: one figure, or per session kind (decode.bench.ts with several samplers)."""
    if isinstance(x, dict):
        return ", ".join(f"{k} {v:.1f}" for k, v in x.items() if isinstance(v, (int, float))) or "-"
    return "-" if x is None else f"{x:.1f}"


def decode_by_sampler(runs):
    """{sampler: decode_rates of that sampler's runs} (decode.bench.ts with a sampler list)."""
    names = sorted({r.get("sampler") for r in runs or [] if r.get("sampler")})
    return {n: decode_rates([r for r in runs if r.get("sampler") == n]) for n in names}


def ours_of(e):
    d, t = summary[f"oursDecode-{e}"], summary[f"oursTrain-{e}"]
    dec = decode_rates(g(d, "runs"))
    return {
        "train_tok_s": g(t, "grpoStep", "tokensPerSecond"),
        "train_recompute_tok_s": g(t, "grpoStepRecompute", "tokensPerSecond"),
        "train_peak_bytes": g(t, "grpoStep", "peakBytes"),
        "train_recompute_peak_bytes": g(t, "grpoStepRecompute", "peakBytes"),
        "train_projections": g(t, "projections"), "train_B": g(t, "B"), "train_T": g(t, "T"),
        "train_sweep": g(t, "sweep"), "train_kernel_variants": g(t, "kernelVariants"),
        "decode_tok_s": {b: r["decode_tok_s"] for b, r in dec.items()},
        "decode": dec, "decode_by_sampler": decode_by_sampler(g(d, "runs")), "decode_session_s": g(d, "sessionSeconds"), "decode_dtype": g(d, "dtype"),
        "errors": [x for x in (g(d, "missing"), g(t, "missing")) if x],
    }


tg, tt = summary["torchGenerate"], summary["torchTrain"]
tdec = decode_rates(g(tg, "runs"))
record = {
    "date": datetime.date.today().isoformat(),
    "webgpu": engines[0],
    "engines": engines,
    "commands": {
        "suite": f"ENGINES=\"{' '.join(engines)}\" bash bench/h200.sh",
        "decode": f"deno run -A decode.js --webgpu <engine> {os.environ.get('DECODE_ARGS', '')}",
        "train": f"deno run -A train.js --webgpu <engine> {os.environ.get('TRAIN_ARGS', '')}",
        "torch_generate": "python3 bench/torch/generate.py --attn sdpa --batches 8,64 --new 256 --prompt 128 --reps 3 (median of 3 full runs; TORCH_GEN_REPS)",
        "torch_train": "python3 bench/torch/train.py --iters 5 --warmup 2 --attn eager",
    },
    "torch": {
        "train_tok_s": g(tt, "main", "tokensPerSecond"), "train_peak_allocated": g(tt, "main", "peakAllocated"),
        "generate_tok_s": {b: r["decode_tok_s"] for b, r in tdec.items()}, "generate": tdec,
    },
    "ours": ours_of(engines[0]),
    "by_engine": {e: ours_of(e) for e in engines},
    "check": {a: {"logprobs": {k: g(v, "maxAbs") for k, v in (g(r, "logprobs") or {}).items()}, "grad_rel": g(r, "grad", "rel")}
              for a, r in (g(summary["check"], "archs") or {}).items()},
    "parts": parts,
}
json.dump(record, open(os.path.join(out, "h200.json"), "w"), indent=1)

print(f"\n== summary ({os.path.join(out, 'summary.json')}, figures of record in h200.json)")
print("| part | rc | seconds | nvidia-smi peak over base MiB |")
print("|---|---|---|---|")
for name, p in parts.items():
    print(f"| {name} | {p['rc']} | {f(p['seconds'], '{:.1f}')} | {f(p.get('gpuMemPeakOverBaseMiB'))} |")
if record["check"]:
    print("\ncross-check vs transformers float64 (max |logp err| per run, LoRA grad rel. error):")
    for a, r in record["check"].items():
        print(f"  {a}: " + ", ".join(f"{k} {f(v, '{:.1e}')}" for k, v in r["logprobs"].items()) + f"; grad {f(r['grad_rel'], '{:.1e}')}")
tt_main = record["torch"]["train_tok_s"]
print("\nGRPO step (0.5B shape, 8 x 768, LoRA r16 x 7): tok/s, ratio to PyTorch + PEFT")
print("| engine | stored | recomputed | ours/torch | peak MiB (stored / recomputed) |")
print("|---|---|---|---|---|")
for e, o in record["by_engine"].items():
    ratio = o["train_tok_s"] / tt_main if o["train_tok_s"] and tt_main else None
    pk = lambda b: None if b is None else b / 2**20  # noqa: E731
    print(f"| {e} ({o['train_projections'] or '?'}) | {f(o['train_tok_s'])} | {f(o['train_recompute_tok_s'])} | {f(ratio, '{:.3f}')} | {f(pk(o['train_peak_bytes']))} / {f(pk(o['train_recompute_peak_bytes']))} |")
print(f"| torch | {f(tt_main)} | | 1 | |")
print("\ndecode (256 new after 128; tok/s per step after the first token; first token ms)")
print("| who | batch 8 | batch 64 | first token 8 / 64 | session s |")
print("|---|---|---|---|---|")
for e, o in record["by_engine"].items():
    d = o["decode"]
    ft = " / ".join(f((d.get(b) or {}).get("first_token_s") and d[b]["first_token_s"] * 1000) for b in ("8", "64"))
    part = lambda b: " (partial)" if (d.get(b) or {}).get("partial") else ""  # noqa: E731
    print(f"| ours {e} | {f(o['decode_tok_s'].get('8'))}{part('8')} | {f(o['decode_tok_s'].get('64'))}{part('64')} | {ft} | {sess(o['decode_session_s'])} |")
ft = " / ".join(f((tdec.get(b) or {}).get("first_token_s") and tdec[b]["first_token_s"] * 1000) for b in ("8", "64"))
print(f"| transformers | {f(record['torch']['generate_tok_s'].get('8'))} | {f(record['torch']['generate_tok_s'].get('64'))} | {ft} | |")

# Issue #17's decode variants: every sampler of each decode JSON, beside transformers (when those parts ran).
for fn in [f"decode-{e}.json" for e in engines] + ["decode-small-dawn.json", "decode-small-deno.json"]:
    d = load(fn)
    if "missing" in d:
        continue
    print(f"\n{fn}: {d.get('preset')} {d.get('dtype')} on {d.get('webgpu')}, sessions {d.get('sessionSeconds')}, captured check {'pass' if d.get('captured') else 'fail/none'}")
    print("| sampler (ran) | batch | ms/step | model call / choice-wait ms | tok/s | first token ms | dispatches | bind groups | submits | captured session s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in d.get("runs", []):
        c = r.get("webgpuCallsPerStep", {})
        n = lambda k: c.get(k, {}).get("calls", 0)  # noqa: E731
        print(f"| {r['sampler']} ({r['ran']}) | {r['batch']} | {r['msPerStep']:.1f}{' (partial)' if r.get('partial') else ''} | {r.get('hostRunMsPerStep', 0):.1f} / {r.get('chooseMsPerStep', 0):.1f} | {r['decodeTokensPerSecond']:.0f} | {r['firstTokenSeconds'] * 1000:.0f} | {n('ComputePassEncoder.dispatchWorkgroups') + n('ComputePassEncoder.dispatchWorkgroupsIndirect'):.0f} | {n('Device.createBindGroup'):.0f} | {n('Queue.submit'):.0f} | {f(r.get('capturedSessionSeconds'), '{:.1f}')} |")
if isinstance(tg, dict) and tg.get("runs"):
    print("transformers generate: " + ", ".join(f"batch {r['batch']}: {r['msPerStep']:.1f} ms/step, first token {r['firstTokenSeconds'] * 1000:.0f} ms" for r in tg["runs"]))
