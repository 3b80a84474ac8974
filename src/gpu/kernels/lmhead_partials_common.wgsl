// Appended by lmhead.ts to the forward pass-1 kernel (lmhead.wgsl, 64x64 tiles): the dims uniform, the bindings, and
// the merge of a row's running partials across the 16 threads of the row through workgroup memory (the kernel
// declares its tileA, at least 4 vec4 a row of its tile, as the scratch).

struct Dims {
  N: u32,
  C: u32,
  vStart: u32,    // vocabulary index of the window's first row
  vCount: u32,    // rows of W in the window
  VS: u32,        // columns per workgroup, a multiple of 64
  nSplit: u32,    // partials per row: ceil(V / VS)
  splitBase: u32, // vStart / VS
  scale: f32,     // logit multiplier (1 / temperature)
}

@group(0) @binding(0) var<storage, read> h: array<f32>;          // (N, C)
@group(0) @binding(1) var<storage, read> w: array<f32>;          // (vCount, C), rows vStart.. of W (V, C)
@group(0) @binding(2) var<storage, read> targets: array<u32>;    // (N)
@group(0) @binding(3) var<storage, read_write> part: array<f32>; // (N, nSplit, 4): m, s, sum e^(z-m) z, z_target
@group(0) @binding(4) var<uniform> dims: Dims;

const NEG: f32 = -1.0e30; // the running max before any logit, and the target's logit while unseen

// The merge scratch holds one value per (row i of the tile, thread j of 16) at flat index i * 16 + j.
fn putMerge(i: u32, j: u32, x: f32) {
  tileA[i * 4u + j / 4u][j % 4u] = x;
}

fn rowMax(i: u32) -> f32 {
  let a = max(tileA[i * 4u], tileA[i * 4u + 1u]);
  let b = max(tileA[i * 4u + 2u], tileA[i * 4u + 3u]);
  let c = max(a, b);
  return max(max(c.x, c.y), max(c.z, c.w));
}

fn rowSum(i: u32) -> f32 {
  let c = (tileA[i * 4u] + tileA[i * 4u + 1u]) + (tileA[i * 4u + 2u] + tileA[i * 4u + 3u]);
  return (c.x + c.y) + (c.z + c.w);
}
