// Where key block kb's partial dq of query row t, head h starts in the scratch dqp (the fused dq): appended by
// attention.ts to attention_bwd_dkv_rb.wgsl (which writes the partials) and attention_dq_reduce.wgsl (which sums
// them). Causal, so block kb (keys kb BK .. kb BK + BK - 1) has partials only for rows t >= kb BK: its region holds
// (B, T - kb BK, H, D / 4) vec4 and the regions follow one another, (T + (T - BK) + ... ) B H D / 4 vec4 in all,
// about half of a full (T / BK, B, T, H, D / 4). Reads dims (B, T, H), the override BK and D4 of the kernel.
fn dqpAt(kb: u32, b: u32, t: u32, h: u32) -> u32 {
  let j0 = kb * BK;
  let rowsBefore = kb * dims.T - BK * ((kb * kb - kb) / 2u); // sum over blocks k < kb of T - k BK
  return ((rowsBefore * dims.B + b * (dims.T - j0) + (t - j0)) * dims.H + h) * D4;
}
