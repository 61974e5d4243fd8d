import type { McpServer } from "@modelcontextprotocol/server";
import { z } from "zod";
import { feedbackCategories } from "../../../schema";
import { fileReport } from "../../corrections/reports";
import { submitFeedback } from "../../feedback/feedback";
import { log } from "../../lib/log";
import type { ToolContext } from "../context";
import { SERVER_INFO } from "../serverInfo";
import { registerScopedTool, toolError, toolResult } from "../results";
import { logoIdSchema } from "../schemas";

/**
 * send_feedback (spec 2, seven-tool form): a report about the data or the service, stored in
 * D1 with the account, its API client and the OAuth client attached. 5 per client per UTC day.
 * `data_quality` naming a domain or a logo also files a report in the operators' queue.
 */
const inputSchema = z.object({
  category: z
    .enum(feedbackCategories, { message: "category must be one of data_quality, bug, feature_request, other" })
    .describe("data_quality, bug, feature_request or other"),
  message: z
    .string({ message: "message must be a string" })
    .trim()
    .min(1, "message must not be empty")
    .max(5000, "message must be at most 5000 characters"),
  domain: z.string().trim().min(1).max(253, "domain must be at most 253 characters").optional().describe("Related company domain"),
  logoId: logoIdSchema.optional().describe("Related logo id"),
  tool: z.string().trim().min(1).max(64, "tool must be at most 64 characters").optional().describe("The tool that prompted the feedback"),
});

export function registerSendFeedback(server: McpServer, ctx: ToolContext) {
  registerScopedTool(
    server,
    "send_feedback",
    {
      title: "Send feedback",
      description:
        "Report a wrong or missing logo (data_quality), a bug, a feature request or anything else to the service's operators. " +
        "Up to 5 submissions per day; the receipt says how many remain.",
      inputSchema,
      outputSchema: z.object({
        ok: z.boolean(),
        remaining: z.number(),
        referenceId: z.string(),
        timestamp: z.string(),
        serverVersion: z.string(),
      }),
      // Each call stores a report.
      annotations: { readOnlyHint: false, idempotentHint: false },
      failure: "Failed to send feedback. Try again later",
    },
    async (args) => {
      const stored = await submitFeedback(ctx.db, {
        accountId: ctx.caller.accountId,
        clientId: ctx.caller.clientId,
        oauthClientId: ctx.caller.oauthClientId,
        ...args,
      });
      if (!stored.ok) return toolError(stored.error.message);
      // Data quality about a domain or a logo is a report too, in the operators' queue (docs/corrections.md).
      if (args.category === "data_quality" && (args.domain !== undefined || args.logoId !== undefined)) {
        const filed = await fileReport(ctx.catalogue, {
          domain: args.domain,
          logoId: args.logoId,
          kind: "other",
          message: args.message,
          accountId: ctx.caller.accountId,
          via: "mcp",
          feedbackId: Number(stored.value.referenceId.split("-").at(-1)),
        });
        if (!filed.ok) log.warn("mcp.feedback_not_reported", { reason: filed.error.message });
      }
      return toolResult({ ok: true, ...stored.value, serverVersion: SERVER_INFO.version });
    },
  );
}
