import type { AllowedImport } from "./import-rules.js";

/**
 * Known import-rule violations that other work in flight removes. Each entry names who removes it.
 * Empty; an entry whose import is gone fails the
 * check, so the list can only shrink. Never add to it to make a new violation pass.
 */
export const allowedImports: readonly AllowedImport[] = [];
