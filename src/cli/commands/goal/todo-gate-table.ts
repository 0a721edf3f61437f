import { LoopgateError } from "../../../core/kernel/errors.js";
import type { CommandSpec } from "../../flags/command-spec.js";
import { ACTOR_HELP, f, RUN_FLAGS, sub, TODO_SPEC_FLAGS, WRITE_FLAGS, word } from "./goal-table-parts.js";

// A person's writes on a goal's todos and gates: todo, gate. Spread into GOAL_COMMANDS (goal-table.ts).

export const TODO_GATE_COMMANDS: readonly CommandSpec[] = [
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
