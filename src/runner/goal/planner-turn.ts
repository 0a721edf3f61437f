import { resolve } from "node:path";
import { type CreateModelOptions, createModel } from "../../agent/models/provider.js";
import type { ModelAdapter, ModelFailure, ModelMessage } from "../../core/agent/model-boundary.js";
import type { AcceptanceItem, GoalEventBody, TodoSpec } from "../../core/events/goal/goal-events.js";
import { decide as decideGoal, type GoalCommand } from "../../core/goal/goal-decider.js";
import { evolve as evolveGoal } from "../../core/goal/goal-state.js";
import type { GoalState } from "../../core/goal/goal-state-shape.js";
import { type Obligation, obligations } from "../../core/goal/obligations.js";
import { answerKind, obligationId, type ReplanAnswer, type VisionStatement } from "../../core/goal/replan.js";
import { InputError } from "../../core/kernel/errors.js";
import { acceptanceItemOf, type TaskRefData, taskRef } from "./goal-spec.js";
import {
  briefing,
  ChangeAcceptance,
  DeclareNoFollowup,
  PatchVision,
  PLANNER_SYSTEM,
  PLANNER_TOOLS,
  type ProposedTodo,
  ProposeTodos,
} from "./planner-tools.js";

/**
 * A planner turn: the goal's model answers one replan obligation with the tools
 * propose_todos, patch_vision and declare_no_followup. The model proposes, loopgate admits: every call
 * is checked by the goal decider on the goal as the turn read it (plus what it already admitted), and a
 * refusal is the tool's result, so the model can correct it. When the model stops, the admitted pieces
 * are one `answer_replan` command, decided once more as a whole (the real-delta rule); a refusal of the
 * whole goes back to the model while it has requests left. No delta is `replan_noop`: recorded, and the
 * obligation stays. Nothing is written here: the caller applies `commands` in one goal append whose
 * operation id is the turn's writeback effect_ref.
 */
export interface PlanReplanArgs {
  /** The goal as the turn read it (the append must expect the revision it was read at). */
  state: GoalState;
  /** The replan obligation the turn is bound to. */
  obligation: Obligation;
  model: ModelAdapter;
  /** The agent whose vision is answered (default: the goal's agent). */
  agentId?: string;
  /** Where relative task paths of proposed todos are resolved (the goal file's folder). */
  taskRoot: string;
  /** The turn's writeback effect_ref: the answer carries it and ends with its `replan_answered` receipt. */
  operationId?: string;
  /** Model requests at most (default 6). */
  maxRequests?: number;
  /** Resolves a proposed todo's task file to its reference (default: load it under taskRoot). */
  resolveTask?: (path: string) => TaskRefData;
  /** Resolves a proposed acceptance item (default: load its task under taskRoot; ids relative to it). */
  resolveAcceptance?: (item: { task: string; gates?: string[]; id?: string }) => AcceptanceItem;
  signal?: AbortSignal;
}

export interface PlanUsage {
  tokens: number;
  cost_usd: number;
  turns: number;
  requests: number;
}

export interface PlanReplanResult {
  /** The admitted commands (one answer_replan), to apply in one append; null when the model failed. */
  commands: GoalCommand[] | null;
  outcome: "delta" | "replan_noop";
  /** The events `commands` decide to on `state` (what the append will hold). */
  events: GoalEventBody[];
  answer: ReplanAnswer;
  /** Every proposal loopgate refused, with the rule, in order. */
  refusals: { tool: string; message: string }[];
  usage: PlanUsage;
  /** The model boundary's failure, when the turn ended on one. */
  failure: ModelFailure | null;
}

const DEFAULT_REQUESTS = 6;

/** The open replan obligation a turn is bound to (TurnWork `replan.obligation_id`), or null when answered. */
export function replanObligation(state: GoalState, id: string): Obligation | null {
  return obligations(state).find((o) => o.kind !== "closeout" && obligationId(o) === id) ?? null;
}

/**
 * The goal's model for its planner turns: `override` (--planner-model), else the goal file's
 * `planner.model`, else `builderOverride` (the builder's --model), else the goal agent's model
 * (`scripted:FILE` in tests).
 */
export function plannerModel(
  state: GoalState,
  override?: string,
  options: CreateModelOptions = {},
  builderOverride?: string,
): ModelAdapter {
  const spec = override ?? state.agent?.planner_model ?? builderOverride ?? state.agent?.model;
  if (!spec)
    throw new InputError(
      `goal ${state.goalId} names no model for its planner turns (its agent is a ${state.agent?.kind ?? "?"}); give one with --planner-model, or planner: { model: SPEC } in the goal file`,
      "planner",
    );
  return createModel(spec, options);
}

export async function planReplan(args: PlanReplanArgs): Promise<PlanReplanResult> {
  const state = args.state;
  const agentId = args.agentId ?? state.agent?.agent_id ?? "agent";
  const obligation = obligationId(args.obligation);
  const resolveTask =
    args.resolveTask ?? ((p: string) => taskRef(resolve(args.taskRoot, p), `propose_todos: ${p}`));
  const resolveAcceptance =
    args.resolveAcceptance ??
    ((a: { task: string; gates?: string[]; id?: string }) =>
      acceptanceItemOf(
        resolve(args.taskRoot, a.task),
        a.gates ?? null,
        a.id,
        args.taskRoot,
        `change_acceptance: ${a.task}`,
      ));
  const draft: Draft = {
    todos: [],
    vision: undefined,
    noFollowup: undefined,
    acceptance: undefined,
    ...(args.operationId ? { operationId: args.operationId } : {}),
  };
  const refusals: PlanReplanResult["refusals"] = [];
  const usage: PlanUsage = { tokens: 0, cost_usd: 0, turns: 1, requests: 0 };
  const messages: ModelMessage[] = [
    { role: "user", content: briefing(state, args.obligation), origin: "runtime" },
  ];
  const max = args.maxRequests ?? DEFAULT_REQUESTS;
  let failure: ModelFailure | null = null;
  let final: { answer: ReplanAnswer; events: GoalEventBody[] } | null = null;
  while (usage.requests < max) {
    const r = await args.model.generate({
      system: PLANNER_SYSTEM,
      messages,
      tools: PLANNER_TOOLS,
      ...(args.signal ? { signal: args.signal } : {}),
    });
    usage.requests += 1;
    if (!r.ok) {
      failure = r.error;
      break;
    }
    usage.tokens += r.usage.inputTokens + r.usage.outputTokens;
    usage.cost_usd += r.usage.costUsd ?? 0;
    messages.push({ role: "assistant", text: r.text, toolCalls: r.toolCalls });
    for (const call of r.toolCalls) {
      const res = admit(
        call.name,
        call.args,
        state,
        agentId,
        obligation,
        draft,
        resolveTask,
        resolveAcceptance,
      );
      if (!res.ok) refusals.push({ tool: call.name, message: res.message });
      messages.push({
        role: "tool",
        callId: call.id,
        name: call.name,
        content: res.ok ? `admitted: ${res.message}` : `refused: ${res.message}`,
        isError: !res.ok,
      });
    }
    if (r.toolCalls.length > 0) continue;
    // The model stopped: the whole answer is decided once more (the real-delta rule).
    const answer = answerOf(draft, agentId, obligation, r.text);
    const whole = tryDecide(state, answer);
    if (whole.ok) {
      final = { answer, events: whole.events };
      break;
    }
    refusals.push({ tool: "answer", message: whole.message });
    messages.push({
      role: "user",
      origin: "runtime",
      content: `loopgate refused the answer as a whole: ${whole.message}. Fix it with the tools, or stop without a delta (replan_noop: the obligation stays open).`,
    });
  }
  if (failure && !final) {
    const answer = answerOf(
      { todos: [], vision: undefined, noFollowup: undefined, acceptance: undefined },
      agentId,
      obligation,
      "",
    );
    return { commands: null, outcome: "replan_noop", events: [], answer, refusals, usage, failure };
  }
  if (!final) {
    // Out of requests with no admissible answer: what was said is no delta.
    const answer: ReplanAnswer = {
      agent_id: agentId,
      obligation,
      ...(args.operationId ? { operation_id: args.operationId } : {}),
      reason: `no admissible answer in ${max} model requests${refusals.length ? `; last refusal: ${refusals[refusals.length - 1]?.message}` : ""}`,
    };
    final = { answer, events: decideGoal({ type: "answer_replan", answer }, state) };
  }
  return {
    commands: [{ type: "answer_replan", answer: final.answer }],
    outcome: answerKind(final.answer),
    events: final.events,
    answer: final.answer,
    refusals,
    usage,
    failure,
  };
}

interface Draft {
  operationId?: string;
  todos: { todo: TodoSpec; successor_of?: string }[];
  vision: ReplanAnswer["vision"];
  noFollowup: { rationale: string } | undefined;
  acceptance: ReplanAnswer["acceptance"];
}

function answerOf(d: Draft, agentId: string, obligation: string, text: string): ReplanAnswer {
  return {
    agent_id: agentId,
    obligation,
    ...(d.operationId ? { operation_id: d.operationId } : {}),
    ...(d.vision ? { vision: d.vision } : {}),
    ...(d.todos.length ? { todos: d.todos } : {}),
    ...(d.noFollowup ? { no_followup: d.noFollowup } : {}),
    ...(d.acceptance ? { acceptance: d.acceptance } : {}),
    ...(text.trim() ? { reason: text.trim().slice(0, 2000) } : {}),
  };
}

function tryDecide(
  state: GoalState,
  answer: ReplanAnswer,
): { ok: true; events: GoalEventBody[] } | { ok: false; message: string } {
  try {
    return { ok: true, events: decideGoal({ type: "answer_replan", answer }, state) };
  } catch (e) {
    return { ok: false, message: (e as Error).message };
  }
}

type Admission = { ok: boolean; message: string };

/** One proposal, checked by the goal decider on the goal plus what this turn already admitted. */
function admit(
  tool: string,
  raw: unknown,
  state: GoalState,
  agentId: string,
  obligation: string,
  draft: Draft,
  resolveTask: (path: string) => TaskRefData,
  resolveAcceptance: (item: { task: string; gates?: string[]; id?: string }) => AcceptanceItem,
): Admission {
  const bad = (m: string): Admission => ({ ok: false, message: m });
  const sofar = (): GoalState => {
    let s = state;
    for (const t of draft.todos)
      s = evolveGoal(s, { type: "todo_added", data: { todo: t.todo, successor_of: t.successor_of ?? null } });
    return s;
  };
  switch (tool) {
    case "propose_todos": {
      const p = ProposeTodos.safeParse(raw);
      if (!p.success)
        return bad(`invalid arguments: ${p.error.issues[0]?.path.join(".")}: ${p.error.issues[0]?.message}`);
      if (draft.noFollowup)
        return bad("rule no_followup_with_new_work: no_followup was already declared in this turn");
      let s = sofar();
      const admitted: Draft["todos"] = [];
      for (const t of p.data.todos) {
        let spec: TodoSpec;
        try {
          spec = specOf(t, resolveTask);
          const events = decideGoal(
            { type: "add_todo", todo: spec, ...(t.successor_of ? { successorOf: t.successor_of } : {}) },
            s,
          );
          for (const e of events) s = evolveGoal(s, e);
        } catch (e) {
          return bad(`${t.id}: ${(e as Error).message} (none of this call's todos were admitted)`);
        }
        admitted.push({ todo: spec, ...(t.successor_of ? { successor_of: t.successor_of } : {}) });
      }
      draft.todos.push(...admitted);
      return { ok: true, message: `${admitted.map((t) => t.todo.id).join(", ")} will be added` };
    }
    case "patch_vision": {
      const p = PatchVision.safeParse(raw);
      if (!p.success)
        return bad(`invalid arguments: ${p.error.issues[0]?.path.join(".")}: ${p.error.issues[0]?.message}`);
      const v = p.data;
      const vision: VisionStatement =
        v.kind === "patch"
          ? { kind: "patch", patch: v.patch ?? "", route: v.route ?? "", reason: v.reason }
          : { kind: v.kind, reason: v.reason };
      if (vision.kind === "patch" && (!vision.route.trim() || !vision.patch.trim()))
        return bad("a patch needs the whole new route and what changed (route, patch)");
      // Checked as part of an answer with the todos admitted so far (and a stand-in successor for close).
      const probe: ReplanAnswer = {
        agent_id: agentId,
        obligation,
        vision,
        todos: draft.todos.length ? draft.todos : [{ todo: STAND_IN }],
        ...(draft.acceptance ? { acceptance: draft.acceptance } : {}),
      };
      const r = tryDecide(state, probe);
      if (!r.ok) return bad(r.message);
      draft.vision = vision;
      const need =
        vision.kind === "unchanged" || draft.todos.length || draft.acceptance
          ? ""
          : " (it needs a todo in this turn, propose_todos, unless it is the agent's first route)";
      return { ok: true, message: `vision ${vision.kind} recorded with the answer${need}` };
    }
    case "declare_no_followup": {
      const p = DeclareNoFollowup.safeParse(raw);
      if (!p.success) return bad(`invalid arguments: ${p.error.issues[0]?.message}`);
      if (draft.todos.length) return bad("rule no_followup_with_new_work: this turn already proposed todos");
      if (state.noFollowup) return bad("the goal already records a no_followup intent");
      draft.noFollowup = { rationale: p.data.rationale };
      return { ok: true, message: "no_followup will be declared" };
    }
    case "change_acceptance": {
      const p = ChangeAcceptance.safeParse(raw);
      if (!p.success)
        return bad(`invalid arguments: ${p.error.issues[0]?.path.join(".")}: ${p.error.issues[0]?.message}`);
      if (!p.data.add?.length && !p.data.retire?.length)
        return bad("name at least one item to add or retire");
      let list = [...(draft.acceptance?.acceptance ?? state.acceptance)];
      const delta = [...(draft.acceptance?.delta ?? [])];
      for (const id of p.data.retire ?? []) {
        if (!list.some((a) => a.id === id))
          return bad(`${id} is not an acceptance item; the items: ${list.map((a) => a.id).join(", ")}`);
        list = list.filter((a) => a.id !== id);
        delta.push({ change: "retired", item_id: id });
      }
      for (const a of p.data.add ?? []) {
        let item: AcceptanceItem;
        try {
          item = resolveAcceptance(a);
        } catch (e) {
          return bad(`${a.task}: ${(e as Error).message.split("\n")[0]}`);
        }
        if (list.some((x) => x.id === item.id)) return bad(`acceptance ${item.id} is already an item`);
        list.push(item);
        delta.push({ change: "added", item_id: item.id });
      }
      if (list.length === 0)
        return bad(
          "rule acceptance_not_empty: the goal would have no acceptance item left; add its replacement",
        );
      draft.acceptance = { acceptance: list, reason: p.data.reason, delta };
      return {
        ok: true,
        message: `acceptance will be ${list.map((a) => a.id).join(", ")}; say how the route reads against it (patch_vision)`,
      };
    }
    default:
      return bad(`unknown tool ${tool}; the tools are ${PLANNER_TOOLS.map((t) => t.name).join(", ")}`);
  }
}

/** A todo no goal can hold yet, to check a vision statement before its todos are proposed. */
const STAND_IN: TodoSpec = { id: "todo_planner_stand_in_probe", class: "user_action", content: "probe" };

function specOf(t: ProposedTodo, resolveTask: (path: string) => TaskRefData): TodoSpec {
  return {
    id: t.id,
    content: t.content,
    class: t.class,
    ...(t.task ? { task: resolveTask(t.task) } : {}),
    ...(t.decision_scope ? { decision_scope: t.decision_scope } : {}),
    ...(t.depends_on?.length ? { depends_on: t.depends_on } : {}),
    ...(t.unblocks_todo_id ? { unblocks_todo_id: t.unblocks_todo_id } : {}),
  };
}
