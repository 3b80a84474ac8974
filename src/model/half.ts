// IEEE half (f16) and bfloat16 <-> float32 conversion, bit-exact with round-to-nearest-even,
// as PyTorch's `.to(torch.float16)` / `.to(torch.bfloat16)` do.

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** float32 value -> f16 bits (round to nearest even; overflow to inf; NaN kept quiet). */
export function f32ToF16Bits(x: number): number {
  f32[0] = x;
  const b = u32[0];
  const sign = (b >>> 16) & 0x8000;
  const exp = (b >>> 23) & 0xff;
  let mant = b & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  // Unbiased exponent rebased to f16's bias of 15.
  const e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // Subnormal f16 (or zero): shift the implicit-one mantissa right, rounding to nearest even.
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = 1 << (shift - 1);
    const rest = mant & ((1 << shift) - 1);
    let m = mant >>> shift;
    if (rest > half || (rest === half && (m & 1))) m++;
    return sign | m;
  }
  let h = sign | (e << 10) | (mant >>> 13);
  const rest = mant & 0x1fff;
  // A carry out of the mantissa correctly bumps the exponent (up to inf).
  if (rest > 0x1000 || (rest === 0x1000 && (h & 1))) h++;
  return h;
}

/** f16 bits -> float32 value (exact). */
export function f16BitsToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** float32 value -> bfloat16 bits (round to nearest even; NaN kept quiet). */
export function f32ToBf16Bits(x: number): number {
  f32[0] = x;
  const b = u32[0];
  if ((b & 0x7f800000) === 0x7f800000 && (b & 0x7fffff)) return ((b >>> 16) | 0x40) & 0xffff;
  const rounded = b + 0x7fff + ((b >>> 16) & 1);
  return (rounded >>> 16) & 0xffff;
}

/** bfloat16 bits -> float32 value (exact). */
export function bf16BitsToF32(h: number): number {
  u32[0] = (h & 0xffff) << 16;
  return f32[0];
}

/** Float32Array -> f16 bits. */
export function toF16(x: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = f32ToF16Bits(x[i]);
  return out;
}

let f16Table: Float32Array | null = null;

/** f16 bits -> Float32Array (through a 64K-entry table, built on first use: checkpoints hold ~1e9 values). */
export function fromF16(h: ArrayLike<number>): Float32Array {
  if (!f16Table) {
    f16Table = new Float32Array(0x10000);
    for (let i = 0; i < 0x10000; i++) f16Table[i] = f16BitsToF32(i);
  }
  const t = f16Table;
  const out = new Float32Array(h.length);
  for (let i = 0; i < h.length; i++) out[i] = t[h[i] & 0xffff];
  return out;
}

/** Float32Array -> bfloat16 bits. */
export function toBf16(x: ArrayLike<number>): Uint16Array {
  const out = new Uint16Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = f32ToBf16Bits(x[i]);
  return out;
}

/** bfloat16 bits -> Float32Array. */
export function fromBf16(h: ArrayLike<number>): Float32Array {
  const out = new Float32Array(h.length);
  const o32 = new Uint32Array(out.buffer);
  for (let i = 0; i < h.length; i++) o32[i] = (h[i] & 0xffff) << 16;
  return out;
}
