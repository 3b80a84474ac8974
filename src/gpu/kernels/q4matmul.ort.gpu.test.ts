// Independent check of the MatMulNBits layout: the same packed bytes through onnxruntime-web's own
// MatMulNBits (WASM provider, CPU) and through q4matmul.wgsl.
import { assertClose } from "../../../tests/assert.ts";
import { Rng } from "../../core/rng.ts";
import { createSession, ort } from "../../model/onnx/ort.ts";
import { DT, GraphBuilder } from "../../model/onnx/proto.ts";
import { poison, readF32, requestGpu, storageBuffer } from "../device.ts";
import { encodeQ4Matmul, uploadQ4 } from "./q4matmul.ts";
import { q4Geometry, q4MatmulRef, type Q4Weight } from "../../../tests/gpu-ref/q4matmul.ref.ts";

const gpu = await requestGpu();

/** The model bytes of GraphBuilder.encode(), which returns them bare or as `{ model, external }`. */
function modelBytes(encoded: unknown): Uint8Array {
  if (encoded instanceof Uint8Array) return encoded;
  if (typeof encoded === "object" && encoded !== null && "model" in encoded && encoded.model instanceof Uint8Array) {
    return encoded.model;
  }
  throw new Error("GraphBuilder.encode() returned neither bytes nor { model }");
}

async function ortMatMulNBits(x: Float32Array, w: Q4Weight, N: number): Promise<Float32Array> {
  const { nb } = q4Geometry(w.K);
  const g = new GraphBuilder("q4-check");
  const a = g.input("x", DT.float, [N, w.K]);
  const inputs = [
    a,
    g.initializer("w", { dataType: DT.uint8, dims: [w.Nout, nb, 16], data: w.packed }),
    g.initializer("scales", { dataType: DT.float, dims: [w.Nout * nb], data: w.scales }),
  ];
  if (w.zeroPoints) {
    inputs.push(g.initializer("zp", { dataType: DT.uint8, dims: [w.zeroPoints.length], data: w.zeroPoints }));
  }
  const y = g.op("MatMulNBits", inputs, { K: w.K, N: w.Nout, bits: 4, block_size: 32 }, "com.microsoft");
  g.output(y, "y", DT.float, [N, w.Nout]);
  const { session } = await createSession(modelBytes(g.encode()), "wasm", (m) => console.warn(m));
  const out = await session.run({ x: new ort.Tensor("float32", x, [N, w.K]) });
  const data = out.y.data;
  await session.release();
  if (!(data instanceof Float32Array)) throw new Error("MatMulNBits returned a non-float32 tensor");
  return data;
}

Deno.test("q4matmul agrees with onnxruntime's MatMulNBits on the same bytes (with and without zero points)", async () => {
  const { device } = gpu;
  let seed = 300;
  for (const [N, K, Nout] of [[3, 96, 17], [5, 161, 40]]) {
    for (const withZp of [false, true]) {
      const rng = new Rng(seed++);
      const { nb, zpBytes } = q4Geometry(K);
      const w: Q4Weight = {
        Nout,
        K,
        packed: new Uint8Array(Nout * nb * 16).map(() => rng.int(256)),
        scales: rng.uniformArray(Nout * nb, 0.01, 0.2),
        zeroPoints: withZp ? new Uint8Array(Nout * zpBytes).map(() => rng.int(256)) : undefined,
      };
      const x = rng.uniformArray(N * K);
      const wg = uploadQ4(device, "w", w);
      const gx = storageBuffer(device, "x", x);
      const gy = storageBuffer(device, "y", N * Nout * 4);
      poison(device, gy);
      const enc = device.createCommandEncoder({ label: "q4-ort-check" });
      await encodeQ4Matmul(device, enc, gx, wg, gy, N);
      device.queue.submit([enc.finish()]);
      const got = await readF32(device, gy);
      const viaOrt = await ortMatMulNBits(x, w, N);
      const tag = `N ${N} K ${K} Nout ${Nout} zp ${withZp}`;
      assertClose(q4MatmulRef(x, w, N), viaOrt, { atol: 1e-4, rtol: 1e-4, name: `reference vs ORT ${tag}` });
      const e = assertClose(got, viaOrt, { atol: 1e-4, rtol: 1e-4, name: `kernel vs ORT ${tag}` });
      console.log(
        `${tag}: kernel vs ORT max |err| ${e.maxAbs.toExponential(2)}; y[0..2] ${got.slice(0, 3).join(" ")} vs ${
          viaOrt.slice(0, 3).join(" ")
        }`,
      );
      for (const b of [gx, gy, wg.packed, wg.scales]) b.destroy();
      wg.zeroPoints?.destroy();
    }
  }
});
