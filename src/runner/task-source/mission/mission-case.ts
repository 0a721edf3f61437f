import { createHash } from "node:crypto";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, extname, join, relative, resolve } from "node:path";
import { InputError } from "../../../core/kernel/errors.js";
import { resolveTask } from "../../../core/task/resolve-task.js";
import { TaskSchema } from "../../../core/task/task.js";
import type { LoadedTask } from "../load-task.js";
import { materialiseTree, treeDifference } from "./case-tree.js";
import { type MissionCase, missionCaseDigest, parseMissionCase } from "./mission-case-schema.js";

export { type MissionCase, missionCaseDigest, parseMissionCase, pathProblem } from "./mission-case-schema.js";

/** What a mission fixture keeps beside the task it becomes: local metadata, never shown to the builder. */
export interface MissionCaseMeta {
  goal: string;
  /** Recorded, not enforced: this version has no criterion evaluation. */
  criteria: MissionCase["criteria"] | null;
  artifacts: string[];
  preserve: string[];
  /** `<localDir>/cases/<digest>`: the materialised starting files (`repo/`) and `case.json`. */
  caseDir: string;
  /** The folder the fixture was bound to with --workspace, if any. */
  boundTo: string | null;
}

/** A mission fixture as a runnable task. */
export interface LoadedMissionCase extends LoadedTask {
  mission: MissionCaseMeta;
}

export interface LoadMissionCaseOptions {
  /** The store folder; the starting files are written to `<localDir>/cases/<digest>/repo`. */
  localDir: string;
  /** An existing folder the fixture must describe exactly (`--workspace DIR`). */
  against?: string;
}

const inside = (parent: string, p: string) => {
  const rel = relative(parent, p);
  return rel === "" || (!rel.startsWith("..") && !rel.startsWith("/"));
};

/** Escapes glob syntax so a fixture path matches only itself as a deliverable or protected pattern. */
export const literalGlob = (p: string) => p.replace(/[*?[\]{}()!+@]/g, "\\$&");

/** `answer.json` → `answer-json`: the readable part of a gate id. */
function slug(p: string): string {
  return (
    p
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 60) || "file"
  );
}

function uniqueIds(prefix: string, paths: readonly string[], taken: Set<string>): string[] {
  return paths.map((p) => {
    const base = `${prefix}-${slug(p)}`;
    let id = base;
    for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
    taken.add(id);
    return id;
  });
}

/**
 * Maps a parsed fixture onto loopgate's task model: files → workspace, every artifact → a static
 * whole-document JSON gate, preserve → protected plus a sha256 gate per file, artifacts → the only
 * deliverables, goal → the built-in agent's goal text with one `file_exists` per artifact. Expected
 * values appear only in the gates, whose feedback is `summary` (gate id and outcome, never the log).
 */
export function missionTask(c: MissionCase, id: string, workspace: string) {
  const artifacts = Object.keys(c.artifacts);
  const taken = new Set<string>();
  const artifactIds = uniqueIds("artifact", artifacts, taken);
  const preserveIds = uniqueIds("preserve", c.preserve, taken);
  const sha256 = (text: string) => createHash("sha256").update(Buffer.from(text, "utf8")).digest("hex");
  const parsed = TaskSchema.safeParse({
    id,
    prompt: c.prompt,
    workspace,
    deliverables: artifacts.map(literalGlob),
    protected: c.preserve.map(literalGlob),
    gates: [
      ...artifacts.map((path, i) => ({
        id: artifactIds[i],
        static: { path, json_pointer: "", equals: c.artifacts[path] },
        feedback: "summary",
      })),
      ...c.preserve.map((path, i) => ({
        id: preserveIds[i],
        static: { path, sha256: sha256(c.files[path] as string) },
        feedback: "summary",
      })),
    ],
    goal: { condition: c.goal, all: artifacts.map((p) => ({ file_exists: p })) },
  });
  if (!parsed.success)
    throw new Error(`internal: a mission fixture mapped to an invalid task: ${parsed.error.message}`);
  return parsed.data;
}

/**
 * Loads a mission fixture as a task built in memory. The starting files are written to a fresh,
 * content-addressed folder under the store, never beside the fixture; with `against`, that folder
 * must hold exactly the listed files (no more, no fewer, same bytes) or the fixture is refused.
 */
export function loadMissionCase(path: string, options: LoadMissionCaseOptions): LoadedMissionCase {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new InputError(
      `cannot read the mission fixture: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      path,
    );
  }
  const c = parseMissionCase(text, path);
  const digest = missionCaseDigest(c);
  let boundTo: string | null = null;
  if (options.against !== undefined) {
    boundTo = resolve(options.against);
    let isDir = false;
    try {
      isDir = statSync(boundTo).isDirectory();
    } catch {
      isDir = false;
    }
    if (!isDir) throw new InputError(`${boundTo} is not a directory`, "--workspace");
    if (inside(boundTo, file))
      throw new InputError(
        "the mission fixture lies inside the workspace, where the builder could read its expected outputs; keep it outside",
        path,
      );
    const diff = treeDifference(boundTo, c.files);
    if (diff)
      throw new InputError(
        `the fixture does not describe this starting state: ${diff} (every starting file must be listed in ${path} with its exact content)`,
        `--workspace ${options.against}`,
      );
  }
  const caseDir = join(resolve(options.localDir), "cases", digest);
  const workspace = join(caseDir, "repo");
  if (inside(workspace, file) || inside(workspace, dirname(file)))
    throw new InputError(
      `the store ${options.localDir} would put the starting files around the fixture; choose another --store`,
      path,
    );
  materialiseTree(workspace, c.files);
  const stem = slug(basename(file, extname(file)));
  const task = missionTask(c, `case-${stem}`, workspace);
  const mission: MissionCaseMeta = {
    goal: c.goal,
    criteria: c.criteria ?? null,
    artifacts: Object.keys(c.artifacts),
    preserve: c.preserve,
    caseDir,
    boundTo,
  };
  // Local metadata beside the starting files, for people; expected values are not written here.
  writeFileSync(
    join(caseDir, "case.json"),
    `${JSON.stringify({ digest, fixture: file, prompt: c.prompt, ...mission }, null, 2)}\n`,
  );
  return {
    task,
    resolved: resolveTask(task, path),
    file,
    dir: dirname(file),
    workspace,
    oracle: null,
    hidden: [file],
    digest,
    mission,
  };
}
