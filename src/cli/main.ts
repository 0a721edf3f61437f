import { parseArgs } from "node:util";
import { LoopgateError } from "../core/errors.js";
import { demoCommand, packageRoot } from "./commands/demo.js";
import { doctorCommand } from "./commands/doctor.js";
import { expCommand } from "./commands/exp.js";
import { healthCommand } from "./commands/health.js";
import { eventsCommand, runsCommand, statusCommand } from "./commands/inspect.js";
import { resumeCommand } from "./commands/resume.js";
import { type RunFlags, runCommand, taskCheckCommand, verifyCommand } from "./commands/run.js";
import { selftestCommand } from "./commands/selftest.js";
import { HELP } from "./help.js";
import { type CommandIO, processIO } from "./io.js";

const options = {
  builder: { type: "string" },
  oracle: { type: "boolean" },
  noop: { type: "boolean" },
  json: { type: "boolean" },
  store: { type: "string" },
  workspace: { type: "string" },
  "builder-env": { type: "string", multiple: true },
  "builder-mount": { type: "string", multiple: true },
  network: { type: "boolean" },
  "max-attempts": { type: "string" },
  "unsafe-no-sandbox": { type: "boolean" },
  limit: { type: "string" },
  model: { type: "string" },
  record: { type: "string" },
  "base-url": { type: "string" },
  "max-turns": { type: "string" },
  "max-cost": { type: "string" },
  out: { type: "string" },
  "judge-model": { type: "string" },
  "no-step-checks": { type: "boolean" },
  "step-escalation": { type: "string" },
  days: { type: "string" },
  case: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
} as const;

/** The CLI entry: parses argv, runs one command, maps every error to a message and an exit code. */
export async function main(argv: string[], io: CommandIO = processIO): Promise<number> {
  try {
    const { values, positionals } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
    const flags = values as RunFlags & { limit?: string; help?: boolean; version?: boolean };
    const [command, ...rest] = positionals;
    if (flags.version) {
      const { readFileSync } = await import("node:fs");
      io.out(`${JSON.parse(readFileSync(`${packageRoot()}/package.json`, "utf8")).version}\n`);
      return 0;
    }
    if (!command || flags.help || command === "help") {
      io.out(HELP);
      return command || flags.help ? 0 : 2;
    }
    // A stray word (`run a.yaml b.yaml`) is refused rather than silently ignored.
    const arity: Record<string, number> = {
      run: 1,
      verify: 1,
      task: 2,
      runs: 0,
      status: 1,
      events: 1,
      demo: 0,
      selftest: 0,
      resume: 1,
      exp: 2,
      health: 0,
      doctor: 0,
    };
    const most = arity[command];
    if (most !== undefined && rest.length > most)
      throw new LoopgateError(
        "bad_input",
        `loopgate ${command}: unexpected argument ${JSON.stringify(rest[most])}; see loopgate --help`,
      );
    if (flags.case !== undefined && command !== "run")
      throw new LoopgateError("bad_input", `loopgate ${command}: --case applies only to loopgate run`);
    const need = (what: string) => {
      const v = rest[0];
      if (!v)
        throw new LoopgateError("bad_input", `loopgate ${command}: missing ${what}; see loopgate --help`);
      return v;
    };
    switch (command) {
      case "run":
        return await runCommand(io, flags.case !== undefined ? rest[0] : need("TASK"), flags);
      case "verify":
        return await verifyCommand(io, need("TASK"), flags);
      case "task":
        if (rest[0] !== "check")
          throw new LoopgateError("bad_input", "loopgate task: the only subcommand is `check TASK`");
        rest.shift();
        return await taskCheckCommand(io, need("TASK"), flags);
      case "runs":
        return await runsCommand(io, flags);
      case "status":
        return await statusCommand(io, need("RUN"), flags);
      case "events":
        return await eventsCommand(io, need("RUN"), flags);
      case "resume":
        return await resumeCommand(io, need("RUN"), flags);
      case "exp":
        return await expCommand(io, rest, flags);
      case "health":
        return await healthCommand(io, flags as { store?: string; json?: boolean; days?: string });
      case "selftest":
        return await selftestCommand(io, flags);
      case "demo":
        return await demoCommand(io, flags);
      case "doctor":
        return await doctorCommand(io, flags);
      default:
        throw new LoopgateError("bad_input", `unknown command ${command}; see loopgate --help`);
    }
  } catch (e) {
    if (e instanceof LoopgateError) {
      io.err(`${e.message.startsWith("loopgate ") ? e.message : `loopgate: ${e.message}`}\n`);
      return 2;
    }
    if (e instanceof TypeError && "code" in e && String(e.code).startsWith("ERR_PARSE_ARGS")) {
      io.err(`loopgate: ${e.message}; see loopgate --help\n`);
      return 2;
    }
    io.err(`loopgate: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    return 2;
  }
}
