import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { InputError } from "../../../../src/core/kernel/errors.js";
import { treeDifference } from "../../../../src/runner/task-source/mission/case-tree.js";
import { loadMissionCase } from "../../../../src/runner/task-source/mission/mission-case.js";

const temps: string[] = [];
const temp = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const fixture = {
  prompt: "Add the numbers in input.json and write the sum to answer.json.",
  goal: "task:sum",
  files: { "input.json": "[2,3]\n", "docs/readme.md": "sum them\n" },
  artifacts: { "answer.json": { sum: 5 } },
  preserve: ["input.json"],
};

function writeFixture(body: object = fixture): { dir: string; file: string; store: string } {
  const dir = temp("loopgate-case-");
  const file = join(dir, "sum.json");
  writeFileSync(file, JSON.stringify(body, null, 2));
  return { dir, file, store: join(dir, ".loopgate") };
}

/** A folder holding exactly `files`. */
function folder(files: Record<string, string>): string {
  const dir = temp("loopgate-bound-");
  for (const [p, t] of Object.entries(files)) {
    mkdirSync(join(dir, p, ".."), { recursive: true });
    writeFileSync(join(dir, p), t);
  }
  return dir;
}

const refusal = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return (e as Error).message;
  }
  throw new Error("expected a refusal");
};

describe("loadMissionCase", () => {
  it("materialises files under <store>/cases/<digest>/repo and maps the fixture onto a task", () => {
    const f = writeFixture();
    const loaded = loadMissionCase(f.file, { localDir: f.store });
    expect(loaded.workspace).toBe(join(f.store, "cases", loaded.digest, "repo"));
    expect(treeDifference(loaded.workspace, fixture.files)).toBeNull();
    expect(loaded.task.id).toBe("case-sum");
    expect(loaded.task.prompt).toBe(fixture.prompt);
    expect(loaded.hidden).toEqual([f.file]);
    expect(loaded.oracle).toBeNull();
    expect(loaded.mission).toMatchObject({ goal: "task:sum", artifacts: ["answer.json"], boundTo: null });
    // Local metadata keeps no expected value.
    const meta = readFileSync(join(loaded.mission.caseDir, "case.json"), "utf8");
    expect(meta).toContain("task:sum");
    expect(meta).not.toContain('"sum": 5');
  });

  it("reuses an identical materialised copy and rebuilds a tampered one", () => {
    const f = writeFixture();
    const first = loadMissionCase(f.file, { localDir: f.store });
    writeFileSync(join(first.workspace, "input.json"), "[9]\n");
    writeFileSync(join(first.workspace, "stray.txt"), "x");
    const again = loadMissionCase(f.file, { localDir: f.store });
    expect(again.workspace).toBe(first.workspace);
    expect(treeDifference(again.workspace, fixture.files)).toBeNull();
  });

  it("refuses a store that would put the starting files around the fixture", () => {
    const f = writeFixture();
    const loaded = loadMissionCase(f.file, { localDir: f.store });
    const inner = join(loaded.workspace, "sub");
    mkdirSync(inner);
    const file = join(inner, "sum.json");
    writeFileSync(file, readFileSync(f.file));
    expect(refusal(() => loadMissionCase(file, { localDir: f.store }))).toContain("choose another --store");
  });

  it("names the fixture file when it cannot be read", () => {
    expect(refusal(() => loadMissionCase("/nonexistent/case.json", { localDir: temp("s-") }))).toContain(
      "/nonexistent/case.json: cannot read the mission fixture: ENOENT",
    );
  });
});

describe("loadMissionCase --workspace DIR: every starting file must be listed", () => {
  const f = writeFixture();
  const load = (dir: string) => loadMissionCase(f.file, { localDir: f.store, against: dir });

  it("accepts a folder that holds exactly the listed files", () => {
    const dir = folder(fixture.files);
    const loaded = load(dir);
    expect(loaded.mission.boundTo).toBe(dir);
    // The run works on the materialised copy; the bound folder is only checked.
    expect(loaded.workspace).not.toBe(dir);
  });

  it("refuses an unlisted file, naming it", () => {
    const dir = folder({ ...fixture.files, "notes/todo.txt": "secret plan\n" });
    expect(refusal(() => load(dir))).toContain("notes/todo.txt is not listed in files");
  });

  it("refuses an unlisted dotfile or .git: nothing is ignored", () => {
    expect(refusal(() => load(folder({ ...fixture.files, ".git/HEAD": "ref\n" })))).toContain(
      ".git/HEAD is not listed in files",
    );
  });

  it("refuses a listed file whose content differs, naming it", () => {
    const dir = folder({ ...fixture.files, "input.json": "[2,3]" });
    const msg = refusal(() => load(dir));
    expect(msg).toContain("input.json differs from its content in files");
    expect(msg).toMatch(/^--workspace /);
  });

  it("refuses a listed file that is missing, naming it", () => {
    const dir = folder({ "input.json": "[2,3]\n" });
    expect(refusal(() => load(dir))).toContain(
      "docs/readme.md is listed in files but missing from the folder",
    );
  });

  it("refuses a symbolic link and an empty folder", () => {
    const linked = folder(fixture.files);
    symlinkSync("input.json", join(linked, "alias.json"));
    expect(refusal(() => load(linked))).toContain("alias.json is a symbolic link");
    const empty = folder(fixture.files);
    mkdirSync(join(empty, "out"));
    expect(refusal(() => load(empty))).toContain("out/ is an empty folder");
  });

  it("refuses a fixture kept inside the bound folder, and a folder that does not exist", () => {
    const dir = folder(fixture.files);
    const inside = join(dir, "case.json");
    writeFileSync(inside, JSON.stringify(fixture));
    expect(refusal(() => loadMissionCase(inside, { localDir: f.store, against: dir }))).toContain(
      "the mission fixture lies inside the workspace",
    );
    expect(refusal(() => load(join(dir, "nope")))).toContain("is not a directory");
  });
});
