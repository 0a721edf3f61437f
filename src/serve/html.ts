/**
 * HTML built by one escaping rule: every value interpolated into `html` is escaped unless it is already
 * `Html` (made by `html` itself or `raw` for loopgate's own constant markup). Text from outside — a gate log,
 * a claim, a path, a note — can never become markup, and control characters (other than tab and newline)
 * are dropped so nothing a builder printed can hide on the page.
 */

/** Markup that is already safe to put in a page. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: dropping control characters is the point
const CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/g;

/** Text escaped for an element's content or a quoted attribute value. */
export function esc(value: unknown): string {
  return String(value)
    .replace(CONTROL, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** loopgate's own constant markup (never text from outside). */
export const raw = (text: string): Html => new Html(text);

function piece(v: unknown): string {
  if (v === null || v === undefined || v === false) return "";
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return v.map(piece).join("");
  return esc(v);
}

/** A template whose values are escaped (arrays joined; null, undefined and false leave nothing). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += piece(values[i]) + (strings[i + 1] ?? "");
  return new Html(out);
}

/** A bounded excerpt of outside text: its head and tail, the cut said in the middle. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = Math.floor(max * 0.4);
  const tail = max - head;
  return `${text.slice(0, head)}\n[… ${text.length - max} characters not shown …]\n${text.slice(-tail)}`;
}

/** An ISO time as `YYYY-MM-DD HH:MM:SS` (UTC), or a dash. */
export function when(iso: string | null | undefined): string {
  return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}` : "—";
}

/** How long ago `iso` was, in the largest whole unit (`5 s`, `3 min`, `2 h`, `4 d`). */
export function age(iso: string | null | undefined, now: Date): string {
  if (!iso) return "—";
  const s = Math.max(0, Math.round((now.getTime() - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86_400)} d`;
}
