import { existsSync, readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { sandboxFileOps } from "../../../src/agent/tools/file-ops.js";
import { HELDOUT_SECRET, useFixture } from "./fixture.js";

/** A refusal: an error result that ran nothing, saying why and that paths stay inside the workspace. */
function expectRefused(r: { isError: boolean; exitCode: number | null; content: string }, why: RegExp) {
  expect(r.isError).toBe(true);
  expect(r.exitCode).toBeNull();
  expect(r.content).toMatch(/^refused: path ".*" escapes /);
  expect(r.content).toMatch(why);
  expect(r.content).toContain("Paths must stay inside the workspace.");
  expect(r.content).not.toContain("root:x:0");
  expect(r.content).not.toContain(HELDOUT_SECRET);
}

describe.each(["bubblewrap", "none"] as const)(
  "file tools refuse paths outside the workspace (sandbox: %s)",
  (mode) => {
    const f = useFixture(mode);
    const heldoutX = () => path.join(f.heldout, "x");

    it("refuses ../ escapes, absolute paths and NUL bytes", async () => {
      expectRefused(
        await f.call("read_file", { path: "../../etc/passwd" }),
        /climbs above the root with '\.\.'/,
      );
      expectRefused(await f.call("read_file", { path: "../heldout/x" }), /climbs above the root/);
      expectRefused(await f.call("read_file", { path: "/etc/passwd" }), /it is absolute/);
      expectRefused(await f.call("list_files", { path: "/" }), /it is absolute/);
      expectRefused(await f.call("write_file", { path: "a\0b", content: "x" }), /NUL byte/);
    });

    it("refuses symlinks the agent made to /etc/passwd and to the held-out dir", async () => {
      const made = await f.call("bash", {
        command: `ln -s /etc/passwd evil && ln -s ../heldout hl && ln -s ${f.heldout} hlabs && mkdir d && ln -s ../.. d/up`,
      });
      expect(made.exitCode).toBe(0);
      expectRefused(await f.call("read_file", { path: "evil" }), /it resolves to \/etc\/passwd/);
      expectRefused(await f.call("read_file", { path: "hl/x" }), /it resolves to .*heldout\/x/);
      expectRefused(await f.call("read_file", { path: "hlabs/x" }), /it resolves to .*heldout\/x/);
      expectRefused(await f.call("read_file", { path: "d/up/heldout/x" }), /it resolves to/);
      expectRefused(await f.call("list_files", { path: "hl" }), /it resolves to .*heldout/);
      expectRefused(
        await f.call("edit_file", { path: "hl/x", old_text: "held", new_text: "HELD" }),
        /resolves/,
      );
    });

    it("refuses to write through a symlink to an outside file, which stays unchanged", async () => {
      await f.call("bash", { command: "ln -s ../heldout/x out.txt && ln -s ../heldout hl" });
      expectRefused(
        await f.call("write_file", { path: "out.txt", content: "pwned" }),
        /resolves to .*heldout\/x/,
      );
      expectRefused(
        await f.call("write_file", { path: "hl/new.txt", content: "pwned" }),
        /resolves to .*heldout/,
      );
      expectRefused(
        await f.call("edit_file", { path: "out.txt", old_text: "held", new_text: "x" }),
        /resolves/,
      );
      expect(readFileSync(heldoutX(), "utf8")).toBe(HELDOUT_SECRET);
      expect(existsSync(path.join(f.heldout, "new.txt"))).toBe(false);
    });

    it("refuses to write through a dangling symlink, which would create its outside target", async () => {
      await f.call("bash", { command: "ln -s ../heldout/created.txt dangling && ln -s /nonexistent/dir dd" });
      expectRefused(
        await f.call("write_file", { path: "dangling", content: "x" }),
        /symlink to .*which does not exist/,
      );
      expectRefused(await f.call("write_file", { path: "dd/f.txt", content: "x" }), /dd is a symlink/);
      expect(existsSync(path.join(f.heldout, "created.txt"))).toBe(false);
    });

    it("an invalid write call runs nothing: no file appears", async () => {
      for (const args of [
        { path: "made.txt", content: "x", mode: "0777" },
        { path: "made.txt" },
        { path: "made.txt", content: 42 },
        { path: "made.txt", content: "x".repeat(1_000_001) },
      ]) {
        const r = await f.call("write_file", args);
        expect(r).toMatchObject({ isError: true, valid: false, exitCode: null });
      }
      expect(existsSync(path.join(f.ws, "made.txt"))).toBe(false);
    });
  },
);

describe("file operations run inside the sandbox (defence in depth)", () => {
  const f = useFixture("bubblewrap");

  it("cannot read or write outside the workspace even when handed an outside path", async () => {
    const ops = sandboxFileOps(f.ctx, realpathSync(f.ws));
    expect(await ops.read(path.join(f.heldout, "x"), { offsetLine: 1, maxBytes: 100 })).toEqual({
      kind: "missing",
    });
    await expect(ops.write(path.join(f.heldout, "x"), Buffer.from("pwned"))).rejects.toThrow(
      /outside the workspace/,
    );
    expect(readFileSync(path.join(f.heldout, "x"), "utf8")).toBe(HELDOUT_SECRET);
    expect(await ops.list(f.heldout, 1, 10)).toEqual({ kind: "missing" });
  });
});
