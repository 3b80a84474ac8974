// Readers of the PRM cells' parameters (PRM data, PRM train) and of the PRM fields of the GRPO and
// self-consistency cells, beside notebook-read.ts's readers of the other cells. The GRPO and
// self-consistency fields are optional and left out at their defaults, so documents written before
// them read back the same (and hash to the same run folder).
import {
  LR_SCHEDULE_KINDS,
  PRM_AGGREGATE_KINDS,
  PRM_LABELS,
  type PrmDataParams,
  type PrmTrainParams,
  STEP_ADVANTAGE_MODES,
} from "./notebook-params.ts";
import type { Reader } from "./notebook-read.ts";

const ID = /^[A-Za-z0-9_-]{1,64}$/;

/** A cell id field (empty allowed when `empty`). */
function cellRef(r: Reader, key: string, def: string): string {
  const v = r.str(key, def, 64);
  if (v !== "" && !ID.test(v)) r.fail(key, "expected a cell id (1-64 letters, digits, _ or -), or empty");
  return v;
}

/** The PRM data cell's parameters. */
export function readPrmData(r: Reader): PrmDataParams {
  const p: PrmDataParams = {
    split: r.str("split", "", 64),
    n: r.num("n", 1_000_000, 1, 1e7, true),
    template: r.template("template", "chain-of-ctes@2"),
    chains: r.num("chains", 4, 1, 256, true),
    rollouts: r.num("rollouts", 4, 1, 256, true),
    budget: r.num("budget", 32, 0, 1e6, true),
    maxSteps: r.num("maxSteps", 8, 1, 64, true),
    temperature: r.num("temperature", 1, 0, 10),
    maxNewTokens: r.num("maxNewTokens", 256, 1, 32768, true),
    questionsPerBatch: r.num("questionsPerBatch", 8, 1, 1024, true),
    dropEmptyGold: r.bool("dropEmptyGold", true),
    dropUnparsed: r.bool("dropUnparsed", true),
    minPositiveRate: r.num("minPositiveRate", 0, 0, 1),
    balance: r.num("balance", 1, 0, 100),
    seed: r.num("seed", 0, 0, 2 ** 32 - 1, true),
  };
  if (p.temperature === 0 && (p.chains > 1 || p.rollouts > 1)) {
    r.fail(
      "temperature",
      "0 (greedy) makes every sample the same: use a temperature > 0 with several chains or rollouts",
    );
  }
  return p;
}

/** The PRM train cell's parameters. */
export function readPrmTrain(r: Reader): PrmTrainParams {
  const p: PrmTrainParams = {
    data: cellRef(r, "data", ""),
    labels: r.oneOf("labels", PRM_LABELS, "process"),
    loraRank: r.num("loraRank", 16, 1, 1024, true),
    loraAlpha: r.num("loraAlpha", 32, 0, 1e6),
    lr: r.num("lr", 1e-4, 0, 1),
    lrSchedule: r.oneOf("lrSchedule", LR_SCHEDULE_KINDS, "constant"),
    warmupSteps: r.num("warmupSteps", 0, 0, 1e6, true),
    epochs: r.num("epochs", 2, 1, 100, true),
    batchChains: r.num("batchChains", 16, 1, 4096, true),
    maxGradNorm: r.num("maxGradNorm", 1, 0, 1e6),
    devFraction: r.num("devFraction", 0.1, 0, 0.9),
    seed: r.num("seed", 0, 0, 2 ** 32 - 1, true),
    load: r.optUrl("load") || undefined,
  };
  if (p.load === undefined) Reflect.deleteProperty(p, "load");
  return p;
}

/** The GRPO cell's PRM fields (absent at their defaults). */
export function readGrpoPrm(r: Reader): { stepAdvantage?: (typeof STEP_ADVANTAGE_MODES)[number]; prm?: string } {
  const stepAdvantage = r.oneOf("stepAdvantage", STEP_ADVANTAGE_MODES, "chain");
  const prm = cellRef(r, "prm", "");
  return { ...(stepAdvantage !== "chain" ? { stepAdvantage } : {}), ...(prm ? { prm } : {}) };
}

/** The self-consistency cell's PRM fields (absent at their defaults). */
export function readSelfConsistencyPrm(
  r: Reader,
): { prm?: string[]; prmAggregate?: (typeof PRM_AGGREGATE_KINDS)[number] } {
  const prm = r.strList("prm", [], 16, 64);
  if (prm.some((x) => !ID.test(x))) r.fail("prm", "expected PRM train cell ids");
  const prmAggregate = r.oneOf("prmAggregate", PRM_AGGREGATE_KINDS, "min");
  return { ...(prm.length ? { prm } : {}), ...(prmAggregate !== "min" ? { prmAggregate } : {}) };
}
