/**
 * The Python runners loopgate instruments. unittest.ts and pytest.ts hold them; this module keeps the
 * name runners.ts imports them by.
 */
export { pytest } from "./pytest.js";
export { unittest } from "./unittest.js";
