/** The streams a command writes to; injected so tests can capture them. */
export interface CommandIO {
  out(s: string): void;
  err(s: string): void;
  stderr: NodeJS.WriteStream;
}

/** The process's real streams. */
export const processIO: CommandIO = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  stderr: process.stderr,
};
