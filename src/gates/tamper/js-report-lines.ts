/**
 * The report format of loopgate's own reporters (node --test, Mocha): one JSON object per line, written
 * in one piece when the run ends, closed by an end mark `{"t":"end","n":N}` giving the number of lines
 * before it. The report pipe can be opened by anything in the sandbox, so anything else written into
 * it (before, among or after the reporter's lines) breaks the count or the single final mark: the
 * report is then unreadable, never read with the extra lines in it.
 */
export function readReportLines(text: string | null): Record<string, unknown>[] | null {
  if (text === null) return null;
  const rows: Record<string, unknown>[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const row = JSON.parse(line) as unknown;
      if (typeof row !== "object" || row === null || Array.isArray(row)) return null;
      rows.push(row as Record<string, unknown>);
    } catch {
      return null;
    }
  }
  const end = rows.pop();
  if (end?.t !== "end" || end.n !== rows.length || rows.some((r) => r.t === "end")) return null;
  return rows;
}

/** The JavaScript source of the same end mark, for a reporter that holds its lines in `lines`. */
export const END_MARK_JS = 'JSON.stringify({ t: "end", n: lines.length })';
