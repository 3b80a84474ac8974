// A process reward model at work in a run: the policy's base weights on the trainer's device
// (shared with ModelRuntime, no second copy), its own LoRA adapter and scalar head, the prompt
// template its inputs are built with, and the text side: an input is the rendered prompt, then the
// answer's text; its steps come from core/prm-steps.ts and the score of a step is read at the token
// holding the step's last character.
import {
  aggregateStepScores,
  type PrmAggregate,
  prmStepSpans,
  stepTokenRows,
  tokenCharEnds,
} from "../../core/prm-steps.ts";
import { Rng } from "../../core/rng.ts";
import { LORA_TARGETS, type LoraAdapter, loraKey, zeroAdapter } from "../../model/lora.ts";
import { prmFiles, type PrmInfo } from "../../model/prm-files.ts";
import type { Tensor, Weights } from "../../model/tensor.ts";
import { readF32, writeBuffer } from "../../gpu/device.ts";
import { destroyAdapter, type GpuLora, type GpuModel, readAdapter, uploadAdapter } from "../../gpu/model/state.ts";
import {
  destroyPrmHead,
  type GpuPrmHead,
  type PrmExample,
  prmScores,
  type PrmTrainer,
  prmTrainer,
  type PrmTrainerOptions,
  readPrmHead,
  uploadPrmHead,
} from "../../gpu/trainer/prm-step.ts";
import type { ModelRuntime } from "../recipe/model-runtime.ts";

/** One PRM input: the prompt as the model sees it (chat-rendered) and an answer. */
export interface PrmInput {
  prompt: string;
  completion: string;
}

/** A scored answer: its steps (end offsets in the answer, names) and each step's score. */
export interface PrmScored {
  ends: number[];
  names: (string | null)[];
  scores: number[];
}

/** An input laid out for the trainer, with the indices of the steps that got a row (all of them, unless two ended on one token). */
export interface PrmLaidOut {
  example: PrmExample;
  steps: number[];
  ends: number[];
  names: (string | null)[];
}

/** How a PRM is made: a fresh adapter and head, or given parameters (a checkpoint, an exported folder). */
export interface PrmModelOptions {
  cellId: string;
  info: PrmInfo;
  r: number;
  alpha: number;
  seed: number;
  init?: { adapter: LoraAdapter; head: Float32Array };
}

/** The PRM of one PRM train cell. */
export class PrmModel {
  private readonly promptIds = new Map<string, number[]>();
  private released = false;

  private constructor(
    readonly runtime: ModelRuntime,
    readonly model: GpuModel,
    readonly lora: GpuLora,
    readonly head: GpuPrmHead,
    readonly cellId: string,
    readonly info: PrmInfo,
  ) {}

  /** A PRM on `runtime`'s base model (B = 0 and a head drawn as HF's initializer_range 0.02, or `init`). */
  static async create(runtime: ModelRuntime, o: PrmModelOptions): Promise<PrmModel> {
    const model = await runtime.baseModel();
    const cfg = model.cfg;
    const adapter = o.init?.adapter ??
      zeroAdapter(cfg, { r: o.r, alpha: o.alpha, targets: LORA_TARGETS, seed: o.seed });
    const rng = new Rng(o.seed ^ 0x5eed);
    const head = o.init?.head ??
      Float32Array.from({ length: cfg.hiddenSize + 1 }, (_, i) => (i < cfg.hiddenSize ? 0.02 * rng.normal() : 0));
    if (head.length !== cfg.hiddenSize + 1) {
      throw new Error(`PRM head of ${head.length - 1} inputs for hidden size ${cfg.hiddenSize}`);
    }
    const prm = new PrmModel(
      runtime,
      model,
      uploadAdapter(model.device, cfg, adapter),
      uploadPrmHead(model.device, head),
      o.cellId,
      o.info,
    );
    runtime.onRelease(() => prm.release());
    return prm;
  }

  /** Token ids of a rendered prompt (cached: a question's samples share one). */
  private prompt(text: string): number[] {
    let ids = this.promptIds.get(text);
    if (!ids) {
      if (this.promptIds.size > 4096) this.promptIds.clear();
      ids = this.runtime.encode(text);
      this.promptIds.set(text, ids);
    }
    return ids;
  }

  /**
   * An input as the trainer takes it: prompt ids, then the answer's ids (no special tokens), and the
   * row of each step's last token. An outcome model reads only the last step. Labels, when given,
   * are per step of prmStepSpans (longer lists are cut to the steps found).
   */
  layOut(input: PrmInput, labels?: readonly number[]): PrmLaidOut {
    const p = this.prompt(input.prompt);
    const c = this.runtime.encodePlain(input.completion);
    const spans = prmStepSpans(input.completion);
    const ends = this.info.labels === "outcome" ? spans.ends.slice(-1) : spans.ends;
    const names = this.info.labels === "outcome" ? spans.names.slice(-1) : spans.names;
    const { rows, keep } = stepTokenRows(tokenCharEnds(c, (ids) => this.runtime.decode(ids)), ends);
    const example: PrmExample = { ids: [...p, ...c], rows: rows.map((r) => p.length + r) };
    const steps = this.info.labels === "outcome" ? keep.map(() => spans.ends.length - 1) : keep;
    if (labels) {
      const lab = steps.map((k) => labels[k]);
      const kept = lab.map((y, i) => (y === undefined ? -1 : i)).filter((i) => i >= 0);
      example.rows = kept.map((i) => example.rows[i]);
      example.labels = kept.map((i) => lab[i]);
      return {
        example,
        steps: kept.map((i) => steps[i]),
        ends: kept.map((i) => ends[keep[i]]),
        names: kept.map((i) => names[keep[i]]),
      };
    }
    return { example, steps, ends: keep.map((k) => ends[k]), names: keep.map((k) => names[k]) };
  }

  /** Step scores of every input (no gradients), `microBatch` sequences per forward. */
  async score(inputs: readonly PrmInput[], o: { microBatch?: number } = {}): Promise<PrmScored[]> {
    this.check();
    const laid = inputs.map((x) => this.layOut(x));
    const withRows = laid.map((l, i) => ({ l, i })).filter((x) => x.l.example.rows.length > 0);
    const scores = await prmScores(this.model, this.lora, this.head, withRows.map((x) => x.l.example), o);
    const out: PrmScored[] = laid.map((l) => ({ ends: l.ends, names: l.names, scores: [] }));
    withRows.forEach((x, k) => (out[x.i].scores = scores[k]));
    return out;
  }

  /** One score per answer: an outcome model's last-step score, else `how` over the step scores. */
  chainScore(s: PrmScored, how: PrmAggregate): number {
    return aggregateStepScores(s.scores, this.info.labels === "outcome" ? "last" : how);
  }

  /** A trainer of this PRM's adapter and head with fresh AdamW moments (its step from `step`). */
  trainer(opts: Partial<PrmTrainerOptions>, step = 0): PrmTrainer {
    this.check();
    const enc = this.model.device.createCommandEncoder({ label: "prm-reset-adam" });
    for (const s of this.lora.slots.values()) for (const b of [s.mA, s.vA, s.mB, s.vB]) enc.clearBuffer(b);
    enc.clearBuffer(this.head.m);
    enc.clearBuffer(this.head.v);
    this.model.device.queue.submit([enc.finish()]);
    const tr = prmTrainer(this.model, this.lora, this.head, opts);
    tr.step = step;
    return tr;
  }

  /** Adapter (`prm.lora.*`), head (`prm.head`) and their AdamW moments, for a checkpoint. */
  async stateTensors(): Promise<Weights> {
    this.check();
    const { device } = this.model;
    const out: Weights = new Map();
    const a = await readAdapter(device, this.lora);
    for (const [k, t] of a.tensors) out.set(`prm.lora.${k}`, t);
    for (const s of this.lora.slots.values()) {
      for (
        const [which, m, v, shape] of [["A", s.mA, s.vA, [this.lora.r, s.in]], ["B", s.mB, s.vB, [
          s.out,
          this.lora.r,
        ]]] as const
      ) {
        const k = loraKey(s.layer, s.target, which);
        const n = shape[0] * shape[1];
        out.set(`prm.adam.m.${k}`, { shape: [...shape], data: await readF32(device, m, n) });
        out.set(`prm.adam.v.${k}`, { shape: [...shape], data: await readF32(device, v, n) });
      }
    }
    const C = this.head.C + 1;
    out.set("prm.head", { shape: [C], data: await readPrmHead(device, this.head) });
    out.set("prm.adam.m.head", { shape: [C], data: await readPrmHead(device, this.head, "m") });
    out.set("prm.adam.v.head", { shape: [C], data: await readPrmHead(device, this.head, "v") });
    return out;
  }

  /** Restores what stateTensors saved (moments when present). */
  restoreState(tensors: Weights): void {
    this.check();
    const { device } = this.model;
    const need = (name: string): Tensor => {
      const t = tensors.get(name);
      if (!t) throw new Error(`PRM checkpoint lacks ${name} (saved with another LoRA rank or model?)`);
      return t;
    };
    for (const s of this.lora.slots.values()) {
      for (const [which, p, m, v] of [["A", s.A, s.mA, s.vA], ["B", s.B, s.mB, s.vB]] as const) {
        const k = loraKey(s.layer, s.target, which);
        writeBuffer(device, p, need(`prm.lora.${k}`).data);
        const tm = tensors.get(`prm.adam.m.${k}`), tv = tensors.get(`prm.adam.v.${k}`);
        if (tm && tv) {
          writeBuffer(device, m, tm.data);
          writeBuffer(device, v, tv.data);
        }
      }
    }
    writeBuffer(device, this.head.wb, need("prm.head").data);
    const hm = tensors.get("prm.adam.m.head"), hv = tensors.get("prm.adam.v.head");
    if (hm && hv) {
      writeBuffer(device, this.head.m, hm.data);
      writeBuffer(device, this.head.v, hv.data);
    }
  }

  /** The PRM as a folder's files (src/model/prm-files.ts). */
  async files(): Promise<Map<string, Uint8Array>> {
    this.check();
    const { device } = this.model;
    return prmFiles({
      adapter: await readAdapter(device, this.lora),
      head: await readPrmHead(device, this.head),
      info: this.info,
    });
  }

  private check(): void {
    if (this.released) throw new Error(`the PRM of cell "${this.cellId}" was released (its model cell was replaced)`);
  }

  /** Frees the adapter and head (the base model is the runtime's). */
  release(): void {
    if (this.released) return;
    this.released = true;
    destroyAdapter(this.lora);
    destroyPrmHead(this.head);
  }
}
