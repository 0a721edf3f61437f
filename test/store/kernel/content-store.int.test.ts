import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { FolderContentStore } from "../../../src/store/kernel/folder-content-store.js";
import { PostgresEventStore } from "../../../src/store/postgres/postgres-event-store.js";
import { type FreshDatabase, freshDatabase, freshSchema } from "../../support/postgres.js";
import { contentStoreContract } from "../content-store-contract.js";

contentStoreContract("FolderContentStore", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loopgate-content-"));
  return {
    content: new FolderContentStore(dir),
    corruptBlob: async (hash, bytes) => writeFileSync(join(dir, "blobs", hash.slice(0, 2), hash), bytes),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  await db?.drop();
});

contentStoreContract("PostgresContentStore", async () => {
  const pgSchema = freshSchema();
  const store = await PostgresEventStore.open(db.url, { pgSchema });
  return {
    content: store.content(),
    corruptBlob: async (hash, bytes) => {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      // size stays consistent with the bytes (a CHECK), only the content no longer matches its key.
      await c.query(`UPDATE ${pgSchema}.blobs SET content = $2, size = $3 WHERE hash = $1`, [
        hash,
        bytes,
        bytes.length,
      ]);
      await c.end();
    },
    cleanup: () => store.close(),
  };
});
