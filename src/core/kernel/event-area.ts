import type { z } from "zod";
import type { Origin } from "./event-parts.js";

/**
 * One area's event declarations: each type once, with the origins it may carry and its data schema.
 * The first origin listed is the one the journal stamps when a caller asks for one not listed.
 * In the kernel so every events room can build its areas with it: core/events and the goal's areas in
 * core/events/goal, which sits below it (docs/architecture.md, "Rooms inside the layers").
 */
export type EventArea = Record<string, { origin: readonly [Origin, ...Origin[]]; schema: z.ZodObject }>;
