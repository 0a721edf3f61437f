// The judge reads the diff of what the gates saw: a carried file whose name is not UTF-8 (Latin-1
// "café") is diffed by its bytes, under its encoded path, like any other.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { planGateChanges } from "../../src/core/observation/gate-change-plan.js";
import { deliverablesDiff } from "../../src/judge/judge-diff.js";
import { WorkspaceObserver } from "../../src/workspace/observer.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

describe("the judge's diff and names that are not UTF-8", () => {
  it("shows the change of a Latin-1 file, a new one and a removed one under their encoded paths", async () => {
    const base = mkdtempSync(join(tmpdir(), "loopgate-judge-raw-"));
    temps.push(base);
    const pristine = join(base, "pristine");
    const work = join(base, "work");
    const at = (dir: string, ...b: number[]) => Buffer.concat([Buffer.from(`${dir}/`), Buffer.from(b)]);
    for (const d of [pristine, work]) mkdirSync(d);
    writeFileSync(at(pristine, 0x63, 0xe9), "old line\n");
    writeFileSync(at(work, 0x63, 0xe9), "new line\n");
    writeFileSync(at(pristine, 0x67, 0xff), "gone\n");
    writeFileSync(at(work, 0x6e, 0xe8), "added\n");
    const plan = planGateChanges(
      await new WorkspaceObserver(pristine).observe(),
      await new WorkspaceObserver(work).observe(),
      { deliverables: [], protected: [] },
    );
    const diff = await deliverablesDiff(plan, pristine, work);
    expect(diff).toContain("a/c\uDCE9");
    expect(diff).toContain("-old line");
    expect(diff).toContain("+new line");
    expect(diff).toContain("b/n\uDCE8");
    expect(diff).toContain("+added");
    expect(diff).toContain("a/g\uDCFF");
    expect(diff).toContain("-gone");
    expect(diff).not.toMatch(/Could not access|fatal/);
  });
});
