fn {{FN}}(base: u32, c4: u32) -> vec4f {
  var x = vec4f(0.0);
  for (var i = 0u; i < 4u; i++) { if (c4 * 4u + i < D) { x[i] = {{BUF}}[base + c4 * 4u + i]; } }
  return x;
}
