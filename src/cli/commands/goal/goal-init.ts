import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { stringify } from "yaml";
import { splitCommandLine } from "../../../builders/command-line.js";
import { parseGoalFile } from "../../../core/goal/goal-file.js";
import { InputError } from "../../../core/kernel/errors.js";
import { parseTask } from "../../../core/task/task.js";
import { detectProject } from "../../../runner/init/detect.js";
import { gateArgv } from "../../../runner/init/task-plan.js";
import { cliName } from "../../output/invocation.js";
import type { CommandIO } from "../../output/io.js";
import { shellWord } from "../../output/store-location.js";
import { taskIdFor } from "../task/init.js";

/** The flags `goal init` reads. */
export interface GoalInitFlags {
  name?: string;
  objective?: string;
  workspace?: string;
  "gate-command"?: string;
  "notify-url"?: string;
  "notify-command"?: string;
  "dry-run"?: boolean;
  force?: boolean;
  json?: boolean;
}

const TODO = "todo_first_change";
const GATE = "todo_release_gate";
const ACTION = "todo_release";
const DEFAULT_GATE = ["sh", "-c", "test -s DONE.md"];

/** An argv from a flag: a JSON array, or a command line split as a shell splits words (nothing expanded). */
function argvOf(text: string, flag: string): string[] {
  const t = text.trim();
  if (t.startsWith("[")) {
    let v: unknown;
    try {
      v = JSON.parse(t);
    } catch {
      throw new InputError("not a JSON array of strings", flag);
    }
    if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === "string" && x.length > 0))
      throw new InputError("a JSON array of non-empty strings, the program first", flag);
    return v as string[];
  }
  if (t === "") throw new InputError("needs at least the program to run", flag);
  return splitCommandLine(t, flag);
}

/** What the scaffold holds, before it is written as files. */
interface Answers {
  id: string;
  objective: string;
  /** The workspace the goal starts from: null means a new `workspace/` folder beside the goal file. */
  workspace: string | null;
  gate: string[];
  gateWhy: string;
  notifyUrl: string | null;
  notifyCommand: string[] | null;
}

/** Asks on a terminal for what no flag gave; never without one (a script gets the defaults). */
async function ask(io: CommandIO, a: Answers, given: GoalInitFlags): Promise<Answers> {
  if (!process.stdin.isTTY || !process.stdout.isTTY || given.json || given["dry-run"]) return a;
  const missing =
    given.name === undefined ||
    given.objective === undefined ||
    given["gate-command"] === undefined ||
    (given["notify-url"] === undefined && given["notify-command"] === undefined);
  if (!missing) return a;
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const q = async (label: string, dflt: string) =>
      (await rl.question(`${label}${dflt ? ` [${dflt}]` : ""}: `)).trim() || dflt;
    const out = { ...a };
    if (given.name === undefined) out.id = await q("goal id", a.id);
    if (given.objective === undefined) out.objective = await q("objective", a.objective);
    if (given["gate-command"] === undefined) {
      const g = await q("gate command (argv, no shell)", a.gate.map(shellWord).join(" "));
      if (g !== a.gate.map(shellWord).join(" ")) out.gate = argvOf(g, "gate command");
    }
    if (given["notify-url"] === undefined && given["notify-command"] === undefined) {
      const u = await q("webhook to notify (empty: none)", "");
      if (u) out.notifyUrl = u;
    }
    io.out("\n");
    return out;
  } finally {
    rl.close();
  }
}

function goalYaml(a: Answers, dir: string): string {
  const taskPath = `tasks/${TODO}/task.yaml`;
  const goal: Record<string, unknown> = {
    id: a.id,
    objective: a.objective,
    workspace: a.workspace ?? "workspace",
    builder: "oracle",
    budget: { window: "24h", turns: 20 },
    acceptance: [{ id: "first-change", task: taskPath }],
    todos: [
      {
        id: TODO,
        class: "advancement_task",
        content: "Make the first change the gate checks.",
        task: taskPath,
      },
      { id: GATE, class: "user_gate", content: "A person approves the release.", decision_scope: "release" },
      {
        id: ACTION,
        class: "user_action",
        content: "Release it (a person's step, recorded with evidence).",
        required_decision_scopes: ["release"],
        depends_on: [TODO],
      },
    ],
  };
  const notify: Record<string, unknown>[] = [];
  if (a.notifyUrl) notify.push({ id: "webhook", url: a.notifyUrl });
  if (a.notifyCommand) notify.push({ id: "command", command: a.notifyCommand });
  if (notify.length) goal.notify = notify;
  const head = [
    `# A goal scaffolded by \`${cliName()} goal init\` (docs/guides/goals.md): one advancement todo proved by its`,
    "# task's gate, a person's release gate, and the release itself. builder: oracle runs each task's",
    "# reference solution; use { model: SPEC } or { command: CMD } for real work.",
    "",
  ];
  void dir;
  return `${head.join("\n")}${stringify(goal, { lineWidth: 0 })}`;
}

function taskYaml(a: Answers, workspaceFromTask: string): string {
  const task = {
    id: `${a.id}-first-change`.slice(0, 64),
    prompt: `${a.objective.trim()}\nAs a first change, write DONE.md at the workspace's root saying what you changed.\n`,
    workspace: workspaceFromTask,
    gates: [{ id: "check", run: a.gate, timeout: "60s", feedback: "log" }],
    budget: { attempts: 2 },
    oracle: "./solution.sh",
  };
  return `# ${a.gateWhy}\n# The oracle (solution.sh) is the reference solution goal run --oracle and task check use.\n${stringify(task, { lineWidth: 0 })}`;
}

const SOLUTION = `#!/bin/sh
# The reference solution: run in the task's workspace copy. Replace it with one that makes your gate pass.
set -eu
printf 'first change made by the reference solution\\n' > DONE.md
`;

/** `loopgate goal init [DIR]`: scaffolds a goal file and its folders, runnable at once with --oracle. */
export async function goalInitCommand(
  io: CommandIO,
  dir: string | undefined,
  flags: GoalInitFlags,
): Promise<number> {
  const root = resolve(dir ?? ".");
  if (existsSync(root) && !statSync(root).isDirectory())
    throw new InputError(`${dir} is not a folder`, "loopgate goal init");
  const wsGiven = flags.workspace !== undefined ? resolve(flags.workspace) : null;
  if (wsGiven && (!existsSync(wsGiven) || !statSync(wsGiven).isDirectory()))
    throw new InputError(`${flags.workspace} is not a folder`, "--workspace");
  let gate = DEFAULT_GATE;
  let gateWhy = "The gate: DONE.md exists and is not empty (replace it with your project's check).";
  if (flags["gate-command"] !== undefined) {
    gate = argvOf(flags["gate-command"], "--gate-command");
    gateWhy = "The gate: the command given to goal init (--gate-command).";
  } else if (wsGiven) {
    // The same detection as `loopgate init`: the repository's own tests are the first gate.
    try {
      const d = detectProject(wsGiven);
      gate = gateArgv(d, wsGiven, d.testPaths);
      gateWhy = `The gate: the repository's tests (${d.runner}: ${d.evidence.join("; ")}).`;
    } catch {
      // no test runner found: the default gate stands
    }
  }
  let answers: Answers = {
    id: flags.name ?? taskIdFor(basename(root)),
    objective: flags.objective ?? `Make the first change in ${basename(root)} and release it.`,
    workspace: wsGiven ? relative(root, wsGiven) || "." : null,
    gate,
    gateWhy,
    notifyUrl: flags["notify-url"] ?? null,
    notifyCommand: flags["notify-command"] ? argvOf(flags["notify-command"], "--notify-command") : null,
  };
  answers = await ask(io, answers, flags);
  if (!/^[a-z0-9][a-z0-9._-]{0,63}$/.test(answers.id))
    throw new InputError(
      `${JSON.stringify(answers.id)}: lower-case letters, digits, '.', '-' and '_' only`,
      "--name",
    );

  const goalFile = join(root, "goal.yaml");
  const taskDir = join(root, "tasks", TODO);
  const taskFile = join(taskDir, "task.yaml");
  const wsDir = wsGiven ?? join(root, "workspace");
  const files: { path: string; text: string; mode?: number }[] = [
    { path: goalFile, text: goalYaml(answers, root) },
    { path: taskFile, text: taskYaml(answers, relative(taskDir, wsDir)) },
    { path: join(taskDir, "solution.sh"), text: SOLUTION, mode: 0o755 },
  ];
  if (!wsGiven)
    files.push({
      path: join(wsDir, "README.md"),
      text: `# ${answers.id}\n\nThe goal's starting workspace: goal new copies it into a git repository loopgate owns.\n`,
    });
  // What init writes must load: a mistake here is loopgate's, said before anything is written.
  parseGoalFile(files[0]?.text ?? "", goalFile);
  parseTask(files[1]?.text ?? "", taskFile);
  const rel = (p: string) => relative(process.cwd(), p) || ".";
  if (flags["dry-run"]) {
    if (flags.json)
      io.out(
        `${JSON.stringify({ written: false, files: files.map((f) => ({ path: rel(f.path), text: f.text })) }, null, 2)}\n`,
      );
    else for (const f of files) io.out(`--- ${rel(f.path)}\n${f.text}${f.text.endsWith("\n") ? "" : "\n"}`);
    return 0;
  }
  const existing = files.filter((f) => existsSync(f.path));
  if (existing.length && !flags.force)
    throw new InputError(
      `${existing.map((f) => rel(f.path)).join(", ")} exist(s); --force overwrites them`,
      "loopgate goal init",
    );
  for (const f of files) {
    mkdirSync(dirname(f.path), { recursive: true });
    writeFileSync(f.path, f.text);
    if (f.mode) chmodSync(f.path, f.mode);
  }
  const lg = cliName();
  const next = [`${lg} goal new ${shellWord(rel(goalFile))}`, `${lg} goal run ${answers.id} --oracle`];
  if (flags.json)
    io.out(
      `${JSON.stringify({ written: true, goal: answers.id, goal_file: rel(goalFile), files: files.map((f) => rel(f.path)), next }, null, 2)}\n`,
    );
  else
    io.out(
      `${files.map((f) => `wrote ${rel(f.path)}`).join("\n")}\n  gate: ${answers.gate.map(shellWord).join(" ")}\n${answers.notifyUrl || answers.notifyCommand ? "  notify: yes\n" : ""}next: ${next.join("\nthen: ")}\n`,
    );
  return 0;
}
