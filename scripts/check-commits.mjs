#!/usr/bin/env node
// Commit subjects of at most 72 characters (the why goes in the body). Checks the commits of a range, by default
// those after 7615547 (the last commit before the rule).
// Usage: node scripts/check-commits.mjs [RANGE]      e.g. origin/main..HEAD
import { spawnSync } from "node:child_process";

const MAX = 72;
const range = process.argv[2] ?? "7615547..HEAD";
const log = spawnSync("git", ["log", "--format=%h %s", range], { encoding: "utf8" });
if (log.status !== 0) {
  console.error(`check-commits: git log ${range} failed: ${log.stderr.trim()}`);
  process.exit(2);
}
const long = log.stdout.split("\n").filter(Boolean).map((l) => ({
  hash: l.slice(0, l.indexOf(" ")),
  subject: l.slice(l.indexOf(" ") + 1),
}))
  .filter((c) => c.subject.length > MAX);
for (const c of long) console.error(`${c.hash} ${c.subject.length} characters: ${c.subject}`);
console.log(
  long.length
    ? `check-commits: ${long.length} subject(s) over ${MAX} characters in ${range}`
    : `check-commits: ok (${range})`,
);
process.exit(long.length ? 1 : 0);
