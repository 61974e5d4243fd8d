import { z } from "zod";

/**
 * Vars of wrangler.toml, validated once per isolate at the boundary so a misconfigured
 * deployment fails loudly on its first request instead of misbehaving quietly.
 */
const optionalUrl = z.union([z.literal(""), z.url({ protocol: /^https?$/ })]).transform((v) => v.replace(/\/+$/, ""));

export const varsSchema = z.object({
  PUBLIC_BASE_URL: optionalUrl.default(""),
  CDN_URL: optionalUrl.default(""),
  LOOKUP_RESPONSE: z.enum(["redirect", "bytes"]).default("redirect"),
  ANTHROPIC_BASE_URL: z
    .url({ protocol: /^https?$/ })
    .default("https://api.anthropic.com")
    .transform((v) => v.replace(/\/+$/, "")),
  STRIPE_API_BASE: z.url({ protocol: /^https?$/ }).default("https://api.stripe.com"),
  STRIPE_PRICE_LAUNCH: z.string().default(""),
  STRIPE_PRICE_GROWTH: z.string().default(""),
  STRIPE_PRICE_ENTERPRISE: z.string().default(""),
});

/**
 * Secrets (`wrangler secret put`, `.dev.vars` locally; see .dev.vars.example). `wrangler types`
 * only sees [vars], so they are declared here; each is optional and its feature says what
 * happens without it.
 */
interface Secrets {
  /** Key of the AI provider's file API (get_logo `file`, insert_logo). */
  ANTHROPIC_API_KEY?: string;
  /** HMAC key of signed asset URLs (three-tool get_logo `url`). */
  SIGNED_URL_SECRET?: string;
  STRIPE_SECRET_KEY?: string;
  STRIPE_WEBHOOK_SECRET?: string;
}

declare global {
  interface Env extends Secrets {}
  namespace Cloudflare {
    interface Env extends Secrets {}
  }
}

export type Vars = z.infer<typeof varsSchema>;

/** What every Hono router of the Worker is typed with: the bindings and vars of wrangler.toml. */
export type AppEnv = { Bindings: Env };

// Keyed by the values themselves: the env object need not be the same from request to request.
const validated = new Map<string, Vars>();

export function readVars(env: Env): Vars {
  const id = [
    env.PUBLIC_BASE_URL,
    env.CDN_URL,
    env.LOOKUP_RESPONSE,
    env.ANTHROPIC_BASE_URL,
    env.STRIPE_API_BASE,
    env.STRIPE_PRICE_LAUNCH,
    env.STRIPE_PRICE_GROWTH,
    env.STRIPE_PRICE_ENTERPRISE,
  ].join("\n");
  let vars = validated.get(id);
  if (!vars) {
    const parsed = varsSchema.safeParse(env);
    if (!parsed.success) throw new Error(`Invalid configuration: ${z.prettifyError(parsed.error)}`);
    vars = parsed.data;
    if (validated.size > 16) validated.clear();
    validated.set(id, vars);
  }
  return vars;
}
