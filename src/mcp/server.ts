import { createMcpHandler, McpServer } from "@modelcontextprotocol/server";
import type { ToolContext } from "./context";
import { registerLogoResource } from "./resources/logo";
import { SERVER_INFO } from "./serverInfo";
import { registerFetchLogo } from "./tools/fetch_logo";
import { registerFetchLogos } from "./tools/fetch_logos";
import { registerGetCompanyLogos, registerGetCompanyLogosThree } from "./tools/get_company_logos";
import { registerGetLogo, registerGetLogoThree } from "./tools/get_logo";
import { registerInsertLogo } from "./tools/insert_logo";
import { registerSearchLogos, registerSearchLogosThree } from "./tools/search_logos";
import { registerSendFeedback } from "./tools/send_feedback";
import { log } from "../lib/log";
import { HOUR_MS } from "../lib/time";

/** Request bodies over 1 MB are refused with 413 before anything is parsed (spec "Other limits"). */
export const MAX_MCP_BODY_BYTES = 1024 * 1024;

/**
 * A fresh MCP server for one HTTP request, closed over the caller: nothing about one tenant
 * can reach another's request. The seven-tool form is the default; `/mcp?toolset=three`
 * serves the three-tool form. Both offer the logo resource.
 */
export function buildServer(ctx: ToolContext): McpServer {
  const three = ctx.caller.toolset === "three";
  const server = new McpServer(SERVER_INFO, {
    // Declared up front so that tools/list and resources/templates/list always answer.
    capabilities: { tools: {}, resources: {} },
    instructions: three
      ? "Company logos: search_logos by name, domain, ticker, ISIN, email address or crypto:SYMBOL, then get_logo as base64 or a signed URL, or get_company_logos for all of a company's logos."
      : "Company logos: search_logos by name, domain, ticker, ISIN, email address or crypto:SYMBOL; fetch_logo or get_logo for one logo as a public URL, base64 or a file; " +
        "fetch_logos for many domains; get_company_logos for all of a company's logos; insert_logo to place one on a presentation slide; send_feedback to report problems.",
    // 2026-07-28 cache hints: the lists are the same for every caller of a form; a logo read
    // is the caller's own (it counts against their quota).
    cacheHints: {
      "tools/list": { ttlMs: HOUR_MS, cacheScope: "public" },
      "resources/templates/list": { ttlMs: HOUR_MS, cacheScope: "public" },
      "server/discover": { ttlMs: HOUR_MS, cacheScope: "public" },
      "resources/read": { ttlMs: HOUR_MS, cacheScope: "private" },
    },
  });

  if (three) {
    registerSearchLogosThree(server, ctx);
    registerGetLogoThree(server, ctx);
    registerGetCompanyLogosThree(server, ctx);
  } else {
    registerSearchLogos(server, ctx);
    registerFetchLogo(server, ctx);
    registerGetLogo(server, ctx);
    registerGetCompanyLogos(server, ctx);
    registerInsertLogo(server, ctx);
    registerFetchLogos(server, ctx);
    registerSendFeedback(server, ctx);
  }
  registerLogoResource(server, ctx);
  return server;
}

/**
 * Serves one request over stateless Streamable HTTP with the SDK's handler: the 2026-07-28
 * protocol (`server/discover`, no sessions) and 2025-era clients through its stateless
 * fallback, each answered by a server built for this request.
 */
export async function serveMcp(request: Request, ctx: ToolContext): Promise<Response> {
  const handler = createMcpHandler(() => buildServer(ctx), {
    maxRequestBodySize: MAX_MCP_BODY_BYTES,
    onerror: (error) => log.warn("mcp.protocol_error", { detail: error.message }),
  });
  return handler.fetch(request);
}
