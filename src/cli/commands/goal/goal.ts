import { rmSync } from "node:fs";
import { join } from "node:path";
import { resolveNotifyTargets } from "../../../core/goal/notify-targets.js";
import { DomainError, InputError } from "../../../core/kernel/errors.js";
import { decideIntent, originOf } from "../../../runner/goal/goal-engine.js";
import { openGoal, writeGoal } from "../../../runner/goal/goal-service.js";
import { acceptanceItems, budget, goalAgent, todoSpec } from "../../../runner/goal/goal-spec.js";
import { appendGoal, goalStream, listGoalIds, NeedsRebaseError } from "../../../runner/goal/goal-store.js";
import { loadGoalFile } from "../../../runner/goal/load-goal.js";
import { goalRepo } from "../../../runner/goal/repo/goal-repo.js";
import { EvidenceError } from "../../../runner/goal/run-receipts.js";
import type { EventStore } from "../../../store/kernel/event-store.js";
import type { StoreLocation } from "../../../store/open-store.js";
import { openStore, storeFrom } from "../../output/context.js";
import { hintCommand, hintsFor, pasteable, storeLine } from "../../output/hints.js";
import { cliName } from "../../output/invocation.js";
import type { CommandIO } from "../../output/io.js";
import { actorOf } from "./goal-actor.js";
import { type CloseFlags, closeIntent, closeSentence } from "./goal-close.js";
import { formatContract, formatGoalStatus } from "./goal-format.js";
import { contractJson, pathStyle, statusJson } from "./goal-json.js";

/** Flags the goal commands read. */
export interface GoalFlags {
  store?: string;
  json?: boolean;
  /** --json paths absolute (else relative to the goal file's folder). */
  absolute?: boolean;
  "expect-revision"?: string;
  note?: string;
  /** Who makes a person's write (goal-actor.ts: else $LOOPGATE_ACTOR, else the OS user). */
  as?: string;
  "unsafe-no-sandbox"?: boolean;
}

/**
 * A goal's store, by the one rule every command uses (cli/output/store-location.ts): --store, else the nearest
 * `.loopgate/` walking up, else $LOOPGATE_STORE, else ./.loopgate. A folder keeps the SQLite log and the
 * goal's git workspace beside it; a Postgres store keeps both in the database (the workspace's objects in
 * its content store, see runner/goal/repo/goal-repo.ts), and the local folder is then only this host's (run
 * folders, the goal's cache repository).
 */
export const goalStore = (flags: { store?: string }) => storeFrom(flags.store);
/**
 * The folder store of a goal command that works on the goal's local workspace directly (revert: its
 * commit is made in the folder's repository): a PostgreSQL store is refused with what to use instead,
 * never read as a local folder.
 */
export function goalFolderStore(flags: { store?: string }, command: string): string {
  const where = goalStore(flags);
  if (where.kind === "postgres")
    throw new InputError(
      `loopgate ${command} works on a goal in a folder store; with a PostgreSQL store (${where.label}) a goal advances by governed turns: loopgate goal tick|run GOAL, or goal submit GOAL and loopgate worker`,
      "--store",
    );
  return where.dir;
}

/** The local folder of a goal command's store (the store itself, or this host's folder beside a database). */
export const goalStoreDir = (flags: { store?: string }) => goalStore(flags).dir;

/** --expect-revision as a number, or undefined. */
export function expectedRevision(flags: { "expect-revision"?: string }): number | undefined {
  const v = flags["expect-revision"];
  return v === undefined ? undefined : Number(v);
}

/**
 * Runs a goal command and maps the goal's refusals to exit codes: a rule the decider names (1), evidence
 * that proves nothing (1), a stale revision (3, needs_rebase, with the current revision). Nothing was
 * written in any of these cases.
 */
export async function guarded(
  io: CommandIO,
  json: boolean | undefined,
  fn: () => Promise<number>,
): Promise<number> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof NeedsRebaseError) {
      if (json)
        io.out(
          `${JSON.stringify({ error: "needs_rebase", goal: e.goalId, expected: e.expected, current_revision: e.current })}\n`,
        );
      io.err(`loopgate: ${pasteable(e.message)}\n`);
      return 3;
    }
    if (e instanceof DomainError || e instanceof EvidenceError) {
      if (json) io.out(`${JSON.stringify({ error: e.code, message: e.message })}\n`);
      io.err(`loopgate: refused: ${pasteable(e.message)}\n`);
      return 1;
    }
    throw e;
  }
}

/** Opens the store of a goal command, closing it when done. */
export async function withStore<T>(
  dir: StoreLocation | string,
  mode: boolean | "read",
  fn: (s: EventStore) => Promise<T>,
): Promise<T> {
  const store = await openStore(dir, mode);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/** `loopgate goal new GOAL_FILE`: validates, creates the workspace repository and records the goal. */
export async function goalNewCommand(io: CommandIO, file: string, flags: GoalFlags): Promise<number> {
  const loaded = loadGoalFile(file);
  const id = loaded.goal.id;
  const where = goalStore(flags);
  const localDir = where.dir;
  const todos = loaded.goal.todos.map((t, i) => todoSpec(loaded, t, i));
  const acceptance = acceptanceItems(loaded);
  const { by } = actorOf(flags);
  const planner = loaded.goal.planner;
  const agent = goalAgent(
    loaded.goal.builder,
    planner ? { model: planner.model, dir: loaded.dir, where: `${file}: planner.model` } : undefined,
  );
  return guarded(io, flags.json, () =>
    withStore(where, true, async (store) => {
      if ((await store.readStream(goalStream(id), { limit: 1 })).length > 0)
        throw new InputError(
          `a goal ${id} already exists in ${where.label}; see ${hintCommand(hintsFor(where), `goal status ${id}`)}`,
          file,
        );
      const repo = goalRepo(store, localDir);
      const { revision, path: ws } = await repo.create(loaded.workspaceSource, id);
      try {
        const goal = {
          goalId: id,
          objective: loaded.goal.objective,
          acceptance,
          workspace: { path: ws, initial_revision: revision },
          agent,
          budget: budget(loaded),
          source: { path: loaded.file, digest: loaded.digest },
          ...(loaded.goal.vision !== undefined ? { vision: loaded.goal.vision } : {}),
          ...(loaded.goal.notify ? { notify: resolveNotifyTargets(loaded.goal.notify, loaded.dir) } : {}),
        };
        const bodies = decideIntent({ kind: "create", goal, todos }, [], {
          now: new Date(),
          health: [],
          workspaceRevision: revision,
        });
        const last = await appendGoal(
          store,
          id,
          bodies,
          "no_stream",
          (t) => originOf(t, true),
          undefined,
          by,
        );
        if (flags.json)
          io.out(
            `${JSON.stringify({ goal: id, store: where.label, workspace: pathStyle(loaded.file, flags.absolute === true)(ws), revision, stream_revision: last, todos: todos.length })}\n`,
          );
        else
          io.out(
            `goal ${id} created: ${todos.length} todos, workspace ${ws} at revision ${revision.slice(0, 12)}\nnext: ${hintCommand(hintsFor(where), `goal status ${id}`)}\n${storeLine(where)}\n`,
          );
        return 0;
      } catch (e) {
        if (repo.kind === "folder") rmSync(join(ws, ".."), { recursive: true, force: true });
        throw e;
      }
    }),
  );
}

/** `loopgate goal status GOAL`: the projection, rebuilt from the log. */
export async function goalStatusCommand(io: CommandIO, goalId: string, flags: GoalFlags): Promise<number> {
  const where = goalStore(flags);
  return withStore(where, "read", async (store) => {
    const { view } = await openGoal(store, where.dir, goalId);
    io.out(
      flags.json
        ? `${JSON.stringify(statusJson(view, pathStyle(view.sourcePath, flags.absolute === true)), null, 2)}\n`
        : formatGoalStatus(view, hintsFor(where)),
    );
    return 0;
  });
}

/** `loopgate goal next GOAL`: the interaction contract. */
export async function goalNextCommand(io: CommandIO, goalId: string, flags: GoalFlags): Promise<number> {
  const where = goalStore(flags);
  return withStore(where, "read", async (store) => {
    const { view } = await openGoal(store, where.dir, goalId);
    io.out(
      flags.json
        ? `${JSON.stringify(contractJson(view.contract, pathStyle(view.sourcePath, flags.absolute === true)), null, 2)}\n`
        : formatContract(view, hintsFor(where)),
    );
    return 0;
  });
}

/** `loopgate goal stop|resume GOAL`: the goal's activation, the only goal status there is. */
export async function goalActivationCommand(
  io: CommandIO,
  goalId: string,
  which: "stop" | "resume",
  flags: GoalFlags,
): Promise<number> {
  const where = goalStore(flags);
  const dir = where.dir;
  const writer = actorOf(flags);
  return guarded(io, flags.json, () =>
    withStore(where, false, async (store) => {
      const activation = which === "stop" ? "stopped" : "active";
      const r = await writeGoal(
        store,
        dir,
        goalId,
        { kind: "activation", activation, note: flags.note ?? "" },
        expectedRevision(flags),
        writer,
      );
      printWrite(io, flags, goalId, r, `goal ${goalId} is ${activation}`);
      return 0;
    }),
  );
}

/** `loopgate goal close GOAL --rationale TEXT`: the structured no_followup intent of terminal closure. */
export async function goalCloseCommand(
  io: CommandIO,
  goalId: string,
  flags: GoalFlags & CloseFlags,
): Promise<number> {
  const where = goalStore(flags);
  const dir = where.dir;
  const rationale = flags.rationale;
  if (!rationale?.trim())
    throw new InputError("loopgate goal close needs --rationale TEXT", "loopgate goal close");
  const writer = actorOf(flags);
  return guarded(io, flags.json, () =>
    withStore(where, false, async (store) => {
      const r = await writeGoal(
        store,
        dir,
        goalId,
        closeIntent(rationale, flags),
        expectedRevision(flags),
        writer,
      );
      const { view } = await openGoal(store, dir, goalId);
      printWrite(
        io,
        flags,
        goalId,
        r,
        closeSentence(goalId, view.closed, flags.outcome ?? "achieved", view.frontierGaps),
      );
      return 0;
    }),
  );
}

/** Prints the result of a goal write. */
export function printWrite(
  io: CommandIO,
  flags: { json?: boolean },
  goalId: string,
  r: { revision: number; events: string[]; requeued?: string },
  what: string,
): void {
  if (flags.json)
    io.out(
      `${JSON.stringify({ goal: goalId, stream_revision: r.revision, events: r.events, ...(r.requeued ? { requeued_job: r.requeued } : {}) })}\n`,
    );
  else {
    io.out(`${what} (recorded ${r.events.join(", ")}; goal revision ${r.revision})\n`);
    if (r.requeued) io.out(`its next turn is queued for the workers (job ${r.requeued})\n`);
  }
}

/** `loopgate goals`: every goal in the store, one line each with its runtime state. */
export async function goalsCommand(io: CommandIO, flags: GoalFlags): Promise<number> {
  const where = goalStore(flags);
  const dir = where.dir;
  return withStore(where, "read", async (store) => {
    const rows = [];
    for (const id of await listGoalIds(store)) {
      const { view } = await openGoal(store, dir, id);
      const done = view.todos.filter((t) => t.status === "done").length;
      rows.push({
        goal: id,
        activation: view.activation,
        runtime_state: view.runtimeState,
        closed: view.closed,
        todos: view.todos.length,
        done,
        stream_revision: view.streamRevision,
        revision: view.revision,
      });
    }
    if (flags.json) io.out(`${JSON.stringify(rows, null, 2)}\n`);
    else if (rows.length === 0)
      io.out(
        `no goals in ${dir}; create one from a goal file with \`${cliName()} goal new\` (see its --help)\n`,
      );
    else
      for (const r of rows)
        io.out(
          `${r.goal}  ${r.activation}  ${r.runtime_state}${r.closed ? "  closed" : ""}  todos ${r.done}/${r.todos} done  revision ${r.revision.slice(0, 12)}\n`,
        );
    return 0;
  });
}
