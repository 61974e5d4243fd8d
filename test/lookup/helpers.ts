import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/index";
import { decodeAssetKey } from "../../src/images/assetUrls";
import type { PreparedImage } from "../../src/catalogue/importLogo";
import { darkLogo40x20 } from "../fixtures/images";
import { addAccount, addCompany, addKey } from "../helpers/catalogue";

export const BASE = "https://logos.test";

let companies = 0;
/** A fresh company per call, so the isolate's resolve cache never carries over between tests. */
export async function freshCompany(
  overrides: { ticker?: { symbol: string; exchange: string }; name?: string; brandColor?: string; image?: PreparedImage } = {},
) {
  const n = ++companies;
  const domain = `acme-${n}-${crypto.randomUUID().slice(0, 8)}.com`;
  const name = overrides.name ?? `Acme ${n} ${domain.slice(-12, -4)}`;
  const written = await addCompany(
    { name, domains: [domain], ticker: overrides.ticker, brandColor: overrides.brandColor },
    overrides.image ?? darkLogo40x20(),
  );
  return { domain, name, ...written };
}

export async function freshKey(
  options: Parameters<typeof addKey>[1] = { type: "publishable" },
  plan: Parameters<typeof addAccount>[0] = "free",
) {
  const account = await addAccount(plan);
  return addKey(account.id, options);
}

/** Calls the Worker with other vars than wrangler.toml's, as a deployment configured otherwise would. */
export async function fetchWith(vars: Partial<Env>, input: string, init?: RequestInit): Promise<Response> {
  const ctx = createExecutionContext();
  const request = new Request(input, init) as Request<unknown, IncomingRequestCfProperties>;
  const response = await worker.fetch(request, { ...env, ...vars }, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/** The R2 key an /assets Location points at. */
export function assetKeyOf(location: string): string | null {
  const url = new URL(location, BASE);
  return decodeAssetKey(url.pathname.replace(/^\/assets\//, ""));
}
