const hedges =
  /\b(should (now )?work|i (believe|think)|probably|hopefully|might (work|be)|seems to|likely|i'm fairly sure|in theory)\b/i;
const completion = /\b(done|fixed|complete[d]?|pass(es|ed|ing)?|works|resolved|finished|succe(ss|eded))\b/i;

/** True when a builder's message claims completion while hedging ("should work", "I believe"). Advisory only. */
export function isHedgedClaim(text: string): boolean {
  return hedges.test(text) && completion.test(text);
}
