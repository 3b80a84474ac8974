# Writes model and adapter folders with transformers' and PEFT's own writers, plus their float64
# log-probabilities, so src/model's readers are tested on files it did not write:
#   python3 src/model/crosscheck/export_from_transformers.py <out-dir>
# The output becomes src/model/testdata/transformers/ (see hf-files.test.ts).
import json
import sys

import torch
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM, Qwen2Config, Qwen3Config

out = sys.argv[1]
torch.manual_seed(0)

# float64 everywhere (see check_transformers.py --strict-f64): patch float32 casts.
_to = torch.Tensor.to


def _to64(self, *a, **k):
    a = tuple(torch.float64 if x is torch.float32 else x for x in a)
    if k.get("dtype") is torch.float32:
        k["dtype"] = torch.float64
    return _to(self, *a, **k)


_softmax = torch.nn.functional.softmax


def _softmax64(x, dim=None, _stacklevel=3, dtype=None):
    return _softmax(x, dim=dim, dtype=torch.float64 if dtype is torch.float32 else dtype)


def f64_logprobs(model, ids):
    torch.Tensor.to, torch.nn.functional.softmax = _to64, _softmax64
    orig_float = torch.Tensor.float
    torch.Tensor.float = lambda self: self.double()
    try:
        m = model.double().eval()
        rotary = m.get_base_model().model.rotary_emb if hasattr(m, "get_base_model") else m.model.rotary_emb
        dim = getattr(m.config, "head_dim", None) or m.config.hidden_size // m.config.num_attention_heads
        theta = m.config.rope_parameters["rope_theta"]
        rotary.inv_freq = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
        with torch.no_grad():
            lp = m(torch.tensor([ids])).logits.log_softmax(-1)[0]
        return [lp[t, ids[t + 1]].item() for t in range(len(ids) - 1)]
    finally:
        torch.Tensor.to, torch.nn.functional.softmax, torch.Tensor.float = _to, _softmax, orig_float


def randomize(model, scale):
    # transformers initialises norms to 1 and biases to 0: perturb everything so every tensor matters.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.copy_(1 + 0.2 * (torch.rand_like(p) - 0.5))
            else:
                p.copy_(scale * (2 * torch.rand_like(p) - 1))


ids = [int(x) for x in torch.randint(0, 280, (24,))]
expected = {"ids": ids}

q3 = AutoModelForCausalLM.from_config(Qwen3Config(
    vocab_size=280, hidden_size=40, intermediate_size=56, num_hidden_layers=2, num_attention_heads=4,
    num_key_value_heads=2, head_dim=12, max_position_embeddings=512, rope_theta=10000.0, tie_word_embeddings=True,
    rms_norm_eps=1e-6))
randomize(q3, 0.25)
q3.save_pretrained(f"{out}/qwen3")
expected["qwen3"] = f64_logprobs(q3, ids)
peft_model = get_peft_model(q3.float(), LoraConfig(
    r=4, lora_alpha=8, target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    init_lora_weights=False, lora_dropout=0.0, task_type="CAUSAL_LM"))
peft_model.save_pretrained(f"{out}/qwen3-lora")
expected["qwen3_lora"] = f64_logprobs(peft_model, ids)

q2 = AutoModelForCausalLM.from_config(Qwen2Config(
    vocab_size=280, hidden_size=48, intermediate_size=72, num_hidden_layers=2, num_attention_heads=6,
    num_key_value_heads=2, max_position_embeddings=512, rope_theta=1000000.0, tie_word_embeddings=False,
    rms_norm_eps=1e-6))
randomize(q2, 0.25)
q2 = q2.to(torch.bfloat16)
q2.save_pretrained(f"{out}/qwen2-bf16")
expected["qwen2_bf16"] = f64_logprobs(q2, ids)

json.dump(expected, open(f"{out}/expected.json", "w"))
print("wrote", out)
