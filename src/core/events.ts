import { z } from "zod";
import { Origin } from "./event-parts.js";
import { agentEvents } from "./events/agent.js";
import { agentRuntimeEvents } from "./events/agent-runtime.js";
import type { EventArea } from "./events/define.js";
import { hookSessionEvents } from "./events/hook-session.js";
import { judgeEvents } from "./events/judge.js";
import { runEvents } from "./events/run.js";
import { selfCheckEvents } from "./events/self-check.js";
import { todoEvents } from "./events/todo.js";
import { goalEvents } from "./goal/goal-events.js";

export {
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
} from "./event-parts.js";
export type { EventArea } from "./events/define.js";
export { GateTamper } from "./gate-tamper.js";

// Every event type is declared once, in its area's module under events/: its origins and its schema.
// Everything below (the type list, the union, the agent's types, the origin rule) is derived from them.

/** The areas, by name. A type declared in two areas is a bug: test/core/events-declared.unit.test.ts. */
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

export const EventMeta = z.object({
  at: z.string().datetime({ offset: true }),
  origin: Origin,
});
export type EventMeta = z.infer<typeof EventMeta>;

type Variant<T extends EventType> = z.ZodObject<{
  id: z.ZodString;
  type: z.ZodLiteral<T>;
  data: Declarations[T]["schema"];
  meta: typeof EventMeta;
}>;
type AnyVariant = { [T in EventType]: Variant<T> }[EventType];

function variant<T extends EventType>(type: T): Variant<T> {
  return z.object({
    id: z.string().min(1).max(128),
    type: z.literal(type),
    data: declarations[type].schema,
    meta: EventMeta,
  }) as Variant<T>;
}

/** One event as written to the log: `{ id, type, data, meta }`, validated on write and on read. */
export const LoopgateEvent = z.discriminatedUnion(
  "type",
  eventTypes.map(variant) as unknown as [AnyVariant, ...AnyVariant[]],
);
export type LoopgateEvent = z.infer<typeof LoopgateEvent>;
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
