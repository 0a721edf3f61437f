import { spawnSync } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import { Socket } from "node:net";

/** Reports larger than this are not a runner's honest output. */
const REPORT_LIMIT = 32 * 1024 * 1024;

/**
 * A named pipe a runner's parent process writes its per-test report into. It lives in the gate run's
 * private folder, which the sandbox mounts read-only: a FIFO can be opened for writing on a read-only
 * mount, but nothing there can be created, renamed or replaced, so no forged report file can take its
 * place. loopgate holds both ends open from the start (so neither it nor the writer ever blocks on open,
 * and a writer that comes and goes does not end the stream) and reads as the run goes, so a large report
 * never fills the pipe.
 */
export class ReportPipe {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private overflow = false;
  private readonly ended: Promise<void>;
  private writer: number | null;
  private readonly socket: Socket;

  private constructor(readonly path: string) {
    const made = spawnSync("mkfifo", ["-m", "0622", path], { encoding: "utf8" });
    if (made.status !== 0)
      throw new Error(
        `cannot make the report pipe ${path}: ${made.stderr || made.error?.message || "mkfifo failed"}`,
      );
    const reader = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    this.writer = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    this.socket = new Socket({ fd: reader, readable: true, writable: false });
    this.socket.on("data", (chunk: Buffer) => {
      const room = REPORT_LIMIT - this.size;
      if (chunk.length > room) this.overflow = true;
      if (room <= 0) return;
      const part = chunk.subarray(0, room);
      this.chunks.push(part);
      this.size += part.length;
    });
    this.ended = new Promise((resolve) => {
      this.socket.once("end", resolve);
      this.socket.once("close", resolve);
      this.socket.once("error", () => resolve());
    });
  }

  /** Makes the pipe at `path` (which must not exist) and starts reading it. */
  static open(path: string): ReportPipe {
    return new ReportPipe(path);
  }

  /**
   * What was written, once the run is over: loopgate's own writing end is closed, so the stream ends when
   * every writer in the sandbox is gone (the sandbox is torn down by then). Null when the report was larger
   * than any honest runner writes.
   */
  async finish(): Promise<string | null> {
    this.closeWriter();
    await Promise.race([this.ended, new Promise((r) => setTimeout(r, 2000).unref())]);
    this.socket.destroy();
    return this.overflow ? null : Buffer.concat(this.chunks).toString("utf8");
  }

  /** Closes both ends (after finish, or when the run never started). */
  dispose(): void {
    this.closeWriter();
    this.socket.destroy();
  }

  private closeWriter(): void {
    if (this.writer === null) return;
    closeSync(this.writer);
    this.writer = null;
  }
}
