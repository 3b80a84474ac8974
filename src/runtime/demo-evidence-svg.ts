// The evidence figures as an SVG bar chart for docs/evidence.md: one panel per prompt mode, per
// split one bar per stage at the seeds' mean, a whisker from the lowest to the highest seed.
// Plain strings (no DOM), the same colours as the page's before/after chart. A measured 0% (or any
// figure lower than MIN_BAR_PX) still gets a thin bar at the baseline, so that it reads apart from a
// stage that was not run, which draws nothing.
import { type DemoEvidence, EVIDENCE_STAGES } from "./demo-evidence.ts";

const COLOURS = ["#868e96", "#4c6ef5", "#e8590c", "#2b8a3e"];
const LABELS = ["baseline", "after warm-up", "after GRPO", "self-consistency"];

/** The least height of a measured bar, in px (the page's chart: `minBarLength`). */
export const MIN_BAR_PX = 2;

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The chart; `title` goes on top. */
export function evidenceSvg(e: DemoEvidence, title: string): string {
  const modes = (["knowledge", "bird"] as const).filter((m) => Object.values(e.splits).some((s) => s[m]));
  const splits = Object.keys(e.splits);
  const W = 460, H = 300, top = 56, left = 48, bottom = 40, plotH = H - top - bottom;
  const group = (W - left - 16) / Math.max(1, splits.length), bar = Math.min(22, (group - 16) / EVIDENCE_STAGES.length);
  const width = W * modes.length;
  const y = (v: number) => top + plotH * (1 - v);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${H + 24}" viewBox="0 0 ${width} ${
      H + 24
    }" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    `<text x="8" y="18" font-size="14" font-weight="600">${esc(title)}</text>`,
  ];
  modes.forEach((mode, mi) => {
    const x0 = mi * W;
    out.push(
      `<text x="${x0 + left}" y="40" font-size="12" font-weight="600">${
        mode === "knowledge" ? "knowledge mode (no evidence)" : "BIRD mode (definitions given)"
      }</text>`,
    );
    for (let t = 0; t <= 10; t += 2) {
      const v = t / 10;
      out.push(
        `<line x1="${x0 + left}" x2="${x0 + W - 16}" y1="${y(v)}" y2="${y(v)}" stroke="#e9ecef"/>`,
        `<text x="${x0 + left - 6}" y="${y(v) + 4}" text-anchor="end" fill="#666">${t * 10}%</text>`,
      );
    }
    splits.forEach((split, si) => {
      const m = e.splits[split][mode], s = e.summary[split][mode];
      const gx = x0 + left + si * group + 8;
      out.push(
        `<text x="${gx + (bar * EVIDENCE_STAGES.length) / 2}" y="${H - bottom + 16}" text-anchor="middle">${
          esc(split)
        }</text>`,
      );
      if (!m || !s) return;
      EVIDENCE_STAGES.forEach((st, k) => {
        const f = s[st];
        if (!f) return;
        const bx = gx + k * bar;
        const h = plotH * f.mean;
        const [by, bh] = h >= MIN_BAR_PX ? [y(f.mean), h] : [y(0) - MIN_BAR_PX, MIN_BAR_PX];
        out.push(
          `<rect x="${bx}" y="${by}" width="${bar - 2}" height="${bh}" fill="${COLOURS[k]}"><title>${LABELS[k]}: ${
            (100 * f.mean).toFixed(1)
          }% (seeds ${(m[st] ?? []).map((v) => (100 * v).toFixed(1)).join(", ")})</title></rect>`,
        );
        const rc = e.recall?.[split]?.[mode]?.[st];
        if (rc?.length) {
          const r = rc.reduce((a, b) => a + b, 0) / rc.length;
          out.push(
            `<path d="M${bx + bar / 2 - 1} ${y(r) - 4} l4 4 l-4 4 l-4 -4 z" fill="#fff" stroke="#212529"><title>${
              LABELS[k]
            }: concept recall ${(100 * r).toFixed(1)}%</title></path>`,
          );
        }
        if (f.n > 1) {
          out.push(
            `<line x1="${bx + bar / 2 - 1}" x2="${bx + bar / 2 - 1}" y1="${y(f.max)}" y2="${
              y(f.min)
            }" stroke="#212529" stroke-width="1.5"/>`,
          );
        }
      });
    });
  });
  LABELS.forEach((l, k) =>
    out.push(
      `<rect x="${8 + k * 130}" y="${H + 6}" width="10" height="10" fill="${COLOURS[k]}"/>`,
      `<text x="${22 + k * 130}" y="${H + 15}">${l}</text>`,
    )
  );
  out.push(
    `<text x="${width - 8}" y="${
      H + 15
    }" text-anchor="end" fill="#666">bars: mean over seeds; whiskers: lowest to highest seed${
      e.recall ? "; ◇ concept recall" : ""
    }</text>`,
    "</svg>",
  );
  return out.join("\n") + "\n";
}
