import { domainCacheTag } from "../lib/cacheTags";
import type { Vars } from "../env";
import { log } from "../lib/log";

/**
 * The CDN's copies of a domain's logos, dropped through Cloudflare's purge API
 * (`POST {CLOUDFLARE_API_BASE}/zones/{CDN_PURGE_ZONE_ID}/purge_cache`, a bearer token allowed to
 * purge the zone): by cache tag, every answer this Worker cached about the domain in any data
 * centre (its Cache API entries carry `Cache-Tag: logo-domain:<domain>`), and by prefix, the
 * CDN_URL's copies of the domain's objects and the resized images made from them. Without a
 * zone id or token nothing is asked, and the CDN's copies last out their max-age.
 */
const PURGE_TIMEOUT_MS = 10_000;

export type CdnPurge = "purged" | "not configured" | "failed";

export async function purgeCdn(vars: Vars, token: string | undefined, domains: string[]): Promise<CdnPurge> {
  if (vars.CDN_PURGE_ZONE_ID === "" || !token || domains.length === 0) return "not configured";
  const endpoint = `${vars.CLOUDFLARE_API_BASE}/zones/${vars.CDN_PURGE_ZONE_ID}/purge_cache`;
  // One kind of target per call: the API takes tags, prefixes, hosts or files, not a mix.
  const bodies: Record<string, string[]>[] = [{ tags: domains.map(domainCacheTag) }];
  if (vars.CDN_URL) {
    const host = new URL(vars.CDN_URL).host;
    bodies.push({ prefixes: domains.map((domain) => `${host}/logos/${domain}/`) });
  }
  try {
    for (const body of bodies) {
      const response = await fetch(endpoint, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(PURGE_TIMEOUT_MS),
      });
      const answer = (await response.json().catch(() => null)) as { success?: boolean; errors?: unknown } | null;
      if (!response.ok || answer?.success !== true) {
        log.error("purge.cdn_refused", { status: response.status, errors: answer?.errors, domains });
        return "failed";
      }
    }
    return "purged";
  } catch (error) {
    log.error("purge.cdn_unreachable", { error, domains });
    return "failed";
  }
}
