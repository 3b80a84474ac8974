// The dense f32 matrix a q4 weight (onnxruntime's MatMulNBits layout: 4 bits, block 32) stands for, written whole
// into a scratch buffer so that an f32 product kernel can read it (knob q4deq, q4matmul.ts encodeQ4Dequant).
// Each value is (f32(q) - zp) * scale, the expression the q4 product kernels apply in their tile loaders, so the
// matrix holds bitwise the values those kernels multiply with.
//   TRANSPOSED = false: out (Nout, K), row n holding W's row n: thread (x = packed word of the row, y = n) reads one u32
//     (8 values of one block) and writes them as two vec4 (K % 4 == 0).
//   TRANSPOSED = true: out (K, Nout), W^T: thread (x = quad of rows n0..n0+3, y = packed word) reads that word of four
//     rows and writes 8 vec4, one per k, each the four rows' values (Nout % 4 == 0); a subgroup writes 512
//     contiguous bytes per k.

struct Dims {
  Nout: u32,
  K: u32,
  nb: u32,      // blocks per row of W: ceil(K / 32)
  zpBytes: u32, // zero-point bytes per row of W: ceil(nb / 2)
}

@group(0) @binding(0) var<storage, read> wq: array<u32>;          // (Nout, nb, 16) bytes, low nibble first
@group(0) @binding(1) var<storage, read> scales: array<f32>;      // (Nout, nb)
@group(0) @binding(2) var<storage, read> zp: array<u32>;          // (Nout, zpBytes) bytes; unused unless HAS_ZP
@group(0) @binding(3) var<storage, read_write> out: array<vec4f>; // (Nout, K) or (K, Nout)
@group(0) @binding(4) var<uniform> dims: Dims;

override HAS_ZP: bool = false;
override TRANSPOSED: bool = false;

fn zeroPoint(n: u32, blk: u32) -> f32 {
  if (!HAS_ZP) { return 8.0; }
  let byteIdx = n * dims.zpBytes + blk / 2u;
  return f32((zp[byteIdx / 4u] >> (8u * (byteIdx % 4u) + 4u * (blk % 2u))) & 15u);
}

fn nibbles(word: u32, first: u32) -> vec4f {
  return vec4f(f32((word >> (4u * first)) & 15u), f32((word >> (4u * first + 4u)) & 15u),
               f32((word >> (4u * first + 8u)) & 15u), f32((word >> (4u * first + 12u)) & 15u));
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let words = dims.nb * 4u; // packed u32 words per row of W
  if (!TRANSPOSED) {
    let w = gid.x;
    let n = gid.y;
    if (w >= words || n >= dims.Nout) { return; }
    let blk = w / 4u;
    let s = scales[n * dims.nb + blk];
    let z = zeroPoint(n, blk);
    let word = wq[n * words + w];
    let k = w * 8u;
    let base = (n * dims.K + k) / 4u;
    if (k < dims.K) { out[base] = (nibbles(word, 0u) - z) * s; }
    if (k + 4u < dims.K) { out[base + 1u] = (nibbles(word, 4u) - z) * s; }
    return;
  }
  let n0 = gid.x * 4u;
  let w = gid.y;
  if (n0 >= dims.Nout || w >= words) { return; }
  let blk = w / 4u;
  let s = vec4f(scales[n0 * dims.nb + blk], scales[(n0 + 1u) * dims.nb + blk], scales[(n0 + 2u) * dims.nb + blk], scales[(n0 + 3u) * dims.nb + blk]);
  let z = vec4f(zeroPoint(n0, blk), zeroPoint(n0 + 1u, blk), zeroPoint(n0 + 2u, blk), zeroPoint(n0 + 3u, blk));
  let q = vec4u(wq[n0 * words + w], wq[(n0 + 1u) * words + w], wq[(n0 + 2u) * words + w], wq[(n0 + 3u) * words + w]);
  let k0 = w * 8u;
  for (var i = 0u; i < 8u; i++) {
    let k = k0 + i;
    if (k >= dims.K) { break; }
    let v = vec4f((q >> vec4u(4u * i)) & vec4u(15u));
    out[(k * dims.Nout + n0) / 4u] = (v - z) * s;
  }
}
