import { createHash } from "node:crypto";
import { InputError, LoopgateError } from "../../core/kernel/errors.js";

/**
 * Content-addressed bytes beside the event log, so that everything a resume needs lives in the store:
 * file blobs keyed by the sha256 of their content (stored once, however many runs and observations
 * hold them), and observations keyed by their id (itself a hash of their entries). Both are write-once:
 * writing what is already held is a no-op, so a retried or doubled write is harmless.
 *
 * This layer checks only what it can check alone: a blob's bytes hash to its key, on write and on read.
 * What an observation's body means (its schema and that it hashes to its id) is checked by
 * workspace/observation-store.ts, which reads and writes the bodies.
 */
export interface ContentStore {
  /** Keeps `content` under `hash` unless already held; returns whether it was new. */
  putBlob(hash: string, content: Uint8Array): Promise<boolean>;
  /** The hashes of `hashes` the store does not hold, in the order given (so a saver sends only those). */
  missingBlobs(hashes: readonly string[]): Promise<string[]>;
  /** The bytes under `hash`; ContentMissingError when not held, ContentCorruptError when they no longer hash to it. */
  getBlob(hash: string): Promise<Buffer>;
  /** Keeps an observation's body under its id; the same id with another body is refused. */
  putObservation(id: string, body: string): Promise<void>;
  /** The body under `id`; ContentMissingError when not held. */
  getObservation(id: string): Promise<string>;
}

export class ContentMissingError extends LoopgateError {
  constructor(kind: "blob" | "observation", key: string, where: string) {
    super(`${kind}_missing`, `${kind} ${key} is not in ${where}; it was never stored there (or was removed)`);
  }
}

export class ContentCorruptError extends LoopgateError {
  constructor(kind: "blob" | "observation", key: string, where: string, why: string) {
    super(`${kind}_corrupt`, `${kind} ${key} in ${where} is corrupt: ${why}`);
  }
}

const HASH = /^[0-9a-f]{64}$/;

/** sha256 hex of `content`. */
export function contentHash(content: Uint8Array): string {
  return createHash("sha256").update(content).digest("hex");
}

/** Throws InputError unless `key` is 64 lower-case hex digits. */
export function checkKey(kind: "blob" | "observation", key: string): void {
  if (typeof key !== "string" || !HASH.test(key))
    throw new InputError(
      `${kind} key must be 64 lower-case hex digits, got ${JSON.stringify(key)}`,
      "content store",
    );
}

/** Throws InputError when `content` does not hash to `hash` (nothing is written). */
export function checkBlob(hash: string, content: Uint8Array): void {
  checkKey("blob", hash);
  const actual = contentHash(content);
  if (actual !== hash)
    throw new InputError(
      `blob content hashes to ${actual}, not to the key ${hash} it was offered under; nothing was written`,
      "content store",
    );
}
