// The pure notification rule (core/goal/notify.ts): occurrence keys, what is owed once, which attempts may
// start, and the retry cap. Expected keys and times are written out by hand from the rule's text.
import { describe, expect, it } from "vitest";
import type { NotifyTarget } from "../../../src/core/events/goal/notify-events.js";
import { parseGoalFile } from "../../../src/core/goal/goal-file.js";
import {
  dueNotifications,
  foldNotify,
  type NotifyFact,
  type NotifyFacts,
  nextRetry,
  occurrences,
  readyAttempts,
  retryAt,
} from "../../../src/core/goal/notify.js";
import { resolveNotifyTargets } from "../../../src/core/goal/notify-targets.js";

const retry = { max_attempts: 3, backoff_seconds: 2, max_backoff_seconds: 5 };
const hook: NotifyTarget = {
  id: "hook",
  kind: "webhook",
  url: "https://x.test/h",
  on: ["gate_waiting", "terminal", "blocked_health"],
  retry,
  timeout_seconds: 10,
};
const gateOnly: NotifyTarget = {
  id: "cmd",
  kind: "command",
  argv: ["true"],
  cwd: "/tmp",
  on: ["gate_waiting"],
  retry,
  timeout_seconds: 10,
};

let rev = 0;
const ev = (type: string, data: Record<string, unknown>): NotifyFact => ({ type, revision: rev++, data });
function log(): NotifyFact[] {
  rev = 0;
  return [
    ev("goal_created", { goal_id: "g", notify: [hook, gateOnly] }), // 0
    ev("todo_added", { todo: { id: "todo_gate" } }), // 1
    ev("todo_added", { todo: { id: "todo_work" } }), // 2
  ];
}
const facts = (over: Partial<NotifyFacts>): NotifyFacts => ({
  runtimeState: "eligible",
  runtimeReason: "",
  gates: [
    { gateId: "todo_gate", scope: "publish", content: "approve", covers: ["todo_work"], askedAgain: false },
  ],
  terminal: false,
  closureOutcome: null,
  cli: (a) => `loopgate ${a}`,
  ...over,
});

describe("notify rule", () => {
  it("an open gate is no occurrence while work runs; at operator_gate it is owed once per listening target", () => {
    const s = foldNotify(log());
    expect(occurrences(s, facts({}))).toEqual([]);
    const o = occurrences(s, facts({ runtimeState: "operator_gate" }));
    expect(o.map((x) => x.key)).toEqual(["gate_waiting:todo_gate@1"]);
    expect(o[0]?.command).toBe("loopgate gate approve g todo_gate");
    const due = dueNotifications(s, o);
    expect(due.map((d) => d.notification_id)).toEqual([
      "g/gate_waiting:todo_gate@1/hook",
      "g/gate_waiting:todo_gate@1/cmd",
    ]);
    // Recorded: nothing more is owed for the same occurrence, whatever host looks.
    const after = foldNotify([...log(), ...due.map((d) => ev("notification_due", { ...d }))]);
    expect(dueNotifications(after, o)).toEqual([]);
  });

  it("a deferred gate asked again is a new occurrence (its last lifecycle fact moved)", () => {
    const events = [...log(), ev("todo_deferred", { todo_id: "todo_gate" })]; // 3
    const s = foldNotify(events);
    expect(occurrences(s, facts({ runtimeState: "operator_gate" }))[0]?.key).toBe("gate_waiting:todo_gate@3");
  });

  it("terminal is keyed by the closure intent; blocked_health by the last goal fact, not by turn, lease or notification facts", () => {
    const events = [...log(), ev("goal_no_followup_declared", { rationale: "r" })]; // 3
    const term = occurrences(foldNotify(events), facts({ terminal: true, runtimeState: "waiting" }));
    expect(term.map((o) => o.key)).toEqual(["terminal@3"]);
    // gateOnly does not listen to terminal.
    expect(dueNotifications(foldNotify(events), term).map((d) => d.target_id)).toEqual(["hook"]);
    const sick = [
      ...events,
      ev("turn_lease_acquired", {}),
      ev("turn_lease_released", {}),
      ev("notification_due", { notification_id: "x" }),
    ];
    expect(
      occurrences(foldNotify(sick), facts({ runtimeState: "blocked_health" })).map((o) => o.key),
    ).toEqual(["blocked_health@3"]);
  });

  it("attempts: a live claim waits, an expired one is retried, a failure waits for its retry, a success or the cap ends it", () => {
    const base = [
      ...log(),
      ev("notification_due", { notification_id: "n", target_id: "hook", kind: "gate_waiting" }),
    ];
    const t0 = new Date("2030-01-01T00:00:00Z");
    expect(readyAttempts(foldNotify(base), t0).map((a) => a.attempt)).toEqual([1]);
    const claimed = [
      ...base,
      ev("notification_attempted", {
        notification_id: "n",
        attempt: 1,
        by: "h:1",
        until: "2030-01-01T00:00:40Z",
      }),
    ];
    expect(readyAttempts(foldNotify(claimed), t0)).toEqual([]);
    expect(
      readyAttempts(foldNotify(claimed), new Date("2030-01-01T00:00:41Z")).map((a) => a.attempt),
    ).toEqual([2]);
    const failed = [
      ...claimed,
      ev("notification_failed", {
        notification_id: "n",
        attempt: 1,
        error: "HTTP 500",
        max_attempts: 3,
        next_retry_at: "2030-01-01T00:00:02Z",
      }),
    ];
    expect(readyAttempts(foldNotify(failed), t0)).toEqual([]);
    expect(nextRetry(foldNotify(failed))).toBe("2030-01-01T00:00:02Z");
    expect(readyAttempts(foldNotify(failed), new Date("2030-01-01T00:00:02Z")).map((a) => a.attempt)).toEqual(
      [2],
    );
    const sent = [
      ...failed,
      ev("notification_attempted", {
        notification_id: "n",
        attempt: 2,
        by: "h:1",
        until: "2030-01-01T00:01:00Z",
      }),
      ev("notification_sent", { notification_id: "n", attempt: 2, detail: "HTTP 200" }),
    ];
    expect(readyAttempts(foldNotify(sent), new Date("2031-01-01T00:00:00Z"))).toEqual([]);
    expect(nextRetry(foldNotify(sent))).toBeNull();
    const gaveUp = [
      ...failed,
      ev("notification_failed", {
        notification_id: "n",
        attempt: 3,
        error: "HTTP 500",
        max_attempts: 3,
        next_retry_at: null,
      }),
    ];
    expect(readyAttempts(foldNotify(gaveUp), new Date("2031-01-01T00:00:00Z"))).toEqual([]);
  });

  it("backoff doubles from backoff_seconds up to max_backoff_seconds; the last attempt has no retry", () => {
    const t = new Date("2030-01-01T00:00:00Z");
    expect(retryAt(retry, 1, t)).toBe("2030-01-01T00:00:02.000Z");
    expect(retryAt(retry, 2, t)).toBe("2030-01-01T00:00:04.000Z");
    expect(retryAt(retry, 3, t)).toBeNull();
    expect(retryAt({ ...retry, max_attempts: 9 }, 5, t)).toBe("2030-01-01T00:00:05.000Z");
  });
});

describe("goal file notify:", () => {
  const base = `id: g\nobjective: o\nworkspace: ws\nacceptance: [{ task: t.yaml }]\ntodos: [{ id: todo_abc, class: user_action, content: c }]\n`;
  it("resolves targets with their defaults; the command runs in the goal file's folder", () => {
    const g = parseGoalFile(
      `${base}notify:\n  - command: [sh, n.sh]\n  - { id: slack, url_env: SLACK_URL, on: [terminal] }\n`,
      "goal.yaml",
    );
    const t = resolveNotifyTargets(g.notify, "/goals");
    expect(t[0]).toMatchObject({
      id: "command-1",
      kind: "command",
      argv: ["sh", "n.sh"],
      cwd: "/goals",
      on: ["gate_waiting", "terminal", "blocked_health"],
      timeout_seconds: 10,
      retry: { max_attempts: 5, backoff_seconds: 2 },
    });
    expect(t[1]).toMatchObject({ id: "slack", kind: "webhook", url_env: "SLACK_URL", on: ["terminal"] });
  });
  it("refuses a target with two kinds, an unknown occurrence and a duplicate id, naming the field", () => {
    expect(() =>
      parseGoalFile(`${base}notify:\n  - { command: [sh], url: "https://x.test" }\n`, "goal.yaml"),
    ).toThrow(/notify/);
    expect(() =>
      parseGoalFile(`${base}notify:\n  - { url: "https://x.test", on: [done] }\n`, "goal.yaml"),
    ).toThrow(/notify/);
    expect(() =>
      parseGoalFile(
        `${base}notify:\n  - { id: a, url: "https://x.test" }\n  - { id: a, command: [sh] }\n`,
        "goal.yaml",
      ),
    ).toThrow(/notify\[1\]\.id: duplicate notify id a/);
  });
});
