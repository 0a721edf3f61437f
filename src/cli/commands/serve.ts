import { userInfo } from "node:os";
import { InputError } from "../../core/kernel/errors.js";
import { type Credential, generateCredential, readTokenFile } from "../../serve/board-auth.js";
import type { BoardReaders } from "../../serve/board-readers.js";
import { checkBind, startBoard } from "../../serve/board-server.js";
import { openStore, storeFrom } from "../output/context.js";
import { formatEvent } from "../output/format.js";
import { hintCommand, hintsFor } from "../output/hints.js";
import { handleInterrupts } from "../output/interrupt.js";
import type { CommandIO } from "../output/io.js";
import { jobLine, jobStatusWord } from "../output/job-status.js";
import { queueState } from "../output/queue-state.js";
import { ownerReport } from "../output/run-owner.js";
import type { LocatedStore } from "../output/store-location.js";
import { diagnose } from "./doctor.js";

/** The CLI's own readers, handed to the board so that it shows what `runs`, `status`, `events` and `doctor` say. */
export function cliReaders(where: LocatedStore, storeFlag: string | undefined): BoardReaders {
  const hints = hintsFor(where);
  return {
    queue: queueState,
    jobWord: jobStatusWord,
    jobLine,
    ownerLine: (events) =>
      ownerReport(events, hintCommand(hints, `resume ${events[0]?.stream.replace(/^run-/, "") ?? "RUN"}`))
        .line,
    eventLine: formatEvent,
    doctor: () => diagnose(storeFlag === undefined ? {} : { store: storeFlag }),
  };
}

/** The credential the flags ask for: a token file's, a fresh one (--token), or none (read-only). */
function credentialFrom(flags: { token?: boolean; "token-file"?: string }): Credential | null {
  if (flags.token && flags["token-file"] !== undefined)
    throw new InputError("give --token (a fresh one) or --token-file FILE, not both", "--token");
  if (flags["token-file"] !== undefined) return readTokenFile(flags["token-file"]);
  if (flags.token) return generateCredential(userInfo().username);
  return null;
}

/**
 * `loopgate serve`: the board — runs, a run's claims beside its evidence, goals as boards, health — over the
 * store every command finds, on 127.0.0.1 unless --host says otherwise; live while it runs; gate decisions
 * only with a credential. Runs until SIGINT or SIGTERM, then stops cleanly (exit 0).
 */
export async function serveCommand(
  io: CommandIO,
  flags: {
    store?: string;
    host?: string;
    port?: number;
    token?: boolean;
    "token-file"?: string;
    json?: boolean;
  },
): Promise<number> {
  const where = storeFrom(flags.store);
  const host = flags.host ?? "127.0.0.1";
  if (host.trim() === "") throw new InputError("is empty; give an address such as 127.0.0.1", "--host");
  const port = flags.port ?? 0;
  if (port > 65535) throw new InputError(`expected a port number 0-65535, got ${port}`, "--port");
  const credential = credentialFrom(flags);
  checkBind(host, credential);
  const store = await openStore(where, credential ? false : "read");
  try {
    const board = await startBoard({
      store,
      localDir: where.dir,
      storeLabel: where.label,
      readers: cliReaders(where, flags.store),
      host,
      port,
      credential,
    });
    if (flags.json)
      io.out(
        `${JSON.stringify({ url: board.url, sign_in_url: board.signInUrl, actions: credential !== null, name: credential?.name ?? null, store: where.label, pid: process.pid })}\n`,
      );
    else {
      io.out(`loopgate serve: the board of ${where.label} at ${board.url}\n`);
      io.out(
        credential
          ? `actions on for ${credential.name}: sign in at ${board.signInUrl}\n`
          : "read-only (gate actions need --token or --token-file)\n",
      );
      io.out("Ctrl-C stops it.\n");
    }
    await new Promise<void>((resolve) => {
      const interrupts = handleInterrupts(() => {
        interrupts.dispose();
        resolve();
      });
    });
    await board.close();
    io.err("loopgate serve: stopped\n");
    return 0;
  } finally {
    await store.close();
  }
}
