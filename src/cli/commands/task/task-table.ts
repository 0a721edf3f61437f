import { InputError } from "../../../core/kernel/errors.js";
import { need, SANDBOX_FLAGS } from "../../flags/command-flags.js";
import type { CommandSpec } from "../../flags/command-spec.js";

// The commands that make and check task files: task (check, from-commit) and init. Spread into COMMANDS.

/** The flags only `task from-commit` takes (`task check` refuses them). */
const FROM_COMMIT_FLAGS = [
  "repo",
  "out",
  "gate-cmd",
  "prompt",
  "test-glob",
  "force",
  "keep-refused",
] as const;
export const TASK_COMMANDS: readonly CommandSpec[] = [
  {
    name: "task",
    usage: [
      "loopgate task check TASK [--strict] [--store DIR] [--json] [options]",
      "loopgate task from-commit REV|REV1..REV2 [--repo DIR] [--out DIR] [--gate-cmd ARGV] [--prompt TEXT] [--test-glob GLOB]... [--force] [--keep-refused] [--json]",
    ],
    about:
      "check: the oracle must reach SUCCESS and the no-op builder must not; otherwise the gates do not discriminate.\nPer gate: which tamper checks apply and the test count the oracle reached, recorded as the floor\nlater runs of this task file must reach. A protected glob that matches nothing is a problem.\nfrom-commit: a task per commit of a git history: its parent's tree is the workspace, the tests it adds or\nchanges are held out, the rest of its change is the oracle; kept only when task check passes (the tests\nfail before the fix and pass after). A range walks git rev-list --reverse REV1..REV2; one line per commit.",
    flags: [...SANDBOX_FLAGS, "strict", ...FROM_COMMIT_FLAGS],
    maxArgs: 2,
    exit: "Exit codes: check 0 sound, 1 not, 2 a run could not execute or bad input; from-commit 0 a task kept, 1 none, 2 bad input or (one commit) a check that could not run.",
    run: async (io, args, flags) => {
      if (args[0] === "from-commit") {
        const { taskFromCommitCommand } = await import("./task-from-commit.js");
        return taskFromCommitCommand(io, need("task", args, 1, "REV"), flags);
      }
      if (args[0] !== "check")
        throw new InputError("the subcommands are `check TASK` and `from-commit REV`", "loopgate task");
      const given = FROM_COMMIT_FLAGS.find((f) => flags[f] !== undefined);
      if (given) throw new InputError("applies only to task from-commit", `--${given}`);
      const { taskCheckCommand } = await import("./task-check.js");
      return taskCheckCommand(io, need("task", args, 1, "TASK"), flags);
    },
  },
  {
    name: "init",
    usage: [
      "loopgate init [DIR] [--runner R] [--test-dir D]... [--oracle-file SCRIPT] [--heldout DIR] [--prompt TEXT | --prompt-file F] [--id ID] [--out FILE] [--dry-run] [--force] [--no-check] [--json] [--store DIR] [--unsafe-no-sandbox]",
    ],
    about: `Write a task file for the repository in DIR (default: the current folder): its test runner
(vitest, jest, mocha, tape, node --test, pytest, unittest) in the argv form loopgate's tamper checks
instrument, its tests and settings protected, its source folders the deliverables, its dependency
folders declared, a held-out gate wired to --heldout DIR or proposed as a comment. The file goes to
--out, default DIR/../NAME-loopgate/task.yaml: held-out tests, the oracle, the lock and the run store
must live outside the repository the builder sees. Then runs task check on it (with --oracle-file).
Never overwrites a task file without --force; asks nothing.`,
    flags: [
      "runner",
      "test-dir",
      "oracle-file",
      "heldout",
      "prompt",
      "prompt-file",
      "id",
      "out",
      "dry-run",
      "force",
      "no-check",
      "json",
      "store",
      "unsafe-no-sandbox",
    ],
    maxArgs: 1,
    exit: "Exit codes: 0 written (and task check sound, or not run), 1 written but task check found a problem, 2 bad input (no runner or tests found, the file exists) or a check run that could not execute.",
    run: async (io, args, flags) => (await import("./init.js")).initCommand(io, args[0], flags),
  },
];
