"""Cross-check of RLVR Lab's policy and trainer against transformers + peft on the same weights.

Reads the fixtures of bench/torch-fixtures.ts (tiny random qwen2 / llama / qwen3 Hugging Face folders,
a random PEFT adapter each, ids.json, batch.json) and our outputs (`rlvr logprobs` JSON files and the
`rlvr lora-grad` safetensors file, written by bench/crosscheck.sh), then computes with transformers
(AutoModelForCausalLM, float64 and float32, eager attention) + peft (PeftModel.from_pretrained):
  log-probs   out[i][t] = log p(ids[i][t+1] | ids[i][..t])
  gradient    of L = -(sum_i a_i * sum_{t>=prompt_len_i} log p(ids_i[t] | ids_i[<t])) / sum_i (len_i - prompt_len_i)
              with respect to every LoRA tensor, compared under PEFT's saved tensor names.
Errors are against the float64 PyTorch result. Prints a table; writes OUT/check.json.

Usage: python3 bench/torch/check.py --fixtures DIR --ours DIR --out DIR
  ours layout: OURS/{arch}/logprobs-{engine}-{dtype}[-base].json, OURS/{arch}/grad.safetensors
"""
import argparse
import json
import os
import sys
import time
import traceback

import numpy as np

ARCHS = ["qwen2", "llama", "qwen3"]
# (engine, dtype, with adapter)
LOGPROB_RUNS = [
    ("ort", "f32", True), ("ort", "f32", False), ("ort", "f16", True), ("ort", "q4", True),
    ("webgpu", "f32", True), ("webgpu", "f32", False), ("webgpu", "f16", True), ("webgpu", "q4", True),
]


def log(*a):
    print(*a, flush=True)


def load_st(path):
    """A safetensors file's tensors in float64 and its metadata (the safetensors package comes with transformers)."""
    from safetensors import safe_open
    with safe_open(path, framework="np") as f:
        return {k: f.get_tensor(k).astype(np.float64) for k in f.keys()}, f.metadata() or {}


def err_stats(ours, ref):
    """max |ours - ref|, max |ref|, and max |ours - ref| / max |ref|."""
    d = np.abs(np.asarray(ours, dtype=np.float64) - np.asarray(ref, dtype=np.float64))
    scale = float(np.max(np.abs(ref))) if np.size(ref) else 0.0
    mx = float(np.max(d)) if d.size else 0.0
    return {"maxAbs": mx, "maxRef": scale, "rel": mx / scale if scale > 0 else None}


def flat_lp(rows):
    return np.concatenate([np.asarray(r, dtype=np.float64) for r in rows]) if rows else np.zeros(0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", required=True)
    ap.add_argument("--ours", required=True)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    import torch
    import transformers
    from transformers import AutoModelForCausalLM
    import peft
    from peft import PeftModel

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    result = {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__,
              "device": torch.cuda.get_device_name(0) if dev == "cuda" else "cpu", "attention": "eager",
              "reference": "transformers + peft in float64", "archs": {}}
    log(f"torch {torch.__version__}, transformers {transformers.__version__}, peft {peft.__version__}, on {result['device']}")
    try:  # float32 comparisons must not run on TF32 tensor cores
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    except Exception as e:  # noqa: BLE001
        log(f"note: could not turn TF32 off: {e!r}")

    loading = {}

    def load(arch, dtype, adapter, trainable=False):
        m, info = AutoModelForCausalLM.from_pretrained(os.path.join(args.fixtures, arch, "model"), dtype=dtype,
                                                       attn_implementation="eager", output_loading_info=True)
        # A weight name transformers does not know would leave a randomly initialised tensor: report it.
        bad = {k: sorted(map(str, v))[:5] for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
        loading[arch] = bad or "all weights loaded by name"
        if bad:
            log(f"WARNING {arch}: loading info {bad}")
        m = m.to(dev)
        if adapter:
            m = PeftModel.from_pretrained(m, os.path.join(args.fixtures, arch, "adapter"), is_trainable=trainable)
            m = m.to(device=dev, dtype=dtype)  # the LoRA tensors in the base's dtype too (float64 reference)
        m.eval()
        return m

    def token_logprobs(m, ids_list):
        """out[i][t] = log p(ids[i][t+1] | ids[i][..t]), one sequence per forward (no padding)."""
        out = []
        for ids in ids_list:
            x = torch.tensor([ids], device=dev)
            logits = m(input_ids=x).logits[0]
            lp = torch.log_softmax(logits, dim=-1)
            out.append(lp[:-1].gather(-1, x[0, 1:, None])[:, 0])
        return out

    for arch in ARCHS:
        log(f"\n== {arch}")
        res = {"logprobs": {}, "grad": None, "peftNames": None, "errors": []}
        result["archs"][arch] = res
        try:
            ids = json.load(open(os.path.join(args.fixtures, arch, "ids.json")))
            batch = json.load(open(os.path.join(args.fixtures, arch, "batch.json")))
            # PEFT names: the adapter file must load into PeftModel unchanged, every tensor used.
            adapter_file, _ = load_st(os.path.join(args.fixtures, arch, "adapter", "adapter_model.safetensors"))
            m64 = load(arch, torch.float64, True)
            from peft.utils import get_peft_model_state_dict
            sd = {k: v.detach().cpu().numpy() for k, v in get_peft_model_state_dict(m64).items()}
            missing = sorted(set(adapter_file) - set(sd))
            extra = sorted(set(sd) - set(adapter_file))
            same = [k for k in adapter_file if k in sd]
            maxdiff = max((float(np.max(np.abs(sd[k] - adapter_file[k]))) for k in same), default=None)
            nonzero_b = sum(1 for k in same if "lora_B" in k and np.any(sd[k] != 0))
            res["hfLoading"] = loading.get(arch)
            res["peftNames"] = {"fileTensors": len(adapter_file), "loaded": len(same), "notInModel": missing[:5],
                                "modelOnly": extra[:5], "maxValueDiff": maxdiff, "nonZeroB": nonzero_b}
            log(f"PEFT load: {len(same)}/{len(adapter_file)} tensors matched by name, max value diff {maxdiff}, "
                f"non-zero B {nonzero_b}; not in model {missing[:3]}, model-only {extra[:3]}")

            with torch.no_grad():
                ref = {True: [t.cpu().numpy() for t in token_logprobs(m64, ids)]}
                with m64.disable_adapter():
                    ref[False] = [t.cpu().numpy() for t in token_logprobs(m64, ids)]
                m32 = load(arch, torch.float32, True)
                t32 = [t.double().cpu().numpy() for t in token_logprobs(m32, ids)]
                del m32
            res["logprobs"]["torch-f32"] = err_stats(flat_lp(t32), flat_lp(ref[True]))
            res["adapterEffect"] = err_stats(flat_lp(ref[True]), flat_lp(ref[False]))["maxAbs"]
            log(f"adapter changes log-probs by up to {res['adapterEffect']:.3g}; torch f32 vs f64 {res['logprobs']['torch-f32']['maxAbs']:.3g}")
            for eng, dt, with_ad in LOGPROB_RUNS:
                key = f"{eng}-{dt}" + ("" if with_ad else "-base")
                p = os.path.join(args.ours, arch, f"logprobs-{key}.json")
                if not os.path.exists(p):
                    res["logprobs"][key] = {"missing": p}
                    continue
                try:
                    ours = json.load(open(p))
                    shapes_ok = [len(a) for a in ours] == [len(s) - 1 for s in ids]
                    st = err_stats(flat_lp(ours), flat_lp(ref[with_ad])) if shapes_ok else {"shapeMismatch": [len(a) for a in ours]}
                    res["logprobs"][key] = st
                except Exception as e:  # noqa: BLE001
                    res["logprobs"][key] = {"error": repr(e)}

            # Gradient of the lora-grad loss in float64 (and float32 for scale).
            def grads(dtype):
                m = load(arch, dtype, True, trainable=True)
                m.train()  # no dropout in these adapters (lora_dropout 0); eager attention has none either
                num = torch.zeros((), dtype=dtype, device=dev)
                den = sum(len(b["ids"]) - b["prompt_len"] for b in batch)
                for b in batch:
                    x = torch.tensor([b["ids"]], device=dev)
                    lp = torch.log_softmax(m(input_ids=x).logits[0], dim=-1)
                    tok = lp[:-1].gather(-1, x[0, 1:, None])[:, 0]  # tok[t-1] = log p(ids[t] | ids[<t])
                    num = num + b["advantage"] * tok[b["prompt_len"] - 1:].sum()
                loss = -num / den
                m.zero_grad()
                loss.backward()
                g = {}
                for n, prm in m.named_parameters():
                    if prm.requires_grad and "lora_" in n:
                        if prm.grad is None:
                            raise RuntimeError(f"no gradient reached {n}")
                        g[n.replace(".default", "")] = prm.grad.detach().double().cpu().numpy()
                return float(loss), g

            loss64, g64 = grads(torch.float64)
            loss32, g32 = grads(torch.float32)
            gp = os.path.join(args.ours, arch, "grad.safetensors")
            gres = {"torchLoss64": loss64, "torchLoss32": loss32, "tensors": len(g64)}
            allref = np.concatenate([v.ravel() for v in g64.values()])
            gscale = float(np.max(np.abs(allref)))
            gres["maxRef"] = gscale
            gres["torchF32"] = {"maxAbs": max(float(np.max(np.abs(g32[k] - g64[k]))) for k in g64)}
            gres["torchF32"]["rel"] = gres["torchF32"]["maxAbs"] / gscale
            if os.path.exists(gp):
                ours, meta = load_st(gp)
                miss = sorted(set(g64) - set(ours))
                extra = sorted(set(ours) - set(g64))
                worst, worst_rel, worst_name = 0.0, 0.0, None
                for k in g64:
                    if k not in ours:
                        continue
                    if ours[k].shape != g64[k].shape:
                        gres.setdefault("shapeMismatch", []).append(k)
                        continue
                    d = float(np.max(np.abs(ours[k] - g64[k])))
                    sc = float(np.max(np.abs(g64[k])))
                    if d > worst:
                        worst, worst_name = d, k
                    if sc > 0:
                        worst_rel = max(worst_rel, d / sc)
                gres.update({"oursLoss": float(meta.get("loss", "nan")), "maxAbs": worst, "rel": worst / gscale,
                             "worstTensorRel": worst_rel, "worstTensor": worst_name, "notInOurs": miss[:5], "notInTorch": extra[:5]})
            else:
                gres["missing"] = gp
            res["grad"] = gres
            log(f"grad: torch loss {loss64:.10g}, ours {gres.get('oursLoss')}, max |d| {gres.get('maxAbs')} of max |g| {gscale:.3g}")
        except Exception as e:  # noqa: BLE001
            res["errors"].append(traceback.format_exc())
            log(f"FAILED {arch}: {e!r}")
            traceback.print_exc()

    # Table
    log("\nlog-probs: max |ours - torch f64| (relative to max |log p|), per architecture;")
    log("  '-base' rows without the adapter; q4/f16 rows include the weights' quantisation error (the reference is unquantised)")
    keys = ["torch-f32"] + [f"{e}-{d}" + ("" if a else "-base") for e, d, a in LOGPROB_RUNS]
    log(f"{'run':<16}" + "".join(f"{a:>24}" for a in ARCHS))
    for k in keys:
        cells = []
        for a in ARCHS:
            s = result["archs"][a]["logprobs"].get(k, {})
            if "maxAbs" in s:
                cells.append(f"{s['maxAbs']:.2e} ({s['rel']:.1e})")
            else:
                cells.append("missing" if "missing" in s else ("error" if s else "-"))
        log(f"{k:<16}" + "".join(f"{c:>24}" for c in cells))
    log("\nLoRA gradient: max |ours - torch f64| / max |g| (and torch f32's, for scale)")
    for a in ARCHS:
        g = result["archs"][a]["grad"] or {}
        log(f"{a:<8} ours {g.get('rel', 'n/a')!s:<24} torch-f32 {g.get('torchF32', {}).get('rel', 'n/a')!s:<24} "
            f"loss ours {g.get('oursLoss', 'n/a')} torch {g.get('torchLoss64', 'n/a')}")
    with open(os.path.join(args.out, "check.json"), "w") as f:
        json.dump(result, f, indent=1)
    log(f"wrote {os.path.join(args.out, 'check.json')}")


if __name__ == "__main__":
    t0 = time.time()
    try:
        main()
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        sys.exit(1)
    print(f"check.py: {time.time() - t0:.1f} s", flush=True)
