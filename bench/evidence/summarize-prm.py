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
Last, GRPO with PRM + outcome against outcome alone (and per-step normalisation) on the same evaluation.

A folder without summary.json (a run stopped by its time limit) is read from what it has: prm-data/*/stats.json,
and from metrics.jsonl the PRM evaluations, each self-consistency cell at its own N, GRPO's steps.
--json prints the same figures as data, one object per folder (for bench/evidence/summaries/).

--pool pools runs of several seeds (folders named <notebook> for seed 1 and <notebook>-s<seed> otherwise, from any
directories): per set (prm-demo, prm-synth), each selection rule's accuracy at each N over the seeds whose first
self-consistency cell ("sc_before") has that N, and PRM - vote, and per GRPO variant its greedy accuracy after GRPO and its difference to the outcome-only
run of the same seed; each as the mean over seeds with s.e. sqrt(sum of the seeds' s.e.^2) / seeds. The seeds are
taken as independent draws: their questions are the same, so this s.e. leaves out the variance of the question sample.
With --json, the pooled figures as data (each figure a pair [mean, s.e.])."""
import contextlib
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True  # no __pycache__ in the checkout
from summarize import grpo_rows, mean, metrics  # noqa: E402


def se(p, n):
    return math.sqrt(p * (1 - p) / n) if n else float("nan")


def fmt(p, n):
    return f"{100 * p:5.1f} ± {100 * se(p, n):4.1f}"


def diff(a, b, n1, n2):
    d = a - b
    return f"{100 * d:+5.1f} ± {100 * math.sqrt(se(a, n1) ** 2 + se(b, n2) ** 2):4.1f}"


def load(d):
    path = os.path.join(d, "summary.json")
    if not os.path.exists(path):
        # A run stopped before its end (e.g. a device call that ran out) has metrics but no summary: GRPO's steps only.
        print(f"notice: {d} has no summary.json (the run did not finish): its PRM data from prm-data/*/stats.json, "
              "its PRM evaluations, best-of-N and GRPO steps from metrics.jsonl")
        s = {"title": "(unfinished)", "cells": [], "unfinished": True}
    else:
        s = json.load(open(path))
    rows = metrics(d)
    if s.get("unfinished"):
        s["cells"] = unfinished_cells(d, rows)
    return s, rows


def unfinished_cells(d, rows):
    """What an unfinished run's files still say, as cells with the reports' shape (no cell times): each PRM data
    cell's stats.json, and from metrics.jsonl each PRM evaluation (`prmeval`, cells named by order: the ids are not in
    the rows) and each self-consistency cell at its own N (questions: those of the evaluation logged before it)."""
    cells = []
    root = os.path.join(d, "prm-data")
    for name in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        f = os.path.join(root, name, "stats.json")
        if os.path.exists(f):
            r = json.load(open(f))
            cells.append({"id": name, "ms": 0, "report": {"kind": "prmdata", "split": r.get("split", "train"),
                                                          "questions": r["raw"]["questions"], **r}})
    k, questions = 0, 0
    for r in rows:
        x = r.get("extra", {})
        if r.get("phase") == "eval":
            questions = x.get("questions", questions)
        elif r.get("phase") == "prmeval":
            k += 1
            cells.append({"id": f"PRM-train cell {k}", "ms": 0, "report": {"kind": "prmeval", "dev": {
                "chains": x["chains"], "steps": x["steps"], "accuracy": x["stepAccuracy"], "auc": x["auc"], "bce": r["loss"], "firstError": x["firstError"]}}})
        elif r.get("phase") == "selfconsistency":
            n = x["samplesPerQuestion"]
            cells.append({"id": f"self-consistency (step {r['step']})", "ms": 0, "report": {
                "kind": "selfconsistency", "split": "split of the evaluation before it", "atN": [{
                    "N": n, "questions": questions, "vote": r["execAccuracy"], "logprob": x["bestOfN"], "oracle": x["oracle"],
                    "prm": {key.split(".", 1)[1]: v for key, v in x.items() if key.startswith("prmBestOfN.")}}]}})
    return cells


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
    if r["kind"] == "prmeval":
        print(f"  {c['id']} (from metrics.jsonl): held out: {figs}")
    else:
        print(f"  {c['id']} ({r['labels']}): {r['steps']} steps on {r['examples']} chains, loss {r.get('loss')}; held out: {figs}")


def selection(c):
    r = c["report"]
    at = r.get("atN") or []
    if not at:
        print(f"  {c['id']}: vote {r['voteAccuracy']:.3f}, best-of-N {r['bestOfNAccuracy']:.3f}, pass@N {r['oracleAccuracy']:.3f} ({r['questions']} questions)")
        return
    prms = list(at[0]["prm"].keys())
    n = at[0]["questions"]
    print(f"  {c['id']} ({r['split']}, {n} questions" + (f", {r['weighting']} vote" if r.get("weighting") else "") + "), % ± binomial s.e.:")
    print("      N |  vote        | mean logprob | " + " | ".join(f"{('ORM' if x == 'orm' else 'PRM') + ' ' + x:12s}" for x in prms) + " | pass@N       | PRM - vote")
    for a in at:
        cols = [fmt(a["vote"], n), fmt(a["logprob"], n)] + [fmt(a["prm"][x], n) for x in prms] + [fmt(a["oracle"], n)]
        d = diff(a["prm"][prms[0]], a["vote"], n, n) if prms else ""
        print(f"    {a['N']:3d} | " + " | ".join(cols) + f" | {d}")


def grpo_figures(g):
    """GRPO's first and last five steps (means) of its step rows `g` (grpo_rows): --json's, and what grpo_steps prints."""
    if not g:
        return None
    first, last = g[:5], g[-5:]
    out = {"steps": len(g)}
    for key, f in (("reward", lambda r: r["rewards"]["total"]["mean"]), ("correct", lambda r: r["execAccuracy"]),
                   ("length", lambda r: r["completionLength"]["mean"]), ("prmMean", lambda r: r.get("extra", {}).get("prmMean")),
                   ("prmSteps", lambda r: r.get("extra", {}).get("prmSteps"))):
        a, b = mean(f(r) for r in first), mean(f(r) for r in last)
        if not math.isnan(a):
            out[key] = {"first5": a, "last5": b}
    return out


def figures(d):
    """One folder's figures as data (--json): each cell's report where it is a PRM data, PRM/ORM, self-consistency,
    warm-up or evaluation cell, every accuracy with its questions and binomial s.e., and GRPO's first/last five steps."""
    s, rows = load(d)
    out = {"folder": os.path.basename(os.path.normpath(d)), "title": s.get("title", ""), "finished": not s.get("unfinished"), "cells": {}}
    for c in s["cells"]:
        r = c.get("report")
        if r is None:
            continue
        kind, o = r["kind"], None
        if kind == "prmdata":
            o = {k: r.get(k) for k in ("split", "questions", "skipped", "sampled", "rollouts", "raw", "curation", "curated")}
        elif kind in ("prmtrain", "prmeval"):
            o = {k: r.get(k) for k in ("labels", "steps", "examples", "loss", "loadedFrom", "dev") if k in r}
        elif kind == "selfconsistency":
            o = {"split": r.get("split"), "atN": [{**a, "se": {k: se(a[k], a["questions"]) for k in ("vote", "logprob", "oracle")},
                                                   "prmSe": {k: se(v, a["questions"]) for k, v in a["prm"].items()}} for a in r.get("atN") or []]}
        elif kind == "warmup":
            o = {"targets": r.get("targets"), "targetLogprob": [x.get("targetLogprob") for x in r["rounds"]]}
        elif kind == "evaluate":
            ov = r["overall"]
            o = {"split": r["split"], "greedy": ov["greedy"], "questions": ov["questions"], "se": se(ov["greedy"], ov["questions"]), "chains": r.get("chains")}
        if o is not None:
            out["cells"][c["id"]] = {"kind": kind, **o}
    out["grpo"] = grpo_figures(grpo_rows(rows))
    lab = labelling(rows)
    if lab:
        out["labelling"] = lab
    return out


def labelling(rows):
    """The PRM data cells' batches from metrics.jsonl: where the time went (sampling and judging; runs since
    the fourth session of 2026-12-04 log it) and the sampling calls, those of prefixes without room apart."""
    b = [r for r in rows if r.get("phase") == "prmdata"]
    if not b or "sample" not in b[0].get("ms", {}):
        return None
    x = lambda k: sum(r.get("extra", {}).get(k, 0) for r in b)
    return {"batches": len(b), "sampleS": sum(r["ms"]["sample"] for r in b) / 1000, "judgeS": sum(r["ms"].get("score", 0) for r in b) / 1000,
            "sampleCalls": x("sampleCalls"), "roomCalls": x("roomCalls"), "roomSteps": x("roomSteps"), "rollouts": x("rollouts")}


def grpo_steps(rows):
    g = grpo_rows(rows)
    if not g:
        return
    f = grpo_figures(g)

    def fl(key, f2="{:.3f}"):
        x = f.get(key, {"first5": float("nan"), "last5": float("nan")})
        return f"{f2.format(x['first5'])} -> {f2.format(x['last5'])}"

    print(f"  GRPO, {len(g)} steps, first five -> last five: reward {fl('reward')}, correct {fl('correct')}, length {fl('length', '{:.1f}')}"
          + (f", PRM mean {fl('prmMean')}, steps per chain {fl('prmSteps', '{:.2f}')}" if "prmMean" in g[0].get("extra", {}) else ""))
    ms = [r.get("ms", {}) for r in g]
    print(f"  GRPO step time: sample {mean(m.get('sample') for m in ms) / 1000:.1f} s, score {mean(m.get('score') for m in ms) / 1000:.1f} s, train {mean(m.get('train') for m in ms) / 1000:.1f} s")


def main(dirs):
    after = {}
    for d in dirs:
        s, rows = load(d)
        print(f"## {d}: {s.get('title', '')}")
        if not s.get("unfinished"):
            print("  cell seconds: " + ", ".join(f"{c['id']} {c['ms'] / 1000:.0f}" for c in s["cells"]))
        for c in s["cells"]:
            if c.get("report") is None:
                continue
            kind = c["report"]["kind"]
            if kind == "prmdata":
                prm_data(c)
            elif kind in ("prmtrain", "prmeval"):
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
        lab = labelling(rows)
        if lab:
            print(f"  labelling: {lab['batches']} batches, sampling {lab['sampleS']:.1f} s in {lab['sampleCalls']} calls + {lab['roomCalls']} calls "
                  f"of prefixes without room ({lab['roomSteps']} new-token steps), judging {lab['judgeS']:.1f} s; {lab['rollouts']} rollouts")
        grpo_steps(rows)
    # GRPO variants against each other: the "after" evaluation of each folder.
    runs = [(d, after[(d, "after")]) for d in dirs if (d, "after") in after]
    if len(runs) > 1:
        print("## GRPO variants, greedy accuracy after GRPO (difference to the first folder, ± s.e.)")
        (d0, (p0, n0)) = runs[0]
        for d, (p, n) in runs:
            print(f"  {d}: {fmt(p, n)}" + ("" if d == d0 else f"  ({diff(p, p0, n, n0)} vs {d0})"))


def seed_of(d):
    """(notebook, seed) of a run folder: run-prm-synth-outcome-s3 -> ("prm-synth-outcome", 3); no -s<seed> is seed 1."""
    m = re.fullmatch(r"(?:run-)?(.*?)(?:-s(\d+))?", os.path.basename(os.path.normpath(d)))
    return m.group(1), int(m.group(2) or 1)


def mean_se(pairs):
    """Mean of k independent estimates (value, s.e.) and its s.e. sqrt(sum se^2) / k."""
    k = len(pairs)
    return sum(v for v, _ in pairs) / k, math.sqrt(sum(e * e for _, e in pairs)) / k


def pooled(dirs):
    """--pool: the seeds of each set's runs pooled (see the module's doc)."""
    with contextlib.redirect_stdout(sys.stderr):
        runs = {seed_of(d): figures(d) for d in dirs}
    sets = sorted({nb for nb, _ in runs if not nb.endswith(("-outcome", "-stepnorm"))})
    out = []
    for st_ in sets:
        seeds = sorted(s for nb, s in runs if nb == st_)
        o = {"set": st_, "seeds": seeds, "bestOfN": [], "grpo": {}}
        # Best-of-N before GRPO: the first self-consistency cell ("sc_before"; an unfinished run names it by its step).
        first_sc = lambda cells: next((c for c in cells.values() if c["kind"] == "selfconsistency" and c.get("atN")), None)
        sc = {s: first_sc(runs[(st_, s)]["cells"]) for s in seeds}
        sc = {s: {a["N"]: a for a in c["atN"]} for s, c in sc.items() if c}
        for N in sorted(set().union(*sc.values())):
            have = [s for s in sorted(sc) if N in sc[s]]
            at = [sc[s][N] for s in have]
            row = {"N": N, "seeds": have, "questions": [a["questions"] for a in at]}
            # Each figure with the s.e. figures() gave it.
            for k in ("vote", "logprob", "oracle"):
                row[k] = mean_se([(a[k], a["se"][k]) for a in at])
            for k in at[0]["prm"]:
                row[k] = mean_se([(a["prm"][k], a["prmSe"][k]) for a in at])
            p0 = next(iter(at[0]["prm"]))  # the first PRM cell's pick, as the per-folder table's "PRM - vote"
            row["prmMinusVote"] = mean_se([(a["prm"][p0] - a["vote"], math.hypot(a["prmSe"][p0], a["se"]["vote"])) for a in at])
            o["bestOfN"].append(row)
        for variant in (st_, st_ + "-outcome", st_ + "-stepnorm"):
            got = {}
            for s in sorted(s for nb, s in runs if nb == variant):
                a = runs[(variant, s)]["cells"].get("after")
                if a:
                    got[s] = (a["greedy"], a["se"])
            if not got:
                continue
            v = {"seeds": sorted(got), "after": mean_se(list(got.values()))}
            base = {s: runs[(st_ + "-outcome", s)]["cells"].get("after") for s in got if (st_ + "-outcome", s) in runs}
            paired = [s for s, b in base.items() if b]
            if variant != st_ + "-outcome" and paired:
                v["minusOutcome"] = {"seeds": paired, "diff": mean_se([(got[s][0] - base[s]["greedy"], math.hypot(got[s][1], base[s]["se"])) for s in paired])}
            o["grpo"][variant] = v
        out.append(o)
    return out


def print_pooled(data):
    f = lambda m: f"{100 * m[0]:5.1f} ± {100 * m[1]:4.1f}"
    for o in data:
        print(f"## {o['set']}, seeds {o['seeds']} (mean over seeds ± sqrt(sum s.e.^2) / seeds)")
        if o["bestOfN"]:
            ks = [k for k in o["bestOfN"][0] if k not in ("N", "seeds", "questions", "vote", "logprob", "oracle", "prmMinusVote")]
            print("  best-of-N before GRPO (the first self-consistency cell):")
            print("      N | seeds     |  vote        | mean logprob | " + " | ".join(f"{('ORM' if k == 'orm' else 'PRM') + ' ' + k:12s}" for k in ks) + " | pass@N       | PRM - vote")
            for r in o["bestOfN"]:
                d = r["prmMinusVote"]
                print(f"    {r['N']:3d} | {','.join(map(str, r['seeds'])):9s} | " + " | ".join(f(r[k]) for k in ["vote", "logprob", *ks, "oracle"]) + f" | {100 * d[0]:+5.1f} ± {100 * d[1]:4.1f}")
        for variant, v in o["grpo"].items():
            line = f"  after GRPO, {variant} (seeds {v['seeds']}): {f(v['after'])}"
            if "minusOutcome" in v:
                d = v["minusOutcome"]["diff"]
                line += f"; minus outcome alone (seeds {v['minusOutcome']['seeds']}) {100 * d[0]:+5.1f} ± {100 * d[1]:4.1f}"
            print(line)


if __name__ == "__main__":
    args = sys.argv[1:]
    if not [a for a in args if a not in ("--json", "--pool")]:
        sys.exit(__doc__)
    if "--pool" in args:
        data = pooled([a for a in args if a not in ("--json", "--pool")])
        if "--json" in args:
            print(json.dumps(data, indent=1))
        else:
            print_pooled(data)
    elif "--json" in args:
        with contextlib.redirect_stdout(sys.stderr):  # load()'s notices
            data = [figures(d) for d in args if d != "--json"]
        print(json.dumps(data, indent=1))
    else:
        main(args)
