"""Shared by the PyTorch baselines: Qwen2.5-0.5B's shape with random weights."""
import json
import os

QWEN25_05B = dict(
    vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
    num_key_value_heads=2, max_position_embeddings=32768, rope_theta=1000000.0, rms_norm_eps=1e-6,
    tie_word_embeddings=True, hidden_act="silu", use_sliding_window=False,
)


def qwen_05b(dtype, attn, device="cuda", seed=0):
    """A Qwen2ForCausalLM of Qwen2.5-0.5B's shape (494M parameters, tied embeddings), random init (std 0.02)."""
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM
    torch.manual_seed(seed)
    cfg = Qwen2Config(**QWEN25_05B)
    cfg._attn_implementation = attn
    with torch.device(device):
        m = Qwen2ForCausalLM(cfg)
    return m.to(dtype)


def write_json(out_dir, name, obj):
    os.makedirs(out_dir, exist_ok=True)
    p = os.path.join(out_dir, name)
    with open(p, "w") as f:
        json.dump(obj, f, indent=1)
    print(f"wrote {p}", flush=True)
