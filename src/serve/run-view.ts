import { RunNotFoundError } from "../core/kernel/errors.js";
import { runSecrets, secretRedactor } from "../core/kernel/redact.js";
import { RunJournal } from "../runner/stream/run-journal.js";
import type { EventStore } from "../store/kernel/event-store.js";
import type { BoardReaders } from "./board-readers.js";
import { mainElement, pageDocument } from "./layout.js";
import { gateDiff } from "./run-diff.js";
import { runFacts } from "./run-facts.js";
import { type RunPageInput, runMain } from "./run-page.js";

/**
 * Everything one run's page shows, read once: its log (the run's facts and envelope), the change its
 * gates saw, who drives it while unfinished and its queue line. A run that is not in the store is a
 * RunNotFoundError naming the store.
 */
export async function readRunPage(
  store: EventStore,
  localDir: string,
  storeLabel: string,
  runId: string,
  readers: BoardReaders,
): Promise<RunPageInput> {
  const events = await store.readStream(RunJournal.stream(runId));
  if (events.length === 0) throw new RunNotFoundError(runId, storeLabel);
  const facts = runFacts(runId, events);
  const redact = secretRedactor(runSecrets(process.env, []));
  const [diff, queue] = await Promise.all([gateDiff(store, localDir, facts, redact), readers.queue(store)]);
  const job = queue?.byRun.get(runId);
  return {
    facts,
    diff,
    eventLine: readers.eventLine,
    ownerLine: facts.envelope ? null : readers.ownerLine(events),
    queueLine: job ? readers.jobLine(job) : null,
  };
}

/** One run as a standalone HTML file: the run page, its style inlined, no script, nothing fetched. */
export function runReportDocument(input: RunPageInput): string {
  return pageDocument({ title: `run ${input.facts.runId}`, main: runMain(input), standalone: true });
}

/** The run page's <main> alone (a live update). */
export const runMainElement = (input: RunPageInput) => mainElement(runMain(input)).text;
