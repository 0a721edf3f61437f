import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  createGoalWorkspace,
  currentRevision,
  goalWorkspace,
  revisionTree,
  workspaceHealth,
} from "../../../../src/runner/goal/repo/goal-workspace.js";

const temps: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "loopgate-goal-ws-"));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** A source folder with a file, a subfolder and a .git of its own (which must not be copied). */
function source(): string {
  const d = temp();
  writeFileSync(join(d, "a.txt"), "alpha\n");
  mkdirSync(join(d, "sub"));
  writeFileSync(join(d, "sub", "b.txt"), "beta\n");
  mkdirSync(join(d, ".git"));
  writeFileSync(join(d, ".git", "HEAD"), "not a real repository\n");
  return d;
}

describe("goal workspace", () => {
  it("is a copy of the source committed once, its revision is HEAD, and it starts clean", async () => {
    const store = temp();
    const ws = goalWorkspace(store, "g1");
    const rev = await createGoalWorkspace(source(), ws, "g1");
    expect(rev).toMatch(/^[0-9a-f]{40}$/);
    // Independent of loopgate: git itself says HEAD is that commit and it holds exactly the source files.
    expect(execFileSync("git", ["rev-parse", "HEAD"], { cwd: ws, encoding: "utf8" }).trim()).toBe(rev);
    const files = execFileSync("git", ["ls-files"], { cwd: ws, encoding: "utf8" }).trim().split("\n");
    expect(files).toEqual(["a.txt", "sub/b.txt"]);
    expect(await currentRevision(ws)).toBe(rev);
    expect(await workspaceHealth(ws)).toEqual({ revision: rev, problems: [] });
  });

  it("refuses to create over an existing workspace", async () => {
    const store = temp();
    const ws = goalWorkspace(store, "g1");
    await createGoalWorkspace(source(), ws, "g1");
    await expect(createGoalWorkspace(source(), ws, "g1")).rejects.toThrow(/already exists/);
  });

  it("reports a dirty workspace (changed, untracked) and a missing one", async () => {
    const store = temp();
    const ws = goalWorkspace(store, "g1");
    const rev = await createGoalWorkspace(source(), ws, "g1");
    writeFileSync(join(ws, "new.txt"), "x\n");
    const dirty = await workspaceHealth(ws);
    expect(dirty.revision).toBe(rev);
    expect(dirty.problems[0]?.detail).toMatch(/uncommitted changes.*new\.txt/);
    rmSync(ws, { recursive: true });
    expect((await workspaceHealth(ws)).problems[0]?.detail).toMatch(/is missing/);
  });

  it("gives a revision's tree as a plain folder, unaffected by later changes to the workspace", async () => {
    const store = temp();
    const ws = goalWorkspace(store, "g1");
    const rev = await createGoalWorkspace(source(), ws, "g1");
    writeFileSync(join(ws, "a.txt"), "changed\n");
    const tree = await revisionTree(store, "g1", rev);
    expect(readFileSync(join(tree, "a.txt"), "utf8")).toBe("alpha\n");
    expect(readFileSync(join(tree, "sub", "b.txt"), "utf8")).toBe("beta\n");
    expect(existsSync(join(tree, ".git"))).toBe(false);
    expect(await revisionTree(store, "g1", rev)).toBe(tree);
    await expect(revisionTree(store, "g1", "0".repeat(40))).rejects.toThrow(/could not read revision/);
  });
});
