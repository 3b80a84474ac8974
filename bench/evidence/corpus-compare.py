"""Two generators' synthetic questions (synthetic-dump.ts JSONL) side by side, as JSON: the pattern mix, the evidence
questions whose SQL holds every definition's SQL verbatim (copying), lengths, distinct SQL, SQL literals said nowhere
in the question or evidence. Usage: python3 bench/evidence/corpus-compare.py A.jsonl B.jsonl"""
import json, re, sys
from collections import Counter, defaultdict

DEF = re.compile(r"^(.*) refers to (.+?) with (.*)$", re.S)  # "<term> <row> refers to <rows> with <sql>"
LIT = re.compile(r"'((?:[^']|'')*)'|\b(\d+(?:\.\d+)?)\b")


def definitions(ev):
    return [m.group(3) if (m := DEF.match(p)) else None for p in ev.split("; ")]


def literals(sql):
    for m in LIT.finditer(sql):
        s, n = m.group(1), m.group(2)
        if s is None:
            yield n
        elif not s.startswith("%") and not re.fullmatch(r"[-+]\d+ days?", s):
            yield s.replace("''", "'")


def mean(xs):
    xs = list(xs)
    return round(sum(xs) / max(1, len(xs)), 2)


def stats(rows):
    ev = [r for r in rows if r.get("evidence")]
    plain = [r for r in rows if not r.get("evidence")]
    copy = defaultdict(lambda: [0, 0])
    for r in ev:
        ok = all(d is not None and d in r["gold_sql"] for d in definitions(r["evidence"]))
        for k in (r["pattern"], "all"):
            copy[k][0] += ok
            copy[k][1] += 1
    missing = Counter()
    for r in rows:
        text = (r["question"] + " " + r.get("evidence", "")).lower()
        if any(l.lower() not in text for l in literals(r["gold_sql"])):
            missing["evidence" if r.get("evidence") else "plain"] += 1
    pat = Counter(r["pattern"] for r in rows)
    distinct = defaultdict(set)
    for r in rows:
        distinct[r["pattern"]].add((r["db_id"], r["gold_sql"]))
    copied = sum(len(d or "") for r in ev for d in definitions(r["evidence"]))
    return {
        "rows": len(rows),
        "evidence_share": round(len(ev) / len(rows), 4),
        "patterns": dict(sorted(pat.items())),
        "evidence_mix": {k: round(v / len(ev), 4) for k, v in sorted(Counter(r["pattern"] for r in ev).items())},
        "copy_share": {k: round(a / b, 4) for k, (a, b) in sorted(copy.items())},
        "two_term_share": round(sum(len(r["evidence"].split("; ")) > 1 for r in ev) / len(ev), 4),
        "copied_sql_chars": copied,
        "copied_share_of_sql_chars": round(copied / sum(len(r["gold_sql"]) for r in rows), 4),
        "distinct_sql": sum(len(s) for s in distinct.values()),
        "distinct_sql_share": {k: round(len(distinct[k]) / pat[k], 2) for k in sorted(pat)},
        "question_words": {"evidence": mean(len(r["question"].split()) for r in ev), "plain": mean(len(r["question"].split()) for r in plain)},
        "sql_chars": {"evidence": mean(len(r["gold_sql"]) for r in ev), "plain": mean(len(r["gold_sql"]) for r in plain)},
        "evidence_chars": mean(len(r["evidence"]) for r in ev),
        "literal_said_nowhere": {"evidence": round(missing["evidence"] / len(ev), 4), "plain": round(missing["plain"] / len(plain), 4)},
        "year_compared": round(sum(bool(re.search(r"strftime\('%Y', [^)]+\) [<>] '\d{4}'", r["gold_sql"])) for r in rows) / len(rows), 4),
    }


def load(p):
    return [json.loads(l) for l in open(p) if l.strip()]


print(json.dumps({p: stats(load(p)) for p in sys.argv[1:3]}, indent=1))
