import type { z } from "zod";
import type { Origin } from "../kernel/event-parts.js";

/**
 * One area's event declarations: each type once, with the origins it may carry and its data schema.
 * The first origin listed is the one the journal stamps when a caller asks for one not listed.
 */
export type EventArea = Record<string, { origin: readonly [Origin, ...Origin[]]; schema: z.ZodObject }>;
