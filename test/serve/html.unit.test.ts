import { describe, expect, it } from "vitest";
import { age, clip, esc, html, raw } from "../../src/serve/html.js";

describe("html", () => {
  it("escapes every interpolated value: text from outside never becomes markup", () => {
    const hostile = `<script>alert("x")</script><img src=x onerror='y'>&`;
    const out = html`<p title="${hostile}">${hostile}</p>`.text;
    expect(out).not.toContain("<script>");
    expect(out).not.toContain("<img");
    expect(out).not.toMatch(/title="[^"]*"[^>]*onerror/);
    expect(out).toBe(
      `<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&#39;y&#39;&gt;&amp;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&lt;img src=x onerror=&#39;y&#39;&gt;&amp;</p>`,
    );
  });

  it("keeps loopgate's own markup, joins arrays, and leaves nothing for null, undefined and false", () => {
    const inner = html`<b>${"a<b"}</b>`;
    expect(html`<p>${inner}${["x", raw("<i>y</i>")]}${null}${undefined}${false}${0}</p>`.text).toBe(
      "<p><b>a&lt;b</b>x<i>y</i>0</p>",
    );
  });

  it("drops control characters a builder could hide text with, keeping tabs and newlines", () => {
    expect(esc("a\u0000b\u001b[31mc\td\ne\u007f")).toBe("ab[31mc\td\ne");
  });

  it("clip keeps the head and the tail and says how much it cut", () => {
    const text = "h".repeat(600) + "t".repeat(600);
    const c = clip(text, 100);
    expect(c.startsWith("h".repeat(40))).toBe(true);
    expect(c.endsWith("t".repeat(60))).toBe(true);
    expect(c).toContain("[… 1100 characters not shown …]");
    expect(clip("short", 100)).toBe("short");
  });

  it("age says the largest whole unit", () => {
    const now = new Date("2026-01-02T00:00:00Z");
    expect(age("2026-01-01T23:59:30Z", now)).toBe("30 s");
    expect(age("2026-01-01T23:01:00Z", now)).toBe("59 min");
    expect(age("2026-01-01T23:00:00Z", now)).toBe("1 h");
    expect(age("2026-01-01T20:00:00Z", now)).toBe("4 h");
    expect(age("2025-12-30T00:00:00Z", now)).toBe("3 d");
    expect(age(null, now)).toBe("—");
  });
});
