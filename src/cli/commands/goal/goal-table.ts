import { LoopgateError } from "../../../core/kernel/errors.js";
import type { CommandSpec } from "../../flags/command-spec.js";
import { ACTOR_HELP, f, RUN_FLAGS, sub, TODO_SPEC_FLAGS, word } from "./goal-table-parts.js";
import { TODO_GATE_COMMANDS } from "./todo-gate-table.js";

// The goal control plane's commands: goal, scheduler, goals, and (todo-gate-table.ts) todo, gate. Spread into COMMANDS.

export const GOAL_COMMANDS: readonly CommandSpec[] = [
  {
    name: "goal",
    usage: [
      "loopgate goal init [DIR] [--name ID] [--objective TEXT] [--workspace DIR] [--gate-command ARGV] [--notify-url URL] [--notify-command ARGV] [--dry-run] [--force] [--json]",
      "loopgate goal new GOAL_FILE [--store DIR] [--json [--absolute]]",
      "loopgate goal status GOAL [--store DIR] [--json [--absolute]]",
      "loopgate goal next GOAL [--store DIR] [--json [--absolute]]",
      "loopgate goal history GOAL [--store DIR] [--json]",
      "loopgate goal stop GOAL [--note TEXT] [--expect-revision N] [--store DIR] [--json]",
      "loopgate goal resume GOAL [--note TEXT] [--expect-revision N] [--store DIR] [--json]",
      "loopgate goal accept GOAL [--store DIR] [--json] [--unsafe-no-sandbox]",
      "loopgate goal close GOAL --rationale TEXT [--outcome achieved|blocked|rolled_back|not_achieved] [--blocker TODO] [--revision REV] [--expect-revision N] [--store DIR] [--json]",
      "loopgate goal acceptance show GOAL [--store DIR] [--json]",
      "loopgate goal acceptance add GOAL TASK_FILE [--gates GATE]… [--id ID] --reason TEXT [--expect-revision N]",
      "loopgate goal acceptance retire GOAL ITEM --reason TEXT [--expect-revision N]",
      "loopgate goal vision show GOAL [--store DIR] [--json]",
      "loopgate goal vision record GOAL --route TEXT [--reason TEXT]",
      "loopgate goal vision retire GOAL --reason TEXT",
      "loopgate goal vision supersede GOAL --by AGENT [--route TEXT] --reason TEXT",
      "loopgate goal vision patch GOAL [NEW_TODO --content TEXT --class CLASS [--task FILE]] --route TEXT --patch TEXT --reason TEXT",
      "loopgate goal vision unchanged GOAL [NEW_TODO --content TEXT --class CLASS [--task FILE]] --reason TEXT",
      "loopgate goal vision close GOAL NEW_TODO --content TEXT --class CLASS [--task FILE] --reason TEXT",
      "loopgate goal revert GOAL REVISION NEW_TODO --content TEXT --class CLASS [--task FILE] --reason TEXT [--store DIR] [--json]",
      "loopgate goal tick GOAL [--agent-id NAME] [--model SPEC | --builder CMD | --oracle | --noop] [--planner-model SPEC] [options] [--store DIR] [--json]",
      "loopgate goal run GOAL [--once | --until-idle] [--store DIR] [--json] [--model SPEC | --builder CMD | --oracle | --noop] [--planner-model SPEC] [options]",
      "loopgate goal submit GOAL --store postgres://… [--model SPEC | --builder CMD | --oracle | --noop] [options] [--json]",
    ],
    about: `A goal carries work across many turns, people and restarts: a todo graph, decision gates,
a budget, and a workspace loopgate owns (a git repository in the store; every accepted change is a commit).
init: scaffolds a goal in DIR (default .): goal.yaml, workspace/, tasks/todo_first_change/ (a task whose
  gate --gate-command runs, with a reference solution), a user gate and a person's release step, and
  notify: targets from --notify-url/--notify-command; runnable at once (goal new, then goal run --oracle
  reaches the gate). On a terminal it asks for what no flag gave; without one it never asks. --dry-run
  prints the files; an existing file is refused unless --force.
new: validates the goal file, copies its workspace folder into <store>/goals/GOAL/workspace, git-initialises
  it and records the goal (with a PostgreSQL store the repository's first commit is packed into the
  database instead).
status: the todos as a tree with status symbols, the gates and whom they wait on, the runtime state, the
  frontier gaps that keep it from closing, the budget used (and what each kind of turn spent: todo,
  monitor, acceptance, replan; a failed poll is settled but charged 0 turns) and the single next action.
  A turn in flight shows as running (from the goal's turn lease: who, since when, on which todo, its last
  phase), or stalled when its lease ran out or its process is gone; running is never a stored status.
next: the interaction contract: what may run now, or who must act, and why.
history: every governed turn in order with its phase receipts (bind, host_execute … scheduler_ack), the runs
  it read, the commit it wrote back, what it spent and the host's ACK; between them every other write to
  the goal (a gate decided, a todo added, closed or deferred, the goal stopped) with its origin (operator:
  a person; runtime: loopgate) and who made a person's write (by NAME; --json: by, null when unknown).
  \`loopgate events GOAL\` prints every stored event of the goal.
stop / resume: the goal's activation (a stopped goal is paused: nothing runs automatically).
accept: runs the acceptance gates fresh on the workspace's current revision and records each receipt.
close: records the structured no_followup intent closure needs; the goal is closed only when every
  frontier item is proved as well (goal status says which are not). --outcome says how it ends: achieved
  (default: every acceptance item proved), or an honest negative, never "done": blocked --blocker TODO (a
  todo whose blocker was accepted with evidence: todo accept-blocker), rolled_back --revision REV (a
  revision goal revert compensated), not_achieved (every acceptance item ran on the current revision and
  not all passed: the coverage is the evidence).
acceptance: the acceptance items and where each stands (show); add a task file (its path relative to the
  current folder; --gates keeps only those gates; the id is --id, else the path relative to the goal file's
  folder) or retire an item by its id. Each change bumps the acceptance version: every vision checkpoint
  read against the old one is stale, a replan obligation until the route is re-read (vision unchanged|patch).
vision: the agent's route and the replan obligations it owes (show); an operator's answer to one, with a real
  delta: record (the first route: a goal closes only with its route on record, read against the current
  acceptance), patch (the new route, together with NEW_TODO), unchanged (the route holds: the reason), close
  (the stage is done; NEW_TODO is its successor), retire (the route ends; nobody follows it on), supersede
  (another agent's route replaces it: --by AGENT, with --route when that agent has none). A patch without a
  todo, or a close without one, is refused.
revert: rolls an accepted change (a revision a turn or todo wrote back) back as a compensation: a revert
  commit on the current revision (trailer Loopgate-Compensation: GOAL/REVISION), the successor NEW_TODO and
  the change_compensated receipt in one append; history is never rewritten. Under the goal's turn lease;
  refused while a turn is unsettled, for a revision that is no accepted change, a second time, or when the
  revert does not apply on the current revision. A revert interrupted after its commit is finished by
  running it again (the commit is found by its trailer and reused).
tick: one governed turn under the goal's turn lease (a second tick answers busy: "turn in
  progress by … until …"): binds goal/agent/turn to the selected advancement todo and the revision, then
  settles it, each phase a goal-stream fact: host_execute (the todo's task on a copy of that revision,
  the goal's builder unless one is given), typed_result, validation (a receipt only for a SUCCESS),
  durable_writeback (one git commit of the deliverables the gates saw, trailer Loopgate-Turn:
  goal/agent/turn, compare-and-swap on the revision, the todo's completion in the same append),
  quota_spend (once per turn), scheduler_apply and its ACK. A turn a crash left unsettled is resumed by
  readback (the run by its id, the commit by its trailer); an ambiguous or failed lookup fails closed
  (blocked_health). Prints each phase, the result and the next wake-up (--json: the outcome on stdout,
  the phases on stderr). The goal waiting (no advancement todo selected, or a person to decide first), a
  due monitor's poll is the turn (its argv run from the goal file's folder); a replan obligation is a
  planner turn, an exhausted frontier an acceptance turn (docs/guides/goals.md#monitors-and-replan). The planner's
  model: --planner-model SPEC, else the goal file's planner: { model }, else --model, else the builder's
  model; without one a replan obligation waits for an operator (idle, and it says so).
run: governed turns one at a time until the goal is terminal, stopped, waiting on a person or throttled,
  sleeping between turns as the wake-up says (backoff derived from the recorded turns); prints each phase,
  a line per turn and who must act (--json: a JSON line per turn and a summary). --once: one turn;
  --until-idle: stop where it would sleep. The builder flags are todo run's (default: the goal's builder);
  --planner-model as for tick.
submit: queues the goal's next turn (a job of kind "goal turn") in a PostgreSQL store's run queue and prints
  the job id. A loopgate worker that claims it runs one tick under the goal's turn lease (one turn at a time
  per goal across workers; a worker killed mid-turn is taken over once its lease expires, the turn resumed
  by readback) and queues the next turn at the scheduler's wake-up (that enqueue is the turn's ACK), until
  the goal is terminal, stopped or waiting on a person; a person's write to the goal (gate approve, todo add,
  goal resume, …) then queues its next turn again. One turn per goal
  is queued at a time. The run flags given are carried to every turn's run.
Store, for every goal command: --store DIR|postgres://…, else the nearest .loopgate/ walking up from the
  current folder, else $LOOPGATE_STORE, else ./.loopgate/. With a
  PostgreSQL store the goal's workspace lives in the database (its git objects, packed), and each host keeps
  its run folders and a cache of the repository in the local folder (.loopgate/, or a worker's --work-dir).
  Every next: line a goal command prints runs as printed when pasted in the same folder (the same --store).
Paths in --json (the workspace, task files, acceptance refs, the goal file) are relative to the goal
  file's folder; --absolute prints them absolute.
${ACTOR_HELP}`,
    flags: [
      "store",
      "json",
      "absolute",
      "expect-revision",
      "as",
      "note",
      "rationale",
      "outcome",
      "blocker",
      "revision",
      "gates",
      "id",
      "by",
      "unsafe-no-sandbox",
      "route",
      "patch",
      "reason",
      ...TODO_SPEC_FLAGS,
      "agent-id",
      "once",
      "until-idle",
      "planner-model",
      "name",
      "objective",
      "workspace",
      "gate-command",
      "notify-url",
      "notify-command",
      "dry-run",
      "force",
      ...RUN_FLAGS,
    ],
    maxArgs: 4,
    exit: "Exit codes: 0 done, 1 refused by a goal rule (the message names it) or acceptance not proved, 2 bad input, 3 needs_rebase (another write came first; nothing was written). tick: 0 advanced or terminal, 1 waiting on a person, throttled, busy, idle or stopped, 2 failed (typed: receipt_missing, needs_rebase, blocked_health, …). run: 0 terminal (--once: also when its turn advanced), 1 waiting on a person, stopped, idle or throttled, 2 failure (blocked health, a settlement failure, a todo that keeps failing), 130 interrupted between turns.",
    run: async (io, args, flags) => {
      const s = sub("goal", args, [
        "init",
        "new",
        "status",
        "next",
        "stop",
        "resume",
        "accept",
        "close",
        "acceptance",
        "vision",
        "revert",
        "tick",
        "run",
        "submit",
        "history",
      ] as const);
      if (s === "acceptance") {
        const v = sub("goal acceptance", args.slice(1), ["show", "add", "retire"] as const);
        const goal = word(`goal acceptance ${v}`, args, 2, "GOAL");
        const item =
          v === "show"
            ? undefined
            : word(`goal acceptance ${v}`, args, 3, v === "add" ? "TASK_FILE" : "ITEM");
        if (args.length > (v === "show" ? 3 : 4))
          throw new LoopgateError(
            "bad_input",
            `loopgate goal acceptance ${v}: unexpected argument ${JSON.stringify(args[v === "show" ? 3 : 4])}`,
          );
        return (await import("./goal-acceptance.js")).goalAcceptanceCommand(io, v, goal, item, f(flags));
      }
      if (s === "vision") {
        const v = sub("goal vision", args.slice(1), [
          "show",
          "record",
          "patch",
          "unchanged",
          "close",
          "retire",
          "supersede",
        ] as const);
        const goal = word(`goal vision ${v}`, args, 2, "GOAL");
        const todo = v === "close" ? word("goal vision close", args, 3, "NEW_TODO") : args[3];
        if ((v === "show" || v === "retire" || v === "supersede") && args[3] !== undefined)
          throw new LoopgateError(
            "bad_input",
            `loopgate goal vision show: unexpected argument ${JSON.stringify(args[3])}`,
          );
        return (await import("./goal-vision.js")).goalVisionCommand(io, v, goal, todo, f(flags));
      }
      if (s === "revert") {
        if (args.length > 4)
          throw new LoopgateError(
            "bad_input",
            `loopgate goal revert: unexpected argument ${JSON.stringify(args[4])}`,
          );
        return (await import("./goal-revert.js")).goalRevertCommand(
          io,
          word("goal revert", args, 1, "GOAL"),
          word("goal revert", args, 2, "REVISION"),
          word("goal revert", args, 3, "NEW_TODO"),
          f(flags),
        );
      }
      if (s === "run")
        return (await import("./goal-run.js")).goalRunCommand(
          io,
          word("goal run", args, 1, "GOAL"),
          f(flags),
        );
      if (s === "submit")
        return (await import("./goal-submit.js")).goalSubmitCommand(
          io,
          word("goal submit", args, 1, "GOAL"),
          f(flags),
        );
      if (args.length > 2)
        throw new LoopgateError(
          "bad_input",
          `loopgate goal ${s}: unexpected argument ${JSON.stringify(args[2])}`,
        );
      if (s === "init") return (await import("./goal-init.js")).goalInitCommand(io, args[1], f(flags));
      const m = await import("./goal.js");
      if (s === "new") return m.goalNewCommand(io, word("goal new", args, 1, "GOAL_FILE"), f(flags));
      const goal = word(`goal ${s}`, args, 1, "GOAL");
      if (s === "status") return m.goalStatusCommand(io, goal, f(flags));
      if (s === "next") return m.goalNextCommand(io, goal, f(flags));
      if (s === "history") return (await import("./goal-history.js")).goalHistoryCommand(io, goal, f(flags));
      if (s === "close") return m.goalCloseCommand(io, goal, f(flags));
      if (s === "tick") return (await import("./goal-tick.js")).goalTickCommand(io, goal, f(flags));
      if (s === "accept") return (await import("./goal-accept.js")).goalAcceptCommand(io, goal, f(flags));
      return m.goalActivationCommand(io, goal, s, f(flags));
    },
  },
  {
    name: "scheduler",
    usage: [
      "loopgate scheduler [--store DIR] [--once] [--json] [--model SPEC | --builder CMD | --oracle | --noop] [--planner-model SPEC] [options]",
    ],
    about: `Hosts every active goal of a store in one process, one governed turn at a time per goal: the goal due
earliest is ticked next, each goal keeps its own wake-up (backoff derived from its recorded turns), and
the goal list is read again every pass. A goal waiting on a person or stopped is looked at again every
minute; a terminal one is dropped. --once: tick every due goal once and exit. SIGINT/SIGTERM: the turn
in progress settles, then it stops. --planner-model SPEC: the model of every goal's planner turns
(as for goal tick).`,
    flags: ["store", "json", "once", "planner-model", ...RUN_FLAGS],
    maxArgs: 0,
    exit: "Exit codes: 0 stopped (or --once with every tick settled), 2 --once and a tick failed in a way that needs repair, or bad input.",
    run: async (io, _args, flags) => (await import("./goal-run.js")).schedulerCommand(io, f(flags)),
  },
  {
    name: "goals",
    usage: ["loopgate goals [--store DIR] [--json]"],
    about: "Every goal in the store, one line each: activation, runtime state, todos open/done, revision.",
    flags: ["store", "json"],
    maxArgs: 0,
    exit: "Exit codes: 0 listed, 2 bad input.",
    run: async (io, _args, flags) => (await import("./goal.js")).goalsCommand(io, f(flags)),
  },
  ...TODO_GATE_COMMANDS,
];
