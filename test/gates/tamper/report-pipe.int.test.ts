import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { ReportPipe } from "../../../src/gates/tamper/report-pipe.js";
import { findBwrap, runSandboxed } from "../../../src/sandbox/bubblewrap.js";

const hasBwrap = findBwrap() !== null;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "lg-pipe-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const sandboxed = (script: string) =>
  runSandboxed(
    {
      argv: ["/bin/sh", "-c", script],
      cwd: "/tmp",
      writable: [],
      readonly: [dir],
      env: { PATH: "/usr/bin:/bin" },
      network: false,
      timeoutMs: 30_000,
    },
    "bubblewrap",
  );

describe.skipIf(!hasBwrap)("the report pipe in a read-only private folder", () => {
  test("a process in the sandbox writes the report through it, in several opens, and loopgate reads all of it", async () => {
    const pipe = ReportPipe.open(join(dir, "r"));
    const r = await sandboxed(`echo one > ${pipe.path}; echo two > ${pipe.path}`);
    expect(r.exitCode).toBe(0);
    expect(await pipe.finish()).toBe("one\ntwo\n");
  });

  test("nothing in the sandbox can rename a forged report over it or add a file beside it", async () => {
    const pipe = ReportPipe.open(join(dir, "r"));
    const r = await sandboxed(
      `echo forged > /tmp/f && mv /tmp/f ${pipe.path}; echo x > ${dir}/other; ln -s /tmp/f ${dir}/l; exit 0`,
    );
    expect(r.output).toContain("Read-only file system");
    expect(readdirSync(dir)).toEqual(["r"]);
    expect(await pipe.finish()).toBe("");
  });

  test("a run that never writes gives an empty report, without waiting on a writer", async () => {
    const pipe = ReportPipe.open(join(dir, "r"));
    const r = await sandboxed("true");
    expect(r.exitCode).toBe(0);
    expect(await pipe.finish()).toBe("");
    pipe.dispose();
    expect(existsSync(join(dir, "r"))).toBe(true);
  });
});
