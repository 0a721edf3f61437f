/**
 * Every flag of the CLI, once: its value placeholder (none for a switch), whether it repeats, the check
 * its value must pass, and its line in the help. A command lists the flags it takes in
 * `commands-table.ts`; adding a flag is one entry here plus its name in those lists.
 */
export interface FlagSpec {
  /** The value's placeholder in the help (`N`, `DIR`); absent for a switch. */
  value?: string;
  /** Repeatable: the values are collected in order. */
  multiple?: true;
  short?: string;
  /**
   * The value is a number: a whole number ≥ 1 (`positive-int`), ≥ 0 (`count`) or any number > 0
   * (`positive`), checked by one schema each (see `flag-values.ts`) and handed to the command as a number.
   */
  check?: "positive-int" | "count" | "positive";
  /** The largest value a numeric flag takes. */
  max?: number;
  /** The help line (without the flag itself). */
  help: string;
}

export const FLAGS = {
  verbose: {
    help: 'run/resume: stream the builder\'s and the gates\' output live, prefixed "builder| ", "gate ID| "',
  },
  follow: { help: "the same as --verbose" },
  strict: {
    help: "task check: a gate loopgate cannot tamper-check is a problem, not a warning; run/verify: a missing or\nstale lock (TASK.lock.json, written by task check) is an error, not a note",
  },
  json: { help: "print only the envelope (or the command's result) as JSON on stdout" },
  absolute: {
    help: "goal commands' --json: print paths absolute (by default they are relative to the goal file's folder)",
  },
  store: {
    value: "DIR",
    help: "where the event log lives: a folder (SQLite) or postgres://USER@HOST[:PORT]/DATABASE (default, for every\ncommand: the nearest .loopgate/ walking up from the current folder, else $LOOPGATE_STORE, else ./.loopgate/)",
  },
  model: {
    value: "SPEC",
    help: "run loopgate's own agent on this model: anthropic:MODEL, openai:MODEL, openai-compatible:MODEL,\nscripted:FILE, replay:FILE",
  },
  agent: {
    value: "NAME",
    help: "run: an external agent through loopgate's adapter: codex[:MODEL] (codex exec --json in the sandbox, its Stop hook\nanswered by loopgate's held-out gates; --base-url is its Responses provider, e.g. a loopgate model-server)",
  },
  builder: { value: "CMD", help: "run this external agent command (argv line, no shell) as the builder" },
  oracle: { help: "run the task's reference solution as the builder" },
  noop: { help: "a builder that changes nothing (the gates must reject it)" },
  workspace: {
    value: "DIR",
    help: "verify: the folder holding the work; run --case: bind the fixture to DIR",
  },
  "builder-env": {
    value: "NAME",
    multiple: true,
    help: "let the caller's variable NAME reach the builder (repeatable); nothing else passes; its value (8+ chars) is redacted from the log",
  },
  "builder-mount": {
    value: "PATH",
    multiple: true,
    help: "mount PATH read-only in the builder's sandbox (repeatable), e.g. the agent's install; checked on its real path, again on resume",
  },
  network: { help: "allow the builder network access (external agents need their API)" },
  case: { value: "FILE", help: "run: a mission fixture instead of TASK" },
  "max-attempts": {
    value: "N",
    check: "positive-int",
    max: 100,
    help: "override the task's budget.attempts (1 to 100)",
  },
  "max-turns": {
    value: "N",
    check: "positive-int",
    help: "built-in agent: turns per attempt (overrides budget.turns)",
  },
  "max-cost": {
    value: "USD",
    check: "positive",
    help: "built-in agent: run-wide cost cap (overrides budget.cost_usd)",
  },
  record: { value: "FILE", help: "built-in agent: save the model's responses as a replayable scripted file" },
  "base-url": {
    value: "URL",
    help: "built-in agent: the server of an openai-compatible model; --agent codex: its Responses provider URL",
  },
  "no-step-checks": {
    help: "built-in agent: do not execute the checks plan steps declare (they stay unverified)",
  },
  "step-escalation": {
    value: "SPEC",
    help: "built-in agent: consult this model (same forms as --model) about steps that trip an escalation trigger",
  },
  "planner-model": {
    value: "SPEC",
    help: "goal tick/run, scheduler: the model of the goal's planner turns, which answer replan obligations\n(same forms as --model; default: the goal file's planner.model, else --model, else the builder's model)",
  },
  "judge-model": {
    value: "SPEC",
    help: "the judge's model (same forms as --model); overrides the task's judge.model",
  },
  "unsafe-no-sandbox": { help: "run builders and gates without bubblewrap; recorded in the envelope" },
  junit: { value: "FILE", help: "write a JUnit XML report of the run (one test case per gate) to FILE" },
  markdown: {
    value: "FILE",
    help: "write a Markdown summary of the run to FILE (e.g. $GITHUB_STEP_SUMMARY)",
  },
  limit: { value: "N", check: "positive-int", help: "runs: show at most N runs (default 20)" },
  attempt: {
    value: "N",
    check: "positive-int",
    max: 100,
    help: "export: the workspace after attempt N's builder (default: the last observation)",
  },
  days: { value: "N", check: "positive-int", help: "health: only runs started in the last N days" },
  out: {
    value: "FILE",
    help: "exp: also write the experiment's JSON export to FILE; init: where to write the task file;\ntask from-commit: the folder the task folders are written into (default ./loopgate-tasks)",
  },
  "older-than": {
    value: "AGE",
    help: "gc: prune finished runs that finished more than AGE ago (30m, 12h, 7d, 2w; default 7d)",
  },
  keep: { value: "N", check: "count", help: "gc: always keep the N most recent runs, whatever their age" },
  "dry-run": {
    help: "gc: say what would be removed, remove nothing; hook install, init: print the settings or task file, write nothing; goal init: print the files",
  },
  runner: {
    value: "R",
    help: "init: the test runner to use when the repository has several: node-test, vitest, jest, mocha, tape, pytest, unittest",
  },
  "test-dir": {
    value: "DIR",
    multiple: true,
    help: "init: a folder (or file) of the repository's tests, instead of the ones found (repeatable)",
  },
  "oracle-file": {
    value: "SCRIPT",
    help: "init: the task's reference solution, an executable outside the repository (`task check` runs it)",
  },
  heldout: {
    value: "DIR",
    help: "init: a folder outside the repository holding held-out tests, overlaid onto the held-out gate's environment",
  },
  prompt: {
    value: "TEXT",
    help: "init: what the builder is asked to do (the task's prompt); task from-commit: instead of the commit message",
  },
  "prompt-file": { value: "FILE", help: "init: read the task's prompt from FILE" },
  force: {
    help: "init: overwrite an existing task file; task from-commit: replace an existing task folder; goal init: overwrite an existing goal file",
  },
  repo: { value: "DIR", help: "task from-commit: the git repository to read (default: the current folder)" },
  "gate-cmd": {
    value: "ARGV",
    help: "task from-commit: the held-out gate's argv line (no shell); {tests} stands for the held-out test files",
  },
  "test-glob": {
    value: "GLOB",
    multiple: true,
    help: "task from-commit: a glob of test files, instead of the defaults (repeatable)",
  },
  "keep-refused": { help: "task from-commit: keep the folder of a task task check refused (to see why)" },
  "no-check": { help: "init: write the task file without running `task check` on it" },
  project: { help: "hook install: write ./.claude/settings.json (the default)" },
  user: { help: "hook install: write ~/.claude/settings.json" },
  managed: {
    help: "hook install: print the hooks as managed settings (for /etc/claude-code/managed-settings.json), write nothing",
  },
  protocol: {
    value: "P",
    help: "model-server: the wire protocol to serve: anthropic, openai-responses or openai-chat",
  },
  port: {
    value: "N",
    check: "count",
    help: "model-server: listen on this port of 127.0.0.1; serve: on this port of --host (default: a free one)",
  },
  host: {
    value: "ADDR",
    help: "serve: the address to listen on (default 127.0.0.1); any other than loopback needs --token or --token-file",
  },
  token: {
    help: "serve: turn the board's gate actions on with a fresh token, printed at start (its writes are recorded for your user name)",
  },
  "token-file": {
    value: "FILE",
    help: "serve: turn the board's gate actions on with the token in FILE, one line NAME:SECRET (writes are recorded for NAME)",
  },
  html: {
    value: "FILE",
    help: "report: write the run page as one self-contained HTML file (no script, nothing fetched) to FILE",
  },
  requests: {
    value: "FILE",
    help: "model-server: also append every request it got to FILE, one JSON line each",
  },
  "expect-revision": {
    value: "N",
    check: "count",
    help: "goal writes: the goal stream revision you read (goal status); a stale one is refused as needs_rebase",
  },
  note: { value: "TEXT", help: "goal writes: a note recorded with the decision or change" },
  as: {
    value: "NAME",
    help: "goal writes: who makes the write, recorded as its actor (meta.by; goal history shows it); default:\n$LOOPGATE_ACTOR, else the OS user's name, else none (unknown); printable, at most 64 characters",
  },
  reason: {
    value: "TEXT",
    help: "todo block: why it is blocked; goal vision: why the route changed, holds or closes",
  },
  route: { value: "TEXT", help: "goal vision patch: the whole new route (bounded)" },
  patch: { value: "TEXT", help: "goal vision patch: what changed in the route, in a few lines" },
  rationale: {
    value: "TEXT",
    help: "todo close-no-followup / goal close: the recorded no_followup rationale",
  },
  until: {
    value: "COND",
    help: "todo defer / gate defer: the machine-checkable resume condition: at:TIME (at:2026-12-02T09:00:00Z),\ntodo:TODO=STATUS (todo:todo_crlf=done) or gate:GATE=DECISION (gate:todo_publish_gate=approved|rejected|cancelled|any)",
  },
  evidence: {
    value: "RUN",
    help: "todo done: the run whose SUCCESS proves the todo (loopgate todo run; a run that changed files is refused: goal tick persists it)",
  },
  content: { value: "TEXT", help: "todo add / supersede: what the todo is about" },
  class: {
    value: "CLASS",
    help: "todo add / supersede: advancement_task | continuous_monitor | user_gate | user_action | blocker",
  },
  task: { value: "FILE", help: "todo add / supersede: an advancement todo's task file" },
  scope: { value: "SCOPE", help: "todo add / supersede: the decision scope a user_gate covers" },
  requires: {
    value: "SCOPE",
    multiple: true,
    help: "todo add / supersede: a decision scope that must be approved first (repeatable)",
  },
  "depends-on": {
    value: "TODO",
    multiple: true,
    help: "todo add / supersede: a todo this one waits for (repeatable)",
  },
  unblocks: {
    value: "TODO",
    help: "todo add / supersede: a blocker's target: the todo it holds back until it is cleared",
  },
  "successor-of": {
    value: "TODO",
    help: "todo add: the todo this one follows up (a cleared blocker's successor, a monitor's)",
  },
  by: {
    value: "NAME",
    help: "todo claim / release: who takes or gives up the todo; todo done / accept-blocker: who did it; goal vision supersede: the agent whose route replaces it",
  },
  "evidence-url": {
    value: "URL",
    multiple: true,
    help: "todo done / accept-blocker: a link that shows the person's step or the blocker (repeatable)",
  },
  "evidence-file": {
    value: "FILE",
    multiple: true,
    help: "todo done / accept-blocker: a file that shows it; its SHA-256 and size are recorded (repeatable)",
  },
  outcome: {
    value: "OUTCOME",
    help: "goal close: achieved (default) | blocked (--blocker TODO) | rolled_back (--revision REV) | not_achieved",
  },
  blocker: {
    value: "TODO",
    help: "goal close --outcome blocked: the todo whose blocker was accepted (todo accept-blocker)",
  },
  revision: {
    value: "REV",
    help: "goal close --outcome rolled_back: the reverted revision (goal revert) the closure cites",
  },
  gates: {
    value: "GATE",
    multiple: true,
    help: "goal acceptance add: only these gates of the task prove the item (repeatable; default: all)",
  },
  concurrency: { value: "N", check: "positive-int", help: "worker: runs held at once (default 1)" },
  id: {
    value: "NAME",
    help: "worker: its name in `loopgate workers` (default HOST-PID); one live worker per name; init: the task's id; goal acceptance add: the item's id",
  },
  once: {
    help: "worker: claim at most one job, run it, exit; goal run: one governed turn; scheduler: one pass over the due goals",
  },
  "until-idle": {
    help: "worker: exit once it holds nothing and the queue has no unfinished job (queued or claimed by anyone); goal run: stop where it would sleep",
  },
  lease: {
    value: "DURATION",
    help: "worker: how long a claim holds without a heartbeat (default 30s; heartbeat every third of it)",
  },
  "work-dir": {
    value: "DIR",
    help: "worker: this machine's folder for submitted tasks and run folders (DIR/tasks/…, DIR/runs/RUN; default ./.loopgate)",
  },
  "agent-id": {
    value: "NAME",
    help: "goal tick: the agent a governed turn runs as (its identity goal/agent/turn; default: the goal's agent)",
  },
  name: { value: "ID", help: "goal init: the goal's id (default: the folder's name)" },
  objective: { value: "TEXT", help: "goal init: what the goal is for (its objective)" },
  "gate-command": {
    value: "ARGV",
    help: "goal init: the first task's gate, an argv line (no shell) or a JSON array (default: sh -c 'test -s DONE.md')",
  },
  "notify-url": { value: "URL", help: "goal init: a webhook the goal notifies (notify: in the goal file)" },
  "notify-command": {
    value: "ARGV",
    help: "goal init: a command the goal notifies, an argv line (no shell) or a JSON array",
  },
  help: { short: "h", help: "this text, or a command's own (loopgate COMMAND --help)" },
  version: { help: "the version" },
} as const satisfies Record<string, FlagSpec>;

export type FlagName = keyof typeof FLAGS;

/** A flag's value as the command line wrote it: a string, string[] when repeatable, true for a switch. */
export type RawFlagValue = string | string[] | true;
/** The flags as written, before the command's schema checked and converted them. */
export type RawFlagValues = Partial<Record<FlagName, RawFlagValue>>;

/** What a command receives for a flag: a number for a numeric flag, string[] when repeatable, true for a switch. */
export type FlagValue<S> = S extends { value: string }
  ? S extends { multiple: true }
    ? string[]
    : S extends { check: string }
      ? number
      : string
  : true;
/** Checked flag values, typed by flag. */
export type FlagValues = { [K in FlagName]?: FlagValue<(typeof FLAGS)[K]> };

/** The flags every command accepts. */
export const GLOBAL_FLAGS: readonly FlagName[] = ["help", "version"];
