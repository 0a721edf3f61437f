import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readRegularFile, readRegularText } from "../../src/workspace/safe-read.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "lg-safe-read-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("readRegularFile: what untrusted code may have put where loopgate expects a file", () => {
  it("reads a regular file's bytes exactly", () => {
    const bytes = Buffer.from([0, 1, 2, 255, 10]);
    writeFileSync(join(dir, "f"), bytes);
    const r = readRegularFile(join(dir, "f"));
    expect(r.ok && r.bytes.equals(bytes)).toBe(true);
  });

  it("a FIFO with no writer is refused at once, never waited on", () => {
    execFileSync("mkfifo", [join(dir, "fifo")]);
    expect(readRegularFile(join(dir, "fifo"))).toEqual({
      ok: false,
      reason: "not_regular",
      detail: "a FIFO",
    });
  });

  it("a symlink is not followed, even to a regular file", () => {
    writeFileSync(join(dir, "target"), "secret");
    symlinkSync(join(dir, "target"), join(dir, "link"));
    const r = readRegularFile(join(dir, "link"));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toBe("not_regular");
  });

  it("a directory and a device are not regular files", () => {
    mkdirSync(join(dir, "d"));
    expect(readRegularFile(join(dir, "d"))).toMatchObject({
      ok: false,
      reason: "not_regular",
      detail: "a directory",
    });
    expect(readRegularFile("/dev/zero")).toMatchObject({ ok: false, reason: "not_regular" });
  });

  it("a file over the bound is refused without being read", () => {
    writeFileSync(join(dir, "big"), Buffer.alloc(1001, 97));
    expect(readRegularFile(join(dir, "big"), 1000)).toMatchObject({ ok: false, reason: "too_large" });
    expect(readRegularFile(join(dir, "big"), 1001).ok).toBe(true);
  });

  it("a missing file is missing; readRegularText gives null for every refusal", () => {
    expect(readRegularFile(join(dir, "nope"))).toMatchObject({ ok: false, reason: "missing" });
    expect(readRegularText(join(dir, "nope"))).toBeNull();
    execFileSync("mkfifo", [join(dir, "fifo")]);
    expect(readRegularText(join(dir, "fifo"))).toBeNull();
    writeFileSync(join(dir, "t"), "héllo");
    expect(readRegularText(join(dir, "t"))).toBe("héllo");
  });
});
