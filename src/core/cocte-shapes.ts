// How answers to the chain-of-ctes@1 prompt are shaped: how many hold SQL, how many CTE steps the
// splitter reads from each, and how many give a process reward model more than one step to score
// (core/prm-steps.ts: each CTE, then the final statement). A model that writes plain queries gives
// a PRM one step per answer, which it scores like an outcome model; the evaluate cell reports these
// counts under chain-of-ctes@1 so a cold start's effect is visible before any PRM is trained.
import { splitChain } from "./cocte.ts";
import { prmStepSpans } from "./prm-steps.ts";

/** The shapes of a set of answers. */
export interface ChainShapes {
  answers: number;
  /** Answers in which no SQL was found (empty, prose, no statement). */
  noSql: number;
  /** Answers with SQL by the CTE steps the splitter read ("0": a plain query). */
  byCtes: Record<string, number>;
  /** Answers of two or more PRM steps: a CTE and the final SELECT at least (or two CTEs, cut off before the final). */
  multiStep: number;
}

/** The shapes of `texts` (answers as the model wrote them). */
export function chainShapes(texts: readonly string[]): ChainShapes {
  const out: ChainShapes = { answers: texts.length, noSql: 0, byCtes: {}, multiStep: 0 };
  for (const text of texts) {
    const chain = splitChain(text);
    if (chain.steps.length === 0 && chain.final === null) out.noSql++;
    else out.byCtes[String(chain.steps.length)] = (out.byCtes[String(chain.steps.length)] ?? 0) + 1;
    if (prmStepSpans(text).ends.length >= 2) out.multiStep++;
  }
  return out;
}
