import type { ResolveMap } from "../discovery/fetcher";

/**
 * The ownership file, `https://<domain>/.well-known/logo-lookup.txt`: fetched because a stranger
 * said the domain is theirs, so fetched on a short leash. The whole guard is `fileTarget`, one
 * function, so that the service's shared URL guard can take its place:
 *
 *  - https only, on its default port, no credentials in the URL;
 *  - the domain itself or its `www.`, on every hop: a redirect anywhere else is not followed,
 *    and at most MAX_REDIRECTS are;
 *  - FILE_TIMEOUT_MS for the whole exchange, and at most MAX_FILE_BYTES read;
 *  - nothing of any request forwarded: a fixed User-Agent and Accept only.
 *
 * In production `global_fetch_strictly_public` keeps private addresses out as well.
 * DISCOVERY_RESOLVE's loopback stand-ins (local testing only) apply here as in discovery.
 */
export const OWNERSHIP_FILE_PATH = "/.well-known/logo-lookup.txt";
const FILE_TIMEOUT_MS = 5_000;
const MAX_FILE_BYTES = 4 * 1024;
const MAX_REDIRECTS = 3;
const USER_AGENT = "logo-lookup-verification/1.0 (checks a domain owner's verification file)";

export type FileAnswer =
  | { ok: true; body: string }
  /** `definitive`: the site answered, and there is no file (404, 410): the proof is gone, not merely unreachable. */
  | { ok: false; reason: string; definitive: boolean };

type Target = { ok: true; fetchUrl: string } | { ok: false; reason: string };

/** Whether `url` may be asked for `domain`'s file, and where to ask it (a loopback stand-in locally). */
export function fileTarget(url: URL, domain: string, resolve: ResolveMap): Target {
  if (url.protocol !== "https:") return { ok: false, reason: `not https (${url.protocol})` };
  if (url.username !== "" || url.password !== "") return { ok: false, reason: "credentials in the URL" };
  if (url.port !== "" && url.port !== "443") return { ok: false, reason: `port ${url.port}` };
  const host = url.hostname.toLowerCase();
  if (host !== domain && host !== `www.${domain}`) return { ok: false, reason: `a redirect off the domain, to ${host}` };
  const standIn = resolve.get(domain);
  return { ok: true, fetchUrl: standIn ? `http://${standIn}${url.pathname}${url.search}` : url.href };
}

export async function fetchOwnershipFile(domain: string, resolve: ResolveMap): Promise<FileAnswer> {
  const signal = AbortSignal.timeout(FILE_TIMEOUT_MS);
  let url = new URL(`https://${domain}${OWNERSHIP_FILE_PATH}`);
  try {
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const target = fileTarget(url, domain, resolve);
      if (!target.ok) return { ok: false, reason: target.reason, definitive: false };
      const response = await fetch(target.fetchUrl, {
        redirect: "manual",
        signal,
        headers: { "User-Agent": USER_AGENT, Accept: "text/plain" },
      });
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        const location = response.headers.get("location");
        if (!location) return { ok: false, reason: `redirect ${response.status} without Location`, definitive: false };
        url = new URL(location, url);
        continue;
      }
      if (!response.ok) {
        await response.body?.cancel();
        return { ok: false, reason: `status ${response.status}`, definitive: response.status === 404 || response.status === 410 };
      }
      return { ok: true, body: await readAtMost(response, MAX_FILE_BYTES) };
    }
    return { ok: false, reason: `more than ${MAX_REDIRECTS} redirects`, definitive: false };
  } catch (error) {
    return {
      ok: false,
      reason: signal.aborted ? `no answer within ${FILE_TIMEOUT_MS} ms` : `unreachable: ${(error as Error).message}`,
      definitive: false,
    };
  }
}

/** The body's first `max` bytes as text; the rest is never read. */
async function readAtMost(response: Response, max: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let length = 0;
  while (length < max) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value.subarray(0, max - length));
    length += Math.min(value.byteLength, max - length);
  }
  await reader.cancel().catch(() => undefined);
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
