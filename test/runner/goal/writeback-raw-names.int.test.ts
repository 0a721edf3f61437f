// A goal's writeback passes paths to git as arguments (strings): a carried name that is not UTF-8
// (Latin-1 "café") would be committed under another name, so it is refused and nothing is committed.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createGoalWorkspace } from "../../../src/runner/goal/repo/goal-workspace.js";
import { writeBack } from "../../../src/runner/goal/repo/writeback.js";

const temps: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "loopgate-wb-raw-"));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

describe("goal writeback and names that are not UTF-8", () => {
  it("refuses to commit a carried Latin-1 name rather than commit it under another name", async () => {
    const src = temp();
    writeFileSync(join(src, "a.txt"), "alpha\n");
    const ws = join(temp(), "workspace");
    const base = await createGoalWorkspace(src, ws, "g1");
    const blobs = temp();
    const hash = createHash("sha256").update("x").digest("hex");
    mkdirSync(join(blobs, hash.slice(0, 2)));
    writeFileSync(join(blobs, hash.slice(0, 2), hash), "x");
    const outcome = await writeBack({
      workspace: ws,
      base,
      change: {
        carry: [{ path: "caf\uDCE9.txt", type: "file", mode: 0o644, size: 1, hash }],
        drop: [],
        blobPath: (h) => join(blobs, h.slice(0, 2), h),
      },
      turnKey: "g1/a/t1",
      subject: "turn",
    });
    expect(outcome).toEqual({
      kind: "rejected",
      reason: '"caf\\udce9.txt" holds a name that is not UTF-8, which the goal workspace cannot commit yet',
    });
    const head = execFileSync("git", ["rev-parse", "HEAD"], { cwd: ws, encoding: "utf8" }).trim();
    expect(head).toBe(base);
  });
});
