import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/server";

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
    console.error(`mcp: ${tool} failed`, error);
    return toolError(genericMessage);
  }
}

export const FAILED = "Failed to get logo. Try again later";
