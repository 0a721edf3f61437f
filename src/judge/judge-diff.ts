import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChangePlan } from "../core/gate-change-plan.js";
import { runProcess } from "../sandbox/process.js";

const LIMIT = 40_000;

/**
 * The diff the judge reads: pristine → what the gates saw (carried deliverables and dropped paths).
 * `git diff --no-index` runs from an empty folder with no config, external diff or textconv, so nothing
 * the builder wrote (a .gitattributes, a hook) can run or shape it.
 */
export async function deliverablesDiff(
  plan: ChangePlan,
  pristineDir: string,
  workspaceDir: string,
): Promise<string> {
  const empty = await mkdtemp(join(tmpdir(), "loopgate-diff-"));
  const env = {
    PATH: "/usr/bin:/bin",
    HOME: empty,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    LC_ALL: "C",
  };
  let out = "";
  try {
    const pairs: [string, string, string][] = [];
    for (const e of plan.carry)
      if (e.type === "file" || e.type === "symlink")
        pairs.push([e.path, join(pristineDir, e.path), join(workspaceDir, e.path)]);
    for (const p of plan.drop) pairs.push([p, join(pristineDir, p), "/dev/null"]);
    for (const [rel, a, b] of pairs) {
      if (out.length >= LIMIT) break;
      const left = existsSync(a) ? a : "/dev/null";
      const r = await runProcess(
        ["git", "diff", "--no-index", "--no-color", "--no-ext-diff", "--no-textconv", "--", left, b],
        { cwd: empty, env, timeoutMs: 10_000, maxOutputBytes: LIMIT },
      );
      out += `${r.output.split(a).join(`a/${rel}`).split(b).join(`b/${rel}`)}\n`;
    }
  } finally {
    await rm(empty, { recursive: true, force: true });
  }
  return out.length > LIMIT ? `${out.slice(0, LIMIT)}\n[… diff cut at ${LIMIT} characters …]` : out;
}
