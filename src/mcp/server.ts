import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import packageJson from "../../package.json";
import type { McpCaller } from "./endpoint";

/** Request bodies over 1 MB are refused with 413 before anything is parsed (spec "Other limits"). */
export const MAX_MCP_BODY_BYTES = 1024 * 1024;

export const SERVER_INFO = { name: "logo-lookup", version: packageJson.version };

/**
 * A fresh MCP server for one HTTP request, closed over the caller: nothing about one tenant
 * can reach another's request. Tools and resources are registered per toolset.
 */
export function buildServer(caller: McpCaller): McpServer {
  const server = new McpServer(SERVER_INFO, {
    // Declared up front so that tools/list and resources/templates/list always answer.
    capabilities: { tools: {}, resources: {} },
    instructions:
      caller.toolset === "three"
        ? "Company logos: search by name, domain or ticker, then fetch a logo as base64 or a signed URL."
        : "Company logos: search by name, domain or ticker, fetch logos as URLs, base64 or files, and insert them into documents.",
  });
  return server;
}

/**
 * Serves one request over stateless Streamable HTTP with the SDK's handler: the 2026-07-28
 * protocol (`server/discover`, no sessions) and 2025-era clients through its stateless
 * fallback, each answered by a server built for this request.
 */
export async function serveMcp(request: Request, caller: McpCaller): Promise<Response> {
  const handler = createMcpHandler(() => buildServer(caller), {
    maxRequestBodySize: MAX_MCP_BODY_BYTES,
    onerror: (error) => console.warn(`mcp: ${error.message}`),
  });
  return handler.fetch(request);
}
