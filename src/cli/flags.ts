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
  /** The value must be a whole number ≥ 1 (`positive-int`), ≥ 0 (`count`) or a number > 0 (`positive`). */
  check?: "positive-int" | "count" | "positive";
  /** The help line (without the flag itself). */
  help: string;
}

export const FLAGS = {
  verbose: {
    help: 'run/resume: stream the builder\'s and the gates\' output live, prefixed "builder| ", "gate ID| "',
  },
  follow: { help: "the same as --verbose" },
  strict: {
    help: "task check: a gate loopgate cannot tamper-check (no canary, no test count) is a problem, not a warning",
  },
  json: { help: "print only the envelope (or the command's result) as JSON on stdout" },
  store: {
    value: "DIR",
    help: "where the event log lives: a folder (SQLite) or postgres://USER@HOST[:PORT]/DATABASE (default:\n$LOOPGATE_STORE, else .loopgate/ beside the task; for runs/status/events/report/gc: ./.loopgate)",
  },
  model: {
    value: "SPEC",
    help: "run loopgate's own agent on this model: anthropic:MODEL, openai:MODEL, openai-compatible:MODEL,\nscripted:FILE, replay:FILE",
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
  "base-url": { value: "URL", help: "built-in agent: the server of an openai-compatible model" },
  "no-step-checks": {
    help: "built-in agent: do not execute the checks plan steps declare (they stay unverified)",
  },
  "step-escalation": {
    value: "SPEC",
    help: "built-in agent: consult this model (same forms as --model) about steps that trip an escalation trigger",
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
  days: { value: "N", check: "positive-int", help: "health: only runs started in the last N days" },
  out: { value: "FILE", help: "exp: also write the experiment's JSON export to FILE" },
  "older-than": {
    value: "AGE",
    help: "gc: prune finished runs that finished more than AGE ago (30m, 12h, 7d, 2w; default 7d)",
  },
  keep: { value: "N", check: "count", help: "gc: always keep the N most recent runs, whatever their age" },
  "dry-run": { help: "gc: say what would be removed, remove nothing" },
  concurrency: { value: "N", check: "positive-int", help: "worker: runs held at once (default 1)" },
  id: {
    value: "NAME",
    help: "worker: its name in `loopgate workers` (default HOST-PID); one live worker per name",
  },
  once: { help: "worker: claim at most one job, run it, exit" },
  "until-idle": {
    help: "worker: exit once it holds nothing and the queue has no unfinished job (queued or claimed by anyone)",
  },
  lease: {
    value: "DURATION",
    help: "worker: how long a claim holds without a heartbeat (default 30s; heartbeat every third of it)",
  },
  help: { short: "h", help: "this text, or a command's own (loopgate COMMAND --help)" },
  version: { help: "the version" },
} as const satisfies Record<string, FlagSpec>;

export type FlagName = keyof typeof FLAGS;

/** Parsed flag values: a string for a flag with a value, string[] when repeatable, true for a switch. */
export type FlagValues = Partial<Record<FlagName, string | string[] | true>>;

/** The flags every command accepts. */
export const GLOBAL_FLAGS: readonly FlagName[] = ["help", "version"];
