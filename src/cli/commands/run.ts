import { InputError } from "../../core/kernel/errors.js";
import type { RunFlags } from "../../runner/host/run-flags.js";
import { loadTask } from "../../runner/task-source/load-task.js";
import { type LoadedMissionCase, loadMissionCase } from "../../runner/task-source/mission/mission-case.js";
import { localDirFrom } from "../output/context.js";
import { exitCodeOf } from "../output/exit-codes.js";
import type { CommandIO } from "../output/io.js";
import { printEnvelope } from "../output/verdict-lines.js";
import { reportTargets, writeReports } from "../report/write-reports.js";
import { chooseBuilder } from "./choose-builder.js";
import { executeRun } from "./execute-run.js";

/** `loopgate run TASK (--builder CMD | --oracle | --noop)` or `loopgate run --case FILE (…)`. */
export async function runCommand(
  io: CommandIO,
  taskPath: string | undefined,
  flags: RunFlags,
): Promise<number> {
  const reports = reportTargets(flags);
  const loaded = flags.case !== undefined ? loadCase(io, taskPath, flags) : loadTask(taskPath ?? "");
  const builder = await chooseBuilder(loaded, flags);
  const env = await executeRun(io, loaded, builder, flags);
  printEnvelope(io, env, flags);
  for (const file of await writeReports(env, reports)) io.err(`loopgate: wrote ${file}\n`);
  return exitCodeOf(env.status);
}

/** A mission fixture (`--case FILE`) as the task; `--workspace DIR` binds it to an existing starting state. */
function loadCase(io: CommandIO, taskPath: string | undefined, flags: RunFlags): LoadedMissionCase {
  const file = flags.case as string;
  if (taskPath !== undefined)
    throw new InputError("give either TASK or --case FILE, not both", "loopgate run");
  const localDir = localDirFrom(flags.store);
  const loaded = loadMissionCase(file, {
    localDir,
    ...(flags.workspace !== undefined ? { against: flags.workspace } : {}),
  });
  const criteria = loaded.mission.criteria;
  const n = criteria ? (Array.isArray(criteria) ? criteria.length : Object.keys(criteria).length) : 0;
  if (n)
    io.err(
      `loopgate: note: ${file}: ${n} criteria recorded as local metadata, not enforced; only the artifact and preserve gates decide\n`,
    );
  return loaded;
}
