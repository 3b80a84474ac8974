// Prepended by q4matmul.ts to each of the four q4 product kernels (q4matmul.wgsl both ways
// and the 128x128-tile variants): the dims uniform, W's bindings in onnxruntime's MatMulNBits
// layout (4 bits, block 32), the overrides every variant reads, the split-K slice bounds, and zeroPoint (the zero point of W
// row n, block blk; 8 without zero points). Each kernel declares its own input (binding 0) and
// output (binding 4), and the forward its bias (binding 6).

struct Dims {
  N: u32,
  K: u32,
  Nout: u32,
  nb: u32,      // blocks per row of W: ceil(K / 32)
  zpBytes: u32, // zero-point bytes per row of W: ceil(nb / 2)
  kSlice: u32,  // split-K (the 128-tile kernels): contracted length per slice (a multiple of 32), 0 when not split
  _p1: u32,
  _p2: u32,
}

@group(0) @binding(1) var<storage, read> wq: array<u32>;           // (Nout, nb, 16) bytes, low nibble first
@group(0) @binding(2) var<storage, read> scales: array<f32>;       // (Nout, nb)
@group(0) @binding(3) var<storage, read> zp: array<u32>;           // (Nout, zpBytes) bytes; unused unless HAS_ZP
@group(0) @binding(5) var<uniform> dims: Dims;

override HAS_ZP: bool = false;
override ACCUMULATE: bool = false; // add into the output instead of overwriting it

// Split-K: workgroup z of a split product covers the contracted range [sliceBegin(z), sliceEnd(z, total)) and
// writes its partial product to slice z of the output (the caller's scratch; a reduce sums the slices).
fn sliceBegin(z: u32) -> u32 { return z * dims.kSlice; }
fn sliceEnd(z: u32, total: u32) -> u32 {
  if (dims.kSlice == 0u) { return total; }
  return min(total, (z + 1u) * dims.kSlice);
}

fn zeroPoint(n: u32, blk: u32) -> f32 {
  if (!HAS_ZP) { return 8.0; }
  let byteIdx = n * dims.zpBytes + blk / 2u;
  return f32((zp[byteIdx / 4u] >> (8u * (byteIdx % 4u) + 4u * (blk % 2u))) & 15u);
}
