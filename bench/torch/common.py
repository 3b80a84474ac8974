"""Shared by the PyTorch baselines: Qwen2.5-0.5B's shape (and the demo model's and Qwen2.5-1.5B's) with random weights,
PEFT's LoRA on the seven projections, GPU timing, the result file."""
import json
import os
import statistics
import sys
import time
import traceback

QWEN25_05B = dict(
    vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
    num_key_value_heads=2, max_position_embeddings=32768, rope_theta=1000000.0, rms_norm_eps=1e-6,
    tie_word_embeddings=True, hidden_act="silu", use_sliding_window=False,
)


# Qwen2.5-1.5B's shape (1.54B parameters, tied embeddings) and the demo model's (bench/train.bench.ts "demo").
QWEN25_15B = dict(QWEN25_05B, hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12, num_key_value_heads=2)
DEMO = dict(QWEN25_05B, vocab_size=8192, hidden_size=384, intermediate_size=1024, num_hidden_layers=8, num_attention_heads=6,
            num_key_value_heads=2, max_position_embeddings=2048, rope_theta=10000.0)
PRESETS = {"qwen2.5-0.5b": QWEN25_05B, "qwen2.5-1.5b": QWEN25_15B, "demo": DEMO}


def qwen_05b(dtype, attn, device="cuda", seed=0, preset="qwen2.5-0.5b"):
    """A Qwen2ForCausalLM of Qwen2.5-0.5B's shape (494M parameters, tied embeddings; or another of PRESETS), random init (std 0.02)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM
    torch.manual_seed(seed)
    cfg = Qwen2Config(**PRESETS[preset])
    cfg._attn_implementation = attn
    with torch.device(device):
        m = Qwen2ForCausalLM(cfg)
    return m.to(dtype)


TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def lora(base):
    """`base` with PEFT LoRA r 16 alpha 32 on the seven projections (as ours), no dropout."""
    from peft import LoraConfig, get_peft_model
    return get_peft_model(base, LoraConfig(r=16, lora_alpha=32, target_modules=TARGETS, lora_dropout=0.0, bias="none", task_type="CAUSAL_LM"))


def timed(fn):
    """fn()'s result and its seconds, the GPU's queue drained before and after."""
    import torch
    torch.cuda.synchronize()
    s = time.perf_counter()
    out = fn()
    torch.cuda.synchronize()
    return out, time.perf_counter() - s


def median_time(step, iters, warmup):
    """step() `warmup` times untimed, then `iters` times timed (the peak memory counted from there): the median
    seconds, every time, and the last step's result."""
    import torch
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    ts, out = [], None
    for _ in range(iters):
        out, t = timed(step)
        ts.append(t)
    return statistics.median(ts), ts, out


def run(main):
    """main(), its traceback printed and exit code 1 on an error (the suites read the exit code)."""
    try:
        main()
    except Exception:  # noqa: BLE001
        traceback.print_exc()
        sys.exit(1)


def write_json(out_dir, name, obj):
    os.makedirs(out_dir, exist_ok=True)
    p = os.path.join(out_dir, name)
    with open(p, "w") as f:
        json.dump(obj, f, indent=1)
    print(f"wrote {p}", flush=True)
