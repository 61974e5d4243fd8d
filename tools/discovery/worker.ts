/**
 * The operator side of discovery, run by `npm run admin -- discover | logo forget` inside
 * workerd (wrangler's local runtime) next to the storage: discovery needs the Worker runtime
 * itself (HTMLRewriter, the Images binding), and this runs the service's own discovery code
 * there. Not part of the deployed Worker; it listens on a loopback port for the admin
 * process that started it.
 *
 *   POST /discover {domain}  → the discovery report: candidates with their scores, the choice
 *   POST /forget   {domain}  → Result<Forgotten>
 */
import { createDb } from "../../src/lib/db";
import { normaliseDomain, registrableDomain } from "../../src/lib/domain";
import { fail, ok } from "../../src/lib/errors";
import { forgetDiscovered } from "../../src/discovery/forget";
import { discoverAndRecord } from "../../src/discovery/run";
import { fromTool, NOT_FROM_TOOL } from "../toolToken";

interface ToolEnv {
  DB: D1Database;
  LOGOS: R2Bucket;
  IMAGES: ImagesBinding;
  DISCOVERY_RESOLVE?: string;
  /** The admin process's token for this run (../toolToken.ts): no other process is answered. */
  TOOL_TOKEN?: string;
}

export default {
  async fetch(request: Request, env: ToolEnv): Promise<Response> {
    if (!fromTool(request, env.TOOL_TOKEN)) return NOT_FROM_TOOL();
    const { pathname } = new URL(request.url);
    const { domain: input } = (await request.json()) as { domain: string };
    if (request.method === "POST" && pathname === "/discover") {
      const host = normaliseDomain(input);
      if (!host.ok) return Response.json(fail("invalid_argument", `Invalid domain: ${input}`));
      const domain = registrableDomain(host.domain) ?? host.domain;
      // The service's vars are all optional with defaults; only these two matter here.
      const serviceEnv = { ...env, DISCOVERY_RESOLVE: env.DISCOVERY_RESOLVE ?? "" } as unknown as Env;
      return Response.json(ok(await discoverAndRecord(serviceEnv, domain, { refresh: true })));
    }
    if (request.method === "POST" && pathname === "/forget")
      return Response.json(await forgetDiscovered(createDb(env.DB), env.LOGOS, input));
    return new Response("Not found", { status: 404 });
  },
};
