import { QUEUE_POLICY } from "../store/open-store.js";
import { GOAL_COMMANDS } from "./commands/goal/goal-table.js";
import { TASK_COMMANDS } from "./commands/task/task-table.js";
import { AGENT_FLAGS, need, SANDBOX_FLAGS } from "./flags/command-flags.js";
import type { CommandSpec } from "./flags/command-spec.js";

export type { CommandSpec } from "./flags/command-spec.js";

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: "run",
    usage: [
      "loopgate run TASK (--model PROVIDER:MODEL | --builder CMD | --oracle | --noop) [options]",
      "loopgate run --case FILE (--model PROVIDER:MODEL | --builder CMD | --noop) [--workspace DIR] [options]",
    ],
    about: `Run a builder on a task until its held-out gates pass or the attempt cap is reached.
--model runs loopgate's own agent: anthropic:MODEL, openai:MODEL, openai-compatible:MODEL,
scripted:FILE, replay:FILE. CMD is an argv line (no shell) with {prompt}, {prompt_file},
{required_fix}, {workspace}. --junit FILE and --markdown FILE write CI reports at the end.
--case FILE runs a mission fixture (prompt, goal, files, artifacts, preserve): files are the starting
workspace, each artifact's expected JSON is a gate the builder never sees, preserved files are protected.
--workspace DIR: DIR must hold exactly the listed files (it is checked, never changed).`,
    flags: [
      "model",
      "agent",
      "builder",
      "oracle",
      "noop",
      "case",
      "workspace",
      "max-attempts",
      ...SANDBOX_FLAGS,
      ...AGENT_FLAGS,
      "junit",
      "markdown",
      "verbose",
      "follow",
      "strict",
    ],
    maxArgs: 1,
    run: async (io, args, flags) => {
      const { runCommand } = await import("./commands/run.js");
      return runCommand(io, flags.case !== undefined ? args[0] : need("run", args, 0, "TASK"), flags);
    },
  },
  {
    name: "claude",
    usage: [
      "loopgate claude TASK [--json] [--store DIR] [--max-attempts N] [--builder-env NAME] [--builder-mount PATH] [--unsafe-no-sandbox] [--verbose] [--follow] [-- CLAUDE ARGS]",
    ],
    about: `Run TASK with the real Claude Code as the builder, in loopgate's sandbox (the run workspace and a
private HOME writable; the host network shared so it reaches its provider: the envelope says so).
loopgate's hooks come from a settings file it owns outside the workspace, mounted read-only
(--settings; project and local settings are not read). Each Stop runs the held-out gates in a fresh
environment: a failure blocks the stop with the required fix; SUCCESS or loopgate's attempt cap
(at most 8, below Claude's own block cap) ends the session. With a goal, a Stop is first blocked
while its command or file predicates are unmet on Claude's reported tool calls. A task of Claude's
task list with a \`check: CMD\` line is refused completion (TaskCompleted) while that check fails.
ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL,
ANTHROPIC_AUTH_TOKEN, ANTHROPIC_MODEL pass by name when set (values redacted). The binary:
$LOOPGATE_CLAUDE_BIN, claude on PATH, or the one installed beside loopgate.`,
    flags: [
      "store",
      "json",
      "builder-env",
      "builder-mount",
      "max-attempts",
      "unsafe-no-sandbox",
      "verbose",
      "follow",
    ],
    maxArgs: 200,
    run: async (io, args, flags) => (await import("./commands/claude.js")).claudeCommand(io, args, flags),
  },
  {
    name: "hook",
    usage: [
      "loopgate hook stop TASK [--store DIR]",
      "loopgate hook post-tool TASK [--store DIR]",
      "loopgate hook task-completed TASK [--store DIR]",
      "loopgate hook install TASK [--project | --user] [--store DIR] [--dry-run | --managed] [--json]",
    ],
    about: `Claude Code hooks for your own sessions. stop verifies the session's folder against TASK as
loopgate verify does (a recorded run; held-out gates in a fresh environment) and exits 2 with the
required fix until the gates pass or loopgate's cap (budget.attempts, at most 8) is reached; an error,
a store it cannot open or a check past 570 s blocks too, never lets Claude stop unchecked. post-tool
records the tool call (command, exit code, excerpt) in the stream claude-session-ID, origin
agent_runtime. task-completed runs a completed task's frozen check (a \`check: CMD\` line in its
description) in loopgate's sandbox and exits 2 with the finding when it fails. With a goal, stop first
judges its command and file predicates over the recorded calls. install writes all of them into
.claude/settings.json (or ~/.claude with --user) and says how to lock them: an agent that can write
that file can switch them off, and its session then ends with no Stop verified (loopgate runs lists
it as unverified); --managed prints them for Claude Code's managed settings, which nothing overrides.`,
    flags: ["store", "project", "user", "dry-run", "managed", "json"],
    maxArgs: 2,
    exit: "Exit codes: stop and task-completed 0 (allowed) or 2 (blocked, reason on stderr); post-tool 0 or 1; install 0 or 2.",
    run: async (io, args, flags) => (await import("./commands/hook/hook.js")).hookCommand(io, args, flags),
  },
  {
    name: "mcp",
    usage: ["loopgate mcp TASK [--workspace DIR] [--store DIR] [--unsafe-no-sandbox]"],
    about: `A stdio MCP server (the official SDK, 1.x) with loopgate's protocol tools for the work in DIR
(default: the current folder): todo_write (plan steps with expect/check/expect_calls; a completed
step's frozen check is run), self_check_plan_submit and self_check_submit (Source Guard; advisory),
goal_status, and verify (the held-out gates now, a recorded run; only what feedback allows).
For Claude Code: --mcp-config '{"mcpServers":{"loopgate":{"command":"loopgate","args":["mcp","TASK"]}}}'.`,
    flags: ["store", "workspace", "unsafe-no-sandbox"],
    maxArgs: 1,
    exit: "Exit codes: 0 when the client closed, 2 bad input.",
    run: async (io, args, flags) =>
      (await import("./commands/mcp.js")).mcpCommand(io, need("mcp", args, 0, "TASK"), flags),
  },
  {
    name: "resume",
    usage: ["loopgate resume RUN [--store DIR] [--json] [--verbose] [--follow] [options]"],
    about: `Continue an interrupted run from its log; calls left in doubt are never silently re-run.
A run that already finished is not run again: resume says so and exits with its status.
A run another live process still drives (it holds the run's lease) is refused, naming that process;
one whose lease expired or whose owner's process is gone is taken over (run_lease_taken).`,
    flags: [
      "store",
      "json",
      "builder-env",
      "builder-mount",
      "base-url",
      "max-turns",
      "max-cost",
      "verbose",
      "follow",
    ],
    maxArgs: 1,
    run: async (io, args, flags) => {
      const { resumeCommand } = await import("./commands/resume.js");
      return resumeCommand(io, need("resume", args, 0, "RUN"), flags);
    },
  },
  {
    name: "submit",
    usage: [
      "loopgate submit TASK (--builder CMD | --oracle | --noop | --model SPEC) [run options] --store postgres://… [--json]",
    ],
    about: `Enqueue a run of TASK in the PostgreSQL store's run queue; prints the job id. A worker runs it.
The task folder and everything the task names (workspace, held-out and canary folders, oracle) are
copied into the store (each file once, by content; at most 100 MiB and 50,000 paths): workers need
no copy of the task, and run exactly what was submitted.`,
    flags: [...SANDBOX_FLAGS, ...AGENT_FLAGS, "builder", "oracle", "noop", "model", "max-attempts"],
    maxArgs: 1,
    exit: "Exit codes: 0 queued, 2 bad input or the store cannot be reached.",
    run: async (io, args, flags) => {
      const { submitCommand } = await import("./commands/submit.js");
      return submitCommand(io, need("submit", args, 0, "TASK"), flags);
    },
  },
  {
    name: "worker",
    usage: [
      "loopgate worker --store postgres://… [--concurrency N] [--id NAME] [--lease 30s] [--work-dir DIR] [--once | --until-idle] [--json]",
    ],
    about: `Claim queued runs (FOR UPDATE SKIP LOCKED), run each as \`loopgate run\` does, or resume it as
\`loopgate resume\` does when a dead worker left it unfinished; heartbeat the claim while it runs.
A submitted task is written out from the store under --work-dir (default ./.loopgate), beside the
run folders; a run another machine drove is rebuilt there from the observations the store keeps.
Goal turns (queued by \`loopgate goal submit\`): one governed tick under the goal's turn lease, then the
next turn queued at the scheduler's wake-up; the goal's repository cache lives in the same folder.
SIGTERM: claim nothing more and finish what is held; a second SIGTERM interrupts and hands it back.
A job this machine cannot start (its folder, no working sandbox, a key it lacks) goes back to the queue
with the reason; after ${QUEUE_POLICY.localFailuresToStop} in a row (--once: its one job) the worker stops naming it. A bad task is refused. A job whose worker was lost ${QUEUE_POLICY.lostClaimsToDeadLetter} times (its lease ran out
each time) is finished as TOOL_FAILURE, a dead letter, with the reason, and said on stderr.`,
    flags: ["store", "json", "concurrency", "id", "once", "until-idle", "lease", "work-dir"],
    maxArgs: 0,
    exit: "Exit codes: 0 stopped (whatever the runs' verdicts), 1 lost the database or could not start jobs in a row on this machine, 2 bad input.",
    run: async (io, _args, flags) => {
      const { workerCommand } = await import("./commands/worker.js");
      return workerCommand(io, flags);
    },
  },
  {
    name: "workers",
    usage: ["loopgate workers --store postgres://… [--json]"],
    about:
      "List the live workers of a PostgreSQL store (STALE: its heartbeat is overdue), the jobs each holds and until when, and the queue.",
    flags: ["store", "json"],
    maxArgs: 0,
    exit: "Exit codes: 0, 2 bad input or the store cannot be reached.",
    run: async (io, _args, flags) => {
      const { workersCommand } = await import("./commands/submit.js");
      return workersCommand(io, flags);
    },
  },
  {
    name: "verify",
    usage: [
      "loopgate verify TASK --workspace DIR [--store DIR] [--json] [--junit FILE] [--markdown FILE] [--strict] [options]",
    ],
    about: "Check work produced elsewhere: DIR is gated as the builder's result, in one attempt.",
    flags: ["workspace", ...SANDBOX_FLAGS, "junit", "markdown", "strict"],
    maxArgs: 1,
    run: async (io, args, flags) => {
      const { verifyCommand } = await import("./commands/verify.js");
      return verifyCommand(io, need("verify", args, 0, "TASK"), flags);
    },
  },
  ...TASK_COMMANDS,
  {
    name: "runs",
    usage: ["loopgate runs [--store DIR] [--limit N] [--json]"],
    about:
      "Recent runs, one line each (the 20 latest unless --limit N; it says when it shows fewer than there are).\nBeside a PostgreSQL store, every submitted job whose run has not started too: queued, claimed, handed back, refused,\ndead-lettered (finished TOOL_FAILURE after its worker was lost 3 times, with the reason).\nThen the Claude Code sessions loopgate's hooks watched (loopgate hook install): verified, or unverified when no\nStop was verified after their last tool call, with the loopgate verify that checks the folder (--json: rows with kind hook-session).",
    flags: ["store", "limit", "json"],
    maxArgs: 0,
    exit: "Exit codes: 0 listed, 2 bad input.",
    run: async (io, _args, flags) => (await import("./commands/inspect.js")).runsCommand(io, flags),
  },
  {
    name: "status",
    usage: ["loopgate status RUN|JOB|SESSION [--store DIR] [--json]"],
    about:
      "One run's envelope, rebuilt from its events; exits with the run's exit code. Beside a PostgreSQL store, a queued job's state (queued, claimed, running on which worker, lease expiry), or JOB's run. SESSION (a Claude Code session id, or claude-session-ID): verified or unverified, and the verify that checks it.",
    flags: ["store", "json"],
    maxArgs: 1,
    exit: "Exit codes: 0 SUCCESS, 1 ESCALATED, 2 TOOL_FAILURE, a refused job or bad input, 3 not finished (running, or its process died: loopgate resume RUN; a job queued or claimed; a hook session not verified). A verified hook session exits with its last verification's verdict.",
    run: async (io, args, flags) =>
      (await import("./commands/inspect.js")).statusCommand(io, need("status", args, 0, "RUN"), flags),
  },
  {
    name: "events",
    usage: ["loopgate events RUN|SESSION [--store DIR] [--json]"],
    about:
      "One run's audit trail, one event per line (--json: JSON lines); or a Claude Code session's stream (its id or claude-session-ID).",
    flags: ["store", "json"],
    maxArgs: 1,
    exit: "Exit codes: 0 printed, 2 bad input or no such run or session.",
    run: async (io, args, flags) =>
      (await import("./commands/inspect.js")).eventsCommand(io, need("events", args, 0, "RUN"), flags),
  },
  {
    name: "export",
    usage: ["loopgate export RUN DIR [--attempt N] [--store DIR] [--json]"],
    about: `Write a run's workspace, as its log recorded it, into DIR (a new or empty folder): by default the
last observation (after the last attempt's builder), with --attempt N the one after attempt N's builder.
Works whatever the run's workspace was (a copy, or an overlay over the task's snapshot), once the run has
finished and after its folder was unmounted; beside a PostgreSQL store, also for a run driven on another
machine. Every file is checked against its recorded hash; modes lose set-uid, set-gid and sticky bits.`,
    flags: ["store", "attempt", "json"],
    maxArgs: 2,
    exit: "Exit codes: 0 written, 2 bad input (no such run or attempt, DIR not empty, the run's folder pruned).",
    run: async (io, args, flags) =>
      (await import("./commands/export.js")).exportCommand(
        io,
        need("export", args, 0, "RUN"),
        need("export", args, 1, "DIR"),
        flags,
      ),
  },
  {
    name: "report",
    usage: ["loopgate report RUN [--store DIR] [--junit FILE] [--markdown FILE] [--html FILE]"],
    about: `Write CI reports of a finished run: JUnit XML (one test case per gate of the final attempt, plus
the verdict), a Markdown summary for $GITHUB_STEP_SUMMARY, and with --html the run's page of loopgate serve
as one self-contained file (style inlined, no script, nothing fetched) to attach as an artifact. Without a
file flag, prints the Markdown summary. Exits with the run's exit code.`,
    flags: ["store", "junit", "markdown", "html"],
    maxArgs: 1,
    run: async (io, args, flags) =>
      (await import("./commands/report.js")).reportCommand(io, need("report", args, 0, "RUN"), flags),
  },
  {
    name: "serve",
    usage: [
      "loopgate serve [--store DIR | postgres://…] [--host 127.0.0.1] [--port N] [--token | --token-file FILE] [--json]",
    ],
    about: `The board: a web view of the store every command finds. Runs (filter by status and task; the queue on
PostgreSQL), a run (each attempt's claim beside its held-out gates, findings, the change the gates saw, the
judge, the envelope and the timeline), goals as boards (the gates waiting on a person first) and health.
Pages follow the log live (Server-Sent Events). Read-only unless started with a credential: --token makes
one and prints a sign-in address; --token-file FILE reads NAME:SECRET. Then gate approve, reject, cancel and
defer go through the same write as loopgate gate, origin operator, recorded as by NAME, each at the stream
revision its form was rendered from (a stale one is refused: needs_rebase). Listens on 127.0.0.1 unless
--host says otherwise (not loopback: only with a credential). Prints its URL (--json: {url, sign_in_url, …});
runs until SIGINT/SIGTERM.`,
    flags: ["store", "host", "port", "token", "token-file", "json"],
    maxArgs: 0,
    exit: "Exit codes: 0 stopped, 2 bad input (a flag, the token file, a non-loopback --host without a credential) or the store cannot be opened.",
    run: async (io, _args, flags) => (await import("./commands/serve.js")).serveCommand(io, flags),
  },
  {
    name: "gc",
    usage: ["loopgate gc [--store DIR] [--older-than AGE] [--keep N] [--dry-run] [--json]"],
    about: `Remove the folders (workspace, pristine copy, observations, blobs) of finished runs, keeping
their events: the audit trail, status, events and report still work. Never touches a run whose log
has no verdict or was interrupted. Prints what it removed and the bytes freed. On a PostgreSQL store
the runs it removes leave the database too (events, finished jobs), then the observations and blobs
only they named.`,
    flags: ["store", "older-than", "keep", "dry-run", "json"],
    maxArgs: 0,
    exit: "Exit codes: 0 done, 2 bad input.",
    run: async (io, _args, flags) => (await import("./commands/gc.js")).gcCommand(io, flags),
  },
  {
    name: "health",
    usage: ["loopgate health [--store DIR] [--days N] [--json]"],
    about: "Plan-step counters: completions, null steps, reopens.",
    flags: ["store", "days", "json"],
    maxArgs: 0,
    exit: "Exit codes: 0 printed, 2 bad input.",
    run: async (io, _args, flags) => (await import("./commands/health.js")).healthCommand(io, flags),
  },
  {
    name: "demo",
    usage: ["loopgate demo [EXAMPLE...] [--store DIR] [--json] [--unsafe-no-sandbox]"],
    about: `Run the bundled examples with honest and forging builders: every example, or only those named
(js-slugify, py-durations, sh-csvcol).`,
    flags: ["store", "json", "unsafe-no-sandbox"],
    maxArgs: 10,
    exit: "Exit codes: 0 every run ended as expected, 1 otherwise, 2 bad input or no working sandbox.",
    run: async (io, args, flags) => (await import("./commands/demo.js")).demoCommand(io, flags, args),
  },
  {
    name: "doctor",
    usage: ["loopgate doctor [--store DIR] [--json]"],
    about: `Check what loopgate relies on (Node, bubblewrap and its self-test, git, python3, the store, provider
settings, claude/codex), each with its fix. A PostgreSQL store: that it answers, its schema version,
and the log's integrity (read-only: nothing is created).`,
    flags: ["store", "json"],
    maxArgs: 0,
    exit: "Exit codes: 0 all good, 1 something optional missing, 2 something required missing.",
    run: async (io, _args, flags) => (await import("./commands/doctor.js")).doctorCommand(io, flags),
  },
  {
    name: "selftest",
    usage: ["loopgate selftest [--json]"],
    about: `Measure this installation (contracts, sandbox and store, an end-to-end run, cost policy, a live
provider if configured, documentation): exit 0 READY, 1 READY_WITH_CAVEATS, 2 NOT_READY.`,
    flags: ["json"],
    maxArgs: 0,
    exit: "Exit codes: 0 READY, 1 READY_WITH_CAVEATS, 2 NOT_READY or bad input.",
    run: async (io, _args, flags) => {
      // The documentation dimension holds the README and docs/ to this table's help, passed down (selftest/ is below cli/).
      const help = (await import("./flags/help.js")).helpText(COMMANDS);
      return (await import("./commands/selftest.js")).selftestCommand(io, flags, help);
    },
  },
  {
    name: "exp",
    usage: ["loopgate exp run MANIFEST [--json] [--out FILE] [--store DIR]"],
    about: `Run an experiment: arms × tasks × seeds, each run with its own store; counts per arm (execution
failures apart from graded ones) and outcomes paired by (task, seed) against the control arm.
Exit 0 when it completed, whatever the outcomes.`,
    flags: ["json", "out", "store"],
    maxArgs: 2,
    exit: "Exit codes: 0 completed, 2 bad input or interrupted.",
    run: async (io, args, flags) => (await import("./commands/exp.js")).expCommand(io, args, flags),
  },
  {
    name: "model-server",
    usage: [
      "loopgate model-server SCRIPT --protocol anthropic|openai-responses|openai-chat [--port N] [--requests FILE] [--json]",
    ],
    about: `Serve a scripted model file (or a --record'ed session) over a real wire protocol on 127.0.0.1, so a
real agent CLI (Claude Code, Codex) can be driven deterministically: each model request that offers
tools consumes the next response; token counts, model lists, health and requests without tools are
answered locally. A request after the last response gets an HTTP 400 naming script_exhausted.
Prints the URL (--json: {url, pid, …}); runs until SIGINT/SIGTERM.`,
    flags: ["protocol", "port", "requests", "json"],
    maxArgs: 1,
    exit: "Exit codes: 0 stopped, 1 the script ran out (script_exhausted), 2 bad input.",
    run: async (io, args, flags) =>
      (await import("./commands/model-server.js")).modelServerCommand(
        io,
        need("model-server", args, 0, "SCRIPT"),
        flags,
      ),
  },
  ...GOAL_COMMANDS,
  {
    name: "help",
    usage: ["loopgate help [COMMAND]"],
    about: "This text, or one command's help with its flags (the same as loopgate COMMAND --help).",
    flags: [],
    maxArgs: 2,
    exit: "Exit codes: 0 printed, 2 unknown command.",
    run: async (io, args) => {
      const { commandHelp, helpText } = await import("./flags/help.js");
      io.out(args[0] === undefined ? helpText(COMMANDS) : commandHelp(COMMANDS, args[0]));
      return 0;
    },
  },
];

/** The command named `name`, if any. */
export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}
