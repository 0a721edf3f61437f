import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { LineCounter } from "yaml";
import { z } from "zod";
import { parseDuration } from "../core/kernel/duration.js";
import { formatPath, InputError } from "../core/kernel/errors.js";
import { lineOf, parseYamlSource } from "../core/kernel/yaml-source.js";

/**
 * How an arm decides "done" (see policies.ts): `loopgate` (the full policy), `overlay` (held-out gates on
 * the builder's own tree), `in-workspace-tests` (only the task's visible gates, on the builder's own
 * tree), `trust-claim` (done when the builder says so), `claude-stop-hook` (done when Claude Code's own
 * project Stop hook, running the visible tests, let it stop; real-agent scenarios only), `codex-stop-hook`
 * (the same with Codex's own project Stop hook).
 */
export const POLICIES = [
  "loopgate",
  "overlay",
  "in-workspace-tests",
  "trust-claim",
  "claude-stop-hook",
  "codex-stop-hook",
] as const;
export type Policy = (typeof POLICIES)[number];

const slug = z.string().regex(/^[a-z0-9][a-z0-9._-]*$/, "lower-case letters, digits, '.', '-' and '_' only");
const duration = z.union([z.string(), z.number()]).refine((v) => parseDuration(v) !== null, {
  message: 'expected a duration such as "30s", "500ms", "5m" or a number of seconds',
});
const attempts = z.number().int().min(1).max(100);

/** Exactly one of: an argv line (`command`), a built-in agent model (`model`), the task's oracle, no-op. */
export const BuilderSpec = z
  .object({
    command: z.string().min(1).optional(),
    model: z.string().min(1).optional(),
    oracle: z.literal(true).optional(),
    noop: z.literal(true).optional(),
    /** A real agent CLI driven by a scripted model file (relative to the manifest) through model-server. */
    agent: z
      .object({ name: z.enum(["claude-code", "codex"]), script: z.string().min(1) })
      .strict()
      .optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    const kinds = (["command", "model", "oracle", "noop", "agent"] as const).filter(
      (k) => b[k] !== undefined,
    );
    if (kinds.length !== 1)
      ctx.addIssue({
        code: "custom",
        message: `a builder is exactly one of command, model, agent, oracle: true, noop: true; found ${kinds.length ? kinds.join(", ") : "none"}`,
      });
  });
export type BuilderSpec = z.infer<typeof BuilderSpec>;

const ArmSchema = z
  .object({
    id: slug,
    description: z.string().max(2000).optional(),
    policy: z.enum(POLICIES).default("loopgate"),
    builder: BuilderSpec.optional(),
    /** Judge another arm's runs under this arm's policy instead of running again (claim-based policies only). */
    from: slug.optional(),
  })
  .strict();

const TaskEntrySchema = z
  .object({
    id: slug,
    /** A loopgate task file, relative to the manifest. */
    task: z.string().min(1),
    /** The builder for every arm that names none (a scenario's behaviour). */
    builder: BuilderSpec.optional(),
    /** Per-arm builders for this task; they win over the arm's and the task's builder. */
    builders: z.record(z.string(), BuilderSpec).optional(),
    max_attempts: attempts.optional(),
    /** Overrides every subprocess gate's timeout of this task, in memory. */
    gate_timeout: duration.optional(),
    /** Free labels copied to the export (e.g. label: forged). */
    meta: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).default({}),
  })
  .strict();

/** An experiment manifest: arms × tasks × seeds, each run through loopgate's runner. */
export const ManifestSchema = z
  .object({
    name: slug,
    description: z.string().max(4000).optional(),
    /** The arm every other arm is paired against; default: the first arm. */
    control: slug.optional(),
    arms: z.array(ArmSchema).min(1, "an experiment needs at least one arm"),
    tasks: z.array(TaskEntrySchema).min(1, "an experiment needs at least one task"),
    /** Repetitions of every (task, arm). */
    seeds: z.number().int().min(1).max(1000).default(1),
    /** Default attempt cap for every task (else each task file's budget.attempts). */
    max_attempts: attempts.optional(),
    gate_timeout: duration.optional(),
    /** Runs executed at the same time. */
    concurrency: z.number().int().min(1).max(32).default(1),
    sandbox: z.enum(["bubblewrap", "none"]).default("bubblewrap"),
    /** The caller's variables that reach builders (e.g. an API key), as `--builder-env`. */
    builder_env: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "an environment variable name"))
      .default([]),
    /** Builder network access for every run (default: each task file's builder.network). */
    network: z.boolean().optional(),
  })
  .strict()
  .superRefine((m, ctx) => {
    const arms = new Map(m.arms.map((a) => [a.id, a]));
    const dup = (list: { id: string }[], key: "arms" | "tasks") => {
      const seen = new Set<string>();
      list.forEach((x, i) => {
        if (seen.has(x.id))
          ctx.addIssue({ code: "custom", path: [key, i, "id"], message: `duplicate id ${x.id}` });
        seen.add(x.id);
      });
    };
    dup(m.arms, "arms");
    dup(m.tasks, "tasks");
    const known = [...arms.keys()].join(", ");
    if (m.control !== undefined && !arms.has(m.control))
      ctx.addIssue({ code: "custom", path: ["control"], message: `no arm ${m.control}; declared: ${known}` });
    m.arms.forEach((a, i) => {
      if (a.from === undefined) return;
      const src = arms.get(a.from);
      const issue = (message: string) => ctx.addIssue({ code: "custom", path: ["arms", i, "from"], message });
      if (a.policy !== "trust-claim")
        issue(`only a trust-claim arm can judge another arm's runs; this arm's policy is ${a.policy}`);
      else if (!src) issue(`no arm ${a.from}; declared: ${known}`);
      else if (src.id === a.id || src.from !== undefined) issue(`arm ${a.from} must run its own builds`);
      if (a.builder)
        ctx.addIssue({
          code: "custom",
          path: ["arms", i, "builder"],
          message: "an arm with from uses that arm's runs; it takes no builder",
        });
    });
    m.tasks.forEach((t, i) => {
      for (const key of Object.keys(t.builders ?? {}))
        if (!arms.has(key))
          ctx.addIssue({
            code: "custom",
            path: ["tasks", i, "builders", key],
            message: `no arm ${key}; declared: ${known}`,
          });
      for (const a of m.arms)
        if (a.from === undefined && !t.builders?.[a.id] && !a.builder && !t.builder)
          ctx.addIssue({
            code: "custom",
            path: ["tasks", i],
            message: `no builder for arm ${a.id}: give the arm a builder, or this task a builder or builders.${a.id}`,
          });
    });
  });
export type Manifest = z.infer<typeof ManifestSchema>;
export type ManifestInput = z.input<typeof ManifestSchema>;
export type Arm = Manifest["arms"][number];
export type TaskEntry = Manifest["tasks"][number];

/** A manifest with where it came from; `where` names a field's file and line for later errors. */
export interface LoadedManifest {
  manifest: Manifest;
  file: string;
  /** Relative paths in the manifest (task files, builder programs, model files) resolve against this. */
  dir: string;
  where(path: readonly PropertyKey[]): string;
}

/**
 * Parses a manifest's text (YAML or JSON) the way task files are parsed: every error names the file,
 * the line and the field, e.g. `exp.yaml:9: arms[1].policy: Invalid option ...`.
 */
export function parseManifest(text: string, file: string): LoadedManifest {
  const counter = new LineCounter();
  const { doc, raw } = parseYamlSource(text, file, counter);
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    throw new InputError("an experiment manifest is a mapping with name, arms, tasks and seeds", file);
  const where = (path: readonly PropertyKey[]) => {
    const line = lineOf(doc, path, counter);
    return `${line ? `${file}:${line}` : file}: ${formatPath(path)}`;
  };
  const result = ManifestSchema.safeParse(raw);
  if (!result.success) {
    const issues = result.error.issues;
    const lines = issues.slice(0, 5).map((i) => {
      // An unknown key is reported on its own line.
      const key = i.code === "unrecognized_keys" ? i.keys[0] : undefined;
      return `${where(key === undefined ? i.path : [...i.path, key])}: ${i.message}`;
    });
    const more = issues.length > 5 ? `\n(and ${issues.length - 5} more)` : "";
    throw new InputError(`invalid experiment manifest\n${lines.join("\n")}${more}`);
  }
  return { manifest: result.data, file, dir: dirname(resolve(file)), where };
}

/** Reads and parses a manifest file. */
export function loadManifest(path: string): LoadedManifest {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new InputError(`cannot read the manifest: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, path);
  }
  return parseManifest(text, path);
}

/** A manifest built in code (benchmarks, tests): validated by the same schema; `dir` anchors its paths. */
export function manifestFromObject(input: ManifestInput, dir: string, label = "manifest"): LoadedManifest {
  const where = (path: readonly PropertyKey[]) => `${label}: ${formatPath(path)}`;
  const result = ManifestSchema.safeParse(input);
  if (!result.success)
    throw new InputError(
      `invalid experiment manifest\n${result.error.issues
        .slice(0, 5)
        .map((i) => `${where(i.path)}: ${i.message}`)
        .join("\n")}`,
    );
  return { manifest: result.data, file: label, dir: resolve(dir), where };
}
