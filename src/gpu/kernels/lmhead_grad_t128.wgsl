// Fused vocabulary head, backward, on 128x128 tiles: the logit gradient of one vocabulary chunk,
//   dz (N, vCount) = g (1[v = t] - p) - gEnt p (z - lse + entropy),  p = exp(z - lse),
// recomputing z = scale * h W^T for the chunk on a 128x128 tile: thread (tx, ty) of a 16x16 workgroup holds the 8x8
// block of rows 4 ty + i and 64 + 4 ty + i, columns 4 tx + j and 64 + 4 tx + j. Rows with a target >= V are ignored
// by the logp term (they still get the entropy term).

// Dims, the bindings and HAS_ENT: at the end of this file; the FMA block: matmul_fma8x8.wgsl, included
// (wgsl-template.ts).

const TS: u32 = 128u;
const TK: u32 = 16u;
const TSV: u32 = 33u; // row stride of the tiles in vec4 (32 + 1 against bank conflicts of the k-fastest fills)

// (TK, TSV) tiles: element m of row k at tile[k * TSV + m / 4][m % 4].
var<workgroup> tileA: array<vec4f, TK * TSV>;
var<workgroup> tileB: array<vec4f, TK * TSV>;

// dz of row `row` at columns col .. col + 3 of the chunk (those inside it) from their unscaled logits v.
fn put(row: u32, col: u32, v: vec4f) {
  if (row >= dims.N) { return; }
  let t = targets[row];
  let l = lse[row];
  let gr = select(0.0, g[row], t < dims.V);
  var ent = 0.0;
  var ge = 0.0;
  if (HAS_ENT) {
    ent = entropy[row];
    ge = gEnt[row];
  }
  for (var q = 0u; q < 4u; q++) {
    if (col + q >= dims.vCount) { continue; }
    let z = v[q] * dims.scale;
    let p = exp(z - l);
    var d = gr * (select(0.0, 1.0, dims.vStart + col + q == t) - p);
    if (HAS_ENT) { d -= ge * p * (z - l + ent); }
    dz[row * dims.vCount + col + q] = d;
  }
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wg.y * TS;
  let col0 = wg.x * TS;
  let tx = lid.x;
  let ty = lid.y;
  let tid = ty * 16u + tx;
  var r0l = vec4f(0.0); var r0r = vec4f(0.0); var r1l = vec4f(0.0); var r1r = vec4f(0.0);
  var r2l = vec4f(0.0); var r2r = vec4f(0.0); var r3l = vec4f(0.0); var r3r = vec4f(0.0);
  var r4l = vec4f(0.0); var r4r = vec4f(0.0); var r5l = vec4f(0.0); var r5r = vec4f(0.0);
  var r6l = vec4f(0.0); var r6r = vec4f(0.0); var r7l = vec4f(0.0); var r7r = vec4f(0.0);
  for (var k0 = 0u; k0 < dims.C; k0 += TK) {
    // 256 threads load the 128 x TK elements of h and of W, k fastest (memory order).
    for (var i = 0u; i < TS * TK / 256u; i++) {
      let e = tid + i * 256u;
      let kk = e % TK;
      let nn = e / TK;
      var a = 0.0;
      if (row0 + nn < dims.N && k0 + kk < dims.C) { a = h[(row0 + nn) * dims.C + k0 + kk]; }
      tileA[kk * TSV + nn / 4u][nn % 4u] = a;
      var b = 0.0;
      if (col0 + nn < dims.vCount && k0 + kk < dims.C) { b = w[(col0 + nn) * dims.C + k0 + kk]; }
      tileB[kk * TSV + nn / 4u][nn % 4u] = b;
    }
    workgroupBarrier();
    for (var kk = 0u; kk < TK; kk++) {
      // #include matmul_fma8x8.wgsl
    }
    workgroupBarrier();
  }
  // #include matmul_store8x8.wgsl STORE=put
}


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
