#!/usr/bin/env python3
"""Prints the PRM evidence (issue #18) from `rlvr run` output folders of bench/evidence/prm-notebooks.ts's
notebooks (summary.json and metrics.jsonl), e.g. after unpacking the tars bench/evidence/h200.sh returns:

    python3 bench/evidence/summarize-prm.py run-prm-demo run-prm-demo-outcome run-prm-demo-stepnorm

Per folder: the CoCTE cold start (its targets and their log-probability; each evaluation's count of greedy
answers that are chains of two or more steps, by CTE steps), the PRM data (questions, chains, labels per step position, first-error histogram, curation),
the PRM's and ORM's held-out figures, each self-consistency cell's selection rules at N = 1, 2, 4, 8, 16
(vote, mean log-probability, PRM, ORM, pass@N), the greedy accuracy after GRPO, and GRPO's first and last
five steps (reward, accuracy, completion length, PRM score, steps per chain). Every accuracy p over n
questions comes with its binomial standard error sqrt(p (1 - p) / n); a difference of two figures with
sqrt(se1^2 + se2^2) (as if independent: the rules share their samples, so this is conservative for them).
Last, GRPO with PRM + outcome against outcome alone (and per-step normalisation) on the same evaluation."""
import json
import math
import os
import statistics as st
import sys


def se(p, n):
    return math.sqrt(p * (1 - p) / n) if n else float("nan")


def fmt(p, n):
    return f"{100 * p:5.1f} ± {100 * se(p, n):4.1f}"


def diff(a, b, n1, n2):
    d = a - b
    return f"{100 * d:+5.1f} ± {100 * math.sqrt(se(a, n1) ** 2 + se(b, n2) ** 2):4.1f}"


def mean(xs):
    xs = [x for x in xs if x is not None]
    return st.mean(xs) if xs else float("nan")


def load(d):
    path = os.path.join(d, "summary.json")
    if not os.path.exists(path):
        # A run stopped before its end (e.g. a device call that ran out) has metrics but no summary: GRPO's steps only.
        print(f"notice: {d} has no summary.json (the run did not finish): only its GRPO steps from metrics.jsonl")
        s = {"title": "(unfinished)", "cells": []}
    else:
        s = json.load(open(path))
    rows = [json.loads(l) for l in open(os.path.join(d, "metrics.jsonl")) if l.strip()]
    return s, rows


def prm_data(c):
    r = c["report"]
    raw, cur, cu = r["raw"], r["curated"], r["curation"]
    print(f"  {c['id']} (PRM data on {r['split']}): {r['questions']} questions (left out: {r['skipped']}), {r['sampled']} answers sampled, "
          f"{r['rollouts']} rollouts; {raw['chains']} chains ({raw['correctChains']} correct) -> {cur['chains']} for training")
    print(f"    curation: {cu}")
    print(f"    steps per chain: {raw['stepCounts']}")
    pos, neg = cur["byPosition"]["positive"], cur["byPosition"]["negative"]
    print("    labels by step position (training set): " + ", ".join(f"{k + 1}: +{p}/-{q}" for k, (p, q) in enumerate(zip(pos, neg))))
    print(f"    first error (all chains): {raw['firstError']}")


def prm_train(c):
    r = c["report"]
    if r.get("loadedFrom"):
        print(f"  {c['id']} ({r['labels']}): loaded from {r['loadedFrom']}")
        return
    d = r.get("dev")
    figs = f"step accuracy {fmt(d['accuracy'], d['steps'])} over {d['steps']} steps of {d['chains']} chains, AUC {d['auc']}, BCE {d['bce']:.4f}, first error found {d['firstError']}" if d else "no held-out chains"
    print(f"  {c['id']} ({r['labels']}): {r['steps']} steps on {r['examples']} chains, loss {r.get('loss')}; held out: {figs}")


def selection(c):
    r = c["report"]
    at = r.get("atN") or []
    if not at:
        print(f"  {c['id']}: vote {r['voteAccuracy']:.3f}, best-of-N {r['bestOfNAccuracy']:.3f}, pass@N {r['oracleAccuracy']:.3f} ({r['questions']} questions)")
        return
    prms = list(at[0]["prm"].keys())
    n = at[0]["questions"]
    print(f"  {c['id']} ({r['split']}, {n} questions, {r['weighting']} vote), % ± binomial s.e.:")
    print("      N |  vote        | mean logprob | " + " | ".join(f"{('ORM' if x == 'orm' else 'PRM') + ' ' + x:12s}" for x in prms) + " | pass@N       | PRM - vote")
    for a in at:
        cols = [fmt(a["vote"], n), fmt(a["logprob"], n)] + [fmt(a["prm"][x], n) for x in prms] + [fmt(a["oracle"], n)]
        d = diff(a["prm"][prms[0]], a["vote"], n, n) if prms else ""
        print(f"    {a['N']:3d} | " + " | ".join(cols) + f" | {d}")


def grpo_steps(rows):
    g = [r for r in rows if r.get("phase") == "grpo"]
    if not g:
        return
    first, last = g[:5], g[-5:]

    def fl(f, f2="{:.3f}"):
        return f"{f2.format(mean(f(r) for r in first))} -> {f2.format(mean(f(r) for r in last))}"

    print(f"  GRPO, {len(g)} steps, first five -> last five: reward {fl(lambda r: r['rewards']['total']['mean'])}, "
          f"correct {fl(lambda r: r['execAccuracy'])}, length {fl(lambda r: r['completionLength']['mean'], '{:.1f}')}"
          + (f", PRM mean {fl(lambda r: r.get('extra', {}).get('prmMean'))}, steps per chain {fl(lambda r: r.get('extra', {}).get('prmSteps'), '{:.2f}')}" if "prmMean" in g[0].get("extra", {}) else ""))
    ms = [r.get("ms", {}) for r in g]
    print(f"  GRPO step time: sample {mean(m.get('sample') for m in ms) / 1000:.1f} s, score {mean(m.get('score') for m in ms) / 1000:.1f} s, train {mean(m.get('train') for m in ms) / 1000:.1f} s")


def main(dirs):
    after = {}
    for d in dirs:
        s, rows = load(d)
        print(f"## {d}: {s.get('title', '')}")
        print("  cell seconds: " + ", ".join(f"{c['id']} {c['ms'] / 1000:.0f}" for c in s["cells"]))
        for c in s["cells"]:
            if c.get("report") is None:
                continue
            kind = c["report"]["kind"]
            if kind == "prmdata":
                prm_data(c)
            elif kind == "prmtrain":
                prm_train(c)
            elif kind == "selfconsistency":
                selection(c)
            elif kind == "warmup":
                r, t = c["report"], c["report"].get("targets") or {}
                lp = [x.get("targetLogprob") for x in r["rounds"]]
                print(f"  {c['id']} (warm-up {r['method']}): targets {t}; "
                      + ", ".join(f"round {x['round']} mean token log-prob {p['before']:.3f} -> {p['after']:.3f}" for x, p in zip(r["rounds"], lp) if p))
            elif kind == "evaluate":
                o, ch = c["report"]["overall"], c["report"].get("chains")
                shape = (f"; chains of >= 2 steps {ch['multiStep']} of {ch['answers']} ({fmt(ch['multiStep'] / ch['answers'], ch['answers'])}), "
                         f"by CTE steps {dict(sorted(ch['byCtes'].items(), key=lambda kv: int(kv[0])))}, no SQL {ch['noSql']}") if ch and ch["answers"] else ""
                print(f"  {c['id']}: {c['report']['split']} greedy {fmt(o['greedy'], o['questions'])} of {o['questions']}{shape}")
                after[(d, c["id"])] = (o["greedy"], o["questions"])
        grpo_steps(rows)
    # GRPO variants against each other: the "after" evaluation of each folder.
    runs = [(d, after[(d, "after")]) for d in dirs if (d, "after") in after]
    if len(runs) > 1:
        print("## GRPO variants, greedy accuracy after GRPO (difference to the first folder, ± s.e.)")
        (d0, (p0, n0)) = runs[0]
        for d, (p, n) in runs:
            print(f"  {d}: {fmt(p, n)}" + ("" if d == d0 else f"  ({diff(p, p0, n, n0)} vs {d0})"))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
