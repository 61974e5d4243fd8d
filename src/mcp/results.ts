import type {
  CallToolResult,
  ContentBlock,
  McpServer,
  StandardSchemaWithJSON,
  ToolAnnotations,
  ToolCallback,
} from "@modelcontextprotocol/server";
import { log } from "../lib/log";

/**
 * Tool results as the spec shapes them ("Agent tool endpoint"): a success carries
 * `structuredContent` and the same JSON as text, plus a `resource_link` for every logo it
 * names; a failure is `isError: true` with a text message only.
 */
export interface LinkedLogo {
  resourceUri: string;
  companyName: string;
  variant: string;
}

export function toolResult(structured: unknown, logos: LinkedLogo[] = []): CallToolResult {
  const links: ContentBlock[] = logos.map((logo) => ({
    type: "resource_link",
    uri: logo.resourceUri,
    name: `${logo.companyName} ${logo.variant} logo`,
    mimeType: "image/png",
  }));
  return {
    content: [{ type: "text", text: JSON.stringify(structured) }, ...links],
    structuredContent: structured as CallToolResult["structuredContent"],
  };
}

export function toolError(message: string): CallToolResult {
  return { content: [{ type: "text", text: message }], isError: true };
}

/**
 * Runs a tool body so that nothing unexpected reaches the client: the detail goes to the
 * logs, the caller gets the tool's generic message (spec: "any other error").
 */
export async function guarded(tool: string, genericMessage: string, body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (error) {
    log.error("mcp.tool_failed", { tool, error });
    return toolError(genericMessage);
  }
}

/** What most tools are: they read the catalogue and change nothing outside it. */
export const READ_ONLY_TOOL: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export interface ToolSpec<Input extends StandardSchemaWithJSON, Output extends StandardSchemaWithJSON> {
  title: string;
  description: string;
  inputSchema: Input;
  outputSchema: Output;
  /** Where the tool departs from READ_ONLY_TOOL. */
  annotations?: Partial<ToolAnnotations>;
  /** The message of an unexpected failure, naming what the tool does ("Failed to fetch logos…"). */
  failure: string;
}

/**
 * Registers one tool of this request's server: its annotations (READ_ONLY_TOOL unless it says
 * otherwise) and its error guard applied in one place. The caller's context reaches the body
 * through the closure the tool's `register…` function was given.
 */
export function registerScopedTool<Input extends StandardSchemaWithJSON, Output extends StandardSchemaWithJSON>(
  server: McpServer,
  name: string,
  spec: ToolSpec<Input, Output>,
  body: (args: StandardSchemaWithJSON.InferOutput<Input>) => Promise<CallToolResult>,
): void {
  const { failure, annotations, ...config } = spec;
  server.registerTool<Output, Input>(name, { ...config, annotations: { ...READ_ONLY_TOOL, ...annotations } }, ((
    args: StandardSchemaWithJSON.InferOutput<Input>,
  ) => guarded(name, failure, () => body(args))) as ToolCallback<Input>);
}
