// One block of a captured decoder's block-diagonal LoRA B (model/captured.ts, decoder.ts LoraStack): a
// target's B (f, r), row-major as the policy feeds it, written into rows row0..row0+f-1 and columns
// col0..col0+r-1 of the stacked B (F, R). The other blocks' entries are left as they are (zeros).
// Exact (f32 moves). Dimension letters: f, r the part's outputs and rank, R the stacked rank.

struct Params {
  f: u32,
  r: u32,
  R: u32,
  row0: u32,
  col0: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<storage, read> src: array<f32>;        // (f, r) the part's B
@group(0) @binding(1) var<storage, read_write> dst: array<f32>;  // (F, R) the stacked B
@group(0) @binding(2) var<uniform> p: Params;

// x: element i of the part's f * r values, 256 a workgroup; y: 65535 workgroups a step along x.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3u) {
  let i = gid.x + gid.y * 65535u * 256u;
  if (i >= p.f * p.r) { return; }
  let row = i / p.r;
  let col = i - row * p.r;
  dst[(p.row0 + row) * p.R + p.col0 + col] = src[i];
}
