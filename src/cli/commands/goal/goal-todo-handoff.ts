import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import type { AttestedEvidence } from "../../../core/events/goal/goal-events.js";
import { InputError } from "../../../core/kernel/errors.js";
import type { GoalIntent } from "../../../runner/goal/goal-engine.js";
import { writeGoal } from "../../../runner/goal/goal-service.js";
import { receiptOfRun } from "../../../runner/goal/run-receipts.js";
import type { CommandIO } from "../../output/io.js";
import { expectedRevision, goalStore, guarded, printWrite, withStore } from "./goal.js";
import { actorOf } from "./goal-actor.js";
import { specFromFlags, type TodoFlags } from "./goal-todo.js";

/**
 * The handoff's todo commands: a claim (a routing signal, never a lock), a person's step recorded with its
 * evidence, a blocker accepted as a todo's terminal outcome, and a todo added as another's successor.
 *   todo claim|release GOAL TODO --by NAME
 *   todo done GOAL TODO --note TEXT (--evidence-url URL | --evidence-file FILE)… [--by NAME]
 *   todo accept-blocker GOAL TODO --note TEXT (--evidence-url URL | --evidence-file FILE | --evidence RUN)…
 *   todo add GOAL TODO … --successor-of TODO
 */
export interface HandoffFlags extends TodoFlags {
  by?: string;
  "evidence-url"?: string[];
  "evidence-file"?: string[];
  "successor-of"?: string;
}

export type HandoffVerb = "claim" | "release" | "done" | "accept-blocker" | "add";

/** True when `todo VERB` with these flags is one of this file's commands (the rest is goal-todo.ts's). */
export function isHandoffCommand(verb: string, flags: HandoffFlags): verb is HandoffVerb {
  if (verb === "claim" || verb === "release" || verb === "accept-blocker") return true;
  if (verb === "done") return flags["evidence-url"] !== undefined || flags["evidence-file"] !== undefined;
  return verb === "add" && flags["successor-of"] !== undefined;
}

const FILE_MAX = 64 * 1024 * 1024;

/** A file's evidence: its name as given, its SHA-256 and size (read here; nothing of it enters the log). */
function fileEvidence(path: string): AttestedEvidence {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st?.isFile()) throw new InputError(`${path} is not a file`, "--evidence-file");
  if (st.size > FILE_MAX)
    throw new InputError(`${path} is ${st.size} bytes; at most ${FILE_MAX} are hashed`, "--evidence-file");
  const sha256 = createHash("sha256").update(readFileSync(path)).digest("hex");
  return { kind: "file", name: path.slice(0, 1000), sha256, bytes: st.size };
}

function urlEvidence(url: string): AttestedEvidence {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new InputError(`${JSON.stringify(url)} is not a URL`, "--evidence-url");
  }
  if (u.protocol !== "https:" && u.protocol !== "http:")
    throw new InputError(`${url}: only an http(s) link is evidence`, "--evidence-url");
  if (url.length > 1000) throw new InputError("a link of at most 1000 characters", "--evidence-url");
  return { kind: "url", url };
}

export async function todoHandoffCommand(
  io: CommandIO,
  verb: HandoffVerb,
  goalId: string,
  todoId: string,
  flags: HandoffFlags,
): Promise<number> {
  const where = goalStore(flags);
  const dir = where.dir;
  const name = `todo ${verb}`;
  const by = flags.by;
  const writer = actorOf(flags);
  if ((verb === "claim" || verb === "release") && !by?.trim())
    throw new InputError(`loopgate ${name} needs --by NAME (who takes or gives up ${todoId})`, "--by");
  if (verb !== "add" && verb !== "claim" && verb !== "release" && !flags.note?.trim())
    throw new InputError(`loopgate ${name} needs --note TEXT (what was done or found)`, "--note");
  if (verb === "done" && flags.evidence !== undefined)
    throw new InputError(
      "todo done takes --evidence RUN (a task's run) or --evidence-url/--evidence-file (a person's step), not both",
      "--evidence",
    );
  // Files and links are read before anything is written (bad input writes nothing).
  const attested: AttestedEvidence[] = [
    ...(flags["evidence-url"] ?? []).map(urlEvidence),
    ...(flags["evidence-file"] ?? []).map(fileEvidence),
  ];
  return guarded(io, flags.json, () =>
    withStore(where, false, async (store) => {
      let intent: GoalIntent;
      let what: string;
      switch (verb) {
        case "claim":
        case "release":
          intent = {
            kind: "command",
            command: {
              type: verb === "claim" ? "claim_todo" : "release_todo",
              todoId,
              agentId: by as string,
            },
          };
          what = verb === "claim" ? `${todoId} is claimed by ${by}` : `${todoId} is released by ${by}`;
          break;
        case "add": {
          const successorOf = flags["successor-of"] as string;
          intent = {
            kind: "command",
            command: { type: "add_todo", todo: specFromFlags(todoId, flags, name), successorOf },
          };
          what = `added ${todoId}, the successor of ${successorOf}`;
          break;
        }
        case "done":
        case "accept-blocker": {
          const evidence = [...attested];
          if (flags.evidence !== undefined)
            evidence.push({ kind: "run", receipt: (await receiptOfRun(store, dir, flags.evidence)).receipt });
          intent = {
            kind: "command",
            command: {
              type: "attest_todo",
              todoId,
              outcome: verb === "done" ? "done" : "blocker_accepted",
              note: flags.note as string,
              evidence,
              ...(by ? { by } : {}),
            },
          };
          what =
            verb === "done"
              ? `${todoId} is done on ${by ? `${by}'s` : "a person's"} word, with ${evidence.length} piece(s) of evidence`
              : `${todoId}'s blocker is accepted as its outcome, with ${evidence.length} piece(s) of evidence`;
          break;
        }
      }
      const r = await writeGoal(store, dir, goalId, intent, expectedRevision(flags), writer);
      printWrite(io, flags, goalId, r, what);
      return 0;
    }),
  );
}
