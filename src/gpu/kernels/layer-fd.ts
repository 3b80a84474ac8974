// Central finite differences in float64, to prove the backward references of the layer kernels.
import { assertClose } from "../../../tests/assert.ts";

/**
 * Checks `analytic` = d/dx sum(dy * f(x)) element by element against central differences of the
 * float64 function `f`, with step `h`; returns the largest absolute error.
 */
export function checkGradFd(
  f: (x: Float64Array) => ArrayLike<number>,
  x: ArrayLike<number>,
  dy: ArrayLike<number>,
  analytic: ArrayLike<number>,
  name: string,
  tol: { atol?: number; rtol?: number; h?: number } = {},
): number {
  const { atol = 1e-7, rtol = 1e-6, h = 1e-6 } = tol;
  const xs = Float64Array.from(x);
  const loss = (): number => {
    const y = f(xs);
    let s = 0;
    for (let i = 0; i < y.length; i++) s += dy[i] * y[i];
    return s;
  };
  const numeric = new Float64Array(xs.length);
  for (let i = 0; i < xs.length; i++) {
    const x0 = xs[i];
    xs[i] = x0 + h;
    const lp = loss();
    xs[i] = x0 - h;
    const lm = loss();
    xs[i] = x0;
    numeric[i] = (lp - lm) / (2 * h);
  }
  return assertClose(analytic, numeric, { atol, rtol, name: `${name} vs finite differences` }).maxAbs;
}
