import { userInfo } from "node:os";
import { Actor } from "../../../core/events/loopgate-event.js";
import { InputError } from "../../../core/kernel/errors.js";

// Who makes a person's write to a goal (meta.by of its operator-origin events, docs/reference/events.md):
// --as NAME, else $LOOPGATE_ACTOR, else the OS user's name, else nobody named (unknown).

/** Where the actor's name comes from, in order: its flag, its variable, the OS user. */
export interface ActorSources {
  /** `--as NAME`. */
  flag: string | undefined;
  /** `$LOOPGATE_ACTOR` (empty is unset). */
  env: string | undefined;
  /** The OS user's name, or undefined when it cannot be read. */
  osUser: () => string | undefined;
}

/** The OS user's name; undefined when the system has none for this uid (a container's bare uid). */
export function osUserName(): string | undefined {
  try {
    return userInfo().username || undefined;
  } catch {
    return undefined;
  }
}

function checked(name: string, where: string): string {
  const r = Actor.safeParse(name);
  if (!r.success)
    throw new InputError(
      `${JSON.stringify(name.length > 80 ? `${name.slice(0, 80)}…` : name)} is not an actor's name: ${r.error.issues[0]?.message ?? "invalid"}`,
      where,
    );
  return r.data;
}

/**
 * The name a person's goal write is recorded with. A bad --as or $LOOPGATE_ACTOR is bad input naming it
 * (nothing is written); an OS user name that is no valid actor is left out (unknown), never cut to fit.
 */
export function resolveActor(sources: ActorSources): string | undefined {
  if (sources.flag !== undefined) return checked(sources.flag, "--as");
  if (sources.env !== undefined && sources.env !== "") return checked(sources.env, "$LOOPGATE_ACTOR");
  const user = sources.osUser();
  return user !== undefined && Actor.safeParse(user).success ? user : undefined;
}

/** The actor of a goal command run from this process: its `--as`, the environment, the OS user. */
export function actorOf(flags: { as?: string }): { by: string | undefined } {
  return {
    by: resolveActor({ flag: flags.as, env: process.env.LOOPGATE_ACTOR, osUser: osUserName }),
  };
}
