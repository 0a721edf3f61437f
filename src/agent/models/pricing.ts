/** USD per million tokens, input and output. */
export interface Pricing {
  inputPerMTok: number;
  outputPerMTok: number;
}

/**
 * APPROXIMATE list prices (USD per million tokens, no caching or batch discounts) for a few
 * well-known model families, as published by the providers in 2025. They drift: use them for
 * budgets and audits, not invoices. Matched by the longest prefix of the model name, so
 * `claude-sonnet-4-5-20250929` is priced as `claude-sonnet-4-5`.
 */
const APPROXIMATE_PRICES: Readonly<Record<string, Pricing>> = {
  "claude-sonnet-4-5": { inputPerMTok: 3, outputPerMTok: 15 },
  "claude-sonnet-4": { inputPerMTok: 3, outputPerMTok: 15 },
  "claude-opus-4-5": { inputPerMTok: 5, outputPerMTok: 25 },
  "claude-opus-4": { inputPerMTok: 15, outputPerMTok: 75 },
  "claude-haiku-4-5": { inputPerMTok: 1, outputPerMTok: 5 },
  "gpt-4.1": { inputPerMTok: 2, outputPerMTok: 8 },
  "gpt-4.1-mini": { inputPerMTok: 0.4, outputPerMTok: 1.6 },
  "gpt-4.1-nano": { inputPerMTok: 0.1, outputPerMTok: 0.4 },
  "gpt-4o": { inputPerMTok: 2.5, outputPerMTok: 10 },
  "gpt-4o-mini": { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  "gpt-5": { inputPerMTok: 1.25, outputPerMTok: 10 },
  "gpt-5-mini": { inputPerMTok: 0.25, outputPerMTok: 2 },
  "gpt-5-nano": { inputPerMTok: 0.05, outputPerMTok: 0.4 },
};

/** The approximate built-in price of a model name (provider prefix allowed), or null when unknown. */
export function approximatePrice(modelName: string): Pricing | null {
  const name = modelName.includes(":") ? modelName.slice(modelName.indexOf(":") + 1) : modelName;
  let best: string | null = null;
  for (const prefix of Object.keys(APPROXIMATE_PRICES)) {
    const boundary = name === prefix || name.startsWith(`${prefix}-`) || name.startsWith(`${prefix}.`);
    if (boundary && (best === null || prefix.length > best.length)) best = prefix;
  }
  return best === null ? null : (APPROXIMATE_PRICES[best] ?? null);
}

/** Cost in USD of a request, or null when the price is unknown. */
export function costOf(pricing: Pricing | null, inputTokens: number, outputTokens: number): number | null {
  if (pricing === null) return null;
  return (inputTokens * pricing.inputPerMTok + outputTokens * pricing.outputPerMTok) / 1_000_000;
}
