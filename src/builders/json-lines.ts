/**
 * Splits an agent's streamed output into JSON objects, one a line: a partial line waits for its end; a
 * line that is not a JSON object (stderr interleaved) is skipped, and so is one over `maxLine`
 * characters (a huge tool result is never what a caller looks for).
 */
export class JsonLines {
  private buffer = "";
  constructor(private readonly maxLine = 200_000) {}

  /** Feeds a chunk; calls `each` for every whole line that is a JSON object. */
  push(chunk: string, each: (o: Record<string, unknown>) => void): void {
    this.buffer += chunk;
    let i = this.buffer.indexOf("\n");
    while (i >= 0) {
      const line = this.buffer.slice(0, i).trim();
      this.buffer = this.buffer.slice(i + 1);
      i = this.buffer.indexOf("\n");
      if (!line.startsWith("{") || line.length > this.maxLine) continue;
      let o: unknown;
      try {
        o = JSON.parse(line);
      } catch {
        continue;
      }
      if (o && typeof o === "object" && !Array.isArray(o)) each(o as Record<string, unknown>);
    }
    if (this.buffer.length > 4 * this.maxLine) this.buffer = "";
  }
}
