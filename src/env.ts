import { z } from "zod";

/**
 * Vars of wrangler.toml, validated once per isolate at the boundary so a misconfigured
 * deployment fails loudly on its first request instead of misbehaving quietly.
 */
const optionalUrl = z.union([z.literal(""), z.url({ protocol: /^https?$/ })]).transform((v) => v.replace(/\/+$/, ""));

/**
 * A provider's API, which every call sends a secret key to: https, or plain http to this very
 * machine only (a local fake, as the tests run Stripe's and the file API's).
 */
const providerUrl = (fallback: string) =>
  z
    .url({ protocol: /^https?$/ })
    .refine(
      (url) => url.startsWith("https:") || /^http:\/\/(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d+)?(?:\/|$)/.test(url),
      "must be https (plain http only to localhost): the secret key goes with every call",
    )
    .default(fallback)
    .transform((v) => v.replace(/\/+$/, ""));

// An empty numeric var (`NAME = ""`, as wrangler users leave one they mean unset) takes its
// default: z.coerce.number() alone reads "" as 0, and DISCOVERY_MISS_TTL_S = 0 remembers no miss.
const blankAsUnset = (value: unknown) => (typeof value === "string" && value.trim() === "" ? undefined : value);

export const varsSchema = z.object({
  // The service's URLs are this and a path (`${base}/assets/…`): a path or query of its own would break every one.
  PUBLIC_BASE_URL: optionalUrl
    .refine(
      (url) => url === "" || /^https?:\/\/[^/?#]+$/.test(url),
      "must be an origin, a scheme and a host with no path, query or fragment (https://logos.example.com)",
    )
    .default(""),
  CDN_URL: optionalUrl.default(""),
  LOOKUP_RESPONSE: z.enum(["redirect", "bytes"]).default("redirect"),
  ANTHROPIC_BASE_URL: providerUrl("https://api.anthropic.com"),
  STRIPE_API_BASE: providerUrl("https://api.stripe.com"),
  STRIPE_PRICE_LAUNCH: z.string().default(""),
  STRIPE_PRICE_GROWTH: z.string().default(""),
  STRIPE_PRICE_ENTERPRISE: z.string().default(""),
  /** Whether anyone may create an account at /portal/signup; "off" leaves it to operators. */
  SIGNUP: z.enum(["on", "off"]).default("on"),
  DISCOVERY: z.enum(["on", "off"]).default("on"),
  DISCOVERY_BUDGET_MS: z.preprocess(blankAsUnset, z.coerce.number().int().min(0).max(30_000).default(2500)),
  DISCOVERY_MISS_TTL_S: z.preprocess(blankAsUnset, z.coerce.number().int().min(0).default(86_400)),
  /**
   * Discoveries a UTC day (src/limits/discoveryLimits.ts): of an account whose email is not
   * confirmed (a confirmed or paying one gets its plan's), of one address whatever Free accounts
   * it uses, and of the whole deployment.
   */
  DISCOVERY_UNCONFIRMED_PER_DAY: z.preprocess(blankAsUnset, z.coerce.number().int().min(0).default(20)),
  DISCOVERY_ADDRESS_PER_DAY: z.preprocess(blankAsUnset, z.coerce.number().int().min(0).default(1_000)),
  DISCOVERY_DEPLOYMENT_PER_DAY: z.preprocess(blankAsUnset, z.coerce.number().int().min(0).default(100_000)),
  /**
   * The transactional mail API that sends sign-up's confirmation links (Postmark's wire format,
   * src/accounts/mail.ts), its token the secret MAIL_API_TOKEN; and the sender, an address the
   * mail provider accepts for this deployment. Without a token or a sender, no mail is sent and
   * the link goes to the log (what `npm start` shows).
   */
  MAIL_API_BASE: providerUrl("https://api.postmarkapp.com"),
  MAIL_FROM: z.union([z.literal(""), z.email()]).default(""),
  /** `host=127.0.0.1:PORT,…`: parsed and checked where it is used (src/discovery/fetcher.ts). */
  DISCOVERY_RESOLVE: z.string().default(""),
  /**
   * The zone whose cache holds copies of logos (the CDN_URL's, and the Worker's own when it is
   * on a zone): purges ask Cloudflare's purge API to drop its copies (src/purge/cdn.ts), with
   * the secret CDN_PURGE_API_TOKEN. Empty: nothing outside this Worker's own caches is purged.
   */
  CDN_PURGE_ZONE_ID: z
    .string()
    .regex(/^(?:[0-9a-f]{32})?$/, "must be a zone id (32 hex digits) or empty")
    .default(""),
  /** Cloudflare's API, which purges go to (the tests point it at a stand-in on loopback). */
  CLOUDFLARE_API_BASE: providerUrl("https://api.cloudflare.com/client/v4"),
  /** The DNS-over-HTTPS resolver (JSON wire format, `application/dns-json`) that owners' TXT records are read through. */
  DNS_RESOLVER_URL: providerUrl("https://cloudflare-dns.com/dns-query"),
  /**
   * Which requests write an access-log line (src/lib/context.ts): "routed", every request but
   * the warm lookups answered before the router (Cloudflare's own invocation log records those,
   * under the same id), or "all", those too, at some 6 µs of CPU each (npm run bench).
   */
  ACCESS_LOG: z.enum(["routed", "all"]).default("routed"),
  /** Where the landing page sends readers for the guides (the repository's docs/, say); empty, it links the API reference alone. */
  DOCS_URL: optionalUrl.default(""),
});

/**
 * Secrets (`wrangler secret put`, `.dev.vars` locally; see .dev.vars.example). `wrangler types`
 * only sees [vars], so they are declared here; each is optional and its feature says what
 * happens without it.
 */
interface Secrets {
  /** Key of the AI provider's file API (get_logo `file`, insert_logo). */
  ANTHROPIC_API_KEY?: string;
  /** HMAC key of signed asset URLs (three-tool get_logo `url`, and lookups' redirects to exact widths). */
  SIGNED_URL_SECRET?: string;
  STRIPE_SECRET_KEY?: string;
  STRIPE_WEBHOOK_SECRET?: string;
  /** API token allowed to purge CDN_PURGE_ZONE_ID's cache (Zone → Cache Purge → Purge). */
  CDN_PURGE_API_TOKEN?: string;
  /** Server token of the mail API (Postmark's X-Postmark-Server-Token): sign-up's confirmation mail. */
  MAIL_API_TOKEN?: string;
}

/**
 * What a deployment cannot do without, and what goes wrong when one is missing: checked by
 * `npm run deploy:check`, reported by /health and logged by each isolate once. A local server
 * (no PUBLIC_BASE_URL) may run without them.
 */
export const productionSecrets: Record<keyof Secrets, { required: boolean; without: string; when?: (vars: Vars) => boolean }> = {
  STRIPE_SECRET_KEY: { required: true, without: "checkout and the token exchange fail" },
  STRIPE_WEBHOOK_SECRET: { required: true, without: "Stripe's webhooks are refused, so plans never change" },
  SIGNED_URL_SECRET: { required: true, without: "the three-tool get_logo cannot hand out URLs" },
  MAIL_API_TOKEN: {
    required: false,
    without: "no confirmation mail is sent: accounts keep the unconfirmed discovery budget unless an operator confirms them",
  },
  ANTHROPIC_API_KEY: { required: false, without: "get_logo files fall back to base64 and insert_logo fails" },
  CDN_PURGE_API_TOKEN: {
    required: false,
    without: "purges leave the CDN's copies (CDN_PURGE_ZONE_ID) to last out their max-age",
    // Only a deployment that names a zone to purge needs it.
    when: (vars) => vars.CDN_PURGE_ZONE_ID !== "",
  },
};

declare global {
  interface Env extends Secrets {}
  namespace Cloudflare {
    interface Env extends Secrets {}
  }
}

export type Vars = z.infer<typeof varsSchema>;

/**
 * Vars that do not validate: every route's error handler answers `500 Service misconfigured`,
 * naming nothing; the detail goes to the logs.
 */
export class Misconfigured extends Error {}

/** What every route answers a misconfigured deployment. */
export const MISCONFIGURED = "Service misconfigured";

/** The vars, or why they do not validate: a Result of src/lib/errors.ts, spelled here so env.ts depends on nothing. */
export type CheckedVars = { ok: true; value: Vars } | { ok: false; error: { code: "internal"; message: string } };

// Keyed by the values themselves (the env object need not be the same from request to
// request), read under the schema's own names so that a new variable is part of the key. As
// JSON, so that an unset var and an empty one (which may validate differently) differ. A
// handful at most: one per configuration an isolate has seen.
const VAR_NAMES = Object.keys(varsSchema.shape) as (keyof Vars)[];
const validated = new Map<string, CheckedVars>();
const MAX_CONFIGURATIONS = 16;

// Every request of an isolate usually brings the same env object: that is asked first.
const byEnv = new WeakMap<object, CheckedVars>();

/**
 * The vars, or why they do not validate (names and rules, never values), validated once per
 * env object: what lets the lookup and /health answer a misconfigured deployment themselves,
 * where readVars would throw, at the cost of one WeakMap lookup per request.
 */
export function checkedVars(env: Env): CheckedVars {
  let vars = byEnv.get(env);
  if (vars === undefined) {
    const source = env as unknown as Record<string, unknown>;
    const key = JSON.stringify(VAR_NAMES.map((name) => source[name]));
    vars = validated.get(key);
    if (vars === undefined) {
      const parsed = varsSchema.safeParse(env);
      vars = parsed.success
        ? { ok: true, value: parsed.data }
        : { ok: false, error: { code: "internal", message: `Invalid configuration: ${z.prettifyError(parsed.error)}` } };
      if (validated.size >= MAX_CONFIGURATIONS) validated.clear();
      validated.set(key, vars);
    }
    byEnv.set(env, vars);
  }
  return vars;
}

/** The vars; throws Misconfigured when they do not validate. */
export function readVars(env: Env): Vars {
  const vars = checkedVars(env);
  if (!vars.ok) throw new Misconfigured(vars.error.message);
  return vars.value;
}

/**
 * The public origin everything the service hands out is named after (asset URLs, resource
 * URIs, OAuth metadata, checkout return URLs): PUBLIC_BASE_URL when set, otherwise the origin
 * of the request (the local default, e.g. http://localhost:8787).
 */
export function publicBase(env: Env, requestUrl: string): string {
  return readVars(env).PUBLIC_BASE_URL || new URL(requestUrl).origin;
}

/** On a deployment, the optional secrets not set, and what is unavailable without them: worth saying, not a fault. */
export function optionalSecretsMissing(env: Env): string[] {
  const parsed = varsSchema.safeParse(env);
  return parsed.success && parsed.data.PUBLIC_BASE_URL ? secretsNotSet(env, false, parsed.data) : [];
}

function secretsNotSet(env: Env, required: boolean, vars: Vars): string[] {
  return (Object.entries(productionSecrets) as [keyof Secrets, (typeof productionSecrets)[keyof Secrets]][])
    .filter(([name, secret]) => secret.required === required && !env[name] && (secret.when?.(vars) ?? true))
    .map(([name, secret]) => `${name} is not set: ${secret.without}`);
}

/**
 * Configuration problems of this deployment, by name and consequence, never by value: vars
 * that do not validate, and (on a deployment, which has PUBLIC_BASE_URL) missing secrets.
 */
export function configurationProblems(env: Env): string[] {
  const parsed = varsSchema.safeParse(env);
  if (!parsed.success) return parsed.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
  return parsed.data.PUBLIC_BASE_URL ? secretsNotSet(env, true, parsed.data) : [];
}
