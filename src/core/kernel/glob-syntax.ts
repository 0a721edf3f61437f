/**
 * A strict check of the globs a task file protects or delivers with. picomatch compiles almost any
 * string (`tests/[**` becomes a pattern that matches nothing the author meant), so a typo would
 * silently protect nothing; here every bracket, brace and parenthesis must balance, `**` must be a
 * whole segment, and no segment may be empty. Escaped characters (`\[`) are literal.
 */

/** What is wrong with `glob`, in words for the task file's error, or null when it is well formed. */
export function globProblem(glob: string): string | null {
  if (glob.trim() !== glob) return "it starts or ends with whitespace";
  const body = glob.replace(/^(\.\/)+/, "").replace(/\/+$/, "");
  const offset = glob.length - glob.replace(/^(\.\/)+/, "").length;
  const column = (i: number) => `column ${i + 1 + offset}`;
  if (body === "") return "it names no path";
  if (body.includes("//")) return "it has an empty path segment (//)";
  if (body.split("/").includes(".")) return 'it has a "." path segment';
  const stack: { ch: string; at: number }[] = [];
  const close: Record<string, string> = { "[": "]", "{": "}", "(": ")" };
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    const col = column(i);
    if (ch === "\\") {
      if (i === body.length - 1) return "it ends with a lone \\ (an escape of nothing)";
      i++;
      continue;
    }
    const top = stack[stack.length - 1];
    if (top?.ch === "[") {
      // Inside a class only `]` matters; a `]` first in the class (after an optional ! or ^) is literal.
      const first = i === top.at + 1 || (i === top.at + 2 && "!^".includes(body[top.at + 1] ?? ""));
      if (ch === "]" && !first) stack.pop();
      else if (ch === "/")
        return `the [ at ${column(top.at)} spans a /: a character class matches one character of a name`;
      continue;
    }
    if (ch === "[" || ch === "{" || ch === "(") {
      stack.push({ ch, at: i });
    } else if (ch === "]" || ch === "}" || ch === ")") {
      if (top === undefined || close[top.ch] !== ch)
        return `the ${ch} at ${col} closes nothing${top ? ` (the ${top.ch} at ${column(top.at)} is still open)` : ""}; escape it as \\${ch} if it is part of a name`;
      if (ch === "}" && i === top.at + 1) return `the {} at ${column(top.at)} is empty`;
      stack.pop();
    }
    if (ch === "*" && body[i + 1] === "*") {
      const before = i === 0 || body[i - 1] === "/";
      let j = i;
      while (body[j] === "*") j++;
      const after = j === body.length || body[j] === "/";
      if (!before || !after || j - i > 2)
        return `the ${body.slice(i, j)} at ${col} is not a whole path segment: write ** alone between slashes (tests/**, src/**/*.js)`;
      i = j - 1;
    }
  }
  const open = stack[stack.length - 1];
  if (open) return `the ${open.ch} at ${column(open.at)} is never closed (expected ${close[open.ch]})`;
  return null;
}
