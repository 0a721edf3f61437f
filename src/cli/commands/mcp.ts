import { resolve } from "node:path";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { createLoopgateMcp } from "../../mcp/loopgate-mcp.js";
import { loadTask } from "../../runner/task-source/load-task.js";
import { openStore, storeFrom } from "../output/context.js";
import type { CommandIO } from "../output/io.js";

interface McpFlags {
  store?: string;
  workspace?: string;
  "unsafe-no-sandbox"?: boolean;
}

/** `loopgate mcp TASK [--workspace DIR]`: loopgate's protocol tools over stdio, until the client closes. */
export async function mcpCommand(_io: CommandIO, taskPath: string, flags: McpFlags): Promise<number> {
  const loaded = loadTask(taskPath);
  // The log where --store says (a folder or PostgreSQL); session files stay in the local folder.
  const where = storeFrom(flags.store);
  const localDir = where.dir;
  const store = await openStore(where, true);
  const server = createLoopgateMcp({
    loaded,
    workspace: resolve(flags.workspace ?? process.cwd()),
    store,
    localDir,
    sandbox: flags["unsafe-no-sandbox"] ? "none" : "bubblewrap",
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((r) => {
    transport.onclose = () => r();
    process.stdin.on("end", () => r());
  });
  await server.connect(transport);
  await closed;
  await server.close();
  await store.close();
  return 0;
}
