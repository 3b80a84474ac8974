// Wrappers of the causal grouped-query attention kernels: the register-blocked forward, the backward with dq fused into
// the dk/dv kernel (or by its own kernel where the scratch would not fit), D widened to a multiple of 4 where it is not.
// Layouts, passes and why: docs/kernels.md, "Causal GQA attention".
import { CALL_SCRATCH, computePipeline, dispatch, sharedScratch, uniformBuffer } from "../device.ts";
import { checkSizes, grid, packParams } from "./layer-common.ts";
import { scratchBuffer } from "./matmul.ts";
import forwardBlockedSource from "./attention_rb.wgsl" with { type: "text" };
import dkvBlockedSource from "./attention_bwd_dkv_rb.wgsl" with { type: "text" };
import dqBlockedSource from "./attention_bwd_dq_rb.wgsl" with { type: "text" };
import blockedCommonSource from "./attention_rb_common.wgsl" with { type: "text" };
import dimsSource from "./attention_dims.wgsl" with { type: "text" };
import deltaSource from "./attention_delta.wgsl" with { type: "text" };
import dqPartialSource from "./attention_dq_partial.wgsl" with { type: "text" };
import dqReduceSource from "./attention_dq_reduce.wgsl" with { type: "text" };
import dqpLayoutSource from "./attention_dqp_layout.wgsl" with { type: "text" };
import dkvReduceSource from "./attention_dkv_reduce.wgsl" with { type: "text" };
import padSource from "./attention_pad.wgsl" with { type: "text" };

import { expandKernel } from "./wgsl-parts.ts";
import type { TemplateVars } from "./wgsl-template.ts";

/** Shapes shared by the attention kernels and their reference. */
export interface AttentionDims {
  B: number;
  T: number;
  H: number;
  Hkv: number;
  D: number;
}

/** An attention kernel's source with attention_dims.wgsl (Dims, qRow, kvRow, statAt) appended. */
function withDims(kernel: string): string {
  return `${kernel}\n${dimsSource}`;
}

/**
 * A register-blocked kernel's full source: the kernel (a template: `name` and `vars`), attention_dims.wgsl, then
 * attention_rb_common.wgsl (the forward: without its BACKWARD block). After, not before: the common functions read the
 * kernel's override-sized workgroup tiles, and Deno's naga panics at pipeline creation when such an array comes before
 * a named override.
 */
function blockedSource(name: string, kernel: string, backward: boolean, vars: TemplateVars = {}): string {
  const common = expandKernel("attention_rb_common.wgsl", blockedCommonSource, { BACKWARD: backward });
  return `${withDims(expandKernel(name, kernel, vars))}\n${common}`;
}

/** A blocked kernel's overrides: the query kernels own BQ query rows, stream BK keys; the dk/dv kernel the reverse. */
function blockedConstants(D: number, t: BlockedTiles, ownKeys: boolean): Record<string, number> {
  return ownKeys
    ? { D4: D / 4, BK: t.own, BQ: t.tile, KR: t.fOwn, QR: t.fTile, JMAX: t.JMAX }
    : { D4: D / 4, BQ: t.own, BK: t.tile, QR: t.fOwn, KR: t.fTile, JMAX: t.JMAX };
}

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
export interface AttentionBackwardBuffers extends AttentionForwardBuffers {
  dout: GPUBuffer;
  dq: GPUBuffer;
  dk: GPUBuffer;
  dv: GPUBuffer;
  delta: GPUBuffer;
}

/**
 * Options of both passes: the softmax scale (default 1/sqrt(D)), a cap on workgroup memory (tests) and one on the fused
 * dq's scratch (default DQ_SCRATCH_CAP, and the device's limits; past it the dq kernel runs instead).
 */
export interface AttentionOpts {
  scale?: number;
  workgroupBytes?: number;
  dqScratchBytes?: number;
}

function dimsUniform(device: GPUDevice, label: string, a: AttentionDims, scale: number): GPUBuffer {
  return uniformBuffer(device, label, packParams("uuuuf", [a.B, a.T, a.H, a.Hkv, scale]));
}

/** The dims with D rounded up to a multiple of 4: the kernels read rows as vec4. */
function widened(a: AttentionDims): AttentionDims {
  return { ...a, D: Math.ceil(a.D / 4) * 4 };
}

type Tensor = "q" | "k" | "v" | "o" | "dout" | "dq" | "dk" | "dv";

/** Rows of a (B, T, heads, D) tensor: query heads for q, o, dout, dq; kv heads for k, v, dk, dv. */
function tensorRows(a: AttentionDims, name: Tensor): number {
  return a.B * a.T * (name === "k" || name === "v" || name === "dk" || name === "dv" ? a.Hkv : a.H);
}

/** Records a copy of `rows` rows of `from` floats into rows of `to` floats, zeros past `from` (attention_pad.wgsl). */
async function encodeRepad(c: Call, src: GPUBuffer, dst: GPUBuffer, rows: number, from: number, to: number) {
  const pipeline = await computePipeline(c.device, "attention-pad", padSource, { SRC_W: from, DST_W: to });
  const count = uniformBuffer(c.device, "attention-pad-count", new Uint32Array([rows * to, 0, 0, 0]));
  dispatch(c.device, c.enc, pipeline, [src, dst, count], grid(rows * to, 64));
}

/**
 * For D % 4 != 0: the buffers with the named tensors replaced by widened ones (a device scratch per tensor), those of
 * `inputs` copied in with zero columns.
 */
async function widen<T extends Partial<AttentionBackwardBuffers>>(c: Call, buf: T, names: Tensor[], inputs: Tensor[]) {
  const D = widened(c.a).D;
  const out = { ...buf };
  for (const name of names) {
    const rows = tensorRows(c.a, name);
    const wide = sharedScratch(c.device, `attention-wide-${name}`, rows * D * 4);
    if (inputs.includes(name)) await encodeRepad(c, buf[name]!, wide, rows, c.a.D, D);
    out[name] = wide as T[Tensor];
  }
  return out;
}

/** Records the widened results' first D columns into the caller's buffers. */
async function narrow<T extends Partial<AttentionBackwardBuffers>>(c: Call, wide: T, buf: T, names: Tensor[]) {
  for (const name of names) {
    await encodeRepad(c, wide[name]!, buf[name]!, tensorRows(c.a, name), widened(c.a).D, c.a.D);
  }
}

function validate(a: AttentionDims, buf: Partial<AttentionBackwardBuffers>): void {
  const q = a.B * a.T * a.H * a.D * 4;
  const kv = a.B * a.T * a.Hkv * a.D * 4;
  const rows = a.B * a.H * a.T * 4;
  checkSizes("attention", [
    ["q", buf.q, q],
    ["k", buf.k, kv],
    ["v", buf.v, kv],
    ["lens", buf.lens, a.B * 4],
    ["o", buf.o, q],
    ["lse", buf.lse, rows],
    ["dout", buf.dout, q],
    ["dq", buf.dq, q],
    ["dk", buf.dk, kv],
    ["dv", buf.dv, kv],
    ["delta", buf.delta, rows],
  ]);
  if (a.H % a.Hkv !== 0) throw new Error(`attention: H ${a.H} is not a multiple of Hkv ${a.Hkv}`);
  if (a.D < 1 || a.D > ATTENTION_MAX_D) throw new Error(`attention: head dim ${a.D} outside 1..${ATTENTION_MAX_D}`);
}

/** One call's device, encoder, dims (D widened where the kernels run) and cap on workgroup memory. */
interface Call {
  device: GPUDevice;
  enc: GPUCommandEncoder;
  a: AttentionDims;
  cap?: number;
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
  const c: Call = { device, enc, a, cap: opts.workgroupBytes };
  if (a.D % 4 === 0) return encodeBlockedForward(c, buf, scale);
  const wide = await widen(c, buf, ["q", "k", "v", "o"], ["q", "k", "v"]);
  await encodeBlockedForward({ ...c, a: widened(a) }, wide, scale);
  await narrow(c, wide, buf, ["o"]);
}

/** (rows a workgroup owns, rows per streamed tile) of the register-blocked kernels, largest first. */
const BLOCKED_TILES = [[32, 16], [32, 8], [16, 16], [16, 8], [8, 8], [8, 4], [4, 4]] as const;

/** Tiles and thread blocks of a register-blocked kernel. */
export interface BlockedTiles {
  /** Rows a workgroup owns (its 4 * own threads' sums: 4 rows each). */
  own: number;
  /** Rows per streamed tile, 4 * fOwn * fTile. */
  tile: number;
  /** Owned and streamed rows per thread in the score phase (a fOwn x fTile block of S and dP). */
  fOwn: number;
  fTile: number;
  /** vec4 columns per thread in the sums. */
  JMAX: number;
}

/**
 * The first candidate whose tiles fit the workgroup memory, for head dim D (a multiple of 4): `words(own, tile, S)` f32
 * words with the row stride S.
 */
export function blockedTiles(
  device: GPUDevice,
  D: number,
  words: (own: number, tile: number, s: number) => number,
  capBytes = Infinity,
): BlockedTiles {
  const d4 = D / 4;
  const limit = Math.min(device.limits.maxComputeWorkgroupStorageSize, capBytes);
  const fit = BLOCKED_TILES.find(([own, tile]) =>
    words(own, tile, 4 * (d4 + 1)) * 4 <= limit && 4 * own <= device.limits.maxComputeInvocationsPerWorkgroup
  );
  if (!fit) throw new Error(`attention: no blocked backward tile fits ${limit} bytes of workgroup memory`);
  const [own, tile] = fit;
  const fOwn = tile >= 8 ? 2 : 1;
  return { own, tile, fOwn, fTile: tile / (4 * fOwn), JMAX: d4 > 16 ? 2 : 1 };
}

/** Records the register-blocked forward. */
async function encodeBlockedForward({ device, enc, a, cap }: Call, buf: AttentionForwardBuffers, scale: number) {
  const t = blockedTiles(device, a.D, forwardBlockedWords, cap);
  const code = blockedSource("attention_rb.wgsl", forwardBlockedSource, false);
  const pipeline = await computePipeline(device, "attention-forward-blocked", code, blockedConstants(a.D, t, false));
  const dims = dimsUniform(device, "attention-forward-dims", a, scale);
  const groups = [Math.ceil(a.T / t.own), a.H, a.B] as const;
  dispatch(device, enc, pipeline, [buf.q, buf.k, buf.v, buf.lens, buf.o, buf.lse, dims], groups);
}

/**
 * Workgroup words of attention_rb.wgsl for `own` query rows and key tiles of `tile` rows, row stride s: the Q, K and V
 * tiles, the P tile (rows of own + 4), the partial maxima (4 fOwn key slots a row, fOwn as blockedTiles picks it), the
 * running maxima twice and the rescales.
 */
export function forwardBlockedWords(own: number, tile: number, s: number): number {
  const fOwn = tile >= 8 ? 2 : 1;
  return own * s + 2 * tile * s + tile * (own + 4) + own * 4 * fOwn + 3 * own;
}

/** Workgroup words of attention_bwd_dkv_rb.wgsl: k, v, q, dout tiles, P and dS tiles, lse and delta of the streamed rows. */
const DKV_WORDS = (own: number, tile: number, s: number) => 2 * own * s + 2 * tile * s + 2 * own * tile + 2 * tile;

/**
 * Where the dk/dv kernel writes: dk and dv, or with `parts` (the query heads of a kv group) > 1 their partial sums,
 * (B, T, Hkv, parts, D) each, in two windows of the split-K scratch (docs/kernels.md: no memory added).
 */
function dkvTargets(device: GPUDevice, buf: AttentionBackwardBuffers, a: AttentionDims, parts: number) {
  if (parts === 1) return { dk: buf.dk, dv: buf.dv };
  const bytes = a.B * a.T * a.Hkv * parts * a.D * 4;
  const align = device.limits.minStorageBufferOffsetAlignment;
  const at = Math.ceil(bytes / align) * align;
  const scratch = scratchBuffer(device, at + bytes);
  return { dk: { buffer: scratch, offset: 0, size: bytes }, dv: { buffer: scratch, offset: at, size: bytes } };
}

/**
 * Records the dk/dv kernel on tiles `kvT`, a workgroup per query head of a kv group, with the fused dq's partials into
 * `dqp` where given, then the sum of the heads' parts into dk and dv (attention_dkv_reduce.wgsl).
 */
async function encodeDkv(c: Call, buf: AttentionBackwardBuffers, dims: GPUBuffer, kvT: BlockedTiles, dqp?: GPUBuffer) {
  const { device, enc, a } = c;
  const parts = a.H / a.Hkv;
  const code = blockedSource("attention_bwd_dkv_rb.wgsl", dkvBlockedSource, true, { DQ_PARTIAL: !!dqp });
  const dkv = await computePipeline(
    device,
    `attention-backward-dkv-${dqp ? "dqp" : "blocked"}${parts > 1 ? "-split" : ""}`,
    dqp ? `${code}\n${dqPartialSource}\n${dqpLayoutSource}` : code,
    { ...blockedConstants(a.D, kvT, true), PARTS: parts },
  );
  const out = dkvTargets(device, buf, a, parts);
  const bind = [buf.q, buf.k, buf.v, buf.dout, buf.lse, buf.delta, buf.lens, out.dk, out.dv, dims];
  dispatch(device, enc, dkv, dqp ? [...bind, dqp] : bind, [Math.ceil(a.T / kvT.own), a.Hkv * parts, a.B]);
  if (parts === 1) return;
  const consts = { D4: a.D / 4, PARTS: parts };
  const reduce = await computePipeline(device, "attention-backward-dkv-reduce", withDims(dkvReduceSource), consts);
  dispatch(device, enc, reduce, [out.dk, out.dv, buf.dk, buf.dv, dims], grid(a.B * a.T * a.Hkv * (a.D / 4), 64));
}

/**
 * Bytes of the fused dq's scratch (attention_dqp_layout.wgsl) for key blocks of `BK` rows: block kb holds B (T - kb BK)
 * H rows of D floats.
 */
export function dqScratchBytes(a: AttentionDims, BK: number): number {
  let rows = 0;
  for (let j0 = 0; j0 < a.T; j0 += BK) rows += a.T - j0;
  return rows * a.B * a.H * a.D * 4;
}

/** The fused dq's scratch at most: larger batches keep the dq kernel rather than hold more memory. */
export const DQ_SCRATCH_CAP = 512 * 2 ** 20;

/**
 * The bytes of the call scratch (device.ts CALL_SCRATCH) the backward of these dims takes for its dq partials (D
 * rounded up to 4): 0 where they would pass the limits and the dq kernel runs instead.
 */
export function attentionBackwardScratchBytes(
  device: GPUDevice,
  dims: AttentionDims,
  opts: AttentionOpts = {},
): number {
  const a = widened(dims);
  const bytes = dqScratchBytes(a, blockedTiles(device, a.D, DKV_WORDS, opts.workgroupBytes).own);
  const { maxStorageBufferBindingSize, maxBufferSize } = device.limits;
  const limit = Math.min(maxStorageBufferBindingSize, maxBufferSize, opts.dqScratchBytes ?? DQ_SCRATCH_CAP);
  return bytes > limit ? 0 : bytes;
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
  const c: Call = { device, enc, a, cap: opts.workgroupBytes };
  if (a.D % 4 === 0) return encodeBlockedBackward(c, buf, dims, opts);
  const wide = await widen(c, buf, ["q", "k", "v", "o", "dout", "dq", "dk", "dv"], ["q", "k", "v", "o", "dout"]);
  await encodeBlockedBackward({ ...c, a: widened(a) }, wide, dims, opts);
  await narrow(c, wide, buf, ["dq", "dk", "dv"]);
}

/**
 * Records the register-blocked backward: where the fused dq's scratch fits, delta, the dk/dv kernel writing each key
 * block's dS K to the call scratch and their reduce into dq; else the dq kernel (with delta), then the dk/dv kernel.
 */
async function encodeBlockedBackward(c: Call, buf: AttentionBackwardBuffers, dims: GPUBuffer, opts: AttentionOpts) {
  const { device, enc, a } = c;
  const kvT = blockedTiles(device, a.D, DKV_WORDS, c.cap);
  const bytes = attentionBackwardScratchBytes(device, a, opts);
  if (bytes === 0) {
    // Workgroup words: q, dout, k, v tiles, the dS tile, lse and delta of the owned rows.
    const dqT = blockedTiles(device, a.D, (own, tile, s) => 2 * own * s + 2 * tile * s + own * tile + 2 * own, c.cap);
    const code = blockedSource("attention_bwd_dq_rb.wgsl", dqBlockedSource, true);
    const dq = await computePipeline(device, "attention-backward-dq-blocked", code, blockedConstants(a.D, dqT, false));
    const bind = [buf.q, buf.k, buf.v, buf.o, buf.dout, buf.lse, buf.lens, buf.dq, buf.delta, dims];
    dispatch(device, enc, dq, bind, [Math.ceil(a.T / dqT.own), a.H, a.B]);
    return encodeDkv(c, buf, dims, kvT);
  }
  const D4 = a.D / 4;
  const delta = await computePipeline(device, "attention-backward-delta", withDims(deltaSource), { D4 });
  dispatch(device, enc, delta, [buf.o, buf.dout, buf.lens, buf.delta, dims], grid(a.B * a.H * a.T, 64));
  const dqp = sharedScratch(device, CALL_SCRATCH, Math.max(bytes, 16));
  await encodeDkv(c, buf, dims, kvT, dqp);
  const code = `${withDims(dqReduceSource)}\n${dqpLayoutSource}`;
  const reduce = await computePipeline(device, "attention-backward-dq-reduce", code, { D4, BK: kvT.own });
  dispatch(device, enc, reduce, [dqp, buf.lens, buf.dq, dims], grid(a.B * a.T * a.H * D4, 64));
}
