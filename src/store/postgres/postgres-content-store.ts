import type pg from "pg";
import {
  ContentCorruptError,
  ContentMissingError,
  type ContentStore,
  checkBlob,
  checkKey,
  contentHash,
} from "../kernel/content-store.js";

/** How PostgresContentStore reaches its database: PostgresEventStore's pool and schema. */
export interface PgAccess {
  withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T>;
  pgSchema: string;
  display: string;
}

/**
 * The ContentStore in PostgreSQL (tables `blobs` and `observations`, migration 2): one row per distinct
 * content, `INSERT … ON CONFLICT DO NOTHING`, so concurrent writers of the same blob store it once and
 * both succeed. A blob is one bytea row (PostgreSQL caps a value at 1 GiB); its hash is re-checked on read.
 */
export class PostgresContentStore implements ContentStore {
  constructor(private readonly db: PgAccess) {}

  async putBlob(hash: string, content: Uint8Array): Promise<boolean> {
    checkBlob(hash, content);
    const r = await this.db.withClient((c) =>
      c.query(
        `INSERT INTO ${this.db.pgSchema}.blobs (hash, size, content) VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING`,
        [hash, content.byteLength, Buffer.from(content.buffer, content.byteOffset, content.byteLength)],
      ),
    );
    return r.rowCount === 1;
  }

  async missingBlobs(hashes: readonly string[]): Promise<string[]> {
    for (const h of hashes) checkKey("blob", h);
    if (hashes.length === 0) return [];
    const s = this.db.pgSchema;
    // A blob found here is about to be named by a new observation or snapshot: its stored_at is renewed
    // (at most once a minute), so `gc`, which spares content stored in its grace period, cannot remove it
    // between this answer and the append that names it.
    const r = await this.db.withClient((c) =>
      c.query(
        `WITH touched AS (
           UPDATE ${s}.blobs SET stored_at = now()
           WHERE hash = ANY($1::text[]) AND stored_at < now() - interval '1 minute' RETURNING 1)
         SELECT hash FROM ${s}.blobs WHERE hash = ANY($1::text[])`,
        [hashes],
      ),
    );
    const held = new Set(r.rows.map((row) => row.hash as string));
    return hashes.filter((h) => !held.has(h));
  }

  async getBlob(hash: string): Promise<Buffer> {
    checkKey("blob", hash);
    const r = await this.db.withClient((c) =>
      c.query(`SELECT content FROM ${this.db.pgSchema}.blobs WHERE hash = $1`, [hash]),
    );
    const content = r.rows[0]?.content as Buffer | undefined;
    if (!content) throw new ContentMissingError("blob", hash, this.db.display);
    const actual = contentHash(content);
    if (actual !== hash)
      throw new ContentCorruptError("blob", hash, this.db.display, `its bytes hash to ${actual}`);
    return content;
  }

  async putObservation(id: string, body: string): Promise<void> {
    checkKey("observation", id);
    const s = this.db.pgSchema;
    const same = await this.db.withClient(async (c) => {
      const ins = await c.query(
        `INSERT INTO ${s}.observations (id, body) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`,
        [id, body],
      );
      if (ins.rowCount === 1) return true;
      // A second statement takes a new snapshot, so it sees a row a concurrent writer just committed.
      // (It is renewed too, as missingBlobs renews a blob, so gc spares it.)
      const held = await c.query(
        `UPDATE ${s}.observations SET stored_at = now() WHERE id = $1 RETURNING body`,
        [id],
      );
      return held.rows[0]?.body === body;
    });
    if (!same)
      throw new ContentCorruptError("observation", id, this.db.display, "already stored with another body");
  }

  async getObservation(id: string): Promise<string> {
    checkKey("observation", id);
    const r = await this.db.withClient((c) =>
      c.query(`SELECT body FROM ${this.db.pgSchema}.observations WHERE id = $1`, [id]),
    );
    const body = r.rows[0]?.body as string | undefined;
    if (body === undefined) throw new ContentMissingError("observation", id, this.db.display);
    return body;
  }
}
