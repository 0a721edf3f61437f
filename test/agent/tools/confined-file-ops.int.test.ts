import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { confinedFileOps } from "../../../src/agent/tools/confined-file-ops.js";
import { resolveToolPath } from "../../../src/agent/tools/tool-path.js";
import { PathEscapeError } from "../../../src/workspace/safe-path.js";
import { HELDOUT_SECRET, useFixture } from "./fixture.js";

/** A refusal: an error result that ran nothing and shows nothing from outside. */
function expectRefused(r: { isError: boolean; exitCode: number | null; content: string }, why: RegExp) {
  expect(r.isError).toBe(true);
  expect(r.exitCode).toBeNull();
  expect(r.content).toMatch(/^refused: path ".*" escapes /);
  expect(r.content).toMatch(why);
  expect(r.content).toContain("Paths must stay inside the workspace.");
  expect(r.content).not.toContain("root:x:0");
  expect(r.content).not.toContain(HELDOUT_SECRET);
}

/** Fails after `ms` instead of waiting for a call that hangs (a FIFO opened for reading blocks forever). */
async function within<T>(ms: number, p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still running after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

const canMknod = (() => {
  const dir = path.join(realpathSync("/tmp"), `lg-mknod-probe-${process.pid}`);
  try {
    execFileSync("mknod", [dir, "c", "1", "5"], { stdio: "ignore" });
    execFileSync("rm", ["-f", dir]);
    return true;
  } catch {
    return false;
  }
})();

/** 0o666 / 0o777 less this process's umask: what `cat >` and `mkdir -p` would have made. */
const umask = process.umask();

describe.each(["bubblewrap", "none"] as const)(
  "the in-process file tools stay confined (sandbox: %s)",
  (mode) => {
    const f = useFixture(mode);
    const secretKept = () => expect(readFileSync(path.join(f.heldout, "x"), "utf8")).toBe(HELDOUT_SECRET);
    /** Whether the sandbox's user is unprivileged: always, except root running without the sandbox. */
    const unprivileged = mode === "bubblewrap" || process.geteuid?.() !== 0;

    it("refuses '..' and absolute paths, and outside or non-normal paths handed to the operations", async () => {
      expectRefused(await f.call("read_file", { path: "a/../../heldout/x" }), /climbs above the root/);
      expectRefused(await f.call("write_file", { path: "../heldout/x", content: "p" }), /climbs above/);
      expectRefused(await f.call("list_files", { path: f.heldout }), /it is absolute/);
      const ws = realpathSync(f.ws);
      const ops = confinedFileOps(f.ctx, ws);
      for (const abs of [path.join(f.heldout, "x"), `${ws}/../heldout/x`, `${ws}/./x`, `${ws}x/y`]) {
        await expect(ops.read(abs, { offsetLine: 1, maxBytes: 100 })).rejects.toBeInstanceOf(PathEscapeError);
        await expect(ops.write(abs, Buffer.from("pwned"))).rejects.toBeInstanceOf(PathEscapeError);
        await expect(ops.list(abs, 1, 10)).rejects.toBeInstanceOf(PathEscapeError);
      }
      secretKept();
    });

    it("refuses a symlink in a middle component, to the final file, and to /etc/passwd, for every tool", async () => {
      symlinkSync("../heldout", path.join(f.ws, "mid"));
      symlinkSync("../heldout/x", path.join(f.ws, "last"));
      symlinkSync("/etc/passwd", path.join(f.ws, "pw"));
      for (const p of ["mid/x", "last", "pw"]) {
        expectRefused(await f.call("read_file", { path: p }), /it resolves to /);
        expectRefused(await f.call("write_file", { path: p, content: "pwned" }), /it resolves to /);
        expectRefused(
          await f.call("edit_file", { path: p, old_text: "held", new_text: "x" }),
          /resolves to /,
        );
      }
      expectRefused(await f.call("write_file", { path: "mid/new.txt", content: "p" }), /resolves to /);
      expectRefused(await f.call("list_files", { path: "mid" }), /resolves to /);
      secretKept();
      expect(existsSync(path.join(f.heldout, "new.txt"))).toBe(false);
    });

    it("never follows a folder or a file swapped for a symlink after the path was resolved", async () => {
      f.write("d/a.txt", "inside\n");
      f.write("f.txt", "inside\n");
      const resolved = await resolveToolPath(f.ws, "d/a.txt");
      const resolvedFile = await resolveToolPath(f.ws, "f.txt");
      const resolvedNew = await resolveToolPath(f.ws, "d/new.txt");
      const ops = confinedFileOps(f.ctx, resolved.workspace);
      renameSync(path.join(f.ws, "d"), path.join(f.ws, "d.old"));
      symlinkSync(f.heldout, path.join(f.ws, "d"));
      renameSync(path.join(f.ws, "f.txt"), path.join(f.ws, "f.old"));
      symlinkSync(path.join(f.heldout, "x"), path.join(f.ws, "f.txt"));
      await expect(ops.read(resolved.abs, { offsetLine: 1, maxBytes: 100 })).rejects.toThrow(
        /d is a symlink/,
      );
      await expect(ops.write(resolvedNew.abs, Buffer.from("pwned"))).rejects.toThrow(/d is a symlink/);
      await expect(ops.list(path.dirname(resolved.abs), 1, 10)).rejects.toThrow(/d is a symlink/);
      await expect(ops.read(resolvedFile.abs, { offsetLine: 1, maxBytes: 100 })).rejects.toThrow(
        /f\.txt is a symlink/,
      );
      await expect(ops.write(resolvedFile.abs, Buffer.from("pwned"))).rejects.toThrow(/f\.txt is a symlink/);
      secretKept();
      expect(existsSync(path.join(f.heldout, "new.txt"))).toBe(false);
      // Even a symlink that stays inside is refused at that point: the operations follow none.
      renameSync(path.join(f.ws, "f.txt"), path.join(f.ws, "f.gone"));
      symlinkSync("f.old", path.join(f.ws, "f.txt"));
      await expect(ops.read(resolvedFile.abs, { offsetLine: 1, maxBytes: 100 })).rejects.toThrow(/symlink/);
    });

    it("refuses a folder swapped for a symlink between two calls", async () => {
      expect((await f.call("write_file", { path: "d/a.txt", content: "one" })).isError).toBe(false);
      renameSync(path.join(f.ws, "d"), path.join(f.ws, "d.old"));
      symlinkSync("../heldout", path.join(f.ws, "d"));
      expectRefused(await f.call("write_file", { path: "d/b.txt", content: "two" }), /resolves to .*heldout/);
      expectRefused(await f.call("read_file", { path: "d/x" }), /resolves to .*heldout/);
      expectRefused(await f.call("list_files", { path: "d" }), /resolves to .*heldout/);
      expect(existsSync(path.join(f.heldout, "b.txt"))).toBe(false);
      secretKept();
    });

    it("answers a FIFO without blocking and never opens it for writing", async () => {
      execFileSync("mkfifo", [path.join(f.ws, "pipe")]);
      const read = await within(10_000, f.call("read_file", { path: "pipe" }));
      expect(read).toMatchObject({ isError: true, content: "pipe is not a regular file" });
      const write = await within(10_000, f.call("write_file", { path: "pipe", content: "x" }));
      expect(write).toMatchObject({
        isError: true,
        exitCode: 1,
        content: "write failed: pipe is not a regular file",
      });
      const edit = await within(10_000, f.call("edit_file", { path: "pipe", old_text: "a", new_text: "b" }));
      expect(edit).toMatchObject({ isError: true, content: "pipe is other" });
      const list = await within(10_000, f.call("list_files", {}));
      expect(list.content).toBe("./ (1 entry)\npipe (special file)");
      expect(lstatSync(path.join(f.ws, "pipe")).isFIFO()).toBe(true);
    });

    it("refuses /dev/zero through a symlink", async () => {
      symlinkSync("/dev/zero", path.join(f.ws, "z"));
      expectRefused(await within(10_000, f.call("read_file", { path: "z" })), /it resolves to \/dev\/zero/);
      expectRefused(await f.call("write_file", { path: "z", content: "x" }), /it resolves to \/dev\/zero/);
    });

    it.skipIf(!canMknod)("answers a device node inside the workspace as a special file", async () => {
      execFileSync("mknod", [path.join(f.ws, "zero"), "c", "1", "5"]);
      const read = await within(10_000, f.call("read_file", { path: "zero" }));
      expect(read).toMatchObject({ isError: true, content: "zero is not a regular file" });
      const write = await within(10_000, f.call("write_file", { path: "zero", content: "x" }));
      expect(write.content).toBe("write failed: zero is not a regular file");
    });

    it("replaces a file hard-linked to an outside file instead of writing through it", async () => {
      const outside = path.join(f.heldout, "x");
      chmodSync(outside, 0o664); // others may read it (the sandbox user, to edit), and not the default 0644
      linkSync(outside, path.join(f.ws, "hl"));
      linkSync(outside, path.join(f.ws, "hl2"));
      expect(statSync(outside).nlink).toBe(3);
      const w = await f.call("write_file", { path: "hl", content: "new" });
      expect(w).toMatchObject({ isError: false, content: "overwrote hl (3 bytes)" });
      const e = await f.call("edit_file", { path: "hl2", old_text: "held", new_text: "HELD" });
      expect(e).toMatchObject({ isError: false, content: "replaced 1 occurrence in hl2 (line 1)" });
      secretKept();
      expect(statSync(outside).nlink).toBe(1);
      expect(readFileSync(path.join(f.ws, "hl"), "utf8")).toBe("new");
      expect(readFileSync(path.join(f.ws, "hl2"), "utf8")).toBe(HELDOUT_SECRET.replace("held", "HELD"));
      for (const name of ["hl", "hl2"]) {
        const st = statSync(path.join(f.ws, name));
        expect(st.nlink).toBe(1);
        expect(st.mode & 0o777).toBe(0o664);
      }
      expect(readdirSync(f.ws).sort()).toEqual(["hl", "hl2"]); // no temporary file left
    });

    it("grants a 0-permission file only what the sandbox's user would get", async () => {
      f.write("locked.txt", "private\n");
      chmodSync(path.join(f.ws, "locked.txt"), 0);
      const r = await f.call("read_file", { path: "locked.txt" });
      const w = await f.call("write_file", { path: "locked.txt", content: "changed" });
      if (unprivileged) {
        expect(r).toMatchObject({ isError: true, content: "locked.txt is not readable" });
        expect(w).toMatchObject({ isError: true, content: "write failed: locked.txt: permission denied" });
        chmodSync(path.join(f.ws, "locked.txt"), 0o600);
        expect(readFileSync(path.join(f.ws, "locked.txt"), "utf8")).toBe("private\n");
      } else {
        expect(r.content).toBe("locked.txt: lines 1-1 of 1\nprivate");
        expect(w.isError).toBe(false);
      }
    });

    it("says a file is not a folder when a path goes through it", async () => {
      f.write("a.txt", "a\n");
      expect((await f.call("read_file", { path: "a.txt/b" })).content).toBe("a.txt/b does not exist");
      const w = await f.call("write_file", { path: "a.txt/b", content: "x" });
      expect(w).toMatchObject({
        isError: true,
        exitCode: 1,
        content: "write failed: a.txt is not a directory",
      });
      expect((await f.call("list_files", { path: "a.txt/b" })).content).toBe("a.txt/b does not exist");
      expect(readFileSync(path.join(f.ws, "a.txt"), "utf8")).toBe("a\n");
    });

    it("carries names that are not UTF-8 as U+DC80+b escapes, both ways", async () => {
      writeFileSync(Buffer.from(`${f.ws}/caf\xe9.txt`, "latin1"), "bytes\n");
      symlinkSync("../heldout/x", Buffer.from(`${f.ws}/evil\xff`, "latin1"));
      const r = await f.call("read_file", { path: "caf\udce9.txt" });
      expect(r.content).toBe("caf\udce9.txt: lines 1-1 of 1\nbytes");
      const w = await f.call("write_file", { path: "n\udcff/new\udcfe.txt", content: "made" });
      expect(w.content).toBe("created n\udcff/new\udcfe.txt (4 bytes)");
      const made = Buffer.concat([
        Buffer.from(`${f.ws}/n`),
        Buffer.of(0xff),
        Buffer.from("/new"),
        Buffer.of(0xfe),
      ]);
      expect(readFileSync(Buffer.concat([made, Buffer.from(".txt")]), "utf8")).toBe("made");
      const e = await f.call("edit_file", { path: "caf\udce9.txt", old_text: "bytes", new_text: "text" });
      expect(e.content).toBe("replaced 1 occurrence in caf\udce9.txt (line 1)");
      expectRefused(await f.call("read_file", { path: "evil\udcff" }), /it resolves to .*heldout\/x/);
      const list = await f.call("list_files", {});
      expect(list.content).toBe(
        [
          "./ (4 entries)",
          "caf\udce9.txt",
          `evil\udcff -> ../heldout/x`,
          "n\udcff/",
          "n\udcff/new\udcfe.txt",
        ].join("\n"),
      );
      secretKept();
    });

    it("creates files and folders as the shell would, owned by whoever bash runs as", async () => {
      const w = await f.call("write_file", { path: "made/new.txt", content: "one\n" });
      expect(w.isError).toBe(false);
      const file = statSync(path.join(f.ws, "made/new.txt"));
      const dir = statSync(path.join(f.ws, "made"));
      expect(file.mode & 0o777).toBe(0o666 & ~umask);
      expect(dir.mode & 0o777).toBe(0o777 & ~umask);
      // Checked before bash runs: each bash call hands the workspace over again, which would hide a wrong owner.
      const owner = { uid: file.uid, gid: file.gid, dirUid: dir.uid };
      const id = await f.call("bash", { command: "echo $(id -u) $(id -g)" });
      const [uid, gid] = id.content.split("\n")[1]?.split(" ").map(Number) ?? [];
      expect(owner).toEqual({ uid, gid, dirUid: uid });
      const b = await f.call("bash", { command: "echo two >> made/new.txt && echo x > made/other.txt" });
      expect(b.exitCode).toBe(0);
      expect(readFileSync(path.join(f.ws, "made/new.txt"), "utf8")).toBe("one\ntwo\n");
    });

    it("reads and edits files above the whole-read size by streaming them", async () => {
      const lines = Array.from({ length: 30_000 }, (_, i) => `line ${i + 1} ${"z".repeat(90)}`);
      f.write("big.log", `${lines.join("\n")}\n`); // about 3 MB
      const r = await f.call("read_file", { path: "big.log", offset_line: 25_000, limit_lines: 3 });
      expect(r.content).toBe(
        [
          "big.log: lines 25000-25002 of 30000; continue with offset_line 25003",
          ...lines.slice(24_999, 25_002),
        ].join("\n"),
      );
      const e = await f.call("edit_file", {
        path: "big.log",
        old_text: "line 29999 ",
        new_text: "LINE 29999 ",
      });
      expect(e.content).toBe("replaced 1 occurrence in big.log (line 29999)");
      const after = readFileSync(path.join(f.ws, "big.log"), "utf8").split("\n");
      expect(after[29_998]).toBe(`LINE 29999 ${"z".repeat(90)}`);
      expect(after.length).toBe(30_001);
    });
  },
);
