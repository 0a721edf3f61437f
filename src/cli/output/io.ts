import { escapeControl } from "./excerpt.js";

/** The streams a command writes to; injected so tests can capture them. */
export interface CommandIO {
  out(s: string): void;
  err(s: string): void;
  stderr: NodeJS.WriteStream;
}

/** Streams whose reader went away (`loopgate runs | head -1`): later writes are dropped, quietly. */
const closed = new WeakSet<NodeJS.WriteStream>();

/**
 * A reader that closed the pipe is not an error of the command: the write is dropped and the command
 * ends with its own exit code, no stack trace. Any other stream error stays an error.
 */
function guard(stream: NodeJS.WriteStream): NodeJS.WriteStream {
  stream.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code !== "EPIPE") throw e;
    closed.add(stream);
  });
  return stream;
}

function writer(stream: NodeJS.WriteStream): (s: string) => void {
  return (s) => {
    if (closed.has(stream)) return;
    // Everything the CLI prints passes here: control characters from outside are shown, never obeyed.
    stream.write(escapeControl(s));
  };
}

/** The process's real streams. */
export const processIO: CommandIO = {
  out: writer(guard(process.stdout)),
  err: writer(guard(process.stderr)),
  stderr: process.stderr,
};
