import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  locateStore,
  nearestStore,
  storeDisplay,
  storeHintArg,
} from "../../../src/cli/output/store-location.js";

let tmp = "";
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), "loopgate-store-location-"));
  // The walk goes to the filesystem root: a store above the temporary folder would make these tests lie.
  for (let d = dirname(tmp); ; d = dirname(d)) {
    if (existsSync(join(d, ".loopgate", "events.db")))
      throw new Error(`a store at ${d}/.loopgate is above the test's folder; remove it to run this test`);
    if (dirname(d) === d) break;
  }
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A folder store: `.loopgate/` with an events.db (an empty file is enough to be found). */
function storeAt(dir: string): string {
  const s = join(dir, ".loopgate");
  mkdirSync(s, { recursive: true });
  writeFileSync(join(s, "events.db"), "");
  return s;
}
const fresh = (name: string) => {
  const d = join(tmp, name);
  mkdirSync(d, { recursive: true });
  return d;
};

describe("locateStore: one rule for every command", () => {
  it("without anything: ./.loopgate of the current folder", () => {
    const cwd = fresh("none/a/b");
    expect(locateStore(undefined, {}, cwd)).toMatchObject({
      kind: "folder",
      dir: join(cwd, ".loopgate"),
      source: "default",
    });
  });
  it("walks up to the nearest folder store, as git finds .git", () => {
    const top = fresh("walk");
    const store = storeAt(top);
    const deep = fresh("walk/x/y/z");
    expect(nearestStore(deep)).toBe(store);
    expect(locateStore(undefined, {}, deep)).toMatchObject({ dir: store, source: "found" });
    // The nearest one wins over one further up.
    const mid = storeAt(join(top, "x"));
    expect(locateStore(undefined, {}, deep)).toMatchObject({ dir: mid, source: "found" });
  });
  it("passes over a .loopgate that is no folder store (a file; a folder without a log) and goes on up", () => {
    const top = fresh("skip");
    const store = storeAt(top);
    const inner = fresh("skip/p/q");
    writeFileSync(join(top, "p", ".loopgate"), "not a folder\n");
    mkdirSync(join(inner, ".loopgate", "runs"), { recursive: true });
    expect(locateStore(undefined, {}, inner)).toMatchObject({ dir: store, source: "found" });
  });
  it("a found store comes before $LOOPGATE_STORE; $LOOPGATE_STORE before ./.loopgate", () => {
    const top = fresh("order");
    const cwd = fresh("order/c");
    const elsewhere = fresh("order-env");
    expect(locateStore(undefined, { LOOPGATE_STORE: elsewhere }, cwd)).toMatchObject({
      dir: elsewhere,
      source: "env",
    });
    const store = storeAt(top);
    expect(locateStore(undefined, { LOOPGATE_STORE: elsewhere }, cwd)).toMatchObject({
      dir: store,
      source: "found",
    });
  });
  it("--store wins over everything; a relative one means the current folder's", () => {
    const cwd = fresh("flag/c");
    storeAt(join(tmp, "flag"));
    expect(locateStore("mine", { LOOPGATE_STORE: "/elsewhere" }, cwd)).toMatchObject({
      dir: join(cwd, "mine"),
      source: "flag",
    });
  });
  it("refuses an empty --store and an empty LOOPGATE_STORE (never silently the default)", () => {
    const cwd = fresh("empty");
    expect(() => locateStore("", {}, cwd)).toThrow(/--store: is empty/);
    expect(() => locateStore("  ", {}, cwd)).toThrow(/--store: is empty/);
    expect(() => locateStore(undefined, { LOOPGATE_STORE: "" }, cwd)).toThrow(
      /LOOPGATE_STORE: is set but empty/,
    );
  });
  it("still refuses what storeLocation refuses (an unknown scheme is no folder)", () => {
    expect(() => locateStore("s3://bucket/x", {}, tmp)).toThrow(/s3:\/\/ is not a supported store/);
    expect(() => locateStore(undefined, { LOOPGATE_STORE: "postgres:oops" }, tmp)).toThrow(/is not a URL/);
    // Also where a found store comes first: a broken setting is an error wherever you are.
    const top = fresh("bad-env");
    storeAt(top);
    expect(() => locateStore(undefined, { LOOPGATE_STORE: "s3://bucket/x" }, top)).toThrow(
      /^LOOPGATE_STORE: s3:\/\/ is not a supported store/,
    );
  });
  it("a PostgreSQL store keeps its run folders in ./.loopgate of the current folder", () => {
    const cwd = fresh("pg");
    const where = locateStore(undefined, { LOOPGATE_STORE: "postgres://u:secret@127.0.0.1:5432/test" }, cwd);
    expect(where).toMatchObject({ kind: "postgres", dir: join(cwd, ".loopgate"), source: "env" });
    expect(storeDisplay(where, cwd)).not.toContain("secret");
  });
});

describe("storeDisplay and storeHintArg: what verdicts and hints print", () => {
  it("shows a folder relative when it is inside the current folder, else absolute", () => {
    const cwd = fresh("display");
    const below = locateStore(join(cwd, "s"), {}, cwd);
    expect(storeDisplay(below, cwd)).toBe("./s");
    const above = locateStore(tmp, {}, cwd);
    expect(storeDisplay(above, cwd)).toBe(tmp);
  });
  it("a hint needs no --store when the default rule finds the same store in the same folder", () => {
    const top = fresh("hint");
    const store = storeAt(top);
    const cwd = fresh("hint/sub");
    expect(storeHintArg(locateStore(undefined, {}, cwd), {}, cwd)).toBe("");
    // Given explicitly but the same one: still nothing to add.
    expect(storeHintArg(locateStore(store, {}, cwd), {}, cwd)).toBe("");
    // Another folder: named, so the pasted hint finds it.
    const other = fresh("hint-other");
    expect(storeHintArg(locateStore(other, {}, cwd), {}, cwd)).toBe(` --store ${other}`);
    // With a space in it: quoted for the shell.
    const spaced = fresh("hint other");
    expect(storeHintArg(locateStore(spaced, {}, cwd), {}, cwd)).toBe(` --store '${spaced}'`);
  });
});
