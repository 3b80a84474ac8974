// The safetensors format: 8-byte little-endian header length, a JSON header
// {name: {dtype, shape, data_offsets: [begin, end]}, __metadata__?: {string: string}}, then the
// raw little-endian data (offsets relative to the end of the header). Also sharded checkpoints
// (`model.safetensors.index.json`: {metadata, weight_map: {tensor: file}}).
import { fromBf16, fromF16, toBf16, toF16 } from "./half.ts";
import { numel, type Tensor, type Weights } from "./tensor.ts";

/** Element types we read; floats convert to f32, integers stay raw. */
export const DTYPE_BYTES = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U8: 1,
  BOOL: 1,
} as const;
export type Dtype = keyof typeof DTYPE_BYTES;

/** One tensor as stored: dtype, shape and its little-endian bytes. */
export interface RawTensor {
  dtype: Dtype;
  shape: number[];
  bytes: Uint8Array;
}

/** A parsed safetensors file. */
export interface SafetensorsFile {
  metadata: Record<string, string>;
  tensors: Map<string, RawTensor>;
  /** The file's name as given to parseSafetensors, for messages. */
  name?: string;
}

/** The index of a sharded checkpoint. */
export interface ShardIndex {
  metadata: Record<string, unknown>;
  weight_map: Record<string, string>;
}

function isDtype(x: unknown): x is Dtype {
  return typeof x === "string" && Object.hasOwn(DTYPE_BYTES, x);
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** Parses a safetensors file; tensor bytes are views into `buf` (no copy). */
export function parseSafetensors(buf: Uint8Array, name = "safetensors"): SafetensorsFile {
  if (buf.byteLength < 8) throw new Error(`${name}: file too short (${buf.byteLength} bytes)`);
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const hlen = Number(dv.getBigUint64(0, true));
  if (8 + hlen > buf.byteLength) throw new Error(`${name}: header length ${hlen} exceeds file size ${buf.byteLength}`);
  let header: unknown;
  try {
    header = JSON.parse(new TextDecoder().decode(buf.subarray(8, 8 + hlen)));
  } catch (e) {
    throw new Error(`${name}: header is not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  if (!isRecord(header)) throw new Error(`${name}: header is not a JSON object`);
  const dataStart = 8 + hlen;
  const metadata: Record<string, string> = {};
  const tensors = new Map<string, RawTensor>();
  for (const [key, v] of Object.entries(header)) {
    if (key === "__metadata__") {
      if (isRecord(v)) { for (const [mk, mv] of Object.entries(v)) metadata[mk] = String(mv); }
      continue;
    }
    if (!isRecord(v) || !isDtype(v.dtype) || !Array.isArray(v.shape) || !Array.isArray(v.data_offsets)) {
      throw new Error(`${name}: tensor ${key} has a malformed header entry ${JSON.stringify(v)}`);
    }
    const shape = v.shape.map(Number);
    const [begin, end] = v.data_offsets.map(Number);
    const expected = numel(shape) * DTYPE_BYTES[v.dtype];
    if (end - begin !== expected || begin < 0 || dataStart + end > buf.byteLength) {
      throw new Error(
        `${name}: tensor ${key} (${v.dtype} [${
          shape.join(", ")
        }]) has offsets [${begin}, ${end}], needs ${expected} bytes within ${buf.byteLength - dataStart}`,
      );
    }
    tensors.set(key, { dtype: v.dtype, shape, bytes: buf.subarray(dataStart + begin, dataStart + end) });
  }
  return { metadata, tensors, name };
}

/** A copy of the bytes aligned for a typed array of `elem` bytes, or the same view when aligned. */
function aligned(bytes: Uint8Array, elem: number): Uint8Array {
  return bytes.byteOffset % elem === 0 ? bytes : bytes.slice();
}

/** Converts a floating tensor (F32, F16, BF16, F64) to float32; throws on integer dtypes. */
export function rawToF32(t: RawTensor, name = "tensor"): Float32Array {
  const n = numel(t.shape);
  switch (t.dtype) {
    case "F32": {
      const b = aligned(t.bytes, 4);
      return new Float32Array(b.buffer, b.byteOffset, n).slice();
    }
    case "F16": {
      const b = aligned(t.bytes, 2);
      return fromF16(new Uint16Array(b.buffer, b.byteOffset, n));
    }
    case "BF16": {
      const b = aligned(t.bytes, 2);
      return fromBf16(new Uint16Array(b.buffer, b.byteOffset, n));
    }
    case "F64": {
      const b = aligned(t.bytes, 8);
      return Float32Array.from(new Float64Array(b.buffer, b.byteOffset, n));
    }
    default:
      throw new Error(`${name}: dtype ${t.dtype} is not a floating type`);
  }
}

/** Typed view of an integer tensor (I64 -> BigInt64Array, I32, I16, I8, U8, BOOL as Uint8Array). */
export function rawToInts(t: RawTensor): BigInt64Array | Int32Array | Int16Array | Int8Array | Uint8Array {
  const n = numel(t.shape);
  switch (t.dtype) {
    case "I64": {
      const b = aligned(t.bytes, 8);
      return new BigInt64Array(b.buffer, b.byteOffset, n);
    }
    case "I32": {
      const b = aligned(t.bytes, 4);
      return new Int32Array(b.buffer, b.byteOffset, n);
    }
    case "I16": {
      const b = aligned(t.bytes, 2);
      return new Int16Array(b.buffer, b.byteOffset, n);
    }
    case "I8":
      return new Int8Array(t.bytes.buffer, t.bytes.byteOffset, n);
    case "U8":
    case "BOOL":
      return t.bytes;
    default:
      throw new Error(`dtype ${t.dtype} is not an integer type`);
  }
}

/** Stored float encodings for writing. */
export type FloatDtype = "F32" | "F16" | "BF16";

/** Encodes a float32 tensor as a raw tensor of `dtype` (rounding to nearest even). */
export function encodeTensor(t: Tensor, dtype: FloatDtype = "F32"): RawTensor {
  switch (dtype) {
    case "F32":
      return { dtype, shape: [...t.shape], bytes: new Uint8Array(t.data.slice().buffer) };
    case "F16":
      return { dtype, shape: [...t.shape], bytes: new Uint8Array(toF16(t.data).buffer) };
    case "BF16":
      return { dtype, shape: [...t.shape], bytes: new Uint8Array(toBf16(t.data).buffer) };
  }
}

/** Serialises tensors (in the map's order, data 8-byte aligned) with optional string metadata. */
export function writeSafetensors(tensors: Map<string, RawTensor>, metadata?: Record<string, string>): Uint8Array {
  const header: Record<string, unknown> = {};
  if (metadata && Object.keys(metadata).length) header.__metadata__ = metadata;
  let off = 0;
  const entries = [...tensors.entries()];
  for (const [name, t] of entries) {
    const len = numel(t.shape) * DTYPE_BYTES[t.dtype];
    if (t.bytes.byteLength !== len) {
      throw new Error(`${name}: ${t.bytes.byteLength} bytes, ${t.dtype} [${t.shape.join(", ")}] needs ${len}`);
    }
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [off, off + len] };
    off += len;
  }
  let json = JSON.stringify(header);
  // Pad the header with spaces so the data starts 8-byte aligned, as the reference writer does.
  const enc = new TextEncoder();
  let hbytes = enc.encode(json);
  const pad = (8 - ((8 + hbytes.byteLength) % 8)) % 8;
  if (pad) {
    json += " ".repeat(pad);
    hbytes = enc.encode(json);
  }
  const out = new Uint8Array(8 + hbytes.byteLength + off);
  new DataView(out.buffer).setBigUint64(0, BigInt(hbytes.byteLength), true);
  out.set(hbytes, 8);
  let p = 8 + hbytes.byteLength;
  for (const [, t] of entries) {
    out.set(t.bytes, p);
    p += t.bytes.byteLength;
  }
  return out;
}

/** The index of the first NaN or ±Inf in `data`, or -1 when every value is finite. */
export function firstNonFinite(data: Float32Array): number {
  // x * 0 is 0 for every finite x and NaN for NaN and ±Inf: one multiply-add per value, no branch.
  let acc = 0;
  for (let i = 0; i < data.length; i++) acc += data[i] * 0;
  if (acc === 0) return -1;
  for (let i = 0; i < data.length; i++) if (!Number.isFinite(data[i])) return i;
  return -1;
}

/** Floating dtypes; the others (integers, bool) are not weights. */
export function isFloatDtype(d: Dtype): d is "F32" | "F16" | "BF16" | "F64" {
  return d === "F32" || d === "F16" || d === "BF16" || d === "F64";
}

/**
 * All floating tensors of a parsed file as float32 weights (integer tensors are skipped). A tensor
 * holding NaN or ±Inf is refused, naming the file and the tensor: a model, adapter or checkpoint
 * with them would sample from NaN log-probabilities and train NaN into every export.
 */
export function safetensorsToWeights(file: SafetensorsFile, into: Weights = new Map()): Weights {
  for (const [name, t] of file.tensors) {
    if (!isFloatDtype(t.dtype)) continue;
    const data = rawToF32(t, name);
    const bad = firstNonFinite(data);
    if (bad >= 0) {
      throw new Error(
        `${file.name ?? "safetensors"}: tensor ${name} holds ${data[bad]} at element ${bad}; weights must be finite`,
      );
    }
    into.set(name, { shape: t.shape, data });
  }
  return into;
}

/** Serialises float32 weights as one safetensors file stored in `dtype`. */
export function weightsToSafetensors(
  w: Weights,
  dtype: FloatDtype = "F32",
  metadata: Record<string, string> = { format: "pt" },
): Uint8Array {
  const raw = new Map<string, RawTensor>();
  for (const [name, t] of w) raw.set(name, encodeTensor(t, dtype));
  return writeSafetensors(raw, metadata);
}

/** Splits weights into shards of at most `maxShardBytes` (a tensor is never split), named as transformers does. */
export function writeShardedSafetensors(
  w: Weights,
  maxShardBytes: number,
  dtype: FloatDtype = "F32",
): { index: ShardIndex; files: Map<string, Uint8Array> } {
  const groups: [string, Tensor][][] = [[]];
  let size = 0;
  let total = 0;
  for (const entry of w) {
    const bytes = numel(entry[1].shape) * DTYPE_BYTES[dtype];
    total += bytes;
    if (size > 0 && size + bytes > maxShardBytes) {
      groups.push([]);
      size = 0;
    }
    groups[groups.length - 1].push(entry);
    size += bytes;
  }
  const n = groups.length;
  const files = new Map<string, Uint8Array>();
  const weight_map: Record<string, string> = {};
  groups.forEach((g, i) => {
    const file = `model-${String(i + 1).padStart(5, "0")}-of-${String(n).padStart(5, "0")}.safetensors`;
    for (const [name] of g) weight_map[name] = file;
    files.set(file, weightsToSafetensors(new Map(g), dtype));
  });
  return { index: { metadata: { total_size: total }, weight_map }, files };
}

/** Parses `model.safetensors.index.json`; returns the shard file names in first-use order too. */
export function parseShardIndex(text: string, name = "model.safetensors.index.json"): ShardIndex & { files: string[] } {
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch (e) {
    throw new Error(`${name}: not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  if (!isRecord(j) || !isRecord(j.weight_map)) throw new Error(`${name}: no weight_map object`);
  const weight_map: Record<string, string> = {};
  const files: string[] = [];
  for (const [k, v] of Object.entries(j.weight_map)) {
    if (typeof v !== "string") throw new Error(`${name}: weight_map[${k}] is not a file name`);
    weight_map[k] = v;
    if (!files.includes(v)) files.push(v);
  }
  return { metadata: isRecord(j.metadata) ? j.metadata : {}, weight_map, files };
}
