// Task snapshots on a real folder content store: a task whose workspace and held-out folder lie outside its
// folder is written out with the same relative layout; a manifest that would write outside its folder,
// or through a link it made, is refused.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadTask } from "../../../src/runner/task-source/load-task.js";
import { materializeTask, snapshotTask } from "../../../src/runner/task-source/snapshot-store.js";
import { contentHash } from "../../../src/store/kernel/content-store.js";
import { FolderContentStore } from "../../../src/store/kernel/folder-content-store.js";

const temps: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "loopgate-snap-"));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function layout(): string {
  const root = temp();
  mkdirSync(join(root, "tasks", "t1"), { recursive: true });
  mkdirSync(join(root, "repo", "src"), { recursive: true });
  mkdirSync(join(root, "secret", "hidden"), { recursive: true });
  mkdirSync(join(root, "unrelated"), { recursive: true });
  writeFileSync(join(root, "repo", "src", "a.js"), "export const a = 1;\n");
  writeFileSync(join(root, "secret", "hidden", "t.test.js"), "// held out\n");
  writeFileSync(join(root, "unrelated", "big.txt"), "not named by the task\n");
  writeFileSync(join(root, "tasks", "t1", "run.sh"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  mkdirSync(join(root, "tasks", "t1", ".loopgate"));
  writeFileSync(join(root, "tasks", "t1", ".loopgate", "events.db"), "a store, never snapshotted");
  writeFileSync(
    join(root, "tasks", "t1", "task.yaml"),
    [
      "id: t1",
      "prompt: do it",
      "workspace: ../../repo",
      "gates:",
      "  - id: unit",
      '    run: ["node", "--test", "hidden/"]',
      "    heldout: ../../secret",
      "",
    ].join("\n"),
  );
  return root;
}

describe("task snapshots", () => {
  it("keeps the relative layout of a workspace and held-out folder outside the task folder, and nothing else", async () => {
    const root = layout();
    const content = new FolderContentStore(temp());
    const loaded = loadTask(join(root, "tasks", "t1", "task.yaml"));
    const ref = await snapshotTask(loaded, content);
    expect(ref.taskFile).toBe("tasks/t1/task.yaml");
    // task.yaml, run.sh, a.js, t.test.js: the store folder and the unrelated folder are left out.
    expect(ref.files).toBe(4);
    const out = temp();
    const copy = await materializeTask(content, ref.manifest, out, loaded.digest);
    const base = join(out, "tasks", ref.manifest);
    expect(copy.file).toBe(join(base, "tasks", "t1", "task.yaml"));
    expect(copy.workspace).toBe(join(base, "repo"));
    expect(copy.hidden).toEqual([join(base, "secret")]);
    expect(readFileSync(join(base, "secret", "hidden", "t.test.js"), "utf8")).toBe("// held out\n");
    expect(statSync(join(base, "tasks", "t1", "run.sh")).mode & 0o777).toBe(0o755);
    expect(existsSync(join(base, "unrelated"))).toBe(false);
    expect(existsSync(join(base, "tasks", "t1", ".loopgate"))).toBe(false);
    // Written once: a second job of the same snapshot reuses the copy.
    const again = await materializeTask(content, ref.manifest, out, loaded.digest);
    expect(again.file).toBe(copy.file);
  });

  it("refuses a snapshot whose task digest is not the one submitted", async () => {
    const root = layout();
    const content = new FolderContentStore(temp());
    const loaded = loadTask(join(root, "tasks", "t1", "task.yaml"));
    const ref = await snapshotTask(loaded, content);
    await expect(materializeTask(content, ref.manifest, temp(), "0".repeat(64))).rejects.toThrow(
      /the job was submitted with 0{64}/,
    );
  });

  const manifestWith = async (content: FolderContentStore, entries: unknown[]): Promise<string> => {
    const body = Buffer.from(
      JSON.stringify({ version: 1, task_file: "task.yaml", task_digest: "a".repeat(64), entries }),
    );
    const h = contentHash(body);
    await content.putBlob(h, body);
    return h;
  };

  it("refuses a manifest path that climbs out of its folder, writing nothing outside", async () => {
    const content = new FolderContentStore(temp());
    const h = await manifestWith(content, [{ type: "dir", path: "../escaped", mode: 0o755, mtime: 0 }]);
    const out = temp();
    await expect(materializeTask(content, h, out, "a".repeat(64))).rejects.toThrow(/manifest is not valid/);
    expect(existsSync(join(out, "tasks", "escaped"))).toBe(false);
    expect(existsSync(join(out, "tasks", h))).toBe(false);
  });

  it("refuses a manifest that writes through a symlink it made", async () => {
    const content = new FolderContentStore(temp());
    const victim = temp();
    const blob = Buffer.from("owned\n");
    await content.putBlob(contentHash(blob), blob);
    const h = await manifestWith(content, [
      { type: "symlink", path: "link", target: victim },
      { type: "file", path: "link/x", mode: 0o644, mtime: 0, size: blob.length, hash: contentHash(blob) },
    ]);
    await expect(materializeTask(content, h, temp(), "a".repeat(64))).rejects.toThrow(
      /link\/x lies under the symlink link/,
    );
    expect(existsSync(join(victim, "x"))).toBe(false);
  });

  it("keeps a symlink of the task as a symlink", async () => {
    const root = layout();
    symlinkSync("a.js", join(root, "repo", "src", "b.js"));
    const content = new FolderContentStore(temp());
    const loaded = loadTask(join(root, "tasks", "t1", "task.yaml"));
    const ref = await snapshotTask(loaded, content);
    const out = temp();
    const copy = await materializeTask(content, ref.manifest, out, loaded.digest);
    expect(readFileSync(join(copy.workspace, "src", "b.js"), "utf8")).toBe("export const a = 1;\n");
  });
});
