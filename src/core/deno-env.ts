// Reading an environment variable from code that also runs in the browser: Deno's environment where there is one,
// undefined in a page, without --allow-env, or for an unset variable.

/** The variable `name` under Deno (benchmarks, the CLI, tests); undefined elsewhere or when it cannot be read. */
export function denoEnv(name: string): string | undefined {
  const deno = (globalThis as { Deno?: { env: { get(k: string): string | undefined } } }).Deno;
  try {
    return deno?.env.get(name);
  } catch {
    return undefined; // no --allow-env
  }
}
