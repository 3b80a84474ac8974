"""Cross-check of `rlvr eval` verdicts against BIRD's own rule, computed independently in Python.

BIRD's evaluation (evaluation.py) runs both queries with Python's sqlite3 and scores
`set(predicted_res) == set(ground_truth_res)`. Here the predictions are hard on purpose: for
each Spider-train question, the gold query of the NEXT question on the same database (so about
half match, half do not, with every kind of value). This script writes those predictions, and
after `rlvr eval --out` has scored them, compares verdicts one by one for set, bag (Counter)
and ordered (list) modes.

Usage:
  python3 bench/bird-rule-check.py make ../shared/datasets/spider-train /tmp/check
  for m in set bag ordered; do deno run -A src/cli/main.ts eval --questions ../shared/datasets/spider-train/questions.jsonl \
      --db-root ../shared/datasets/spider-train/database --pred /tmp/check/pred.sql --compare $m --out /tmp/check/out-$m.jsonl; done
  python3 bench/bird-rule-check.py check ../shared/datasets/spider-train /tmp/check
"""
import collections
import json
import os
import sqlite3
import sys


def load(root):
    with open(os.path.join(root, "questions.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def next_same_db(qs):
    preds = []
    for i, q in enumerate(qs):
        j = i + 1
        preds.append(qs[j]["query"] if j < len(qs) and qs[j]["db_id"] == q["db_id"] else q["query"])
    return preds


def run(root, db_id, sql, conns):
    if db_id not in conns:
        conns[db_id] = sqlite3.connect(f"file:{os.path.join(root, 'database', db_id, db_id + '.sqlite')}?mode=ro", uri=True)
    cur = conns[db_id].cursor()
    cur.execute(sql)
    return cur.fetchall()


def main():
    mode, root, out = sys.argv[1], sys.argv[2], sys.argv[3]
    qs = load(root)
    preds = next_same_db(qs)
    if mode == "make":
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "pred.sql"), "w") as f:
            f.write("".join(p.replace("\n", " ") + "\n" for p in preds))
        return
    conns = {}
    rules = {
        "set": lambda p, g: set(p) == set(g),
        "bag": lambda p, g: collections.Counter(p) == collections.Counter(g),
        "ordered": lambda p, g: p == g,
    }
    report = {}
    for m, rule in rules.items():
        with open(os.path.join(out, f"out-{m}.jsonl")) as f:
            ours = [json.loads(line) for line in f]
        agree = disagree = skipped = true_ = 0
        examples = []
        for i, q in enumerate(qs):
            try:
                gold = run(root, q["db_id"], q["query"], conns)
            except Exception:
                skipped += 1  # gold fails to run: left out by both
                continue
            try:
                verdict = rule(run(root, q["db_id"], preds[i], conns), gold)
            except Exception:
                verdict = False
            true_ += verdict
            if verdict == ours[i]["correct"]:
                agree += 1
            else:
                disagree += 1
                if len(examples) < 5:
                    examples.append({"index": i, "python": verdict, "ours": ours[i]})
        report[m] = {"agree": agree, "disagree": disagree, "gold_failed": skipped, "python_correct": true_, "examples": examples}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
