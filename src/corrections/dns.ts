/**
 * TXT records read over DNS-over-HTTPS in its JSON wire format (`GET {resolver}?name=…&type=TXT`
 * with `Accept: application/dns-json`, as Cloudflare's and Google's resolvers answer it): the
 * Worker has no resolver of its own. The answer is bounded in time and bytes like any fetch
 * for a stranger's sake, and read strictly: only what the resolver says of the name asked.
 */
const TIMEOUT_MS = 5_000;
const MAX_ANSWER_BYTES = 64 * 1024;
/** RR type of TXT (RFC 1035 §3.2.2). */
const TXT = 16;
/** RCODEs (RFC 1035 §4.1.1): no error, and no such name; anything else says nothing either way. */
const NOERROR = 0;
const NXDOMAIN = 3;

export type TxtAnswer =
  /** What the name holds: none when the name does not exist or holds no TXT record. */
  { ok: true; records: string[] } | { ok: false; reason: string };

interface DnsJson {
  Status?: unknown;
  Answer?: Array<{ name?: unknown; type?: unknown; data?: unknown }>;
}

export async function txtRecords(resolverUrl: string, name: string): Promise<TxtAnswer> {
  const url = new URL(resolverUrl);
  url.searchParams.set("name", name);
  url.searchParams.set("type", "TXT");
  let text: string;
  try {
    const response = await fetch(url, {
      headers: { Accept: "application/dns-json" },
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    if (!response.ok) {
      await response.body?.cancel();
      return { ok: false, reason: `resolver answered ${response.status}` };
    }
    if (Number(response.headers.get("content-length") ?? 0) > MAX_ANSWER_BYTES) {
      await response.body?.cancel();
      return { ok: false, reason: "resolver's answer too large" };
    }
    text = await response.text();
  } catch (error) {
    return { ok: false, reason: `resolver unreachable: ${(error as Error).message}` };
  }
  if (text.length > MAX_ANSWER_BYTES) return { ok: false, reason: "resolver's answer too large" };
  let answer: DnsJson;
  try {
    answer = JSON.parse(text) as DnsJson;
  } catch {
    return { ok: false, reason: "resolver's answer is not JSON" };
  }
  if (answer.Status === NXDOMAIN) return { ok: true, records: [] };
  if (answer.Status !== NOERROR) return { ok: false, reason: `resolver's status ${String(answer.Status)}` };
  const asked = name.toLowerCase().replace(/\.$/, "");
  const records = (answer.Answer ?? [])
    .filter((rr) => rr.type === TXT && typeof rr.data === "string" && typeof rr.name === "string")
    .filter((rr) => (rr.name as string).toLowerCase().replace(/\.$/, "") === asked)
    .map((rr) => characterStrings(rr.data as string));
  return { ok: true, records };
}

/**
 * A TXT record's data as the JSON format gives it: one or more character-strings, each quoted
 * (`"part one" "part two"`), joined as one value; `\"`, `\\` and `\DDD` unescaped (RFC 1035
 * §5.1). Data without quotes is taken as it is.
 */
export function characterStrings(data: string): string {
  if (!data.trimStart().startsWith('"')) return data.trim();
  let out = "";
  for (const [, quoted] of data.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
    out += quoted!.replace(/\\(\d{3}|.)/g, (_, escaped: string) =>
      /^\d{3}$/.test(escaped) ? String.fromCharCode(Number(escaped)) : escaped,
    );
  }
  return out;
}
