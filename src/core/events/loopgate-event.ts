import { z } from "zod";
import { CorruptEventError } from "../kernel/errors.js";
import type { EventArea } from "../kernel/event-area.js";
import { Actor, Origin, Timestamp } from "../kernel/event-parts.js";
import { agentEvents } from "./agent-events.js";
import { agentRuntimeEvents } from "./agent-runtime-events.js";
import { goalEvents } from "./goal/goal-events.js";
import { hookSessionEvents } from "./hook-session-events.js";
import { judgeEvents } from "./judge-events.js";
import { runEvents } from "./run-events.js";
import { selfCheckEvents } from "./self-check-events.js";
import { todoEvents } from "./todo-events.js";

export type { EventArea } from "../kernel/event-area.js";
export {
  ACTOR_MAX,
  Actor,
  BuilderDescriptor,
  Finding,
  FindingSeverity,
  GateDeclaration,
  GateError,
  LeaseOwner,
  ModelFailureKind,
  Origin,
  PathList,
  RunStatus,
} from "../kernel/event-parts.js";
export { GateTamper } from "../task/gate-tamper.js";

// Every event type is declared once, in its area's module under events/: its origins and its schema.
// Everything below (the type list, the union, the agent's types, the origin rule) is derived from them.

/** The areas, by name. A type declared in two areas is a bug: test/core/events/events-declared.unit.test.ts. */
export const eventAreas = {
  run: runEvents,
  agent: agentEvents,
  "self-check": selfCheckEvents,
  todo: todoEvents,
  judge: judgeEvents,
  "agent-runtime": agentRuntimeEvents,
  "hook-session": hookSessionEvents,
  goal: goalEvents,
} as const satisfies Record<string, EventArea>;

const declarations = {
  ...runEvents,
  ...agentEvents,
  ...selfCheckEvents,
  ...todoEvents,
  ...judgeEvents,
  ...agentRuntimeEvents,
  ...hookSessionEvents,
  ...goalEvents,
} as const;
type Declarations = typeof declarations;

/** The event types, past-tense noun_verb. */
export type EventType = keyof Declarations;
export const eventTypes = Object.keys(declarations) as EventType[];

/** The agent loop's event types (its own, the self-check's and the todo tool's): recorded inside an attempt. */
export type AgentEventType =
  | keyof typeof agentEvents
  | keyof typeof selfCheckEvents
  | keyof typeof todoEvents;
export const agentEventTypes: readonly AgentEventType[] = [
  ...(Object.keys(agentEvents) as (keyof typeof agentEvents)[]),
  ...(Object.keys(selfCheckEvents) as (keyof typeof selfCheckEvents)[]),
  ...(Object.keys(todoEvents) as (keyof typeof todoEvents)[]),
];

/** Evidence of these origins may complete a goal, a step check or a task; `model` and `continuation` never. */
const TRUSTED: ReadonlySet<Origin> = new Set<Origin>(["runtime", "gate", "judge", "operator"]);

/** Whether evidence of this origin may count (docs/architecture.md, "Layers of trust"). */
export function isTrusted(origin: Origin): boolean {
  return TRUSTED.has(origin);
}

/** The origins an event of this type may carry, as declared with it. */
export function originOf<T extends EventType>(type: T): Declarations[T]["origin"] {
  return declarations[type].origin;
}

/**
 * The origin an appended event is stamped with: the caller's when the type allows it, otherwise the
 * type's declared one. A caller can never make a gate result of the model, or a model reply trusted.
 */
export function stampOrigin(type: EventType, requested: Origin): Origin {
  const allowed: readonly Origin[] = declarations[type].origin;
  return allowed.includes(requested) ? requested : (allowed[0] as Origin);
}

/**
 * What is said about a write (not about the fact): when, by which origin, and for a person's write
 * (origin operator) who made it, `by`, when the writer said. Absent `by` is unknown (every log written
 * before it, or a write whose person was not named); a runtime write never carries one.
 */
export const EventMeta = z
  .object({
    at: Timestamp,
    origin: Origin,
    by: Actor.optional(),
  })
  .refine((m) => m.by === undefined || m.origin === "operator", {
    message: "only a person's write (origin operator) names who made it",
    path: ["by"],
  });
export type EventMeta = z.infer<typeof EventMeta>;

type Variant<T extends EventType> = z.ZodObject<{
  id: z.ZodString;
  type: z.ZodLiteral<T>;
  data: Declarations[T]["schema"];
  meta: typeof EventMeta;
}>;
type AnyVariant = { [T in EventType]: Variant<T> }[EventType];

const variants = new Map<EventType, AnyVariant>();

/** The schema of a whole event of one type, built the first time that type is met. */
function variant<T extends EventType>(type: T): Variant<T> {
  let v = variants.get(type);
  if (v === undefined) {
    v = z.object({
      id: z.string().min(1).max(128),
      type: z.literal(type),
      data: declarations[type].schema,
      meta: EventMeta,
    }) as AnyVariant;
    variants.set(type, v);
  }
  return v as Variant<T>;
}

let union: z.ZodDiscriminatedUnion<AnyVariant[], "type"> | undefined;
/** Every type's variant in one discriminated union: built only for an input of no known type. */
function allVariants(): z.ZodDiscriminatedUnion<AnyVariant[], "type"> {
  union ??= z.discriminatedUnion("type", eventTypes.map(variant) as unknown as [AnyVariant, ...AnyVariant[]]);
  return union;
}

/** The schema to validate `input` with: its type's variant, or the whole union (whose error says why none fits). */
function schemaFor(input: unknown): z.ZodType {
  const type = typeof input === "object" && input !== null ? (input as { type?: unknown }).type : undefined;
  return typeof type === "string" && Object.hasOwn(declarations, type)
    ? variant(type as EventType)
    : allVariants();
}

/** What validates a whole event: `LoopgateEvent`, or a store's own schema (any zod schema fits). */
export interface EventSchema<T = LoopgateEvent> {
  parse(input: unknown): T;
  safeParse(input: unknown): z.ZodSafeParseResult<T>;
}

/**
 * One event as written to the log: `{ id, type, data, meta }`, validated on write and on read. It answers
 * as the discriminated union of every type's variant does, issue for issue: an input of a known type is
 * validated by that type's variant alone (the union hands it to that variant), anything else by the union.
 */
export const LoopgateEvent: EventSchema & { readonly options: readonly AnyVariant[] } = {
  parse: (input) => schemaFor(input).parse(input) as LoopgateEvent,
  safeParse: (input) => schemaFor(input).safeParse(input) as z.ZodSafeParseResult<LoopgateEvent>,
  get options() {
    return allVariants().options;
  },
};
export type LoopgateEvent = { [T in EventType]: z.infer<Variant<T>> }[EventType];
export type EventOf<T extends EventType> = Extract<LoopgateEvent, { type: T }>;
export type EventData<T extends EventType> = EventOf<T>["data"];

/** An event as a decider emits it: the caller adds `id` and `meta`. */
export type EventBody = LoopgateEvent extends infer E
  ? E extends LoopgateEvent
    ? Pick<E, "type" | "data">
    : never
  : never;

/** What an external agent's runtime reports through loopgate's hooks (origin agent_runtime, hook failures runtime). */
export const agentRuntimeEventTypes = Object.keys(agentRuntimeEvents) as (keyof typeof agentRuntimeEvents)[];
export type AgentRuntimeEventBody = Extract<EventBody, { type: keyof typeof agentRuntimeEvents }>;

/** An event of the agent loop, as it records it. */
export type AgentEventBody = Extract<EventBody, { type: AgentEventType }>;

/** An event read back from a store, with its position. */
export type RecordedEvent = LoopgateEvent & {
  stream: string;
  revision: number;
  position: number;
};

// One union per stream kind. The log holds four kinds of stream: a run's (`run-…`), a goal's (`goal-…`),
// a task's checks (`task-check-…`) and a hook session's (`claude-session-…`). A fold of one kind takes only
// its kind's events: an event of another kind in its stream is corruption (the store wrote it to the wrong
// stream), never skipped.

/** The types a run's stream holds: the run's own, its attempts' agent loop, judge and agent runtime facts. */
export type RunStreamEventType =
  | Exclude<keyof typeof runEvents, "task_checked">
  | AgentEventType
  | keyof typeof judgeEvents
  | keyof typeof agentRuntimeEvents;

/** The event types of each kind of stream. */
export interface StreamEventTypes {
  run: RunStreamEventType;
  goal: keyof typeof goalEvents;
  "task-check": "task_checked";
  /** A user's own agent session under loopgate's hooks: what its runtime reported, and the bindings and verdicts. */
  "hook-session": keyof typeof hookSessionEvents | keyof typeof agentRuntimeEvents;
}
export type StreamKind = keyof StreamEventTypes;

const streamTypes: { readonly [K in StreamKind]: ReadonlySet<string> } = {
  run: new Set([
    ...Object.keys(runEvents).filter((t) => t !== "task_checked"),
    ...agentEventTypes,
    ...Object.keys(judgeEvents),
    ...Object.keys(agentRuntimeEvents),
  ]),
  goal: new Set(Object.keys(goalEvents)),
  "task-check": new Set(["task_checked"]),
  "hook-session": new Set([...Object.keys(hookSessionEvents), ...Object.keys(agentRuntimeEvents)]),
};

/** An event of a stream of kind `K`, as stored. */
export type StreamEvent<K extends StreamKind> = Extract<LoopgateEvent, { type: StreamEventTypes[K] }>;

/** Whether an event belongs in a stream of this kind. */
export function isStreamEvent<K extends StreamKind, E extends { type: string }>(
  kind: K,
  e: E,
): e is Extract<E, { type: StreamEventTypes[K] }> {
  return streamTypes[kind].has(e.type);
}

/**
 * A stream's events, typed as its kind's; an event of another kind among them is refused with
 * CorruptEventError naming it and where it sits.
 */
export function streamOf<K extends StreamKind, E extends { type: string }>(
  kind: K,
  events: readonly E[],
): Extract<E, { type: StreamEventTypes[K] }>[] {
  events.forEach((e, i) => {
    if (!isStreamEvent(kind, e))
      throw new CorruptEventError(
        `event ${i} of a ${kind} stream is a ${JSON.stringify(e.type)}, which only another kind of stream holds`,
      );
  });
  return events as Extract<E, { type: StreamEventTypes[K] }>[];
}

/** An event of a run's stream, as stored. */
export type RunStreamEvent = StreamEvent<"run">;
/** An event of a run's stream, as a decider emits it. */
export type RunStreamEventBody = Extract<EventBody, { type: RunStreamEventType }>;

/** Whether an event belongs in a run's stream. */
export function isRunStreamEvent<E extends { type: string }>(
  e: E,
): e is Extract<E, { type: RunStreamEventType }> {
  return isStreamEvent("run", e);
}

/** A run stream's events, typed as such (streamOf for runs). */
export function runStreamOf<E extends { type: string }>(
  events: readonly E[],
): Extract<E, { type: RunStreamEventType }>[] {
  return streamOf("run", events);
}
