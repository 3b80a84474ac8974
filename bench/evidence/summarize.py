#!/usr/bin/env python3
"""Prints the figures of docs/evidence.md from `rlvr run` output folders (summary.json, metrics.jsonl,
predictions/), e.g. after unpacking the tars bench/evidence/h200.sh returns:

    python3 bench/evidence/summarize.py run-demo run-spider

Per folder: greedy accuracy after each stage, greedy answers that fail to execute and distinct greedy
queries per evaluate cell, GRPO's first and last five steps (reward, executing and correct samples,
equal-reward groups, completion length), and the time per GRPO step by phase."""
import json
import os
import statistics as st
import sys


def mean(xs):
    """The mean of the values that are not None (NaN where none is)."""
    xs = [x for x in xs if x is not None]
    return st.mean(xs) if xs else float("nan")


def grpo_rows(rows):
    """GRPO's step rows, one per step. A run resumed after an interruption redoes the step whose checkpoint was not
    written and appends its line again (same step number): the later line wins. It is the step the run went on from
    (the earlier one's update was lost with its process); its rewards, loss and gradient norm repeat the earlier
    line's, its timings and memory are the resumed process's."""
    by_step = {r["step"]: r for r in rows if r.get("phase") == "grpo"}
    return [by_step[k] for k in sorted(by_step)]


def metrics(d):
    return [json.loads(l) for l in open(os.path.join(d, "metrics.jsonl")) if l.strip()]


def summarize(d):
    s = json.load(open(os.path.join(d, "summary.json")))
    rows = metrics(d)
    print(f"## {d}: {s.get('title', '')}")
    print("accuracy by stage:", json.dumps({k: round(v, 4) for k, v in (s.get("accuracy") or {}).items()}))
    print("cell seconds:", ", ".join(f"{c['id']} {c['ms'] / 1000:.1f}" for c in s["cells"]))
    # The "eval" lines of metrics.jsonl come in cell order: one per evaluate cell, and one per held-out
    # check inside a GRPO cell (its report lists them).
    # A resumed run replays its evaluations and appends their lines again, so an evaluate cell's line is the last
    # "eval" line whose step is the cell's ordinal among the evaluate cells and whose question count is the cell's.
    evals = [r for r in rows if r.get("phase") == "eval"]
    ordinal = 0
    for c in s["cells"]:
        r = c.get("report") or {}
        if c["type"] == "evaluate":
            n = r["overall"]["questions"]
            preds = json.load(open(os.path.join(d, r["predictionsPath"])))
            sql = [v.split("\t")[0] for v in preds.values()]
            e = next((x for x in reversed(evals) if x.get("step") == ordinal and (x.get("extra") or {}).get("questions") == n), {"rewards": {}})
            ordinal += 1
            failing = round(-e["rewards"]["error_penalty"]["mean"] * n) if "error_penalty" in e["rewards"] else "?"
            print(f"  {c['id']}: {r['split']} greedy {r['overall']['greedy']:.3f} of {n}, failing to execute {failing}, distinct queries {len(set(sql))}")
        elif c["type"] == "grpo":
            print(f"  {c['id']}: equal-reward groups {r['equalGroupFraction']:.3f}, held-out checks {r.get('heldout')}")
        elif c["type"] == "warmup":
            for rd in r["rounds"]:
                print(f"  {c['id']} round {rd['round']}: {rd['samples']} samples, {rd['sampleAccuracy']:.4f} correct, {rd['rftTargets'] or rd['weightedSamples']} training items")
        elif c["type"] == "selfconsistency":
            print(f"  {c['id']}: vote {r['voteAccuracy']}, best-of-N {r['bestOfNAccuracy']}, oracle {r['oracleAccuracy']}, first sample {r['firstSampleAccuracy']}")
    g = grpo_rows(rows)
    if not g:
        return
    redone = sum(1 for r in rows if r.get("phase") == "grpo") - len(g)
    first, last = g[:5], g[-5:]

    def fl(f, fmt="{:.3f}"):
        return f"{fmt.format(mean(f(r) for r in first))} -> {fmt.format(mean(f(r) for r in last))}"

    print(f"GRPO, {len(g)} steps{f' ({redone} redone after a resume, counted once)' if redone else ''}, first five -> last five:")
    print("  mean total reward", fl(lambda r: r["rewards"]["total"]["mean"]))
    if "error_penalty" in g[0]["rewards"]:
        print("  samples that execute", fl(lambda r: 1 + r["rewards"]["error_penalty"]["mean"]))
    print("  samples correct", fl(lambda r: r["execAccuracy"]), f"(all steps {mean(r['execAccuracy'] for r in g):.3f})")
    print("  equal-reward groups", fl(lambda r: r.get("equalGroupFraction", 0)), f"(all steps {mean(r.get('equalGroupFraction', 0) for r in g):.3f})")
    print("  completion length", fl(lambda r: r["completionLength"]["mean"], "{:.1f}"))
    print(f"  peak GPU bytes of a step {max((r.get('gpuMemoryBytes') or 0) for r in g) / 1e9:.2f} GB")
    for ph in ("sample", "score", "train"):
        v = [r["ms"].get(ph, 0) / 1000 for r in g]
        print(f"  {ph}: mean {mean(v):.2f} s, median {st.median(v):.3f} s, min {min(v):.2f}, max {max(v):.2f}")
    print(f"  step: mean {mean(sum(r['ms'].values()) / 1000 for r in g):.2f} s")


if __name__ == "__main__":
    for d in sys.argv[1:] or ["."]:
        summarize(d)
        print()
