// A submitted task travels to a worker as a snapshot: names that are not UTF-8 (Latin-1 "café") in its
// workspace and held-out folder are kept by their bytes, like every other name (path-bytes.ts).
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadTask } from "../../../src/runner/task-source/load-task.js";
import { materializeTask, snapshotTask } from "../../../src/runner/task-source/snapshot-store.js";
import { FolderContentStore } from "../../../src/store/kernel/folder-content-store.js";

const temps: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "loopgate-snap-raw-"));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const raw = (dir: string, ...parts: (string | number[])[]) =>
  Buffer.concat([Buffer.from(`${dir}/`), ...parts.map((p) => Buffer.from(p as string))]);

describe("task snapshots keep names that are not UTF-8", () => {
  it("workspace files, folders and link targets with Latin-1 names are written out byte for byte", async () => {
    const root = temp();
    mkdirSync(join(root, "repo"));
    mkdirSync(join(root, "heldout"));
    writeFileSync(raw(root, "repo/caf", [0xe9], ".txt"), "bonjour");
    mkdirSync(raw(root, "repo/d", [0xff]));
    writeFileSync(raw(root, "repo/d", [0xff], "/in"), "deep");
    symlinkSync(Buffer.from([0x74, 0xe9]), raw(root, "repo/l", [0xe9]));
    writeFileSync(raw(root, "heldout/h", [0xfa]), "held out");
    const yaml = `id: snap\nprompt: p\nworkspace: ./repo\ngates:\n  - id: g\n    run: ["true"]\n    heldout: ./heldout\n`;
    writeFileSync(join(root, "task.yaml"), yaml);
    const content = new FolderContentStore(temp());
    const loaded = loadTask(join(root, "task.yaml"));
    const ref = await snapshotTask(loaded, content);
    expect(ref.files).toBe(4); // task.yaml, café.txt, d\xff/in, h\xfa
    const out = temp();
    await materializeTask(content, ref.manifest, out, loaded.digest);
    const base = join(out, "tasks", ref.manifest);
    expect(readFileSync(raw(base, "repo/caf", [0xe9], ".txt"), "utf8")).toBe("bonjour");
    expect(readFileSync(raw(base, "repo/d", [0xff], "/in"), "utf8")).toBe("deep");
    expect(readlinkSync(raw(base, "repo/l", [0xe9]), { encoding: "buffer" })).toEqual(
      Buffer.from([0x74, 0xe9]),
    );
    expect(readFileSync(raw(base, "heldout/h", [0xfa]), "utf8")).toBe("held out");
  });
});
