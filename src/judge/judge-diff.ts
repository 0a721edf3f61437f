import { copyFileSync, existsSync, lstatSync, mkdirSync, readlinkSync, symlinkSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fsPath, hasRawBytes } from "../core/kernel/path-bytes.js";
import type { ChangePlan } from "../core/observation/gate-change-plan.js";
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
    // git takes its arguments as strings: a name that is not UTF-8 (path-bytes.ts) is diffed through a
    // plainly named copy (a link stays a link), outside the empty folder git runs in.
    let copies = 0;
    const plain = (p: string): string => {
      if (!hasRawBytes(p)) return p;
      const st = lstatSync(fsPath(p), { throwIfNoEntry: false });
      if (!st?.isFile() && !st?.isSymbolicLink()) return "/dev/null";
      const dir = join(`${empty}.names`, String(copies++));
      mkdirSync(dir, { recursive: true });
      const copy = join(dir, "f");
      if (st.isSymbolicLink()) symlinkSync(readlinkSync(fsPath(p), { encoding: "buffer" }), copy);
      else copyFileSync(fsPath(p), copy);
      return copy;
    };
    for (const [rel, pa, pb] of pairs) {
      if (out.length >= LIMIT) break;
      const a = plain(pa);
      const b = pb === "/dev/null" ? pb : plain(pb);
      const left = existsSync(a) ? a : "/dev/null";
      const r = await runProcess(
        ["git", "diff", "--no-index", "--no-color", "--no-ext-diff", "--no-textconv", "--", left, b],
        { cwd: empty, env, timeoutMs: 10_000, maxOutputBytes: LIMIT },
      );
      out += `${r.output.split(a).join(`a/${rel}`).split(b).join(`b/${rel}`)}\n`;
    }
  } finally {
    await rm(empty, { recursive: true, force: true });
    await rm(`${empty}.names`, { recursive: true, force: true });
  }
  return out.length > LIMIT ? `${out.slice(0, LIMIT)}\n[… diff cut at ${LIMIT} characters …]` : out;
}
