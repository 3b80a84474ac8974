import { assert } from "../../../tests/assert.ts";
import { GENERATED, generatedFile } from "./generate.ts";

Deno.test("generated kernels: the checked-in files in src/gpu/kernels/generated/ are current (else: deno run -A src/gpu/kernels/generate.ts)", () => {
  const dir = new URL("./generated/", import.meta.url);
  const names = Object.keys(GENERATED);
  const present = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  assert(
    JSON.stringify(present) === JSON.stringify([...names].sort()),
    `generated/ holds ${present.join(", ")}; the table names ${names.join(", ")}`,
  );
  for (const name of names) {
    assert(
      Deno.readTextFileSync(new URL(name, dir)) === generatedFile(name),
      `${name} is stale: run deno run -A src/gpu/kernels/generate.ts`,
    );
  }
});
