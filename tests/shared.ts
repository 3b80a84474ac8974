// Access to ../shared/datasets for tests that need real data; absent in a user's fresh clone.
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Absolute path of ../shared/datasets, or null (with a visible notice) when it is absent. */
export const sharedDatasets: string | null = (() => {
  const p = fileURLToPath(new URL("../../shared/datasets", import.meta.url));
  if (existsSync(p)) return p;
  console.warn(`NOTICE: ${p} is absent; tests that need the shared datasets are skipped.`);
  return null;
})();
