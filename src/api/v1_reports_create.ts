import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { reportKinds } from "../../schema";
import { fileReport, MAX_MESSAGE_LENGTH } from "../corrections/reports";
import { catalogueWriter } from "../lib/db";
import { jsonError } from "../lib/responses";
import { type ApiEnv, secretKeyRoute } from "./auth";
import { commonErrors, errorResponses, jsonBody } from "./schemas";

/**
 * POST /v1/reports: a wrong logo reported by a server, into the same queue as the portal's
 * "Report this logo" and send_feedback (docs/corrections.md, "Reporting a logo"). Reports of a
 * logo whose report is still open fold into it.
 */
const ReportBody = z
  .object({
    domain: z
      .string()
      .trim()
      .min(1, "domain must not be empty")
      .max(253, "domain must be at most 253 characters")
      .openapi({ example: "acme.com" }),
    kind: z.enum(reportKinds, { message: `kind must be one of ${reportKinds.join(", ")}` }),
    message: z
      .string()
      .trim()
      .min(1, "message must not be empty")
      .max(MAX_MESSAGE_LENGTH, `message must be at most ${MAX_MESSAGE_LENGTH} characters`),
    logoId: z
      .number()
      .int()
      .positive("logoId must be a positive whole number")
      .optional()
      .openapi({ description: "The logo reported, from X-Logo-Id or a company's logos" }),
  })
  .openapi("ReportRequest");

const Report = z
  .object({
    reportId: z.number().int(),
    itemId: z.number().int().openapi({ description: "The queue item it was filed under: reports of one logo share it while it is open" }),
    domain: z.string().openapi({ description: "The company's primary domain, where the catalogue knows the domain" }),
    logoId: z.number().int().nullable(),
    status: z.literal("open"),
    folded: z.boolean().openapi({ description: "Whether an open report of the same logo took it in" }),
  })
  .openapi("Report");

const route = secretKeyRoute({
  method: "post",
  path: "/reports",
  summary: "Report a wrong logo",
  description: `Kinds: ${reportKinds.join(", ")}. An account may send 50 a day (portal and API together). Operators resolve reports; the outcome shows in the portal.`,
  request: { body: jsonBody(ReportBody, "What is wrong, and with which logo") },
  responses: {
    201: { description: "Filed", content: { "application/json": { schema: Report } } },
    ...commonErrors,
    ...errorResponses(404),
  },
});

export function registerCreateReport(api: OpenAPIHono<ApiEnv>) {
  api.openapi(route, async (c) => {
    const body = c.req.valid("json");
    const filed = await fileReport(catalogueWriter(c.env.DB), { ...body, accountId: c.get("key").accountId, via: "rest" }, c.var.ctx.now());
    if (!filed.ok) return jsonError(c, filed.error.code as "invalid_argument", filed.error.message);
    return c.json({ ...filed.value, status: "open" as const }, 201);
  });
}
