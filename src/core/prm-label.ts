// Step labels by execution (Reward-SQL's data, after Math-Shepherd): a step of a chain is correct
// when some completion sampled from the chain's prefix up to that step reaches the gold result.
// Here a budgeted breadth-first tree search stands in for the paper's MCTS/PUCT (docs/prm.md):
//   1. sample `chains` whole answers per question and judge them; a correct chain has every step
//      correct (the chain itself is a completion that reaches the gold) and needs no rollouts;
//   2. for each wrong chain, probe its steps in order: `rollouts` completions from the prefix
//      ending at step k, each judged. None right: step k is the first error, the chain is done.
//      Some right: step k is correct and the chain goes on to step k + 1; the wrong completions
//      (mixed outcomes) join the search as new chains whose first k + 1 steps are known correct,
//      the right ones as correct chains;
//   3. a wrong chain whose steps before its final statement all passed has its first error there
//      (the final statement's prefix is the answer itself); one without a final statement (cut off)
//      has its last step probed like the others;
//   4. a question stops drawing rollouts when its `budget` is spent (chains left open keep the
//      labels found so far, unresolved); chains longer than `maxSteps` are probed that far only.
// The sampler and the judge are injected, so the search is pure and testable.

/** Knobs of the search. */
export interface LabelTreeOptions {
  /** Whole answers sampled per question. */
  chains: number;
  /** Completions sampled from each probed prefix. */
  rollouts: number;
  /** Rollouts (completions from prefixes) per question at most. */
  budget: number;
  /** Steps probed per chain at most (its later steps stay unlabelled). */
  maxSteps: number;
  /** Chains per question at most, branches included (default 4 x chains). */
  maxChains?: number;
}

/** What the search needs from the world. */
export interface RolloutEnv {
  /**
   * `n` completions of each request's prefix (an empty prefix: whole answers), as text that follows
   * the prefix; `answer` is the chain the prefix was cut from (absent for whole answers), so a
   * sampler can continue from that chain's own tokens; `wave` numbers the calls from 0.
   */
  sample(
    requests: readonly { question: number; prefix: string; answer?: string }[],
    n: number,
    wave: number,
  ): Promise<string[][]>;
  /** Whether each whole answer to question `question` reaches the gold result. */
  judge(question: number, answers: readonly string[]): Promise<boolean[]>;
  /**
   * Offsets just after each step of an answer, increasing (core/prm-steps.ts prmStepSpans), and
   * whether the last step is the answer's final statement (or the whole answer read as one step).
   */
  steps(answer: string): { ends: number[]; lastIsFinal: boolean };
}

/** A chain with its step labels. */
export interface LabelledChain {
  question: number;
  completion: string;
  ends: number[];
  /** Labels of steps 0 .. labels.length - 1: 1 the step can reach the gold result, 0 it cannot (only the last can be 0). */
  labels: number[];
  /** Per labelled step, the fraction of its rollouts that reached the gold result; null where no rollout was needed (a correct chain, an inherited prefix, a final statement). */
  rates: (number | null)[];
  /** The chain's own answer reaches the gold result. */
  correct: boolean;
  /** Index of the first wrong step; null for a correct chain or one left unresolved. */
  firstError: number | null;
  /** Every step up to the first error (or all, when correct) is labelled. */
  complete: boolean;
  source: "sample" | "rollout";
  /** Steps inherited from the chain it branched from (0 for sampled chains). */
  prefixSteps: number;
}

/** The search's outcome: the chains in creation order, and rollouts spent per question. */
export interface LabelTreeResult {
  chains: LabelledChain[];
  rollouts: number[];
  /** Sampling calls made (waves). */
  waves: number;
}

interface Open {
  chain: LabelledChain;
  /** The step to probe next. */
  next: number;
  lastIsFinal: boolean;
}

function key(text: string): string {
  return text.replace(/\s+/g, " ").trim().toLowerCase();
}

/** Runs the search for questions 0 .. n - 1. */
export async function labelQuestions(n: number, env: RolloutEnv, o: LabelTreeOptions): Promise<LabelTreeResult> {
  if (!(o.chains >= 1 && o.rollouts >= 1 && o.budget >= 0 && o.maxSteps >= 1)) {
    throw new Error("labelQuestions: chains, rollouts and maxSteps must be >= 1, budget >= 0");
  }
  const maxChains = o.maxChains ?? 4 * o.chains;
  const chains: LabelledChain[] = [];
  const rollouts = new Array<number>(n).fill(0);
  const perQuestion = new Array<number>(n).fill(0);
  const seen = Array.from({ length: n }, () => new Set<string>());
  let open: Open[] = [];
  const add = async (
    question: number,
    texts: string[],
    source: LabelledChain["source"],
    inherited: (c: LabelledChain) => number,
  ) => {
    const fresh = texts.filter((t) => t.trim() !== "" && !seen[question].has(key(t)));
    const verdicts = await env.judge(question, fresh);
    fresh.forEach((text, i) => {
      if (perQuestion[question] >= maxChains || seen[question].has(key(text))) return;
      seen[question].add(key(text));
      perQuestion[question]++;
      const { ends, lastIsFinal } = env.steps(text);
      const c: LabelledChain = {
        question,
        completion: text,
        ends,
        labels: [],
        rates: [],
        correct: verdicts[i],
        firstError: null,
        complete: false,
        source,
        prefixSteps: 0,
      };
      c.prefixSteps = Math.min(inherited(c), ends.length);
      if (c.correct) {
        c.labels = ends.map(() => 1);
        c.rates = ends.map(() => null);
        c.complete = true;
      } else {
        c.labels = new Array<number>(c.prefixSteps).fill(1);
        c.rates = new Array<number | null>(c.prefixSteps).fill(null);
        if (ends.length > 0) open.push({ chain: c, next: c.prefixSteps, lastIsFinal });
      }
      chains.push(c);
    });
  };
  const first = await env.sample(Array.from({ length: n }, (_, question) => ({ question, prefix: "" })), o.chains, 0);
  for (let q = 0; q < n; q++) await add(q, first[q] ?? [], "sample", () => 0);
  let waves = 1;
  while (open.length > 0) {
    const requests: { question: number; prefix: string; answer: string; at: Open }[] = [];
    for (const x of open) {
      const c = x.chain;
      const K = c.ends.length;
      if (x.next >= K) {
        // Every step can reach the gold and the answer cannot: its error is past its steps (a missing final statement).
        c.complete = true;
      } else if (x.next === K - 1 && x.next < o.maxSteps && x.lastIsFinal) {
        // Every step before the final statement can still reach the gold, the answer cannot: the final one is the first error.
        c.labels.push(0);
        c.rates.push(null);
        c.firstError = x.next;
        c.complete = true;
      } else if (x.next >= o.maxSteps || rollouts[c.question] + o.rollouts > o.budget) {
        // Left unresolved: too long, or the question's budget is spent.
      } else {
        rollouts[c.question] += o.rollouts;
        requests.push({
          question: c.question,
          prefix: c.completion.slice(0, c.ends[x.next]),
          answer: c.completion,
          at: x,
        });
      }
    }
    if (requests.length === 0) break;
    const got = await env.sample(requests, o.rollouts, waves++);
    open = [];
    for (const [r, req] of requests.entries()) {
      const conts = (got[r] ?? []).map((t) => req.prefix + t);
      const verdicts = await env.judge(req.question, conts);
      const { chain: c, next: k } = req.at;
      const right = verdicts.filter(Boolean).length;
      c.rates.push(conts.length ? right / conts.length : 0);
      if (right === 0) {
        c.labels.push(0);
        c.firstError = k;
        c.complete = true;
        continue;
      }
      c.labels.push(1);
      open.push({ ...req.at, next: k + 1 });
      // Branches: the right completions are correct chains, the wrong ones are searched from step k + 1.
      const inherited = (b: LabelledChain) => b.ends.filter((e) => e <= req.prefix.length).length;
      await add(req.question, conts.filter((_, i) => verdicts[i]), "rollout", inherited);
      await add(req.question, conts.filter((_, i) => !verdicts[i]), "rollout", inherited);
    }
  }
  return { chains, rollouts, waves };
}
