// Appended by lmhead.ts to the dz kernel (lmhead_grad_t128.wgsl): the dims uniform, the bindings and the entropy
// override.

struct Dims {
  N: u32,
  C: u32,
  V: u32,
  vStart: u32, // vocabulary index of the chunk's first row
  vCount: u32, // rows of W in the chunk
  scale: f32,  // logit multiplier (1 / temperature)
  _p1: u32,
  _p2: u32,
}

@group(0) @binding(0) var<storage, read> h: array<f32>;          // (N, C)
@group(0) @binding(1) var<storage, read> w: array<f32>;          // (vCount, C), rows vStart.. of W (V, C)
@group(0) @binding(2) var<storage, read> targets: array<u32>;    // (N)
@group(0) @binding(3) var<storage, read> lse: array<f32>;        // (N), from the forward
@group(0) @binding(4) var<storage, read> g: array<f32>;          // (N) upstream gradient of logp
@group(0) @binding(5) var<storage, read> entropy: array<f32>;    // (N), read only when HAS_ENT
@group(0) @binding(6) var<storage, read> gEnt: array<f32>;       // (N) upstream gradient of entropy, when HAS_ENT
@group(0) @binding(7) var<storage, read_write> dz: array<f32>;   // (N, vCount)
@group(0) @binding(8) var<uniform> dims: Dims;

override HAS_ENT: bool = false;
