import picomatch from "picomatch";
import { LineCounter } from "yaml";
import { z } from "zod";
import { DurationField } from "../kernel/duration.js";
import { formatPath, InputError } from "../kernel/errors.js";
import { globProblem } from "../kernel/glob-syntax.js";
import { gateTemplateParams, templateNames } from "../kernel/template.js";
import { lineOf, parseYamlSource } from "../kernel/yaml-source.js";
import { DifferentialSpec } from "./differential-spec.js";
import { GoalPredicate, gateId, relPath } from "./goal-predicate.js";
import { JudgeSchema } from "./judge-spec.js";
import { LimitsSchema } from "./limits.js";

const duration = DurationField;
const glob = z
  .string()
  .min(1)
  .refine((g) => !g.startsWith("/") && !g.split("/").includes(".."), {
    message: "a glob is relative to the workspace root: no leading / and no ..",
  })
  .superRefine((g, ctx) => {
    let problem = globProblem(g);
    if (problem === null)
      try {
        picomatch.makeRe(g);
      } catch (e) {
        problem = (e as Error).message;
      }
    if (problem !== null)
      ctx.addIssue({ code: "custom", message: `not a valid glob ${JSON.stringify(g)}: ${problem}` });
  });
/** A dependency folder: a plain relative path inside the workspace, no globs, no `.`/`..` segments. */
const dependencyPath = z
  .string()
  .min(1)
  .transform((p) => p.replace(/\/+$/, ""))
  .superRefine((p, ctx) => {
    const segments = p.split("/");
    const problem = p.includes("\0")
      ? "contains a NUL byte"
      : p.startsWith("/")
        ? "is absolute"
        : segments.some((s) => s === "" || s === "." || s === "..")
          ? "has an empty, . or .. segment"
          : /[*?[\]{}!]/.test(p)
            ? "is a glob"
            : null;
    if (problem !== null)
      ctx.addIssue({
        code: "custom",
        message: `${JSON.stringify(p)} ${problem}: a dependency is a folder of the workspace, e.g. node_modules or .venv`,
      });
  });

/**
 * Why dependency folder `dep` cannot be declared beside the others: it lies inside or holds an earlier one,
 * or a deliverable glob reaches into it (a dependency never flows to the gates from the builder's tree).
 */
function dependencyClash(
  dep: string,
  earlier: readonly string[],
  deliverables: readonly string[],
): string | null {
  const within = (a: string, b: string) => a === b || a.startsWith(`${b}/`);
  const other = earlier.find((e) => within(dep, e) || within(e, dep));
  if (other !== undefined) return `${dep} overlaps the dependency folder ${other}`;
  const probes = [dep, `${dep}/x`, `${dep}/x/y.js`, `${dep}/.x`];
  for (const g of deliverables) {
    const match = picomatch(g, { dot: true });
    if (within(g, dep) || probes.some((p) => match(p)))
      return `${dep} is matched by the deliverable glob ${JSON.stringify(g)}: dependencies are shared read-only and never carried from the builder's workspace`;
  }
  return null;
}

/** The globs a task protects, with its dependency folders (their mount points: any change under one is a violation). */
export function protectedGlobs(task: Pick<Task, "protected" | "dependencies">): string[] {
  return [...task.protected, ...task.dependencies.flatMap((d) => [d, `${d}/**`])];
}

/**
 * The rules the gate-change plan is made by (core/observation/gate-change-plan.ts): what the gates are built from and
 * what a goal writes back are planned by these same rules, so the two cannot drift apart.
 */
export function gateChangeRules(task: Pick<Task, "deliverables" | "protected" | "dependencies">): {
  deliverables: readonly string[];
  protected: readonly string[];
} {
  return { deliverables: task.deliverables, protected: protectedGlobs(task) };
}

/**
 * Defaults of the task file (docs/reference/task-file.md), each named once: the schema fills them in, and
 * core/task/resolve-task.ts turns what the file holds into numbers once, when the task loads.
 */
export const DEFAULT_BUDGET = { attempts: 3, turns: 20, steps_per_turn: 50 } as const;
/** `builder.timeout` when the task gives none. */
export const DEFAULT_BUILDER_TIMEOUT = "10m";

const feedback = z.enum(["none", "summary", "log"]);

const knownParams = new Set<string>(gateTemplateParams);
const argv = z
  .array(z.string())
  .min(1, "run needs at least the program to start")
  .superRefine((args, ctx) => {
    args.forEach((arg, i) => {
      for (const name of templateNames(arg))
        if (!knownParams.has(name))
          ctx.addIssue({
            code: "custom",
            path: [i],
            message: `unknown parameter \${${name}}; known: ${[...knownParams].map((p) => `\${${p}}`).join(", ")}`,
          });
    });
  });

/**
 * A static gate reads one file of the gate environment: a path that names anything outside it (absolute,
 * or climbing with `..`) could never be read, so it is refused at load instead of failing every attempt.
 */
const staticPath = relPath.superRefine((p, ctx) => {
  const problem = p.includes("\0")
    ? "contains a NUL byte"
    : p.startsWith("/")
      ? "is absolute"
      : p.split("/").includes("..")
        ? "has a .. segment"
        : null;
  if (problem !== null)
    ctx.addIssue({
      code: "custom",
      message: `${JSON.stringify(p)} ${problem}: a static gate's path is relative to the gate environment (the workspace), e.g. src/app.js`,
    });
});

const staticCheck = z
  .object({
    path: staticPath,
    match: z.string().optional(),
    not_match: z.string().optional(),
    exists: z.literal(true).optional(),
    absent: z.literal(true).optional(),
    json_pointer: z.string().optional(),
    equals: z.unknown().optional(),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/, "64 lower-case hex digits")
      .optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    const kinds = ["match", "not_match", "exists", "absent", "json_pointer", "sha256"].filter(
      (k) => s[k as keyof typeof s] !== undefined,
    );
    if (kinds.length !== 1)
      ctx.addIssue({
        code: "custom",
        message: `a static gate declares exactly one check (match, not_match, exists, absent, json_pointer + equals, sha256); found ${kinds.length ? kinds.join(", ") : "none"}`,
      });
    if (s.json_pointer !== undefined && !("equals" in s))
      ctx.addIssue({ code: "custom", path: ["equals"], message: "json_pointer needs an equals value" });
    if (s.json_pointer !== undefined && s.json_pointer !== "" && !s.json_pointer.startsWith("/"))
      ctx.addIssue({ code: "custom", path: ["json_pointer"], message: 'a JSON pointer starts with "/"' });
    for (const key of ["match", "not_match"] as const) {
      const re = s[key];
      if (re === undefined) continue;
      try {
        new RegExp(re, "m");
      } catch (e) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `invalid regular expression: ${(e as Error).message}`,
        });
      }
    }
  });

export { GoalPredicate };

/**
 * The goal the built-in agent's turns are gated on: every predicate must hold on trusted evidence.
 * Free text alone is refused, because nothing could check it.
 */
const GoalSchema = z
  .object({
    condition: z.string().max(2000).optional(),
    all: z
      .array(GoalPredicate)
      .min(1, "a goal needs at least one checkable predicate (command_succeeded, gate_passed, file_exists)"),
  })
  .strict();

const subprocessGate = z
  .object({
    id: gateId,
    run: argv,
    heldout: relPath.optional(),
    canary: relPath.optional(),
    timeout: duration.default("60s"),
    feedback: feedback.default("summary"),
    env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).default({}),
    writable: z.boolean().default(false),
    /** loopgate's own canary and test count for runners it recognises; `off` trusts the exit code alone. */
    tamper_check: z.enum(["auto", "off"]).default("auto"),
    /** The fewest real tests that must pass for the gate to be believed. */
    min_tests: z.number().int().positive().optional(),
  })
  .strict();
const staticGate = z
  .object({ id: gateId, static: staticCheck, feedback: feedback.default("summary") })
  .strict();
const differentialGate = z
  .object({
    id: gateId,
    differential: DifferentialSpec,
    /** The limit for each case's run, on either tree. */
    timeout: duration.default("30s"),
    feedback: feedback.default("summary").refine((f) => f !== "log", {
      message:
        "a differential gate's log holds the oracle's expected outputs, which the builder must never see: use summary or none",
    }),
  })
  .strict();

/**
 * Picks the gate's schema by its kind key (differential, static, else subprocess), so an error names the
 * bad field of that kind instead of zod's "matches none of the union's options".
 */
const gate = z
  .unknown()
  .transform(
    (
      raw,
      ctx,
    ): z.output<typeof subprocessGate> | z.output<typeof staticGate> | z.output<typeof differentialGate> => {
      const kind = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? raw : {};
      const schema =
        "differential" in kind ? differentialGate : "static" in kind ? staticGate : subprocessGate;
      const r = schema.safeParse(raw);
      if (r.success) return r.data;
      for (const issue of r.error.issues)
        ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
      return z.NEVER;
    },
  );

/** The task file contract (docs/reference/task-file.md), as zod. */
export const TaskSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, "lower-case letters, digits, '.', '-' and '_' only"),
    prompt: z.string().min(1),
    workspace: relPath,
    deliverables: z.array(glob).default([]),
    protected: z.array(glob).default([]),
    gates: z.array(gate).min(1, "a task needs at least one gate: without one nothing can declare it done"),
    judge: JudgeSchema.optional(),
    budget: z
      .object({
        attempts: z.number().int().min(1).max(100).default(DEFAULT_BUDGET.attempts),
        turns: z.number().int().min(1).max(1000).default(DEFAULT_BUDGET.turns),
        steps_per_turn: z.number().int().min(1).max(1000).default(DEFAULT_BUDGET.steps_per_turn),
        tokens: z.number().int().positive().optional(),
        cost_usd: z.number().positive().optional(),
        wall_time: duration.optional(),
        repairs: z.number().int().nonnegative().optional(),
        step_checks: z.number().int().nonnegative().optional(),
      })
      .strict()
      // An absent budget is parsed as an empty one, so each field's own default applies (stated once, above).
      .prefault({}),
    goal: GoalSchema.optional(),
    /** Heavy mode of the built-in agent: the bounded self-check and its one repair turn (advisory). */
    self_check: z.enum(["required", "off"]).default("off"),
    builder: z
      .object({ timeout: duration.default(DEFAULT_BUILDER_TIMEOUT), network: z.boolean().default(false) })
      .strict()
      .prefault({}),
    oracle: relPath.optional(),
    /** What the builder may leave in the workspace and what each builder and gate process may use. */
    limits: LimitsSchema.optional(),
    /** Workspace folders (node_modules, .venv) shared read-only by every run instead of copied (runner/run/context/dependencies.ts). */
    dependencies: z.array(dependencyPath).default([]),
  })
  .strict()
  .superRefine((t, ctx) => {
    const seen = new Set<string>();
    t.gates.forEach((g, i) => {
      if (seen.has(g.id))
        ctx.addIssue({ code: "custom", path: ["gates", i, "id"], message: `duplicate gate id ${g.id}` });
      seen.add(g.id);
    });
    t.goal?.all.forEach((p, i) => {
      if ("gate_passed" in p && !t.gates.some((g) => g.id === p.gate_passed))
        ctx.addIssue({
          code: "custom",
          path: ["goal", "all", i, "gate_passed"],
          message: `no gate ${p.gate_passed}; declared: ${t.gates.map((g) => g.id).join(", ")}`,
        });
    });
    t.gates.forEach((g, i) => {
      if ("differential" in g && !t.oracle)
        ctx.addIssue({
          code: "custom",
          path: ["gates", i, "differential"],
          message:
            "a differential gate compares against the oracle's tree: declare the task's oracle (a reference solution, e.g. oracle: ./solution.sh)",
        });
    });
    t.dependencies.forEach((d, i) => {
      const clash = dependencyClash(d, t.dependencies.slice(0, i), t.deliverables);
      if (clash) ctx.addIssue({ code: "custom", path: ["dependencies", i], message: clash });
    });
    const ruleIds = new Set<string>();
    t.judge?.rules.forEach((r, i) => {
      const id = typeof r === "string" ? `rule-${i + 1}` : r.id;
      if (ruleIds.has(id))
        ctx.addIssue({ code: "custom", path: ["judge", "rules", i], message: `duplicate rule id ${id}` });
      ruleIds.add(id);
    });
  });

export type Task = z.infer<typeof TaskSchema>;
export type GateSpec = Task["gates"][number];
export type SubprocessGateSpec = Extract<GateSpec, { run: unknown }>;
export type StaticGateSpec = Extract<GateSpec, { static: unknown }>;
export type DifferentialGateSpec = Extract<GateSpec, { differential: unknown }>;

/** True for a gate that runs a program. */
export function isSubprocessGate(g: GateSpec): g is SubprocessGateSpec {
  return "run" in g;
}

/** True for a gate that compares the oracle's tree with the builder's. */
export function isDifferentialGate(g: GateSpec): g is DifferentialGateSpec {
  return "differential" in g;
}

/**
 * Parses a task file's text (YAML or JSON). Errors name the file, the line and the field:
 * `task.yaml:7: gates[1].timeout: expected a duration ...`.
 */
export function parseTask(text: string, file: string): Task {
  const lineCounter = new LineCounter();
  const { doc, raw } = parseYamlSource(text, file, lineCounter);
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    throw new InputError("a task file is a mapping with id, prompt, workspace and gates", file);
  const result = TaskSchema.safeParse(raw);
  if (result.success) return result.data;
  const messages = result.error.issues.slice(0, 5).map((issue) => {
    const line = lineOf(doc, issue.path, lineCounter);
    const where = line ? `${file}:${line}` : file;
    return `${where}: ${formatPath(issue.path)}: ${issue.message}`;
  });
  const more = result.error.issues.length > 5 ? `\n(and ${result.error.issues.length - 5} more)` : "";
  throw new InputError(`invalid task file\n${messages.join("\n")}${more}`);
}
