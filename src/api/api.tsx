import { OpenAPIHono } from "@hono/zod-openapi";
import { Hono } from "hono";
import type { AppEnv } from "../lib/context";
import { publicBase } from "../env";
import packageJson from "../../package.json";
import { firstMessage } from "../lib/params";
import { jsonError, jsonErrorHandler } from "../lib/responses";
import type { ApiEnv } from "./auth";
import { type OpenApiDocument, ReferencePage } from "./reference";
import { registerGetCompany } from "./v1_companies_get";
import { registerSearchCompanies } from "./v1_companies_search";
import { registerUsage } from "./v1_usage";
import { registerChanges } from "./v1_changes_list";
import { registerOverrides } from "./v1_overrides";
import { registerCreateReport } from "./v1_reports_create";

/**
 * The REST API for servers holding a secret key: company search, company metadata, usage,
 * reports and the account's own logos; and the public change log. Mounted at /v1 (src/app.ts). Routes are declared with their zod schemas (@hono/zod-openapi),
 * which validate requests and generate `/openapi.json`; `/docs` renders the same document for
 * people (`apiReference`).
 */
export const restApi = new OpenAPIHono<ApiEnv>({
  defaultHook: (result, c) => {
    if (!result.success) return jsonError(c, "invalid_argument", firstMessage(result.error));
  },
});

restApi.onError(jsonErrorHandler("Request failed. Try again later"));

restApi.openAPIRegistry.registerComponent("securitySchemes", "secretKey", {
  type: "http",
  scheme: "bearer",
  description: "A secret key (sk_…) of your account",
});

registerSearchCompanies(restApi);
registerGetCompany(restApi);
registerUsage(restApi);
registerCreateReport(restApi);
registerOverrides(restApi);
registerChanges(restApi);

/** Where src/app.ts mounts restApi: the document names every path under it. */
const MOUNTED_AT = "/v1";

function apiDocument(base: string) {
  const document = restApi.getOpenAPI31Document({
    openapi: "3.1.0",
    info: { title: "Logo Lookup REST API", version: packageJson.version },
    servers: [{ url: base }],
  });
  const paths = Object.entries(document.paths ?? {}).map(([path, item]) => [`${MOUNTED_AT}${path}`, item]);
  return { ...document, paths: Object.fromEntries(paths) };
}

/** `/openapi.json` and `/docs`: the REST API described, for programs and for people. */
export const apiReference = new Hono<AppEnv>()
  .onError(jsonErrorHandler("Request failed. Try again later"))
  .get("/openapi.json", (c) => c.json(apiDocument(publicBase(c.env, c.req.url))))
  .get("/docs", (c) => c.html(<ReferencePage document={apiDocument(publicBase(c.env, c.req.url)) as unknown as OpenApiDocument} />));
