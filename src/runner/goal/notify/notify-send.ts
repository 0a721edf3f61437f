import { spawn } from "node:child_process";
import type { NotifyTarget } from "../../../core/events/goal/notify-events.js";
import type { DueData } from "../../../core/goal/notify.js";
import { boundText } from "../../../core/kernel/bounded.js";

/**
 * Sends one notification to one target. Never throws: the outcome is a value the caller records
 * (`notification_sent` or `notification_failed`). A webhook gets a JSON POST whose `text` is what Slack (and
 * Slack-compatible receivers) show, beside the structured fields; success is a 2xx answer. A command gets
 * the same JSON on stdin and the text in `LOOPGATE_NOTIFY_TEXT`; success is exit 0. Both are cut off at
 * the target's timeout. The body's `idempotency_key` (also the `Idempotency-Key` header) is the same on
 * every attempt, so a receiver can drop a repeat after a crash between its answer and our record.
 */

/** The outcome of one attempt. */
export type SendOutcome = { ok: true; detail: string } | { ok: false; error: string };

/** The JSON a target receives. */
export function notificationBody(goalId: string, due: DueData, attempt: number) {
  return {
    text: due.text + (due.command ? `\nnext: ${due.command}` : ""),
    goal: goalId,
    kind: due.kind,
    gate_id: due.gate_id ?? null,
    todo_ids: due.todo_ids ?? [],
    revision: due.goal_revision,
    command: due.command,
    idempotency_key: due.notification_id,
    attempt,
  };
}

const cut = (s: string) => boundText(s.replace(/\s+/g, " ").trim(), 400);

/** One attempt at `target`. `env` is where a webhook's `url_env` is looked up. */
export async function sendNotification(
  target: NotifyTarget,
  body: ReturnType<typeof notificationBody>,
  env: NodeJS.ProcessEnv,
): Promise<SendOutcome> {
  return target.kind === "webhook" ? postWebhook(target, body, env) : runCommand(target, body, env);
}

async function postWebhook(
  target: Extract<NotifyTarget, { kind: "webhook" }>,
  body: ReturnType<typeof notificationBody>,
  env: NodeJS.ProcessEnv,
): Promise<SendOutcome> {
  const url = target.url ?? (target.url_env ? env[target.url_env] : undefined);
  if (!url) return { ok: false, error: `webhook ${target.id}: $${target.url_env ?? "?"} is not set` };
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": body.idempotency_key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(target.timeout_seconds * 1000),
      redirect: "error",
    });
    const text = await res.text().catch(() => "");
    if (res.ok) return { ok: true, detail: `HTTP ${res.status}` };
    return { ok: false, error: cut(`HTTP ${res.status}${text ? `: ${text}` : ""}`) };
  } catch (e) {
    const err = e as Error & { cause?: { code?: string; message?: string } };
    const why =
      err.name === "TimeoutError"
        ? `no answer in ${target.timeout_seconds} s`
        : (err.cause?.code ?? err.cause?.message ?? err.message);
    // The URL is not repeated: it may carry a secret (a Slack webhook's path is one).
    return { ok: false, error: cut(`webhook ${target.id}: ${why}`) };
  }
}

function runCommand(
  target: Extract<NotifyTarget, { kind: "command" }>,
  body: ReturnType<typeof notificationBody>,
  env: NodeJS.ProcessEnv,
): Promise<SendOutcome> {
  return new Promise((resolve) => {
    const [program, ...args] = target.argv as [string, ...string[]];
    let output = "";
    let settled = false;
    const done = (o: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(program, args, {
        cwd: target.cwd,
        env: { ...env, LOOPGATE_NOTIFY_TEXT: body.text, LOOPGATE_NOTIFY_ID: body.idempotency_key },
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch (e) {
      resolve({ ok: false, error: cut(`command ${target.id}: ${(e as Error).message}`) });
      return;
    }
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      done({ ok: false, error: `command ${target.id}: no exit in ${target.timeout_seconds} s (killed)` });
    }, target.timeout_seconds * 1000);
    const keep = (b: Buffer) => {
      if (output.length < 4000) output += b.toString("utf8");
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    child.on("error", (e) => done({ ok: false, error: cut(`command ${target.id}: ${e.message}`) }));
    child.on("close", (code, signal) =>
      done(
        code === 0
          ? { ok: true, detail: "exit 0" }
          : {
              ok: false,
              error: cut(
                `command ${target.id}: ${signal ? `killed by ${signal}` : `exit ${code}`}${output ? `: ${output}` : ""}`,
              ),
            },
      ),
    );
    child.stdin?.on("error", () => {}); // a command that does not read its stdin is not a failure
    child.stdin?.end(`${JSON.stringify(body)}\n`);
  });
}
