# Cross-checks src/model against the Python reference stack (torch + transformers + peft + tokenizers
# + onnxruntime), on the GPU machine where they are installed:
#   python3 src/model/crosscheck/check_transformers.py <fixtures-dir> [--strict-f64]
# Exits non-zero when any comparison is out of tolerance; prints a table.
# transformers computes RMSNorm, the RoPE angles (and the default inv_freq) and the attention
# softmax in float32 even in a float64 model, which limits agreement to ~1e-5; --strict-f64
# patches those float32 casts to float64 first, so the
# comparison is float64 against float64 (tolerance 1e-9).
import json
import math
import sys

import numpy as np
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

d = sys.argv[1]
strict = "--strict-f64" in sys.argv
if strict:
    _to = torch.Tensor.to

    def _to64(self, *a, **k):
        a = tuple(torch.float64 if x is torch.float32 else x for x in a)
        if k.get("dtype") is torch.float32:
            k["dtype"] = torch.float64
        return _to(self, *a, **k)

    torch.Tensor.to = _to64
    torch.Tensor.float = lambda self: self.double()
    _softmax = torch.nn.functional.softmax

    # Eager attention takes its softmax with dtype=torch.float32.
    def _softmax64(x, dim=None, _stacklevel=3, dtype=None):
        return _softmax(x, dim=dim, dtype=torch.float64 if dtype is torch.float32 else dtype)

    torch.nn.functional.softmax = _softmax64
LOGPROB_TOL = 1e-9 if strict else 2e-5
exp = json.load(open(f"{d}/expected.json"))
failures = []
rows = []


def logprobs(model, ids):
    with torch.no_grad():
        x = torch.tensor([ids])
        lp = model(x).logits.double().log_softmax(-1)[0]
    return [lp[t, ids[t + 1]].item() for t in range(len(ids) - 1)]


def compare(what, got, want, tol):
    err = max(abs(a - b) for g, w in zip(got, want) for a, b in zip(g, w))
    ok = err <= tol and all(len(g) == len(w) for g, w in zip(got, want))
    rows.append((what, f"{err:.3e}", "ok" if ok else "FAIL"))
    if not ok:
        failures.append(what)


for name, e in exp["models"].items():
    path = f"{d}/{name}"
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float64, attn_implementation="eager").eval()
    rotary = model.model.rotary_emb
    if strict and rotary.rope_type == "default":
        # The default RoPE init builds inv_freq from a float32 arange: redo its formula in float64.
        dim = model.config.head_dim
        theta = model.config.rope_parameters["rope_theta"]
        inv = 1.0 / (theta ** (torch.arange(0, dim, 2, dtype=torch.float64) / dim))
        rotary.inv_freq = inv
        rotary.original_inv_freq = inv
    compare(f"{name}: logprobs vs transformers (float64)", [logprobs(model, ids) for ids in e["ids"]], e["base"], LOGPROB_TOL)
    if e["lora"] is not None:
        from peft import PeftModel

        peft_model = PeftModel.from_pretrained(model, f"{d}/{name}-lora").eval()
        compare(f"{name}: logprobs with LoRA vs peft", [logprobs(peft_model, ids) for ids in e["ids"]], e["lora"], LOGPROB_TOL)
    tok = AutoTokenizer.from_pretrained(path)
    got = [tok(t, add_special_tokens=False)["input_ids"] for t in exp["texts"]]
    same = got == exp["tokenIds"]
    rows.append((f"{name}: tokenizer ids vs tokenizers (Rust)", "-", "ok" if same else "FAIL"))
    if not same:
        failures.append(f"{name} tokenizer: {got} vs {exp['tokenIds']}")
    decoded = [tok.decode(i) for i in got]
    if decoded != exp["texts"]:
        failures.append(f"{name} decode {decoded}")
    rendered = tok.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True)
    if rendered != "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n":
        failures.append(f"{name} chat template rendered {rendered!r}")

import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

for i, q in enumerate(exp["q4"]):
    N, K, M = q["N"], q["K"], q["M"]
    nb = math.ceil(K / 32)
    inits = [
        numpy_helper.from_array(np.array(q["packed"], dtype=np.uint8).reshape(N, nb, 16), "B"),
        numpy_helper.from_array(np.array(q["scales"], dtype=np.float32), "scales"),
    ]
    inputs = ["A", "B", "scales"]
    if q["zeroPoints"] is not None:
        inits.append(numpy_helper.from_array(np.array(q["zeroPoints"], dtype=np.uint8), "zp"))
        inputs.append("zp")
    node = helper.make_node("MatMulNBits", inputs, ["Y"], domain="com.microsoft", K=K, N=N, bits=4, block_size=32)
    graph = helper.make_graph([node], "q4", [helper.make_tensor_value_info("A", TensorProto.FLOAT, [M, K])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [M, N])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    m.ir_version = 9
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    y = sess.run(None, {"A": np.array(q["a"], dtype=np.float32).reshape(M, K)})[0]
    err = float(np.max(np.abs(y.reshape(-1) - np.array(q["y"]))))
    ok = err < 1e-4
    rows.append((f"q4 MatMulNBits N={N} K={K} sym={q['symmetric']} vs onnxruntime {ort.__version__}", f"{err:.3e}", "ok" if ok else "FAIL"))
    if not ok:
        failures.append(f"q4 case {i}")

import transformers, peft
print(f"torch {torch.__version__}, transformers {transformers.__version__}, peft {peft.__version__}, strict float64: {strict}")
for r in rows:
    print(f"{r[2]:5} {r[1]:>10}  {r[0]}")
if failures:
    print("FAILURES:", failures)
    sys.exit(1)
