import { OpenAPIHono } from "@hono/zod-openapi";
import { publicBase } from "../env";
import packageJson from "../../package.json";
import { firstMessage } from "../lib/params";
import { jsonError, jsonErrorHandler } from "../lib/responses";
import type { ApiEnv } from "./auth";
import { type OpenApiDocument, ReferencePage } from "./reference";
import { registerGetCompany } from "./v1_companies_get";
import { registerSearchCompanies } from "./v1_companies_search";
import { registerUsage } from "./v1_usage";

/**
 * The REST API for servers holding a secret key: company search, company metadata, usage.
 * Routes are declared with their zod schemas (@hono/zod-openapi), which validate requests
 * and generate `/openapi.json`; `/docs` renders the same document for people.
 */
export const api = new OpenAPIHono<ApiEnv>({
  defaultHook: (result, c) => {
    if (!result.success) return jsonError(c, "invalid_argument", firstMessage(result.error));
  },
});

api.onError(jsonErrorHandler("Request failed. Try again later"));

api.openAPIRegistry.registerComponent("securitySchemes", "secretKey", {
  type: "http",
  scheme: "bearer",
  description: "A secret key (sk_…) of your account",
});

registerSearchCompanies(api);
registerGetCompany(api);
registerUsage(api);

const documentConfig = (base: string) => ({
  openapi: "3.1.0",
  info: { title: "Logo Lookup REST API", version: packageJson.version },
  servers: [{ url: base }],
});

api.doc31("/openapi.json", (c) => documentConfig(publicBase(c.env, c.req.url)));

api.get("/docs", (c) => {
  const document = api.getOpenAPI31Document(documentConfig(publicBase(c.env, c.req.url))) as unknown as OpenApiDocument;
  return c.html(<ReferencePage document={document} />);
});
