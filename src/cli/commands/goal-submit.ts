import { InputError } from "../../core/errors.js";
import { storeFrom } from "../context.js";
import { cliName } from "../invocation.js";
import type { CommandIO } from "../io.js";

/**
 * `loopgate goal submit GOAL --store postgres://…`: would enqueue the goal's turns on the run queue for
 * workers. Refused, plainly, until goals can live in a Postgres store: today a goal's stream is kept in a
 * folder's SQLite log and its workspace (the git repository every accepted change is committed to) in
 * that folder, so a worker elsewhere could reach neither; queuing its turns would only pretend.
 */
export async function goalSubmitCommand(
  _io: CommandIO,
  goalId: string,
  flags: { store?: string },
): Promise<number> {
  const where = storeFrom(flags.store, ".loopgate");
  const lg = cliName();
  if (where.kind !== "postgres")
    throw new InputError(
      `goal submit enqueues turns on the run queue, which lives in PostgreSQL: give --store postgres://USER@HOST[:PORT]/DATABASE; to advance ${goalId} from this folder, run ${lg} goal run ${goalId} --store ${where.label}`,
      "loopgate goal submit",
    );
  throw new InputError(
    `goals cannot live in a Postgres store yet: a goal's stream is kept in a folder's SQLite log and its workspace (a git repository) in that folder, which a worker on another machine cannot reach, so ${goalId}'s turns are not queued. Advance it with ${lg} goal run ${goalId} --store DIR, or host every goal of a folder with ${lg} scheduler --store DIR`,
    "loopgate goal submit",
  );
}
