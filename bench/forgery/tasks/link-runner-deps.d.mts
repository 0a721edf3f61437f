/**
 * Makes `dest` a node_modules holding `runner` and every package it needs, linked from this repository's
 * own node_modules, with the runner's bin links in .bin. Returns how many packages.
 */
export declare function linkRunnerModules(runner: string, dest: string): number;
