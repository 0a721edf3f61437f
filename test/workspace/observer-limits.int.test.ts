// Observation and blob storage stay bounded: a sparse file is stored sparse or refused, a hard-linked
// inode is hashed and stored once, and the observer stops at the first limit the workspace crosses.
import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, readdirSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, LimitExceededError, type ObservationLimits } from "../../src/core/task/limits.js";
import { BlobStore } from "../../src/workspace/blob-store.js";
import { WorkspaceObserver } from "../../src/workspace/observer.js";
import { useTempDirs } from "./temp-dirs.js";

const GiB = 1024 ** 3;
const defaults: ObservationLimits = {
  files: DEFAULT_LIMITS.files,
  totalBytes: DEFAULT_LIMITS.total_bytes,
  fileBytes: DEFAULT_LIMITS.file_bytes,
};

/** Every blob file under a blob store folder (two-level fan-out). */
function blobFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((sub) => readdirSync(join(dir, sub)).map((f) => join(dir, sub, f)));
}

/** Bytes a path really occupies on disk (`du`), independent of its apparent size. */
const diskBytes = (p: string) =>
  Number(execFileSync("du", ["-s", "-B1", p], { encoding: "utf8" }).split("\t")[0]);

const tmp = useTempDirs();

describe("sparse files", () => {
  it("a 1 GiB sparse file is refused by the default limits without being read", async () => {
    const root = tmp();
    writeFileSync(join(root, "small.txt"), "x");
    writeFileSync(join(root, "huge.bin"), "");
    truncateSync(join(root, "huge.bin"), GiB);
    const observer = new WorkspaceObserver(root, { limits: defaults });
    const err = await observer.observe().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LimitExceededError);
    expect((err as LimitExceededError).limit).toBe("file_bytes");
    expect((err as LimitExceededError).path).toBe("huge.bin");
    expect((err as LimitExceededError).seen).toBe(GiB);
    expect(observer.stats.bytesHashed).toBeLessThan(1024 * 1024);
  });

  it("allowed by the task, a 1 GiB sparse file is stored and restored sparse, with bounded memory", async () => {
    const root = tmp();
    const blobsDir = tmp();
    writeFileSync(join(root, "huge.bin"), "head");
    truncateSync(join(root, "huge.bin"), GiB);
    const rssBefore = process.memoryUsage().rss;
    const obs = await new WorkspaceObserver(root, {
      limits: { ...defaults, fileBytes: 2 * GiB, totalBytes: 2 * GiB },
    }).observe();
    const blobs = new BlobStore(blobsDir);
    expect(await blobs.save(obs, root)).toBe(1);
    const [blob] = blobFiles(blobsDir);
    expect(blob).toBeDefined();
    expect(statSync(blob as string).size).toBe(GiB);
    // Apparent size 1 GiB; on disk, a few blocks (a dense copy would be 1,073,741,824 bytes).
    expect(diskBytes(blobsDir)).toBeLessThan(16 * 1024 * 1024);
    const back = tmp();
    await blobs.restore(obs, back);
    expect(statSync(join(back, "huge.bin")).size).toBe(GiB);
    expect(diskBytes(back)).toBeLessThan(16 * 1024 * 1024);
    // Hashing streams through one 1 MiB buffer: nothing near the file's size is held.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * 1024 * 1024);
  }, 180_000);
});

describe("hard links", () => {
  it("19 links to one file are hashed once and stored as one blob", async () => {
    const root = tmp();
    const blobsDir = tmp();
    writeFileSync(join(root, "f0"), "shared content\n".repeat(1000));
    for (let i = 1; i < 19; i++) linkSync(join(root, "f0"), join(root, `f${i}`));
    const observer = new WorkspaceObserver(root, { limits: defaults });
    const obs = await observer.observe();
    expect(obs.entries.filter((e) => e.type === "file")).toHaveLength(19);
    expect(new Set(obs.entries.map((e) => e.hash)).size).toBe(1);
    expect(observer.stats.filesHashed).toBe(1);
    expect(observer.stats.linkHits).toBe(18);
    await new BlobStore(blobsDir).save(obs, root);
    expect(blobFiles(blobsDir)).toHaveLength(1);
  });

  it("a hard-linked inode counts once against total_bytes", async () => {
    const root = tmp();
    writeFileSync(join(root, "a"), Buffer.alloc(600));
    linkSync(join(root, "a"), join(root, "b"));
    const obs = await new WorkspaceObserver(root, { limits: { ...defaults, totalBytes: 1000 } }).observe();
    expect(obs.entries).toHaveLength(2);
  });

  it("a link whose inode changed between paths is hashed again, never given a stale hash", async () => {
    const root = tmp();
    writeFileSync(join(root, "a"), "one");
    linkSync(join(root, "a"), join(root, "b"));
    const first = await new WorkspaceObserver(root).observe();
    writeFileSync(join(root, "b"), "two!");
    const observer = new WorkspaceObserver(root);
    const second = await observer.observe();
    expect(second.entries.map((e) => e.size)).toEqual([4, 4]);
    expect(second.entries[0]?.hash).not.toBe(first.entries[0]?.hash);
  });
});

describe("observation limits", () => {
  it("more paths than limits.files stops the walk at files + 1", async () => {
    const root = tmp();
    mkdirSync(join(root, "d"));
    for (let i = 0; i < 30; i++) writeFileSync(join(root, "d", `f${i}`), "x");
    const observer = new WorkspaceObserver(root, { limits: { ...defaults, files: 10 } });
    const err = await observer.observe().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LimitExceededError);
    expect((err as LimitExceededError).limit).toBe("files");
    expect((err as LimitExceededError).seen).toBe(11);
    expect((err as LimitExceededError).message).toContain("limits.files is 10");
    // Stopped early: at most the 11 paths it counted were read.
    expect(observer.stats.filesHashed).toBeLessThanOrEqual(11);
  });

  it("names that are not valid UTF-8 count against limits.files too", async () => {
    const root = tmp();
    for (let i = 0; i < 20; i++)
      writeFileSync(Buffer.concat([Buffer.from(`${root}/bad`), Buffer.from([0xff, 0x30 + i])]), "x");
    const err = await new WorkspaceObserver(root, { limits: { ...defaults, files: 10 } })
      .observe()
      .catch((e: unknown) => e);
    expect((err as LimitExceededError).limit).toBe("files");
  });

  it("exactly limits.files paths is allowed", async () => {
    const root = tmp();
    for (let i = 0; i < 10; i++) writeFileSync(join(root, `f${i}`), "x");
    const obs = await new WorkspaceObserver(root, { limits: { ...defaults, files: 10 } }).observe();
    expect(obs.entries).toHaveLength(10);
  });

  it("more bytes than limits.total_bytes is refused, naming the limit", async () => {
    const root = tmp();
    for (let i = 0; i < 5; i++) writeFileSync(join(root, `f${i}`), Buffer.alloc(300));
    const err = await new WorkspaceObserver(root, { limits: { ...defaults, totalBytes: 1000 } })
      .observe()
      .catch((e: unknown) => e);
    expect((err as LimitExceededError).limit).toBe("total_bytes");
    expect((err as LimitExceededError).code).toBe("limit_exceeded");
  });
});
