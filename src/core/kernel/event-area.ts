import type { z } from "zod";
import type { Origin } from "./event-parts.js";

/** One event type's declaration: the origins it may carry and its data schema. */
export interface EventDeclaration<
  O extends readonly [Origin, ...Origin[]] = readonly [Origin, ...Origin[]],
  S extends z.ZodObject = z.ZodObject,
> {
  readonly origin: O;
  readonly schema: S;
}

/**
 * One area's event declarations: each type once, with the origins it may carry and its data schema.
 * The first origin listed is the one the journal stamps when a caller asks for one not listed.
 * In the kernel so every events room can build its areas with it: core/events and the goal's areas in
 * core/events/goal, which sits below it (docs/architecture.md, "Rooms inside the layers").
 */
export type EventArea = Record<string, EventDeclaration>;

/**
 * An event type's declaration whose data schema is built the first time it is read, then kept. Every
 * command starts a fresh process, and building all ~100 schemas at load cost more than most commands' own
 * work; a process now builds only those of the types it writes or reads.
 */
export function declareEvent<const O extends readonly [Origin, ...Origin[]], S extends z.ZodObject>(
  origin: O,
  build: () => S,
): EventDeclaration<O, S> {
  let schema: S | undefined;
  return {
    origin,
    get schema() {
      schema ??= build();
      return schema;
    },
  };
}
