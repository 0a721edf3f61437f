// `task check` on a task `from-commit` wrote, read as a verdict: keep it, or refuse it and say why.
import { InputError } from "../../../core/kernel/errors.js";
import type { RunFlags } from "../../../runner/host/run-flags.js";
import { cutLine, oneLine } from "../../output/excerpt.js";
import type { CommandIO } from "../../output/io.js";
import { taskCheckCommand } from "./task-check.js";

/** What `task check --json` prints, as far as `from-commit` reads it. */
interface CheckJson {
  ok: boolean;
  oracle: { run_id: string; status: string; reason: string };
  noop: { run_id: string; status: string; reason: string };
  lock: string | null;
  problems: string[];
}

/** The check of one written task: kept (its tests fail before the fix and pass after), or why not. */
export interface CommitCheck {
  ok: boolean;
  /** A check that could not run at all (no sandbox, a gate program missing): exit 2 for one commit. */
  couldNotRun: boolean;
  reason: string | null;
  oracle: { run_id: string; status: string; reason: string } | null;
  noop: { run_id: string; status: string; reason: string } | null;
  lock: string | null;
}

const cut = (s: string) => cutLine(oneLine(s), 300);

/** Runs `loopgate task check TASK --json` in-process and reads its result. */
export async function checkCommitTask(
  io: CommandIO,
  taskFile: string,
  flags: RunFlags,
): Promise<CommitCheck> {
  let out = "";
  const capture: CommandIO = {
    out: (s) => {
      out += s;
    },
    err: () => undefined,
    stderr: io.stderr,
  };
  let code: number;
  try {
    code = await taskCheckCommand(capture, taskFile, { ...flags, json: true });
  } catch (e) {
    const bad = e instanceof InputError;
    return {
      ok: false,
      couldNotRun: !bad,
      reason: `task check refused it: ${cut((e as Error).message)}`,
      oracle: null,
      noop: null,
      lock: null,
    };
  }
  const r = JSON.parse(out) as CheckJson;
  const base = { oracle: r.oracle, noop: r.noop, lock: r.lock };
  if (r.ok) return { ok: true, couldNotRun: false, reason: null, ...base };
  const reason =
    r.noop.status === "SUCCESS"
      ? "its tests pass before the fix too (the no-op builder reached SUCCESS)"
      : r.oracle.status === "TOOL_FAILURE"
        ? `the check could not run the fix (oracle TOOL_FAILURE: ${cut(r.oracle.reason)})`
        : r.oracle.status !== "SUCCESS"
          ? `its tests do not pass with the commit's own fix (oracle ${r.oracle.status}: ${cut(r.oracle.reason)})`
          : r.noop.status === "TOOL_FAILURE"
            ? `the check could not run the tests before the fix (no-op TOOL_FAILURE: ${cut(r.noop.reason)})`
            : `task check: ${cut(r.problems.join("; "))}`;
  return { ok: false, couldNotRun: code === 2, reason, ...base };
}
