import { Rng } from "../../src/core/rng.ts";
import { checkGradFd } from "./layer-fd.ts";
import { rmsnormBackwardRef, type RmsNormDims, rmsnormForwardRef } from "./rmsnorm.ref.ts";

Deno.test("rmsnorm reference: dx and dw match central finite differences of the forward", () => {
  for (const [rows, C, seed] of [[1, 1, 1], [3, 7, 2], [4, 33, 3]]) {
    const d: RmsNormDims = { rows, C, eps: 1e-6 };
    const rng = new Rng(seed);
    const x = rng.uniformArray(rows * C);
    const w = rng.uniformArray(C, 0.5, 1.5);
    const dy = rng.uniformArray(rows * C);
    const { dx, dw } = rmsnormBackwardRef(dy, x, w, d);
    const ex = checkGradFd((xx) => rmsnormForwardRef(xx, w, d).y, x, dy, dx, `dx ${rows}x${C}`);
    const ew = checkGradFd((ww) => rmsnormForwardRef(x, ww, d).y, w, dy, dw, `dw ${rows}x${C}`);
    console.log(`rmsnorm ref ${rows}x${C}: max |dx - fd| ${ex.toExponential(2)}, max |dw - fd| ${ew.toExponential(2)}`);
  }
});
