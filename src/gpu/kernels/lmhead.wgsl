// Fused vocabulary head, forward pass 1 of 2: per row and per vocabulary slice, the online-softmax
// partials of z = scale * h W^T (max m, sum s = sum e^(z-m), sum e^(z-m) z, and the target's logit when it
// falls in the slice), so the (N, V) logits never exist. Each 16x16 workgroup owns 64 rows and VS
// columns of one window of W (a window keeps the binding under maxStorageBufferBindingSize); it
// walks its columns in 64x64 tiles (the matmul.wgsl scheme), each thread keeping running partials
// for its 4 rows, merged across the 16 threads of a row at the end. lmhead_combine.wgsl finishes.

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

const TS: u32 = 64u;
const TK: u32 = 16u;
const RT: u32 = 4u;
const NEG: f32 = -1.0e30;

var<workgroup> tileA: array<f32, 1024>; // (TK, TS) of h; reused for the final merge as (64 rows, 16 threads)
var<workgroup> tileB: array<f32, 1024>; // (TK, TS) of W

fn rowMax(i: u32) -> f32 {
  var x = tileA[i * 16u];
  for (var j = 1u; j < 16u; j++) { x = max(x, tileA[i * 16u + j]); }
  return x;
}

fn rowSum(i: u32) -> f32 {
  var x = 0.0;
  for (var j = 0u; j < 16u; j++) { x += tileA[i * 16u + j]; }
  return x;
}

@compute @workgroup_size(16, 16)
fn main(@builtin(workgroup_id) wg: vec3u, @builtin(local_invocation_id) lid: vec3u) {
  let row0 = wg.y * TS;
  let tid = lid.y * 16u + lid.x;
  let c0 = wg.x * dims.VS;
  let cEnd = min(c0 + dims.VS, dims.vCount);
  var m: array<f32, 4>;
  var s: array<f32, 4>;
  var zs: array<f32, 4>;
  var zt: array<f32, 4>;
  var tgt: array<u32, 4>;
  for (var r = 0u; r < RT; r++) {
    m[r] = NEG;
    zt[r] = NEG;
    let row = row0 + lid.y * RT + r;
    tgt[r] = select(0xffffffffu, targets[min(row, dims.N - 1u)], row < dims.N);
  }
  for (var v0 = c0; v0 < cEnd; v0 += TS) {
    var acc: array<f32, 16>;
    for (var i = 0u; i < 16u; i++) { acc[i] = 0.0; } // explicit: not every compiler re-zeroes a loop-local var
    for (var k0 = 0u; k0 < dims.C; k0 += TK) {
      for (var i = 0u; i < 4u; i++) {
        let e = tid + i * 256u;
        let kk = e % TK;
        let nn = e / TK;
        var a = 0.0;
        if (row0 + nn < dims.N && k0 + kk < dims.C) { a = h[(row0 + nn) * dims.C + k0 + kk]; }
        tileA[kk * TS + nn] = a;
        var b = 0.0;
        if (v0 + nn < cEnd && k0 + kk < dims.C) { b = w[(v0 + nn) * dims.C + k0 + kk]; }
        tileB[kk * TS + nn] = b;
      }
      workgroupBarrier();
      for (var kk = 0u; kk < TK; kk++) {
        var av: array<f32, 4>;
        var bv: array<f32, 4>;
        for (var r = 0u; r < RT; r++) {
          av[r] = tileA[kk * TS + lid.y * RT + r];
          bv[r] = tileB[kk * TS + lid.x * RT + r];
        }
        for (var r = 0u; r < RT; r++) {
          for (var q = 0u; q < RT; q++) { acc[r * RT + q] = fma(av[r], bv[q], acc[r * RT + q]); }
        }
      }
      workgroupBarrier();
    }
    for (var r = 0u; r < RT; r++) {
      var mt = m[r];
      for (var q = 0u; q < RT; q++) {
        if (v0 + lid.x * RT + q < cEnd) { mt = max(mt, acc[r * RT + q] * dims.scale); }
      }
      let alpha = exp(m[r] - mt);
      var sr = s[r] * alpha;
      var zr = zs[r] * alpha;
      for (var q = 0u; q < RT; q++) {
        let col = v0 + lid.x * RT + q;
        if (col < cEnd) {
          let z = acc[r * RT + q] * dims.scale;
          let e = exp(z - mt);
          sr += e;
          zr = fma(e, z, zr);
          if (dims.vStart + col == tgt[r]) { zt[r] = z; }
        }
      }
      m[r] = mt;
      s[r] = sr;
      zs[r] = zr;
    }
  }
  // Merge the 16 threads of each row through tileA: max first, then the rescaled sums.
  var big: array<f32, 4>;
  for (var r = 0u; r < RT; r++) { tileA[(lid.y * RT + r) * 16u + lid.x] = m[r]; }
  workgroupBarrier();
  for (var r = 0u; r < RT; r++) { big[r] = rowMax(lid.y * RT + r); }
  workgroupBarrier();
  for (var r = 0u; r < RT; r++) { tileA[(lid.y * RT + r) * 16u + lid.x] = s[r] * exp(m[r] - big[r]); }
  workgroupBarrier();
  for (var r = 0u; r < RT; r++) { s[r] = rowSum(lid.y * RT + r); }
  workgroupBarrier();
  for (var r = 0u; r < RT; r++) { tileA[(lid.y * RT + r) * 16u + lid.x] = zs[r] * exp(m[r] - big[r]); }
  workgroupBarrier();
  for (var r = 0u; r < RT; r++) { zs[r] = rowSum(lid.y * RT + r); }
  workgroupBarrier();
  for (var r = 0u; r < RT; r++) { tileA[(lid.y * RT + r) * 16u + lid.x] = zt[r]; }
  workgroupBarrier();
  for (var r = 0u; r < RT; r++) { zt[r] = rowMax(lid.y * RT + r); }
  if (lid.x != 0u) { return; }
  for (var r = 0u; r < RT; r++) {
    let row = row0 + lid.y * RT + r;
    if (row >= dims.N) { continue; }
    let base = (row * dims.nSplit + dims.splitBase + wg.x) * 4u;
    part[base] = big[r];
    part[base + 1u] = s[r];
    part[base + 2u] = zs[r];
    part[base + 3u] = zt[r];
  }
}
