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
});

export type Vars = z.infer<typeof varsSchema>;

let cached: { source: Env; vars: Vars } | undefined;

export function readVars(env: Env): Vars {
  if (cached?.source === env) return cached.vars;
  const parsed = varsSchema.safeParse(env);
  if (!parsed.success) throw new Error(`Invalid configuration: ${z.prettifyError(parsed.error)}`);
  cached = { source: env, vars: parsed.data };
  return parsed.data;
}
