#!/usr/bin/env python3
"""Pairs Dawn's shader dump (dump_shaders: '// Dumped WGSL:' then '/* Dumped SPIRV disassembly */' per pipeline, in
creation order) with the labels bench/vkstats/dump.ts wrote, and assembles each SPIR-V disassembly into
OUTDIR/NN-label.spv (spirv-as, which must be on the PATH: Debian's spirv-tools) and keeps the
text as OUTDIR/NN-label.spvasm. Usage: split.py DUMP.log LABELS.json OUTDIR"""
import json, os, re, subprocess, sys

dump, labels_path, outdir = sys.argv[1:4]
labels = json.load(open(labels_path))
text = open(dump, errors="replace").read()
blocks = text.split("/* Dumped SPIRV disassembly */")[1:]
os.makedirs(outdir, exist_ok=True)
if len(blocks) != len(labels):
    print(f"split.py: {len(blocks)} SPIR-V dumps but {len(labels)} labels; pairing the first {min(len(blocks), len(labels))}", file=sys.stderr)
for i, (blk, label) in enumerate(zip(blocks, labels)):
    body = blk.split("// Dumped WGSL:")[0]
    # Keep the disassembly's lines only (the instruction lines and its ';' header), dropping log lines around it.
    lines = [l for l in body.splitlines() if re.match(r"^\s*(;|%|Op)", l)]
    name = f"{i:02d}-{re.sub(r'[^A-Za-z0-9_]+', '_', label)}"
    asm = os.path.join(outdir, name + ".spvasm")
    open(asm, "w").write("\n".join(lines) + "\n")
    ver = re.search(r"; Version: (\d+\.\d+)", body)
    env = f"spv{ver.group(1)}" if ver else "vulkan1.1"
    r = subprocess.run(["spirv-as", "--target-env", env, "--preserve-numeric-ids", asm, "-o", os.path.join(outdir, name + ".spv")], capture_output=True, text=True)
    print(f"{name}: {'ok' if r.returncode == 0 else 'spirv-as failed: ' + r.stderr.strip()[:300]}")
