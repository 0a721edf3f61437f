import { LoopgateError } from "../../../core/kernel/errors.js";
import { need } from "../../flags/command-flags.js";
import type { CommandSpec } from "../../flags/command-spec.js";
import type { FlagName, FlagValues } from "../../flags/flags.js";

// The goal control plane's commands: goal, goals, todo, gate. Spread into COMMANDS.

// biome-ignore lint/suspicious/noExplicitAny: each handler declares the flag shape it reads
const f = (v: FlagValues): any => v;

/** The positional word at `index`, or a bad-input error naming the command and what is missing. */
const word = need;

/** The subcommand in args[0], one of `known`, or a bad-input error listing them. */
function sub<T extends string>(command: string, args: readonly string[], known: readonly T[]): T {
  const s = args[0];
  if (s === undefined || !(known as readonly string[]).includes(s))
    throw new LoopgateError(
      "bad_input",
      `loopgate ${command}: ${s === undefined ? "missing the subcommand" : `unknown subcommand ${JSON.stringify(s)}`}; one of ${known.join(", ")}; see loopgate ${command} --help`,
    );
  return s as T;
}

const TODO_SPEC_FLAGS: readonly FlagName[] = [
  "content",
  "class",
  "task",
  "scope",
  "requires",
  "depends-on",
  "unblocks",
];
const WRITE_FLAGS: readonly FlagName[] = ["store", "json", "expect-revision", "as"];
const RUN_FLAGS: readonly FlagName[] = [
  "model",
  "builder",
  "oracle",
  "noop",
  "max-attempts",
  "builder-env",
  "builder-mount",
  "network",
  "unsafe-no-sandbox",
  "judge-model",
  "max-turns",
  "max-cost",
  "record",
  "base-url",
  "no-step-checks",
  "step-escalation",
  "verbose",
  "follow",
];

/** The actor rule, said once in the help of every command that writes to a goal. */
const ACTOR_HELP = `Who, for every write a person makes (new, stop, resume, close, acceptance, vision, revert, todo, gate):
  --as NAME, else $LOOPGATE_ACTOR, else the OS user's name, else none (unknown); recorded as the write's
  actor (meta.by) and shown by goal history and loopgate events. Printable, at most 64 characters; a bad
  --as or $LOOPGATE_ACTOR is refused (exit 2) and nothing is written.`;

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
  {
    name: "todo",
    usage: [
      "loopgate todo add GOAL TODO --content TEXT --class CLASS [--task FILE] [--scope SCOPE] [--requires SCOPE] [--depends-on TODO] [--expect-revision N]",
      "loopgate todo run GOAL TODO [--model SPEC | --builder CMD | --oracle | --noop] [options]",
      "loopgate todo done GOAL TODO --evidence RUN [--expect-revision N]",
      "loopgate todo block GOAL TODO --reason TEXT [--expect-revision N]",
      "loopgate todo defer GOAL TODO --until COND [--note TEXT] [--expect-revision N]",
      "loopgate todo reopen GOAL TODO [--note TEXT] [--expect-revision N]",
      "loopgate todo supersede GOAL TODO NEW_TODO --content TEXT --class CLASS [--task FILE] [--note TEXT] [--expect-revision N]",
      "loopgate todo close-no-followup GOAL TODO --rationale TEXT [--expect-revision N]",
      "loopgate todo add GOAL TODO --content TEXT --class CLASS … --successor-of TODO [--unblocks TODO]",
      "loopgate todo done GOAL TODO --note TEXT (--evidence-url URL | --evidence-file FILE)… [--by NAME]",
      "loopgate todo accept-blocker GOAL TODO --note TEXT (--evidence-url URL | --evidence-file FILE | --evidence RUN)… [--by NAME]",
      "loopgate todo claim GOAL TODO --by NAME [--expect-revision N]",
      "loopgate todo release GOAL TODO --by NAME [--expect-revision N]",
    ],
    about: `Todos have exactly four statuses: open, done, blocked, deferred; everything else is a relation.
run: runs the todo's task on a copy of the goal workspace's current revision (the goal's builder unless
  one is given), recording the goal and revision in the run. It writes nothing back (goal tick does).
  Refused before any builder starts while a gate covering the todo is undecided, or the goal is
  blocked_health, throttled or stopped.
done: only with evidence: RUN must be a SUCCESS of this todo's task, on the goal's current revision, and
  its change must already be in the goal workspace (rule durable_writeback_before_done): a run that
  changed files is persisted only by a governed turn (loopgate goal tick GOAL).
defer: needs a machine-checkable --until; when it holds the todo is a resume candidate, reopened only by reopen.
supersede: marks TODO done (note: superseded) and adds NEW_TODO linked to it, in one write.
close-no-followup: closes TODO with a recorded rationale (never "done").
done --note … --evidence-url URL | --evidence-file FILE: a person's step ("I published"), on a user_action (or
  a blocker without a task), recorded with its evidence (a link; a file's SHA-256 and size) and --by NAME;
  its gates and dependencies must be in place as for any completion.
accept-blocker: a blocked todo's blocker accepted as its terminal outcome (a verified blocker), with
  evidence: a link, a file, or --evidence RUN (a run of its task on the current revision that did not pass).
  goal close --outcome blocked --blocker TODO cites it.
add --successor-of TODO: the new todo follows TODO up (a cleared blocker's successor: its handoff is
  cleared_with_successor); --unblocks TODO (add, supersede): the new todo holds TODO back until it is done.
claim / release --by NAME: who means to take the todo; a routing signal, never a lock and never "running":
  the goal's own agent selects its claimed todo first and leaves one claimed by another alone.
${ACTOR_HELP} (--by above is about the todo: who takes it or did the step.)`,
    flags: [
      ...WRITE_FLAGS,
      ...TODO_SPEC_FLAGS,
      "evidence",
      "evidence-url",
      "evidence-file",
      "by",
      "successor-of",
      "reason",
      "rationale",
      "until",
      "note",
      ...RUN_FLAGS,
    ],
    maxArgs: 4,
    exit: "Exit codes: 0 done (todo run: the run's exit code: 0 SUCCESS, 1 ESCALATED, 2 TOOL_FAILURE), 1 refused by a goal rule, 2 bad input, 3 needs_rebase.",
    run: async (io, args, flags) => {
      const s = sub("todo", args, [
        "add",
        "run",
        "done",
        "block",
        "defer",
        "reopen",
        "supersede",
        "close-no-followup",
        "claim",
        "release",
        "accept-blocker",
      ] as const);
      const goal = word(`todo ${s}`, args, 1, "GOAL");
      const todo = word(`todo ${s}`, args, 2, "TODO");
      const handoff = await import("./goal-todo-handoff.js");
      if (handoff.isHandoffCommand(s, f(flags))) {
        if (args.length > 3)
          throw new LoopgateError(
            "bad_input",
            `loopgate todo ${s}: unexpected argument ${JSON.stringify(args[3])}`,
          );
        return handoff.todoHandoffCommand(io, s, goal, todo, f(flags));
      }
      if (s === "run") return (await import("./goal-todo-run.js")).todoRunCommand(io, goal, todo, f(flags));
      const successor = s === "supersede" ? word("todo supersede", args, 3, "NEW_TODO") : undefined;
      if (s !== "supersede" && args.length > 3)
        throw new LoopgateError(
          "bad_input",
          `loopgate todo ${s}: unexpected argument ${JSON.stringify(args[3])}`,
        );
      return (await import("./goal-todo.js")).todoCommand(io, s, goal, todo, successor, f(flags));
    },
  },
  {
    name: "gate",
    usage: [
      "loopgate gate approve GOAL GATE [--note TEXT] [--as NAME] [--expect-revision N] [--store DIR] [--json]",
      "loopgate gate reject GOAL GATE [--note TEXT] [--as NAME] [--expect-revision N] [--store DIR] [--json]",
      "loopgate gate cancel GOAL GATE [--note TEXT] [--as NAME] [--expect-revision N] [--store DIR] [--json]",
      "loopgate gate defer GOAL GATE --until COND [--note TEXT] [--as NAME] [--expect-revision N] [--store DIR] [--json]",
    ],
    about: `A person's decision on a user_gate todo. approve consumes only the scope the gate covers; reject and
cancel close it (the work it covered needs a supersede or another route); defer records when to ask again:
once its --until holds the gate is asked again (goal next, goal status) until decided or deferred anew.
${ACTOR_HELP}`,
    flags: [...WRITE_FLAGS, "until", "note"],
    maxArgs: 3,
    exit: "Exit codes: 0 recorded, 1 refused by a goal rule, 2 bad input, 3 needs_rebase.",
    run: async (io, args, flags) => {
      const s = sub("gate", args, ["approve", "reject", "cancel", "defer"] as const);
      const goal = word(`gate ${s}`, args, 1, "GOAL");
      const gate = word(`gate ${s}`, args, 2, "GATE");
      return (await import("./goal-todo.js")).gateCommand(io, s, goal, gate, f(flags));
    },
  },
];
