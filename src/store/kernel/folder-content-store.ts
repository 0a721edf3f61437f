import { link, mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  ContentCorruptError,
  ContentMissingError,
  type ContentStore,
  checkBlob,
  checkKey,
  contentHash,
} from "./content-store.js";

let tmpCounter = 0;

/**
 * The ContentStore of a store folder: `blobs/<aa>/<hash>` and `observations/<id>.json`, the layout
 * workspace/blob-store.ts and observation-store.ts use. A file is written to a temp name and then
 * hard-linked into place: the link fails if the name exists, so of concurrent writers exactly one wins.
 */
export class FolderContentStore implements ContentStore {
  constructor(readonly dir: string) {}

  private blobPath(hash: string): string {
    return join(this.dir, "blobs", hash.slice(0, 2), hash);
  }

  private observationPath(id: string): string {
    return join(this.dir, "observations", `${id}.json`);
  }

  async putBlob(hash: string, content: Uint8Array): Promise<boolean> {
    checkBlob(hash, content);
    const file = this.blobPath(hash);
    if (await exists(file)) return false;
    return writeOnce(file, content, 0o600);
  }

  async missingBlobs(hashes: readonly string[]): Promise<string[]> {
    const missing: string[] = [];
    for (const h of hashes) {
      checkKey("blob", h);
      if (!(await exists(this.blobPath(h)))) missing.push(h);
    }
    return missing;
  }

  async getBlob(hash: string): Promise<Buffer> {
    checkKey("blob", hash);
    const content = await readOr(this.blobPath(hash), () => new ContentMissingError("blob", hash, this.dir));
    if (contentHash(content) !== hash)
      throw new ContentCorruptError("blob", hash, this.dir, `its bytes hash to ${contentHash(content)}`);
    return content;
  }

  async putObservation(id: string, body: string): Promise<void> {
    checkKey("observation", id);
    const file = this.observationPath(id);
    if (!(await exists(file)) && (await writeOnce(file, Buffer.from(body, "utf8"), 0o644))) return;
    if ((await readFile(file, "utf8")) !== body)
      throw new ContentCorruptError("observation", id, this.dir, "already stored with another body");
  }

  async getObservation(id: string): Promise<string> {
    checkKey("observation", id);
    const content = await readOr(
      this.observationPath(id),
      () => new ContentMissingError("observation", id, this.dir),
    );
    return content.toString("utf8");
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

async function readOr(file: string, missing: () => Error): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") throw missing();
    throw e;
  }
}

/** Writes `file` unless it exists; false when another writer got there first. */
async function writeOnce(file: string, content: Uint8Array, mode: number): Promise<boolean> {
  await mkdir(join(file, ".."), { recursive: true });
  const tmp = `${file}.${process.pid}.${tmpCounter++}.tmp`;
  try {
    await writeFile(tmp, content, { mode });
    await link(tmp, file);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  } finally {
    await rm(tmp, { force: true });
  }
}
