# Summarises the ORT profile printed by bench/step-profile.bench.ts: the last model_run's GPU kernel
# time ("Api" events) and host node time ("Node" events) per operator, then per kernel shape for
# the operators named in the second argument (default MatMul,Gemm,Concat; the third: how many shapes, 10).
# Usage: python3 bench/step-profile.py prof.out [OPS] [N]
import collections, json, sys

events = [json.loads(l.strip().rstrip(",")) for l in open(sys.argv[1]) if l.strip().startswith('{"cat"')]
runs = [e for e in events if e["cat"] == "Session" and e["name"] == "model_run"]
print("model_run ms:", [round(r["dur"] / 1000) for r in runs])
last = runs[-1]
lo, hi = last["ts"], last["ts"] + last["dur"]
inside = [e for e in events if lo <= e["ts"] <= hi]
node, gpu, shapes = collections.Counter(), collections.Counter(), collections.Counter()
count = collections.Counter()
ops = (sys.argv[2] if len(sys.argv) > 2 else "MatMul,Gemm,Concat").split(",")
for e in inside:
    if e["cat"] == "Node" and e["name"].endswith("_kernel_time"):
        node[(e["args"]["op_name"], e["args"]["provider"])] += e["dur"]
    if e["cat"] == "Api":
        op = e["name"].split("&")[1]
        gpu[op] += e["dur"]
        count[op] += 1
        if op in ops:
            shapes[(op, e["args"]["shapes"])] += e["dur"]
api = [e for e in inside if e["cat"] == "Api"]
span = (max(e["ts"] + e["dur"] for e in api) - min(e["ts"] for e in api)) if api else 0
print(f"last run {last['dur'] / 1000:.1f} ms; GPU kernels {sum(gpu.values()) / 1000:.2f} ms over {len(api)} dispatches"
      f" (first start to last end {span / 1000:.2f} ms); host node time {sum(node.values()) / 1000:.1f} ms")
for op, us in gpu.most_common():
    print(f"  gpu {op:<16} x{count[op]:<4} {us / 1000:8.2f} ms")
for (op, prov), us in node.most_common(8):
    print(f"  host {op:<15} {prov:<28} {us / 1000:8.1f} ms")
for (op, sh), us in shapes.most_common(int(sys.argv[3]) if len(sys.argv) > 3 else 10):
    print(f"  {op} {sh} {us / 1000:.2f} ms")
