// A worker proves it can write its folder before a job relies on it (runner/host/job-start.ts).
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LocalStartError, usableFolder } from "../../../src/runner/host/job-start.js";
import { removeTemps, tempDir } from "../../e2e/cli.js";

afterAll(removeTemps);

describe("a work folder this worker can use", () => {
  it("is created when missing and left without the probe", () => {
    const root = tempDir();
    const dir = join(root, "a", "b");
    usableFolder(dir);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("a path that is a file, or lies under one, is refused naming the folder and the reason", () => {
    const root = tempDir();
    const file = join(root, "not-a-folder");
    writeFileSync(file, "x");
    expect(() => usableFolder(file)).toThrow(LocalStartError);
    expect(() => usableFolder(file)).toThrow(`the work folder ${file} is not usable: EEXIST`);
    expect(() => usableFolder(join(file, "runs"))).toThrow(/is not usable: ENOTDIR/);
  });

  it("an existing folder is used as it is", () => {
    const dir = join(tempDir(), "w");
    mkdirSync(dir);
    writeFileSync(join(dir, "keep"), "k");
    usableFolder(dir);
    expect(readdirSync(dir)).toEqual(["keep"]);
  });
});
