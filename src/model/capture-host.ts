// A policy's captured decoding (captured.ts): whether it applies and passes its check on the device,
// and the one captured session the policy keeps, grown to the largest batch and length asked for.
import type { ModelConfig } from "./config.ts";
import { CapturedDecoder, CapturedPrefill } from "./captured.ts";
import { type CapturedCheck, checkCaptured, type CheckDecoder } from "./captured-check.ts";
import {
  buildDecoder,
  DECODE_PRODUCTS,
  type DecodeProducts,
  type DecoderOptions,
  gqaApplies,
  type PreparedWeights,
  type WeightDtype,
} from "./onnx/decoder.ts";
import type { ort } from "./onnx/ort.ts";
import type { Weights } from "./tensor.ts";
import { denoEnv } from "../core/deno-env.ts";

/** What the captured graph is built from: the policy's weights and build options. */
export interface CaptureSource {
  weights: Weights;
  opts: DecoderOptions;
  /** Conversions of the policy's build, used by the first captured build (then dropped unless `shared`). */
  prepared: PreparedWeights | null;
  /** `prepared` belongs to the caller (PolicyOptions.prepared): kept. */
  shared: boolean;
}

/** The policy as the host needs it. */
export interface CapturePolicy {
  readonly cfg: ModelConfig;
  readonly dtype: WeightDtype;
  readonly maxPositions: number;
  gpuDevice(): Promise<GPUDevice | null>;
  adapterFeedsNow(): Promise<Record<string, ort.Tensor>>;
}

/** RLVR_CAPTURED_HEAD=matmul (Deno): the captured graphs' f32 head as MatMul over a transposed copy (decoder.ts headMatMul). */
const headMatMul = () => denoEnv("RLVR_CAPTURED_HEAD") === "matmul";

/**
 * RLVR_CAPTURED_PRODUCTS=auto|plain|fused|split|rows (Deno): the captured graphs' q4 products (decoder.ts
 * decodeProducts; default auto), for benchmarks to time the earlier graphs beside the current ones.
 */
function decodeProducts(): DecodeProducts | undefined {
  const v = denoEnv("RLVR_CAPTURED_PRODUCTS");
  if (v === undefined || v === "") return undefined;
  const p = DECODE_PRODUCTS.find((x) => x === v);
  if (!p) throw new Error(`RLVR_CAPTURED_PRODUCTS must be one of ${DECODE_PRODUCTS.join(", ")}, got ${v}`);
  return p;
}

/**
 * RLVR_CAPTURED_LORA_SLICE=n (Deno): the K width of a slice of the captured decoding graph's LoRA A products (decoder.ts
 * loraKSlice; default LORA_K_SLICE), for tests to split the tiny models' products.
 */
function loraKSlice(): number | undefined {
  const v = denoEnv("RLVR_CAPTURED_LORA_SLICE");
  if (v === undefined || v === "") return undefined;
  const n = Number(v);
  if (!(Number.isInteger(n) && n >= 4)) throw new Error(`RLVR_CAPTURED_LORA_SLICE must be an integer >= 4, got ${v}`);
  return n;
}

/** Prefill widths are rounded up to this many columns (fewer sessions for ragged prompt lengths). */
export const PREFILL_ALIGN = 32;

/** One policy's captured decoding. */
export class CaptureHost {
  private decoder: CapturedDecoder | null = null;
  private prefiller: CapturedPrefill | null = null;
  /** Whether the decoding graph was built once (dropPrepared). */
  private decodeBuilt = false;

  /** Notes already given: each check runs once per device but is asked before every sampling call. */
  private noted = new Set<string>();
  constructor(
    private policy: CapturePolicy,
    private source: CaptureSource | null,
    private note: (msg: string) => void,
  ) {}

  /** Says once why a fast path is not used: a check failed, so the exact path runs and results are unaffected. */
  private noteOnce(what: "decoding" | "prefill", r: CapturedCheck): void {
    if (this.noted.has(what)) return;
    this.noted.add(what);
    const path = what === "prefill" ? "reading the prompts" : "writing the answers";
    this.note(
      `note: this GPU computes the fast path for ${path} (ONNX Runtime's attention under graph capture) wrongly — ` +
        `its self-check against exact attention differed by ${r.maxAbsDiff.toExponential(2)} in log-probability${
          r.error ? ` (${r.error})` : ""
        } — ` +
        `so the page uses the exact path instead: answers are unaffected, only slower (on SwiftShader, the software GPU, ONNX Runtime's subgroup attention kernel is wrong: gqa-check.ts)`,
    );
  }

  /**
   * Whether captured decoding applies: WebGPU (a source) and a model GroupQueryAttention takes (f32 or
   * q4, head dim % 8; decoder.ts staticDecode). The policy's own graph may use explicit attention (where
   * ORT's GQA failed gqa-check.ts: its prefill path): the captured graph only decodes.
   */
  get applies(): boolean {
    return this.source !== null && gqaApplies(this.policy.cfg, this.policy.dtype, this.source.opts.shaderF16 ?? true);
  }

  /**
   * Whether it applies and computes right on `device` (captured-check.ts, once per device and head layout,
   * with decoders `create` makes); a note says why not when the check fails.
   */
  async ok(device: GPUDevice, create: (cfg: ModelConfig, w: Weights) => Promise<CheckDecoder>): Promise<boolean> {
    if (!this.applies) return false;
    const r = await checkCaptured(this.policy.cfg, device, create);
    if (!r.ok) this.noteOnce("decoding", r);
    return r.ok;
  }

  /**
   * Whether the captured prefill (CapturedPrefill) also computes right on `device` (the same check with
   * the prompts prefilled under capture; a note says why not). Call after `ok` said yes.
   */
  async prefillOk(
    device: GPUDevice,
    create: (cfg: ModelConfig, w: Weights) => Promise<CheckDecoder>,
  ): Promise<boolean> {
    if (!this.applies) return false;
    const r = await checkCaptured(this.policy.cfg, device, create, "captured");
    if (!r.ok) this.noteOnce("prefill", r);
    return r.ok;
  }

  /**
   * The captured prefill for at least `rows` prompts of up to `width` tokens, kept like the decoder: it
   * serves fewer prompts (idle rows) and shorter ones (right padding); a larger batch or width, or an
   * adapter of another rank, makes one of the largest sizes seen (width rounded up to PREFILL_ALIGN).
   */
  async prefill(rows: number, width: number): Promise<CapturedPrefill> {
    const { cfg, maxPositions } = this.policy;
    const src = this.requireSource();
    if (width > maxPositions) throw new Error(`captured prefill: ${width} tokens exceed maxPositions ${maxPositions}`);
    const adapter = await this.policy.adapterFeedsNow();
    const have = this.prefiller;
    if (have && have.batch >= rows && have.width >= width && have.fits(adapter)) return have;
    const batch = Math.max(rows, have?.batch ?? 0);
    const W = Math.min(maxPositions, Math.max(Math.ceil(width / PREFILL_ALIGN) * PREFILL_ALIGN, have?.width ?? 0));
    this.prefiller = null;
    await have?.release();
    const built = buildDecoder(cfg, src.weights, {
      ...src.opts,
      attention: "gqa",
      prepared: src.prepared ?? undefined,
      staticDecode: { batch, maxT: W, seq: W },
      headMatMul: headMatMul(),
      decodeProducts: decodeProducts(),
    });
    this.dropPrepared(src);
    const device = await this.policy.gpuDevice();
    if (!device) throw new Error("captured prefill needs a GPUDevice");
    this.prefiller = await CapturedPrefill.create({ device, cfg, built, adapter });
    return this.prefiller;
  }

  /**
   * Drops the policy's conversions (q4 blocks) once the decoding graph was built: the sampler builds the
   * prefill graph first (it runs first), so both use them; later builds quantise again.
   */
  private dropPrepared(src: CaptureSource): void {
    if (!src.shared && this.decodeBuilt) src.prepared = null;
  }

  private requireSource(): CaptureSource {
    const { cfg, dtype } = this.policy;
    const src = this.source;
    if (!src || !this.applies) {
      throw new Error(
        `captured decoding needs WebGPU and a model GroupQueryAttention takes (f32 or q4, head dim % 8; this policy: ${dtype}, head dim ${cfg.headDim}${
          src ? "" : ", not on WebGPU"
        })`,
      );
    }
    return src;
  }

  /**
   * The captured session for at least `rows` rows and `maxT` cache columns, made on first use and kept:
   * it serves every smaller batch (idle rows) and shorter length; a larger batch or length, or an adapter
   * of another rank, makes a new one of the largest sizes seen (columns rounded up to 64).
   */
  async get(rows: number, maxT: number): Promise<CapturedDecoder> {
    const { cfg, maxPositions } = this.policy;
    const src = this.requireSource();
    if (maxT > maxPositions) throw new Error(`captured decoding: ${maxT} columns exceed maxPositions ${maxPositions}`);
    const adapter = await this.policy.adapterFeedsNow();
    const have = this.decoder;
    if (have && have.batch >= rows && have.maxT >= maxT && have.fits(adapter)) return have;
    const batch = Math.max(rows, have?.batch ?? 0);
    const T = Math.min(maxPositions, Math.max(Math.ceil(maxT / 64) * 64, have?.maxT ?? 0));
    this.decoder = null;
    await have?.release();
    const built = buildDecoder(cfg, src.weights, {
      ...src.opts,
      attention: "gqa",
      prepared: src.prepared ?? undefined,
      staticDecode: { batch, maxT: T },
      headMatMul: headMatMul(),
      decodeProducts: decodeProducts(),
      loraKSlice: loraKSlice(),
    });
    this.decodeBuilt = true;
    this.dropPrepared(src);
    const device = await this.policy.gpuDevice();
    if (!device) throw new Error("captured decoding needs a GPUDevice");
    this.decoder = await CapturedDecoder.create({ device, cfg, built, adapter });
    return this.decoder;
  }

  /** Releases the captured sessions (the next `get` / `prefill` makes one of its own sizes). */
  async release(): Promise<void> {
    const d = this.decoder, p = this.prefiller;
    this.decoder = null;
    this.prefiller = null;
    await d?.release();
    await p?.release();
  }
}
