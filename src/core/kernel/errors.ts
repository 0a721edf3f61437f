/** Base class of every error loopgate raises on purpose; `code` is stable, the message is for people. */
export class LoopgateError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Bad input from a user: a task file, a CLI flag, a store URL. Maps to exit code 2. */
export class InputError extends LoopgateError {
  readonly where: string | undefined;
  constructor(message: string, where?: string, options?: { cause?: unknown }) {
    super("bad_input", where ? `${where}: ${message}` : message, options);
    this.where = where;
  }
}

/** An append whose expected revision did not match the stream's actual revision. */
export class ConcurrencyError extends LoopgateError {
  readonly stream: string;
  readonly expected: string;
  readonly actual: number;
  constructor(stream: string, expected: string, actual: number) {
    super(
      "concurrency_conflict",
      `stream ${stream}: expected revision ${expected}, actual revision ${actual}; re-read the stream and decide again`,
    );
    this.stream = stream;
    this.expected = expected;
    this.actual = actual;
  }
}

/** A command a decider refuses in the current state (a programming or ordering error, not user input). */
export class DomainError extends LoopgateError {
  constructor(message: string) {
    super("domain_rule", message);
  }
}

/** An event or row that fails its schema: the log is never trusted blindly, not even on read. */
export class CorruptEventError extends LoopgateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("corrupt_event", message, options);
  }
}

/** The harness cannot do its job (sandbox missing, workspace gone); ends a run in TOOL_FAILURE. */
export class InfrastructureError extends LoopgateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("infrastructure", message, options);
  }
}

/** A run id that the store does not know. */
export class RunNotFoundError extends LoopgateError {
  constructor(runId: string, storePath: string) {
    super("run_not_found", `no run ${runId} in ${storePath}; \`loopgate runs\` lists the runs it holds`);
  }
}

/** Formats a zod issue path as `a.b[2].c`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out || "(root)";
}
