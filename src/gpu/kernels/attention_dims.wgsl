// The dims and row addresses of the attention kernels (attention.ts appends this file to each): the
// register-blocked kernels (with attention_rb_common.wgsl), attention_delta.wgsl, attention_dq_reduce.wgsl and
// attention_dkv_reduce.wgsl.
// Dims is attention.ts's dimsUniform; the functions read the binding `dims` and the override D4 (vec4 columns of a row,
// D / 4) of the kernel. Glossary as attention_rb.wgsl: B batch, T tokens, H query heads, Hkv kv heads, D head dim.

struct Dims {
  B: u32,
  T: u32,
  H: u32,
  Hkv: u32,
  scale: f32,
  _p0: u32,
  _p1: u32,
  _p2: u32,
}

// Vec4 index of column 0 of query row t, head h in q, o, dout, dq (B, T, H, D / 4).
fn qRow(b: u32, t: u32, h: u32) -> u32 {
  return ((b * dims.T + t) * dims.H + h) * D4;
}

// Vec4 index of column 0 of key row j, kv head hk in k, v, dk, dv (B, T, Hkv, D / 4).
fn kvRow(b: u32, j: u32, hk: u32) -> u32 {
  return ((b * dims.T + j) * dims.Hkv + hk) * D4;
}

// Index of query row t, head h in lse and delta (B, H, T).
fn statAt(b: u32, h: u32, t: u32) -> u32 {
  return (b * dims.H + h) * dims.T + t;
}
