// Wrappers of the causal grouped-query attention kernels: attention.wgsl (forward),
// attention_bwd_dq.wgsl then attention_bwd_dkv.wgsl (backward). Layouts in docs/kernels.md.
import { computePipeline, dispatch, uniformBuffer } from "../device.ts";
import { perfSwitches } from "../switches.ts";
import type { AttentionDims } from "./attention.ref.ts";
import forwardSource from "./attention.wgsl" with { type: "text" };
import dqSource from "./attention_bwd_dq.wgsl" with { type: "text" };
import dkvSource from "./attention_bwd_dkv.wgsl" with { type: "text" };
import dkvBlockedSource from "./attention_bwd_dkv_rb.wgsl" with { type: "text" };

export type { AttentionDims } from "./attention.ref.ts";

/** Head dims the kernels support: each of 16 lanes keeps at most 2 vec4 of a row in registers. */
export const ATTENTION_MAX_D = 128;

/** Buffers of the forward: q (B, T, H, D), k and v (B, T, Hkv, D), lens (B) u32, outputs o and lse (B, H, T). */
export interface AttentionForwardBuffers {
  q: GPUBuffer;
  k: GPUBuffer;
  v: GPUBuffer;
  lens: GPUBuffer;
  o: GPUBuffer;
  lse: GPUBuffer;
}

/** Buffers of the backward: the forward's inputs and outputs, dout, the gradients, and a (B, H, T) scratch for delta. */
export interface AttentionBackwardBuffers {
  q: GPUBuffer;
  k: GPUBuffer;
  v: GPUBuffer;
  lens: GPUBuffer;
  o: GPUBuffer;
  lse: GPUBuffer;
  dout: GPUBuffer;
  dq: GPUBuffer;
  dk: GPUBuffer;
  dv: GPUBuffer;
  delta: GPUBuffer;
}

const TILE_CANDIDATES: ReadonlyArray<readonly [number, number]> = [[16, 16], [16, 8], [8, 16], [8, 8], [8, 4], [4, 4]];

/** Options of both passes: the softmax scale (default 1/sqrt(D)) and a cap on workgroup memory (tests, tuning). */
export interface AttentionOpts {
  scale?: number;
  workgroupBytes?: number;
}

/** The largest (rows per workgroup, rows per tile) pair whose workgroup memory (in f32 words) fits the device. */
export function pickTiles(device: GPUDevice, words: (rows: number, tile: number) => number, capBytes = Infinity): readonly [number, number] {
  const limit = Math.min(device.limits.maxComputeWorkgroupStorageSize, capBytes);
  const fit = TILE_CANDIDATES.find(([a, b]) => words(a, b) * 4 <= limit);
  if (!fit) throw new Error(`attention: no tile size fits ${limit} bytes of workgroup memory`);
  return fit;
}

function dimsUniform(device: GPUDevice, label: string, a: AttentionDims, scale: number): GPUBuffer {
  const words = new ArrayBuffer(32);
  const u = new Uint32Array(words);
  u.set([a.B, a.T, a.H, a.Hkv]);
  new Float32Array(words)[4] = scale;
  return uniformBuffer(device, label, u);
}

/** f32 words per row of a workgroup tile: D rounded up to vec4, plus one spare vec4 against bank conflicts. */
function tileStride(D: number): number {
  return 4 * (Math.ceil(D / 4) + 1);
}

/** Throws unless every named buffer holds at least the bytes its shape needs. */
export function checkSizes(kernel: string, need: Array<[string, GPUBuffer | undefined, number]>): void {
  for (const [name, buf, bytes] of need) {
    if (buf && buf.size < bytes) throw new Error(`${kernel}: ${name} (${buf.label}) has ${buf.size} bytes, needs ${bytes}`);
  }
}

function validate(a: AttentionDims, buf: Partial<AttentionBackwardBuffers>): void {
  const q = a.B * a.T * a.H * a.D * 4;
  const kv = a.B * a.T * a.Hkv * a.D * 4;
  const rows = a.B * a.H * a.T * 4;
  checkSizes("attention", [
    ["q", buf.q, q], ["k", buf.k, kv], ["v", buf.v, kv], ["lens", buf.lens, a.B * 4], ["o", buf.o, q], ["lse", buf.lse, rows],
    ["dout", buf.dout, q], ["dq", buf.dq, q], ["dk", buf.dk, kv], ["dv", buf.dv, kv], ["delta", buf.delta, rows],
  ]);
  if (a.H % a.Hkv !== 0) throw new Error(`attention: H ${a.H} is not a multiple of Hkv ${a.Hkv}`);
  if (a.D < 1 || a.D > ATTENTION_MAX_D) throw new Error(`attention: head dim ${a.D} outside 1..${ATTENTION_MAX_D}`);
}

/** Records the forward: o and lse are fully written (padded rows get zeros). */
export async function encodeAttentionForward(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  buf: AttentionForwardBuffers,
  a: AttentionDims,
  opts: AttentionOpts = {},
): Promise<void> {
  const scale = opts.scale ?? 1 / Math.sqrt(a.D);
  validate(a, buf);
  const ds = tileStride(a.D);
  // q, k and v tiles, the scores and their probabilities.
  const words = (bq: number, bk: number) => bq * ds + 2 * bk * ds + 2 * bq * bk;
  // 32 query rows, two per thread, when they fit (D <= 64 with 32 KiB); else one row per thread.
  const wide = words(32, 16) * 4 <= Math.min(device.limits.maxComputeWorkgroupStorageSize, opts.workgroupBytes ?? Infinity);
  const [BQ, BK] = wide ? [32, 16] : pickTiles(device, words, opts.workgroupBytes);
  const RPT = wide ? 2 : 1;
  const named = perfSwitches().attnNamed === 1;
  const pipeline = await computePipeline(device, named ? "attention-forward-named" : "attention-forward", forwardSource, { D: a.D, BQ, BK, RPT, NAMED_ACC: named ? 1 : 0 });
  const dims = dimsUniform(device, "attention-forward-dims", a, scale);
  dispatch(device, enc, pipeline, [buf.q, buf.k, buf.v, buf.lens, buf.o, buf.lse, dims], [Math.ceil(a.T / BQ), a.H, a.B]);
}

/** (key rows per workgroup, query rows per tile) of attention_bwd_dkv_rb.wgsl, largest first; BQ = 4 KR QR. */
const BLOCKED_KV_TILES: ReadonlyArray<readonly [number, number]> = [[32, 16], [32, 8], [16, 16], [16, 8], [8, 8], [8, 4], [4, 4]];

/**
 * The register-blocked dk/dv kernel's tiles and thread blocks for head dim D (a multiple of 4): the first candidate whose
 * K, V, Q, dout, P and dS tiles fit the workgroup memory.
 */
export function blockedKvTiles(device: GPUDevice, D: number, capBytes = Infinity): { BK: number; BQ: number; KR: number; QR: number; JMAX: number } {
  const d4 = D / 4;
  const s = 4 * (d4 + 1);
  const limit = Math.min(device.limits.maxComputeWorkgroupStorageSize, capBytes);
  const fit = BLOCKED_KV_TILES.find(([bk, bq]) => (2 * bk * s + 2 * bq * s + 2 * bk * bq + 2 * bq) * 4 <= limit && 4 * bk <= device.limits.maxComputeInvocationsPerWorkgroup);
  if (!fit) throw new Error(`attention: no blocked dk/dv tile fits ${limit} bytes of workgroup memory`);
  const [BK, BQ] = fit;
  const [KR, QR] = BQ === 16 ? [2, 2] : BQ === 8 ? [2, 1] : [1, 1];
  return { BK, BQ, KR, QR, JMAX: d4 > 16 ? 2 : 1 };
}

/** Records the backward (dq and delta first, then dk and dv); every gradient element is written. */
export async function encodeAttentionBackward(
  device: GPUDevice,
  enc: GPUCommandEncoder,
  buf: AttentionBackwardBuffers,
  a: AttentionDims,
  opts: AttentionOpts = {},
): Promise<void> {
  const scale = opts.scale ?? 1 / Math.sqrt(a.D);
  validate(a, buf);
  const dims = dimsUniform(device, "attention-backward-dims", a, scale);
  const ds = tileStride(a.D);
  const dqWords = (bq: number, bk: number) => 2 * bq * ds + 2 * bk * ds + bq * bk + 2 * bq;
  const wide = dqWords(32, 16) * 4 <= Math.min(device.limits.maxComputeWorkgroupStorageSize, opts.workgroupBytes ?? Infinity);
  const [BQ, BK] = wide ? [32, 16] : pickTiles(device, dqWords, opts.workgroupBytes);
  const named = perfSwitches().attnNamed === 1;
  const dq = await computePipeline(device, named ? "attention-backward-dq-named" : "attention-backward-dq", dqSource, { D: a.D, BQ, BK, RPT: wide ? 2 : 1, NAMED_ACC: named ? 1 : 0 });
  dispatch(device, enc, dq, [buf.q, buf.k, buf.v, buf.o, buf.dout, buf.lse, buf.lens, buf.dq, buf.delta, dims], [
    Math.ceil(a.T / BQ),
    a.H,
    a.B,
  ]);
  if (perfSwitches().attnBwd === "blocked" && a.D % 4 === 0) {
    const t = blockedKvTiles(device, a.D, opts.workgroupBytes);
    const dkvB = await computePipeline(device, "attention-backward-dkv-blocked", dkvBlockedSource, { D4: a.D / 4, ...t });
    dispatch(device, enc, dkvB, [buf.q, buf.k, buf.v, buf.dout, buf.lse, buf.delta, buf.lens, buf.dk, buf.dv, dims], [
      Math.ceil(a.T / t.BK),
      a.Hkv,
      a.B,
    ]);
    return;
  }
  const dkvWords = (bk: number, bq: number) => 2 * bk * ds + 2 * bq * ds + 2 * bk * bq + 2 * bq;
  const wideKv = dkvWords(32, 16) * 4 <= Math.min(device.limits.maxComputeWorkgroupStorageSize, opts.workgroupBytes ?? Infinity);
  const [KR, QT] = wideKv ? [32, 16] : pickTiles(device, dkvWords, opts.workgroupBytes);
  const dkv = await computePipeline(device, named ? "attention-backward-dkv-named" : "attention-backward-dkv", dkvSource, { D: a.D, BK: KR, BQ: QT, RPT: wideKv ? 2 : 1, NAMED_ACC: named ? 1 : 0 });
  dispatch(device, enc, dkv, [buf.q, buf.k, buf.v, buf.dout, buf.lse, buf.delta, buf.lens, buf.dk, buf.dv, dims], [
    Math.ceil(a.T / KR),
    a.Hkv,
    a.B,
  ]);
}
