// The pretraining corpus's synthetic questions with the pattern that made each, as JSONL: what demo-prep.sh's
// corpus holds (same sources, seeds, decontamination and surface rewording as corpus.deno.ts), checked against
// loadCorpusSources. For comparing generators without training (corpus-compare.py), e.g. an old commit's in a
// `git worktree` with node_modules linked. Run from the repository root:
//   node_modules/deno/deno run -A bench/evidence/synthetic-dump.ts TREE OUT.jsonl [SYNTHETIC=800]
// TREE: the checkout whose generator to run (absolute path); Spider and Spider-Syn from ../shared/datasets.
const [tree, out, nArg] = Deno.args;
const N = Number(nArg ?? 800);
const cd = await import(`${tree}/src/runtime/pretrain/corpus.deno.ts`);
const syn = await import(`${tree}/src/runtime/pretrain/synthetic.ts`);
const sur = await import(`${tree}/src/runtime/pretrain/surface.ts`);
const { Rng } = await import(`${tree}/src/core/rng.ts`);
const demoDir = `${tree}/public/demo`;
const HOLD =
  "train_station,perpetrator,candidate_poll,news_report,railway,coffee_shop,station_weather,protein_institute";
const paths = {
  demoDir,
  spiderDir: Deno.env.get("PT_SPIDER") ?? "../shared/datasets/spider-train",
  spiderHoldout: HOLD.split(","),
  spiderSynDir: Deno.env.get("PT_SPIDER_SYN") ?? "../shared/datasets/spider-syn",
  surface: 0.5,
};
const full = await cd.loadCorpusSources({ ...paths, synthetic: N });
const bad = await cd.demoContamination(demoDir);
// The databases in corpus.deno.ts's order (first question of each), then its loop with the pattern kept.
const dbs: { id: string; source: string }[] = [];
for (const q of full.questions) {
  if (!q.synthetic && !dbs.some((d) => d.id === q.db_id)) dbs.push({ id: q.db_id, source: q.source });
}
const rng = new Rng(20261130), srng = new Rng(20261207); // corpus.deno.ts's SYNTHETIC_SEED and SURFACE_SEED
type Q = { question: string; gold_sql: string; evidence?: string; pattern: string };
const rows: Record<string, unknown>[] = [];
for (const d of dbs) {
  const file = d.source === "demo"
    ? `${demoDir}/${d.id}/${d.id}.sqlite`
    : `${paths.spiderDir}/database/${d.id}/${d.id}.sqlite`;
  const values = await cd.schemaOfFile(file, d.id, cd.SYNTHETIC_VALUES);
  const clean = (s: Q, question = s.question) =>
    cd.contaminates(bad, { source: d.source, question, gold_sql: s.gold_sql, evidence: s.evidence }) === null;
  const n = d.source === "demo" ? 4 * N : N;
  for (
    const s of syn.syntheticQuestions(
      values,
      n,
      new Rng(rng.nextU32()),
      clean,
      syn.PATTERNS,
      cd.DEFAULT_DEFINED_SHARE,
    ) as Q[]
  ) {
    let question = s.question;
    if (srng.next() < paths.surface) {
      const v = sur.vary(s.question, s.gold_sql, srng);
      if (clean(s, v)) question = v;
    }
    rows.push({
      source: d.source,
      db_id: d.id,
      pattern: s.pattern,
      raw: s.question,
      question,
      gold_sql: s.gold_sql,
      ...(s.evidence ? { evidence: s.evidence } : {}),
    });
  }
}
const mine = full.questions.filter((q: { synthetic?: boolean }) => q.synthetic);
const same = mine.length === rows.length &&
  mine.every((q: Q, i: number) =>
    q.question === rows[i].question && q.gold_sql === rows[i].gold_sql &&
    (q.evidence ?? "") === (rows[i].evidence ?? "")
  );
console.log(`${rows.length} synthetic questions; the same as loadCorpusSources': ${same}`);
if (!same) Deno.exit(1);
await Deno.writeTextFile(out, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
export {}; // a module: top-level await
