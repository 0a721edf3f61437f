import { javascriptTwins } from "./javascript.js";
import { pythonTwins } from "./python-twins.js";
import type { TwinLanguage } from "./twin.js";

/** Every language whose held-out test files loopgate gives mutated twins. */
export const TWIN_LANGUAGES: readonly TwinLanguage[] = [pythonTwins, javascriptTwins];
