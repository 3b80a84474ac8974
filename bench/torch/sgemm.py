"""cuBLAS's FP32 matrix products (TF32 off: full-precision FP32 on CUDA cores, the arithmetic WGSL has on Dawn) on the
0.5B GRPO step's big shapes, timed with CUDA events: the reference for issue 16's per-product table (bench/profile.bench.ts
shapes) and its 35 TFLOP/s goal. Also the same products in TF32 and bf16 for scale.
Usage: python3 bench/torch/sgemm.py [--out DIR] [--iters 20]"""
import argparse, json, os
import torch

p = argparse.ArgumentParser()
p.add_argument("--out", default=".")
p.add_argument("--iters", type=int, default=20)
a = p.parse_args()
M, H, I = 6144, 896, 4864
# (name, M, N, K, B transposed): C (M, N) = A (M, K) op(B), as the trainer's products.
shapes = [
    ("q/o x W^T", M, H, H, True), ("gate/up x W^T", M, I, H, True), ("down x W^T", M, H, I, True),
    ("gate+up fused x W^T", M, 2 * I, H, True), ("dx = dy W (gate/up)", M, H, I, False), ("dx = dy W (down)", M, I, H, False),
    ("lm head dh = dz W_chunk", M, H, 8192, False),
]
dev = torch.device("cuda")
res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "iters": a.iters, "rows": []}
print(f"cuBLAS on {res['device']} (torch {torch.__version__}), {a.iters} products per timing, CUDA events")
print("| product | M x N x K | FP32 ms | FP32 TFLOP/s | TF32 TFLOP/s | bf16 TFLOP/s |\n|---|---|---|---|---|---|")
for name, m, n, k, tb in shapes:
    row = {"product": name, "M": m, "N": n, "K": k}
    for mode in ("fp32", "tf32", "bf16"):
        torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
        dt = torch.bfloat16 if mode == "bf16" else torch.float32
        x = torch.randn(m, k, device=dev, dtype=dt)
        w = torch.randn(n, k, device=dev, dtype=dt) if tb else torch.randn(k, n, device=dev, dtype=dt)
        f = (lambda: x @ w.t()) if tb else (lambda: x @ w)
        for _ in range(3):
            f()
        torch.cuda.synchronize()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(a.iters):
            f()
        e.record()
        torch.cuda.synchronize()
        ms = s.elapsed_time(e) / a.iters
        row[f"{mode}_ms"] = ms
        row[f"{mode}_tflops"] = 2 * m * n * k / (ms / 1e3) / 1e12
    torch.backends.cuda.matmul.allow_tf32 = False
    res["rows"].append(row)
    print(f"| {name} | {m}x{n}x{k} | {row['fp32_ms']:.3f} | {row['fp32_tflops']:.1f} | {row['tf32_tflops']:.1f} | {row['bf16_tflops']:.1f} |")
os.makedirs(a.out, exist_ok=True)
json.dump(res, open(os.path.join(a.out, "sgemm.json"), "w"), indent=1)
