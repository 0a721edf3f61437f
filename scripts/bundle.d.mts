import type { Plugin } from "esbuild";

/** Refuses a dynamic import() of a Node builtin or an external package (the bundle cannot load one). */
export declare const noDynamicImportOfExternals: Plugin;
/** Bundles dist/cli/main.js into dist/loopgate.cjs under `root`, then writes its code cache. */
export declare function bundleCli(root: string): Promise<void>;
/** True when dist/loopgate.cjs and its code cache are newer than everything they are made from. */
export declare function bundleIsCurrent(root: string): boolean;
