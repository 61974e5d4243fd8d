import { z } from "zod";
import { BoundedCache } from "./lib/boundedCache";

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

// Keyed by the values themselves (the env object need not be the same from request to
// request), read under the schema's own names so that a new variable is part of the key.
const VAR_NAMES = Object.keys(varsSchema.shape) as (keyof Vars)[];
const validated = new BoundedCache<string, Vars>(16);

export function readVars(env: Env): Vars {
  const source = env as unknown as Record<string, unknown>;
  return validated.remember(VAR_NAMES.map((name) => source[name]).join("\n"), () => {
    const parsed = varsSchema.safeParse(env);
    if (!parsed.success) throw new Error(`Invalid configuration: ${z.prettifyError(parsed.error)}`);
    return parsed.data;
  });
}
