// Entry point of the `rlvr` command under Deno. Every command prints one JSON object as the last
// line of standard output; on error the message goes to standard error, `{"ok":false,...}` to
// standard output, and the exit code is non-zero.
import { UsageError } from "./args.ts";
import { selectWebGpuFromArgs, takeWebGpuFlag } from "../gpu/engine.deno.ts";
import { COMMANDS } from "./commands/index.ts";

function help(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  const lines = Object.entries(COMMANDS).map(([k, c]) => `  ${k.padEnd(width)}  ${c.summary}`);
  return `rlvr — RLVR Lab from the command line (runs under Deno)\n\nUsage: rlvr <command> [flags]\n\nCommands:\n${
    lines.join("\n")
  }\n\nrlvr <command> --help shows a command's flags.`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    console.log(help());
    console.log(JSON.stringify({ ok: true, commands: Object.keys(COMMANDS) }));
    return 0;
  }
  const entry = COMMANDS[name];
  if (!entry) throw new UsageError(`unknown command "${name}"; rlvr --help lists the commands`);
  if (args.includes("--help") || args.includes("-h")) {
    const { command } = await entry.load();
    console.log(`rlvr ${command.name} — ${command.summary}\n\n${command.usage}`);
    console.log(JSON.stringify({ ok: true, command: command.name }));
    return 0;
  }
  // The WebGPU engine is chosen before the command loads anything that asks for a GPU (--webgpu,
  // RLVR_WEBGPU; by default Dawn where it starts). Commands without a GPU take the flag and ignore it.
  let rest: string[];
  try {
    rest = entry.gpu ? (await selectWebGpuFromArgs(args)).rest : takeWebGpuFlag(args).rest;
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
  const { command } = await entry.load();
  const result = await command.run(rest);
  console.log(JSON.stringify({ ok: true, ...result }));
  return 0;
}

try {
  Deno.exit(await main(Deno.args));
} catch (e) {
  const msg = e instanceof Error ? e.message : String(e);
  console.error(`rlvr: ${msg}`);
  if (!(e instanceof UsageError) && e instanceof Error && e.stack && Deno.env.get("RLVR_DEBUG")) console.error(e.stack);
  console.log(JSON.stringify({ ok: false, error: msg }));
  Deno.exit(e instanceof UsageError ? 2 : 1);
}
