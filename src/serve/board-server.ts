import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { type Context, Hono } from "hono";
import { DomainError, InputError, LoopgateError, RunNotFoundError } from "../core/kernel/errors.js";
import { GoalNotFoundError, NeedsRebaseError } from "../runner/goal/goal-store.js";
import type { EventStore } from "../store/kernel/event-store.js";
import { BOARD_CSS, BOARD_JS } from "./board-assets.js";
import { BoardAuth, type Credential, SESSION_COOKIE } from "./board-auth.js";
import type { BoardReaders } from "./board-readers.js";
import {
  changesSince,
  GATE_VERBS,
  GateForm,
  type GateVerb,
  gateIntent,
  recordGateDecision,
} from "./gate-actions.js";
import { type ActionContext, goalMain, goalsMain, readGoalBoard, readGoals } from "./goal-board.js";
import { healthMain, readHealth } from "./health-page.js";
import { type Html, html } from "./html.js";
import { mainElement, pageDocument } from "./layout.js";
import { LogWatcher } from "./live-feed.js";
import { liveStream } from "./live-route.js";
import { runMain } from "./run-page.js";
import { readRunPage } from "./run-view.js";
import { readRuns, runsFilter, runsMain } from "./runs-page.js";

/** What the board serves and how. */
export interface BoardOptions {
  store: EventStore;
  /** The local folder of the store (goal workspaces, run folders). */
  localDir: string;
  /** The store as people read it (a folder, or a PostgreSQL URL with its password masked). */
  storeLabel: string;
  readers: BoardReaders;
  host: string;
  /** 0: a free port. */
  port: number;
  /** Actions are on only with a credential. */
  credential: Credential | null;
  now?: () => Date;
}

/** A running board. */
export interface Board {
  /** Where it listens (http://HOST:PORT/). */
  url: string;
  /** The URL that signs a browser in (with the secret), when actions are on. */
  signInUrl: string | null;
  state(): "running" | "stopped";
  /** Stops listening, ends every live connection and closes nothing else (the caller owns the store). */
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/** Whether a host name binds only this machine. */
export function isLoopback(host: string): boolean {
  return LOOPBACK.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Refuses to serve a non-loopback address without a credential: anyone who reaches it could read every
 * run and goal, and with actions decide gates.
 */
export function checkBind(host: string, credential: Credential | null): void {
  if (!isLoopback(host) && credential === null)
    throw new InputError(
      `${host} is not a loopback address: the board binds one only with a credential (--token or --token-file), since anyone who reaches it reads every run and goal`,
      "--host",
    );
}

const SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy":
    "default-src 'none'; style-src 'self'; script-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
};

/** Starts the board: an HTTP server over the store, with live pages and, given a credential, gate actions. */
export async function startBoard(o: BoardOptions): Promise<Board> {
  checkBind(o.host, o.credential);
  const now = o.now ?? (() => new Date());
  const auth = new BoardAuth(o.credential);
  const watcher = new LogWatcher(o.store);
  await watcher.start();
  const flash = new Map<string, string>();
  const closers = new Set<() => void>();
  let state: "running" | "stopped" = "running";
  const app = new Hono();

  app.use("*", async (c, next) => {
    // A page bound to loopback answers only to a loopback Host (a DNS-rebinding page cannot read it).
    const hostHeader = (c.req.header("host") ?? "").replace(/:\d+$/, "").replace(/^\[(.*)\]$/, "$1");
    if (isLoopback(o.host) && !isLoopback(hostHeader))
      return c.text("this board answers only to a loopback Host\n", 403);
    await next();
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) c.header(k, v);
  });

  const session = (c: Context) => auth.session(c.req.header("cookie"));
  /** The log's position before a page reads its data: the page shows at least what happened up to it. */
  const fresh = async () => {
    await watcher.poll();
    return watcher.position;
  };
  const who = (c: Context) => session(c)?.name ?? null;
  const statusLine = (c: Context) =>
    `${o.storeLabel}${auth.enabled ? (who(c) ? ` · signed in as ${who(c)}` : " · actions need sign-in") : " · read-only"}`;
  /** A page (or its <main> for a live update), with the log position its data was read after. */
  const page = (
    c: Context,
    title: string,
    main: Html,
    watch: string[],
    status = 200,
    position = watcher.position,
  ) => {
    c.status(status as 200);
    if (c.req.header("x-board-part") === "main") return c.html(mainElement(main).text);
    return c.html(pageDocument({ title, main, watch, position, status: statusLine(c) }));
  };
  const failure = (c: Context, e: unknown) => {
    const status =
      e instanceof RunNotFoundError || e instanceof GoalNotFoundError
        ? 404
        : e instanceof InputError || e instanceof RangeError
          ? 400
          : 500;
    const message = e instanceof Error ? e.message : String(e);
    return page(
      c,
      "error",
      html`<h1>${status === 404 ? "Not found" : status === 400 ? "Bad request" : "Error"}</h1><p class="notice error">${message}</p>`,
      [],
      status,
    );
  };

  app.get("/assets/board.css", (c) => c.body(BOARD_CSS, 200, { "Content-Type": "text/css; charset=utf-8" }));
  app.get("/favicon.ico", (c) => c.body(null, 204));
  app.get("/assets/board.js", (c) =>
    c.body(BOARD_JS, 200, { "Content-Type": "text/javascript; charset=utf-8" }),
  );

  app.get("/", async (c) => {
    try {
      const filter = runsFilter(c.req.query());
      const at = await fresh();
      const runs = await readRuns(o.store, o.readers, filter);
      return page(c, "runs", runsMain(runs, filter, now()), ["run-*"], 200, at);
    } catch (e) {
      return failure(c, e);
    }
  });

  app.get("/runs/:id", async (c) => {
    const runId = c.req.param("id");
    try {
      const at = await fresh();
      const input = await readRunPage(o.store, o.localDir, o.storeLabel, runId, o.readers);
      return page(c, `run ${runId}`, runMain(input), [`run-${runId}`], 200, at);
    } catch (e) {
      return failure(c, e);
    }
  });

  app.get("/goals", async (c) => {
    try {
      const at = await fresh();
      return page(c, "goals", goalsMain(await readGoals(o.store, o.localDir)), ["goal-*"], 200, at);
    } catch (e) {
      return failure(c, e);
    }
  });

  const actionContext = (c: Context): ActionContext => {
    const s = session(c);
    return {
      enabled: s !== null,
      csrf: s ? auth.csrf(s.id) : null,
      offReason: auth.enabled
        ? "Sign in to decide: open the sign-in address loopgate serve printed."
        : "Read-only: start loopgate serve with --token or --token-file to decide gates here (or use loopgate gate approve|reject|cancel|defer).",
    };
  };

  const goalPage = async (c: Context, goalId: string, notice: Html | null, status = 200) => {
    const at = await fresh();
    const board = await readGoalBoard(o.store, o.localDir, goalId);
    return page(
      c,
      `goal ${goalId}`,
      goalMain(board, actionContext(c), notice),
      [`goal-${goalId}`],
      status,
      at,
    );
  };

  app.get("/goals/:id", async (c) => {
    const s = session(c);
    const message = s ? flash.get(s.id) : undefined;
    if (s && c.req.header("x-board-part") !== "main") flash.delete(s.id);
    try {
      return await goalPage(
        c,
        c.req.param("id"),
        message ? html`<p class="notice" id="notice">${message}</p>` : null,
      );
    } catch (e) {
      return failure(c, e);
    }
  });

  app.get("/health", async (c) => {
    try {
      const at = await fresh();
      const [h, d] = await Promise.all([readHealth(o.store), o.readers.doctor()]);
      return page(c, "health", healthMain(h, d), ["run-*"], 200, at);
    } catch (e) {
      return failure(c, e);
    }
  });

  const signIn = (c: Context, secret: string) => {
    const id = auth.login(secret);
    if (!id) return c.text("403: that is not this board's token\n", 403);
    c.header("Set-Cookie", `${SESSION_COOKIE}=${id}; HttpOnly; SameSite=Strict; Path=/`);
    return c.redirect("/", 303);
  };
  app.get("/login", (c) => {
    if (!auth.enabled) return c.text("403: this board is read-only (no --token or --token-file)\n", 403);
    const token = c.req.query("token");
    if (token) return signIn(c, token);
    return page(
      c,
      "sign in",
      html`<h1>Sign in</h1><form method="post" action="/login"><input type="text" name="token" placeholder="the token loopgate serve printed" size="40"> <button type="submit">sign in</button></form>`,
      [],
    );
  });
  app.post("/login", async (c) => {
    if (!auth.enabled) return c.text("403: this board is read-only (no --token or --token-file)\n", 403);
    const body = await c.req.parseBody();
    return signIn(c, typeof body.token === "string" ? body.token : "");
  });

  app.post("/goals/:id/gates/:gate/:verb", async (c) => {
    const goalId = c.req.param("id");
    const gateId = c.req.param("gate");
    const verb = c.req.param("verb");
    if (!auth.enabled)
      return c.text("403: actions are off: this board was started without --token or --token-file\n", 403);
    const s = session(c);
    if (!s) return c.text("403: not signed in (open the sign-in address loopgate serve printed)\n", 403);
    const origin = c.req.header("origin");
    if (origin && origin !== "null" && new URL(origin).host !== c.req.header("host"))
      return c.text("403: a write must come from the board's own pages\n", 403);
    const raw = await c.req.parseBody();
    if (!auth.csrfValid(s.id, typeof raw.csrf === "string" ? raw.csrf : undefined))
      return c.text("403: the form's CSRF token is missing or not this session's\n", 403);
    if (!(GATE_VERBS as readonly string[]).includes(verb))
      return failure(
        c,
        new InputError(
          `unknown decision ${JSON.stringify(verb)}; one of ${GATE_VERBS.join(", ")}`,
          "the form",
        ),
      );
    const parsed = GateForm.safeParse(raw);
    if (!parsed.success)
      return failure(
        c,
        new InputError(
          parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "),
          "the form",
        ),
      );
    try {
      const intent = gateIntent(verb as GateVerb, gateId, parsed.data);
      const r = await recordGateDecision(o.store, o.localDir, goalId, intent, parsed.data.revision, s.name);
      flash.set(
        s.id,
        `gate ${gateId}: ${verb === "defer" ? "deferred" : `${verb === "approve" ? "approved" : verb === "reject" ? "rejected" : "cancelled"}`} by ${s.name} (recorded ${r.events.join(", ")}, origin operator; goal revision ${r.revision})${r.requeued ? `; its next turn is queued (job ${r.requeued})` : ""}`,
      );
      return c.redirect(`/goals/${encodeURIComponent(goalId)}`, 303);
    } catch (e) {
      if (e instanceof NeedsRebaseError) {
        const changed = await changesSince(o.store, goalId, parsed.data.revision);
        const notice = html`<div class="notice error" id="notice"><b>needs_rebase</b>: this form was rendered from stream revision ${e.expected}; the goal is now at revision ${e.current}. Nothing was written. What changed since:
<ul>${changed.map((ev) => html`<li><code>${ev.revision}</code> ${ev.type} (${ev.meta.origin}${ev.meta.by ? ` by ${ev.meta.by}` : ""})${describeData(ev.data)}</li>`)}</ul>The board below is the goal as it is now: decide again if you still mean to.</div>`;
        return goalPage(c, goalId, notice, 409).catch((x) => failure(c, x));
      }
      if (e instanceof DomainError || e instanceof LoopgateError || e instanceof RangeError) {
        const refused = html`<p class="notice error" id="notice">refused: ${(e as Error).message}</p>`;
        return goalPage(c, goalId, refused, e instanceof DomainError ? 409 : 400).catch((x) => failure(c, x));
      }
      return failure(c, e);
    }
  });

  app.post("*", (c) => c.text("403: the board accepts no write here\n", 403));

  app.get("/live", (c) => liveStream(c, watcher, closers));

  app.notFound((c) =>
    page(c, "not found", html`<h1>Not found</h1><p>No page ${c.req.path} here.</p>`, [], 404),
  );

  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: o.host, port: o.port }, () => resolve(s));
    s.once("error", reject);
  });
  const address = server.address() as AddressInfo;
  const hostPart = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${hostPart}:${address.port}/`;
  return {
    url,
    signInUrl: o.credential ? `${url}login?token=${encodeURIComponent(o.credential.secret)}` : null,
    state: () => state,
    close: async () => {
      if (state === "stopped") return;
      state = "stopped";
      watcher.stop();
      for (const end of [...closers]) end();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    },
  };
}

/** The identifying fields of a goal event, for "what changed". */
function describeData(data: unknown): string {
  if (data === null || typeof data !== "object") return "";
  const d = data as Record<string, unknown>;
  const parts = ["todo_id", "decision", "note", "reason"]
    .filter((k) => typeof d[k] === "string" && d[k] !== "")
    .map((k) => `${k}: ${String(d[k]).slice(0, 200)}`);
  const identity = d.identity as { turn_instance_id?: string } | undefined;
  if (identity?.turn_instance_id) parts.unshift(`turn ${identity.turn_instance_id}`);
  return parts.length ? ` — ${parts.join(", ")}` : "";
}
