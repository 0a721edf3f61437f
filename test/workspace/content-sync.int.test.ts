// A run's workspace state travels through the shared Postgres store: observe and save on machine A,
// copy into the store, pull into an empty run folder on "machine B", restore an empty workspace there.
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ContentCorruptError } from "../../src/store/kernel/content-store.js";
import { FolderContentStore } from "../../src/store/kernel/folder-content-store.js";
import { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { BlobStore } from "../../src/workspace/blob-store.js";
import { copyObservation } from "../../src/workspace/content-sync.js";
import { ObservationStore } from "../../src/workspace/observation-store.js";
import { WorkspaceObserver } from "../../src/workspace/observer.js";
import { rejection } from "../store/event-fixtures.js";
import { type FreshDatabase, freshDatabase, freshSchema } from "../support/postgres.js";

let db: FreshDatabase;
let tmp = "";
beforeAll(async () => {
  db = await freshDatabase();
  tmp = mkdtempSync(join(tmpdir(), "loopgate-sync-"));
});
afterAll(async () => {
  rmSync(tmp, { recursive: true, force: true });
  await db?.drop();
});

/** A run folder as the runner lays it out: observations/ and blobs/ side by side. */
function runFolder(name: string) {
  const dir = join(tmp, name);
  return {
    dir,
    observations: new ObservationStore(join(dir, "observations")),
    blobs: new BlobStore(join(dir, "blobs")),
    content: new FolderContentStore(dir),
  };
}

describe("copyObservation through the Postgres store", () => {
  it("rebuilds a workspace on another run folder from the last observation, sending each blob once", async () => {
    const pgSchema = freshSchema();
    const store = await PostgresEventStore.open(db.url, { pgSchema });
    const shared = store.content();
    const work = join(tmp, "work-a");
    mkdirSync(join(work, "src"), { recursive: true });
    writeFileSync(join(work, "src", "a.ts"), "export const a = 1;\n");
    writeFileSync(join(work, "src", "same1.txt"), "twin\n");
    writeFileSync(join(work, "src", "same2.txt"), "twin\n");
    writeFileSync(join(work, "run.sh"), "#!/bin/sh\necho hi\n");
    chmodSync(join(work, "run.sh"), 0o755);
    symlinkSync("src/a.ts", join(work, "link"));
    const a = runFolder("run-a");
    const first = await new WorkspaceObserver(work).observe();
    await a.blobs.save(first, work);
    await a.observations.put(first);

    // Four files, two with the same content: three distinct blobs.
    expect(await copyObservation(first.id, a.content, shared)).toEqual({ blobsCopied: 3, blobsNamed: 3 });
    // A later observation that changes one file sends only the new blob.
    writeFileSync(join(work, "src", "a.ts"), "export const a = 2;\n");
    const second = await new WorkspaceObserver(work).observe();
    await a.blobs.save(second, work);
    await a.observations.put(second);
    expect(await copyObservation(second.id, a.content, shared)).toEqual({ blobsCopied: 1, blobsNamed: 3 });
    expect(await copyObservation(second.id, a.content, shared)).toEqual({ blobsCopied: 0, blobsNamed: 3 });

    // Machine B: an empty run folder and an empty workspace.
    const b = runFolder("run-b");
    expect(await copyObservation(second.id, shared, b.content)).toEqual({ blobsCopied: 3, blobsNamed: 3 });
    const obs = await b.observations.get(second.id);
    const workB = join(tmp, "work-b");
    mkdirSync(workB);
    await b.blobs.restore(obs, workB);
    expect((await new WorkspaceObserver(workB).observe()).id).toBe(second.id);

    const rows = await countBlobs(pgSchema);
    expect(rows).toBe(4); // "twin", run.sh, a = 1, a = 2
    await store.close();
  });

  it("refuses an observation whose body does not hash to its id, copying nothing", async () => {
    const pgSchema = freshSchema();
    const store = await PostgresEventStore.open(db.url, { pgSchema });
    const shared = store.content();
    const forged = "0".repeat(64);
    await shared.putObservation(forged, JSON.stringify({ id: forged, entries: [] }));
    const c = runFolder("run-c");
    expect(await rejection(copyObservation(forged, shared, c.content))).toBeInstanceOf(ContentCorruptError);
    expect(await rejection(c.content.getObservation(forged))).toMatchObject({ code: "observation_missing" });
    await store.close();
  });
});

async function countBlobs(pgSchema: string): Promise<number> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return Number((await client.query(`SELECT count(*) AS n FROM ${pgSchema}.blobs`)).rows[0].n);
  } finally {
    await client.end();
  }
}
