#!/usr/bin/env python3
"""Under-trained tokens of a model with tied embeddings, and where a text uses them (issue 18, 2026-12-04).

Tokens that pretraining never (or hardly) saw end with embeddings pulled into one shared direction; with the
embedding tied to the output layer, a hidden state that favours one of them favours all of them, so no adapter that
leaves the embedding frozen (LoRA on the projections) can make one of them likely. On the shipped demo model the
second token of WITH (`ITH`) is one of about a thousand such tokens: after the CoCTE cold start the policy gives it
0.7% (entropy 7.0 nats at that position, bench/evidence/sample-check.ts on the H200), so temperature-1 samples break
there (docs/prm.md).

    python3 bench/evidence/undertrained-tokens.py public/model W ITH SELECT ĠFROM 5872

Arguments after the model folder are tokens as tokenizer.json spells them (byte-level: Ġ for a leading space) or
token ids; `rlvr` shows a text's tokens (the demo tokenizer writes WITH as W + ITH). Prints how many tokens have at
least 100 others within cosine 0.99 of their embedding direction (the collapsed cluster), and for each argument the
number of other tokens within cosine 0.99 of it (0: a direction of its own; hundreds: a token in the cluster). Needs
numpy; reads model.safetensors (f16, f32 or bf16) and tokenizer.json.
"""
import json
import os
import struct
import sys

import numpy as np


def read_tensor(path, name):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        meta = header[name]
        start, end = meta["data_offsets"]
        f.seek(8 + n + start)
        raw = f.read(end - start)
    dt = meta["dtype"]
    if dt == "F16":
        a = np.frombuffer(raw, dtype=np.float16).astype(np.float64)
    elif dt == "F32":
        a = np.frombuffer(raw, dtype=np.float32).astype(np.float64)
    elif dt == "BF16":
        a = (np.frombuffer(raw, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    else:
        raise SystemExit(f"{name}: dtype {dt} not handled")
    return a.reshape(meta["shape"])


def main(model_dir, tokens):
    E = read_tensor(os.path.join(model_dir, "model.safetensors"), "model.embed_tokens.weight")
    U = E / np.maximum(np.linalg.norm(E, axis=1, keepdims=True), 1e-12)
    vocab = json.load(open(os.path.join(model_dir, "tokenizer.json")))["model"]["vocab"]
    inv = {v: k for k, v in vocab.items()}
    # Neighbours within cosine 0.99 of each token, in blocks (V x V at once is 268 MB for 8k tokens).
    V = U.shape[0]
    near = np.zeros(V, dtype=np.int64)
    for s in range(0, V, 1024):
        near[s:s + 1024] = (U[s:s + 1024] @ U.T > 0.99).sum(axis=1) - 1
    big = int(np.argmax(near))
    print(f"{model_dir}: {V} tokens; {int((near >= 100).sum())} have >= 100 others within cosine 0.99 "
          f"(the largest cluster: {near[big] + 1} tokens around {inv.get(big)!r})")
    for t in tokens:
        i = int(t) if t.isdigit() else vocab.get(t)
        if i is None or not 0 <= i < V:
            print(f"{t!r}: not a token of this vocabulary")
            continue
        print(f"{inv.get(i)!r} (id {i}): {near[i]} others within cosine 0.99, embedding norm {np.linalg.norm(E[i]):.3f}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2:] or ["W", "ITH", "SELECT", "ĠFROM", "ĠAS"])
