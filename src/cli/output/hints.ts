import type { StoreLocation } from "../../store/open-store.js";
import { cliName } from "./invocation.js";
import { storeDisplay, storeHintArg } from "./store-location.js";

/**
 * What every printed hint is made of, so that it runs as printed when pasted in the same folder: the
 * command the user started (`npx loopgate`, `loopgate`, `node bin/loopgate.js`) and the `--store` it
 * needs (nothing when the default rule finds the same store there).
 */
export interface Hints {
  me: string;
  storeArg: string;
}

/** The hints of a command that used the store `where`. */
export function hintsFor(where: StoreLocation): Hints {
  return { me: cliName(), storeArg: storeHintArg(where) };
}

/** One pasteable command: `me WORDS --store …` (the words carry real ids, never a placeholder). */
export const hintCommand = (h: Hints, words: string) => `${h.me} ${words}${h.storeArg}`;

/** The last line of a verdict: which store holds the run. */
export const storeLine = (where: StoreLocation) => `store: ${storeDisplay(where)}`;

/**
 * A message from below the CLI (the runner cannot know how loopgate was started) with its quoted hints —
 * `` `loopgate …` `` and `(loopgate …)` — rewritten to the command the user started, so they paste.
 */
export function pasteable(message: string, me?: string): string {
  let name = me;
  try {
    name ??= cliName();
  } catch {
    return message; // an error message is printed whatever happens to the hints
  }
  return name === "loopgate" ? message : message.replace(/([`(])loopgate (?=[a-z])/g, `$1${name} `);
}
