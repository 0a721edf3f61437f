import { createHash, randomBytes } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { InputError } from "../../src/core/kernel/errors.js";
import {
  ContentCorruptError,
  ContentMissingError,
  type ContentStore,
} from "../../src/store/kernel/content-store.js";
import { rejection } from "./event-fixtures.js";

/** Opens a fresh, empty content store for one test; `corruptBlob` overwrites a stored blob's bytes behind its back. */
export type OpenContent = () => Promise<{
  content: ContentStore;
  corruptBlob(hash: string, bytes: Buffer): Promise<void>;
  cleanup(): Promise<void>;
}>;

// The key rule written independently of the code under test: sha256 of the bytes, hex.
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** What every ContentStore must do, written against the interface only. */
export function contentStoreContract(name: string, open: OpenContent): void {
  describe(`ContentStore contract: ${name}`, () => {
    let opened: Awaited<ReturnType<OpenContent>>;
    beforeEach(async () => {
      opened = await open();
    });
    afterEach(() => opened.cleanup());

    it("keeps a blob under its sha256 and gives the same bytes back, once however often it is put", async () => {
      const bytes = randomBytes(5000);
      const hash = sha(bytes);
      expect(await opened.content.putBlob(hash, bytes)).toBe(true);
      expect(await opened.content.putBlob(hash, Buffer.from(bytes))).toBe(false);
      expect(Buffer.compare(await opened.content.getBlob(hash), bytes)).toBe(0);
      const empty = Buffer.alloc(0);
      expect(await opened.content.putBlob(sha(empty), empty)).toBe(true);
      expect((await opened.content.getBlob(sha(empty))).length).toBe(0);
    });

    it("stores concurrent puts of one blob once: exactly one is new, every put succeeds", async () => {
      const bytes = randomBytes(2000);
      const results = await Promise.all(
        Array.from({ length: 6 }, () => opened.content.putBlob(sha(bytes), bytes)),
      );
      expect(results.filter((r) => r).length).toBe(1);
      expect(Buffer.compare(await opened.content.getBlob(sha(bytes)), bytes)).toBe(0);
    });

    it("refuses bytes offered under another hash, and a key that is not a sha256, writing nothing", async () => {
      const bytes = randomBytes(100);
      const other = sha(randomBytes(100));
      expect(await rejection(opened.content.putBlob(other, bytes))).toBeInstanceOf(InputError);
      expect(await opened.content.missingBlobs([other])).toEqual([other]);
      for (const bad of ["", "ABC", sha(bytes).toUpperCase(), `${sha(bytes)}0`, "../../etc/passwd"]) {
        expect(await rejection(opened.content.putBlob(bad, bytes)), bad).toBeInstanceOf(InputError);
        expect(await rejection(opened.content.getBlob(bad)), bad).toBeInstanceOf(InputError);
      }
    });

    it("says which blobs are missing, in the order asked", async () => {
      const [a, b, c] = [randomBytes(10), randomBytes(20), randomBytes(30)];
      await opened.content.putBlob(sha(b), b);
      expect(await opened.content.missingBlobs([sha(a), sha(b), sha(c)])).toEqual([sha(a), sha(c)]);
      expect(await opened.content.missingBlobs([])).toEqual([]);
    });

    it("reports a missing blob and a blob whose bytes changed behind its back", async () => {
      const bytes = randomBytes(64);
      expect(await rejection(opened.content.getBlob(sha(bytes)))).toBeInstanceOf(ContentMissingError);
      await opened.content.putBlob(sha(bytes), bytes);
      await opened.corruptBlob(sha(bytes), Buffer.from("tampered"));
      const error = await rejection(opened.content.getBlob(sha(bytes)));
      expect(error).toBeInstanceOf(ContentCorruptError);
      expect(error.message).toContain(sha(Buffer.from("tampered")));
    });

    it("keeps an observation body write-once: the same body again is fine, another is refused", async () => {
      const id = sha(randomBytes(8));
      const body = JSON.stringify({
        id,
        entries: [{ path: "a", type: "file", mode: 420, size: 1, hash: "" }],
      });
      expect(await rejection(opened.content.getObservation(id))).toBeInstanceOf(ContentMissingError);
      await opened.content.putObservation(id, body);
      await Promise.all([opened.content.putObservation(id, body), opened.content.putObservation(id, body)]);
      expect(await opened.content.getObservation(id)).toBe(body);
      expect(await rejection(opened.content.putObservation(id, `${body} `))).toBeInstanceOf(
        ContentCorruptError,
      );
      expect(await opened.content.getObservation(id)).toBe(body);
      expect(await rejection(opened.content.putObservation("not-a-hash", body))).toBeInstanceOf(InputError);
    });

    it("stores concurrent first puts of one observation once, all succeeding", async () => {
      const id = sha(randomBytes(8));
      await Promise.all(Array.from({ length: 6 }, () => opened.content.putObservation(id, "{}")));
      expect(await opened.content.getObservation(id)).toBe("{}");
    });
  });
}
