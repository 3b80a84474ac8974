import { Rng } from "../../core/rng.ts";
import { addBackwardRef, addRef } from "./add.ref.ts";
import { checkGradFd } from "./layer-fd.ts";
import { scaleBackwardRef, scaleRef } from "./scale.ref.ts";

Deno.test("add and scale references: backward rules match central finite differences", () => {
  const rng = new Rng(81);
  const a = rng.uniformArray(17);
  const b = rng.uniformArray(17);
  const dout = rng.uniformArray(17);
  const [alpha, beta] = [0.75, -1.5];
  const { da, db } = addBackwardRef(dout, alpha, beta);
  const ea = checkGradFd((x) => addRef(x, b, alpha, beta), a, dout, da, "add da");
  const eb = checkGradFd((x) => addRef(a, x, alpha, beta), b, dout, db, "add db");
  const es = checkGradFd((x) => scaleRef(x, -3), a, dout, scaleBackwardRef(dout, -3), "scale dy");
  console.log(`add/scale ref: max err da ${ea.toExponential(2)} db ${eb.toExponential(2)} scale ${es.toExponential(2)}`);
});
