import { createHash } from "node:crypto";
import { LineCounter } from "yaml";
import { z } from "zod";
import { InputError } from "../../../core/kernel/errors.js";
import { lineOf, parseYamlSource } from "../../../core/kernel/yaml-source.js";
import { jsonPointer } from "../../../gates/static-gate.js";

/** Why a fixture path is unsafe, or null: relative, `/`-separated, no empty, `.` or `..` segment, no NUL. */
export function pathProblem(p: string): string | null {
  if (p === "") return "an empty path";
  if (p.includes("\0")) return "a path may not contain a NUL byte";
  if (p.startsWith("/")) return "an absolute path; paths are relative to the workspace root";
  if (p.includes("\\")) return "a path uses / as its separator, never \\";
  for (const seg of p.split("/")) {
    if (seg === "") return "an empty path segment (// or a trailing /)";
    if (seg === "." || seg === "..") return `a path may not contain a ${seg} segment`;
  }
  return null;
}

/** mecha's criterion: an artifact and a JSON pointer into its expected value (plus owner context). */
const CriterionEntry = z
  .object({ artifact: z.string().min(1), pointer: z.string() })
  .loose()
  .refine((c) => c.pointer === "" || c.pointer.startsWith("/"), {
    path: ["pointer"],
    message: 'a JSON pointer is "" or starts with "/"',
  });

/**
 * mecha's owner-authored mission fixture. Expected values (`artifacts`) are checked by gates only;
 * they never reach the builder. `criteria` is recorded, not enforced, in this version.
 */
export const MissionCaseSchema = z
  .object({
    prompt: z.string().min(1, "the prompt is the exact text the builder is given; it may not be empty"),
    goal: z.string().min(1).max(2000),
    files: z.record(z.string(), z.string()),
    artifacts: z
      .record(z.string(), z.json())
      .refine(
        (a) => Object.keys(a).length > 0,
        "a fixture needs at least one artifact: nothing else can pass",
      ),
    preserve: z.array(z.string()).default([]),
    criteria: z.union([z.array(z.string().min(1)), z.record(z.string().min(1), CriterionEntry)]).optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    const bad = (path: PropertyKey[], message: string) => ctx.addIssue({ code: "custom", path, message });
    for (const section of ["files", "artifacts"] as const)
      for (const p of Object.keys(c[section])) {
        const why = pathProblem(p);
        if (why) bad([section, p], why);
      }
    const files = new Set(Object.keys(c.files));
    const seen = new Set<string>();
    c.preserve.forEach((p, i) => {
      const why = pathProblem(p);
      if (why) bad(["preserve", i], why);
      else if (!files.has(p))
        bad(["preserve", i], `${p} is not a starting file; preserve may name only paths listed in files`);
      else if (Object.hasOwn(c.artifacts, p))
        bad(["preserve", i], `${p} is an artifact; an output cannot also stay unchanged`);
      if (seen.has(p)) bad(["preserve", i], `${p} is listed twice`);
      seen.add(p);
    });
    // A path cannot be both a file and a folder of another path.
    const all = [...new Set([...files, ...Object.keys(c.artifacts)])].sort();
    for (let i = 0; i + 1 < all.length; i++) {
      const [a, b] = [all[i] as string, all[i + 1] as string];
      if (b.startsWith(`${a}/`))
        bad([files.has(b) ? "files" : "artifacts", b], `${a} is a file, so it cannot also be a folder`);
    }
    if (c.criteria && !Array.isArray(c.criteria))
      for (const [name, cr] of Object.entries(c.criteria)) {
        if (!Object.hasOwn(c.artifacts, cr.artifact))
          bad(["criteria", name, "artifact"], `${cr.artifact} is not one of the artifacts`);
        else if (jsonPointer(c.artifacts[cr.artifact], cr.pointer) === undefined)
          bad(
            ["criteria", name, "pointer"],
            `${cr.pointer} is not present in ${cr.artifact}'s expected value`,
          );
      }
  });

export type MissionCase = z.infer<typeof MissionCaseSchema>;

/**
 * Parses a mission fixture (JSON or YAML). Errors name the file, the line and the field:
 * `case.json:4: files.../x: a path may not contain a .. segment`.
 */
export function parseMissionCase(text: string, file: string): MissionCase {
  const lineCounter = new LineCounter();
  const { doc, raw } = parseYamlSource(text, file, lineCounter, "JSON or YAML");
  if (raw === null || typeof raw !== "object" || Array.isArray(raw))
    throw new InputError(
      "a mission fixture is a mapping with prompt, goal, files, artifacts and preserve",
      file,
    );
  const issues: { path: PropertyKey[]; message: string }[] = [];
  if ("workspace" in raw)
    issues.push({
      path: ["workspace"],
      message:
        "a mission fixture carries its starting state in files; to bind it to an existing folder pass --workspace DIR",
    });
  const result = MissionCaseSchema.safeParse(raw);
  if (result.success && issues.length === 0) return result.data;
  if (!result.success)
    for (const i of result.error.issues) {
      if (i.code !== "unrecognized_keys") issues.push({ path: i.path, message: i.message });
      else
        for (const key of i.keys)
          if (i.path.length > 0 || key !== "workspace")
            issues.push({ path: [...i.path, key], message: "unknown field" });
    }
  const located = issues
    .map((issue) => ({ ...issue, line: lineOf(doc, issue.path, lineCounter) }))
    .sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
  const messages = located
    .slice(0, 5)
    .map((i) => `${i.line ? `${file}:${i.line}` : file}: ${fieldPath(i.path)}: ${i.message}`);
  const more = issues.length > 5 ? `\n(and ${issues.length - 5} more)` : "";
  throw new InputError(`invalid mission fixture\n${messages.join("\n")}${more}`);
}

/** `files["../x"]`, `preserve[0]`, `criteria.review.pointer`: a file path key is quoted. */
function fieldPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(String(part))) out += out ? `.${String(part)}` : String(part);
    else out += `[${JSON.stringify(String(part))}]`;
  }
  return out || "(root)";
}

const canonical = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(canonical)
    : v !== null && typeof v === "object"
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
        )
      : v;

/**
 * The fixture's fingerprint: prompt, goal, starting files, artifact paths, preserve and criteria.
 * Expected values are left out on purpose: the digest names folders and is recorded in the run log,
 * and a hash of a small expected value (a sum) could be brute-forced back.
 */
export function missionCaseDigest(c: MissionCase): string {
  const identity = {
    format: "loopgate-mission-case/1",
    prompt: c.prompt,
    goal: c.goal,
    files: c.files,
    artifact_paths: Object.keys(c.artifacts).sort(),
    preserve: c.preserve,
    criteria: c.criteria ?? null,
  };
  return createHash("sha256")
    .update(JSON.stringify(canonical(identity)))
    .digest("hex");
}
