import { resolve } from "node:path";
import { noopBuilder } from "../../builders/command-builder.js";
import { InputError } from "../../core/kernel/errors.js";
import type { RunFlags } from "../../runner/host/run-flags.js";
import { loadTask } from "../../runner/task-source/load-task.js";
import { exitCodeOf } from "../output/exit-codes.js";
import type { CommandIO } from "../output/io.js";
import { printEnvelope } from "../output/verdict-lines.js";
import { reportTargets, writeReports } from "../report/write-reports.js";
import { executeRun } from "./execute-run.js";

/** `loopgate verify TASK --workspace DIR`: checks work produced elsewhere, one attempt, no builder. */
export async function verifyCommand(io: CommandIO, taskPath: string, flags: RunFlags): Promise<number> {
  if (!flags.workspace)
    throw new InputError("verify needs --workspace DIR, the folder holding the work", "loopgate verify");
  const reports = reportTargets(flags);
  const loaded = loadTask(taskPath);
  const env = await executeRun(io, loaded, noopBuilder(), flags, { workFrom: resolve(flags.workspace) });
  printEnvelope(io, env, flags);
  for (const file of await writeReports(env, reports)) io.err(`loopgate: wrote ${file}\n`);
  return exitCodeOf(env.status);
}
