import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { useFixture } from "./fixture.js";

describe.each(["bubblewrap", "none"] as const)("file tools (sandbox: %s)", (mode) => {
  const f = useFixture(mode);

  describe("read_file", () => {
    it("returns the text with a header of the line range", async () => {
      f.write("src/a.txt", "one\ntwo\nthree\n");
      const r = await f.call("read_file", { path: "src/a.txt" });
      expect(r).toMatchObject({ isError: false, exitCode: 0, subject: "src/a.txt", valid: true });
      expect(r.content).toBe("src/a.txt: lines 1-3 of 3\none\ntwo\nthree");
    });

    it("returns a line range and says where to continue", async () => {
      f.write("n.txt", Array.from({ length: 10 }, (_, i) => `L${i + 1}`).join("\n"));
      const r = await f.call("read_file", { path: "n.txt", offset_line: 4, limit_lines: 3 });
      expect(r.content).toBe("n.txt: lines 4-6 of 10; continue with offset_line 7\nL4\nL5\nL6");
    });

    it("bounds a large file and keeps whole lines", async () => {
      const line = `${"x".repeat(99)}\n`;
      f.write("big.txt", line.repeat(2000)); // 200 kB
      const r = await f.call("read_file", { path: "big.txt" });
      expect(r.content.length).toBeLessThan(51_000);
      expect(r.content).toMatch(
        /^big\.txt: lines 1-500 of 2000 \(cut at 50000 bytes\); continue with offset_line 501\n/,
      );
      expect(r.content.endsWith("x".repeat(99))).toBe(true);
    });

    it("cuts a single over-long line and says so", async () => {
      f.write("min.js", `${"y".repeat(60_000)}\nnext\n`);
      const r = await f.call("read_file", { path: "min.js" });
      const [header, body] = r.content.split("\n");
      expect(header).toBe("min.js: lines 1-1 of 2 (line 1 cut at 50000 bytes; use bash to read it in parts)");
      expect(body).toBe("y".repeat(50_000));
    });

    it("says a binary file is binary", async () => {
      f.write("img.bin", Buffer.from([0x89, 0x50, 0x00, 0x01, 0xff]));
      const r = await f.call("read_file", { path: "img.bin" });
      expect(r.content).toBe("img.bin: binary file (5 bytes), not shown");
    });

    it("reports a missing file and an offset past the end as errors", async () => {
      f.write("a.txt", "a\n");
      expect((await f.call("read_file", { path: "nope.txt" })).content).toBe("nope.txt does not exist");
      const past = await f.call("read_file", { path: "a.txt", offset_line: 5 });
      expect(past).toMatchObject({
        isError: true,
        content: "offset_line 5 is past the end of a.txt (1 lines)",
      });
    });

    it("follows a symlink that stays inside the workspace", async () => {
      f.write("real.txt", "inside\n");
      await f.call("bash", { command: "ln -s real.txt alias.txt" }, { sandbox: mode });
      const r = await f.call("read_file", { path: "alias.txt" });
      expect(r.content).toBe("real.txt: lines 1-1 of 1\ninside");
    });
  });

  describe("write_file", () => {
    it("creates parent directories and writes the exact bytes", async () => {
      const content = "héllo\nwörld\n";
      const r = await f.call("write_file", { path: "deep/er/new.txt", content });
      expect(r).toMatchObject({ isError: false, exitCode: 0 });
      expect(r.content).toBe(`created deep/er/new.txt (${Buffer.byteLength(content)} bytes)`);
      expect(readFileSync(path.join(f.ws, "deep/er/new.txt"), "utf8")).toBe(content);
    });

    it("overwrites an existing file, and writes an empty one", async () => {
      f.write("a.txt", "old content that is longer");
      expect((await f.call("write_file", { path: "a.txt", content: "new" })).content).toMatch(
        /^overwrote a\.txt/,
      );
      expect(readFileSync(path.join(f.ws, "a.txt"), "utf8")).toBe("new");
      await f.call("write_file", { path: "a.txt", content: "" });
      expect(readFileSync(path.join(f.ws, "a.txt"), "utf8")).toBe("");
    });

    it("writes a 1 MB file through the sandbox's stdin intact", async () => {
      const content = "0123456789abcdef\n".repeat(58_823); // 999,991 characters, far above a pipe buffer
      const r = await f.call("write_file", { path: "big.txt", content });
      expect(r.content).toBe("created big.txt (999991 bytes)");
      expect(readFileSync(path.join(f.ws, "big.txt"), "utf8")).toBe(content);
    });

    it("refuses to write over a directory", async () => {
      f.write("d/keep.txt", "k");
      const r = await f.call("write_file", { path: "d", content: "x" });
      expect(r).toMatchObject({ isError: true, content: "d is a directory" });
    });
  });

  describe("edit_file", () => {
    it("replaces one exact occurrence", async () => {
      f.write("s.js", "const a = 1;\nconst b = 2;\n");
      const r = await f.call("edit_file", {
        path: "s.js",
        old_text: "const b = 2;",
        new_text: "const b = 3;",
      });
      expect(r).toMatchObject({ isError: false, content: "replaced 1 occurrence in s.js (line 2)" });
      expect(readFileSync(path.join(f.ws, "s.js"), "utf8")).toBe("const a = 1;\nconst b = 3;\n");
    });

    it("refuses zero matches with a hint, leaving the file alone", async () => {
      f.write("s.js", "function slugify(input) {\n  return input;\n}\n");
      const r = await f.call("edit_file", {
        path: "s.js",
        old_text: "function slugfy(input) {",
        new_text: "x",
      });
      expect(r.isError).toBe(true);
      expect(r.content).toMatch(/^old_text not found in s\.js: the nearest line is 1: /);
      expect(readFileSync(path.join(f.ws, "s.js"), "utf8")).toBe(
        "function slugify(input) {\n  return input;\n}\n",
      );
    });

    it("refuses several matches without replace_all, naming count and lines", async () => {
      f.write("s.txt", "x = 1\ny = 2\nx = 1\n\nx = 1\n");
      const r = await f.call("edit_file", { path: "s.txt", old_text: "x = 1", new_text: "x = 9" });
      expect(r.isError).toBe(true);
      expect(r.content).toContain("old_text occurs 3 times in s.txt (lines 1, 3, 5)");
      expect(readFileSync(path.join(f.ws, "s.txt"), "utf8")).toBe("x = 1\ny = 2\nx = 1\n\nx = 1\n");
    });

    it("replaces every occurrence with replace_all", async () => {
      f.write("s.txt", "x = 1\ny = 2\nx = 1\n");
      const r = await f.call("edit_file", {
        path: "s.txt",
        old_text: "x = 1",
        new_text: "x = $&9",
        replace_all: true,
      });
      expect(r.content).toBe("replaced 2 occurrences in s.txt (lines 1, 3)");
      expect(readFileSync(path.join(f.ws, "s.txt"), "utf8")).toBe("x = $&9\ny = 2\nx = $&9\n");
    });

    it("refuses a missing file and a binary file", async () => {
      expect((await f.call("edit_file", { path: "n.txt", old_text: "a", new_text: "b" })).content).toMatch(
        /^n\.txt does not exist/,
      );
      f.write("b.bin", Buffer.from([0x61, 0x00, 0x62]));
      const r = await f.call("edit_file", { path: "b.bin", old_text: "a", new_text: "c" });
      expect(r.content).toBe("b.bin is not a UTF-8 text file; use bash to change it");
    });
  });

  describe("list_files", () => {
    it("lists entries in tree order, dirs with '/', symlinks with their target, unfollowed", async () => {
      f.write("src/a.ts", "");
      f.write("src/lib/b.ts", "");
      f.write("README.md", "");
      f.write(".git/HEAD", "ref");
      f.write("node_modules/x/index.js", "");
      await f.call(
        "bash",
        { command: `ln -s ${f.heldout} out && ln -s src/a.ts link.ts` },
        { sandbox: mode },
      );
      const r = await f.call("list_files", {});
      expect(r.isError).toBe(false);
      expect(r.content).toBe(
        [
          "./ (9 entries)",
          ".git/ (not expanded)",
          "README.md",
          "link.ts -> src/a.ts",
          "node_modules/ (not expanded)",
          `out -> ${f.heldout}`,
          "src/",
          "src/a.ts",
          "src/lib/",
          "src/lib/b.ts",
        ].join("\n"),
      );
      expect(r.content).not.toContain("out/x");
    });

    it("honours depth and limit, keeping the shallowest entries and saying how many are hidden", async () => {
      f.write("a/b/c/d.txt", "");
      f.write("z.txt", "");
      expect((await f.call("list_files", { depth: 2 })).content).toBe("./ (3 entries)\na/\na/b/\nz.txt");
      const r = await f.call("list_files", { limit: 2 });
      expect(r.content).toMatch(/^\.\/ \(2 entries; 2 more not shown/);
      expect(r.content.split("\n").slice(1)).toEqual(["a/", "z.txt"]);
    });

    it("lists a subdirectory, and refuses a file", async () => {
      f.write("pkg/one.ts", "");
      expect((await f.call("list_files", { path: "pkg" })).content).toBe("pkg/ (1 entry)\none.ts");
      const r = await f.call("list_files", { path: "pkg/one.ts" });
      expect(r).toMatchObject({
        isError: true,
        content: "pkg/one.ts is a file, not a directory; use read_file",
      });
      expect(existsSync(path.join(f.ws, "pkg/one.ts"))).toBe(true);
    });
  });
});
