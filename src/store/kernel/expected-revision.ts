import { InputError } from "../../core/kernel/errors.js";
import type { ExpectedRevision } from "./event-store.js";

// Rules of the EventStore interface itself, shared by every implementation.

/** Whether a stream whose last revision is `actual` (-1: no stream) satisfies `expected`. */
export function matchesExpected(expected: ExpectedRevision, actual: number): boolean {
  switch (expected) {
    case "any":
      return true;
    case "no_stream":
      return actual === -1;
    case "stream_exists":
      return actual >= 0;
    default:
      return expected === actual;
  }
}

/** Throws InputError unless `stream` is a non-empty string. */
export function checkStream(stream: string): void {
  if (typeof stream !== "string" || stream.length === 0) {
    throw new InputError(
      `stream name must be a non-empty string, got ${JSON.stringify(stream)}`,
      "event store",
    );
  }
}

/** Throws InputError unless `expected` is a revision (integer >= 0) or one of the named expectations. */
export function checkExpected(expected: ExpectedRevision): void {
  if (
    typeof expected === "number"
      ? Number.isSafeInteger(expected) && expected >= 0
      : expected === "any" || expected === "no_stream" || expected === "stream_exists"
  )
    return;
  throw new InputError(
    `expected revision must be a revision (integer >= 0), "no_stream", "stream_exists" or "any", got ${JSON.stringify(expected)}`,
    "event store",
  );
}

/** Returns a read option that must be an integer >= 0, or undefined; throws InputError otherwise. */
export function checkCount(value: number | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new InputError(`${name} must be an integer >= 0, got ${value}`, "event store");
  }
  return value;
}
