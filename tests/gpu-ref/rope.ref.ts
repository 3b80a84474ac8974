// Float64 CPU reference of rope.wgsl. Dimension letters: N rows, H heads, D head dim (even).
import type { RopeDims } from "../../src/gpu/kernels/rope.ts";
export type { RopeDims };

/**
 * Rotary embedding (rotate_half convention) of x (N, H, D), or its backward (rotation by -angle)
 * when `backward`. The angle is the float32 product pos * invFreq, as Hugging Face forms it;
 * cos and sin are then taken in float64.
 */
export function ropeRef(
  x: ArrayLike<number>,
  pos: ArrayLike<number>,
  invFreq: ArrayLike<number>,
  d: RopeDims,
  backward = false,
): Float64Array {
  const { N, H, D } = d;
  const half = D / 2;
  const y = new Float64Array(N * H * D);
  for (let n = 0; n < N; n++) {
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < half; i++) {
        const angle = Math.fround(pos[n] * invFreq[i]);
        const c = Math.cos(angle);
        const s = backward ? -Math.sin(angle) : Math.sin(angle);
        const lo = (n * H + h) * D + i;
        y[lo] = x[lo] * c - x[lo + half] * s;
        y[lo + half] = x[lo + half] * c + x[lo] * s;
      }
    }
  }
  return y;
}

/** Hugging Face's default inverse frequencies base^(-2i/D), i < D/2, as float32. */
export function defaultInvFreq(D: number, base: number): Float32Array {
  const out = new Float32Array(D / 2);
  for (let i = 0; i < D / 2; i++) out[i] = 1 / Math.pow(base, (2 * i) / D);
  return out;
}
