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

// Keyed by the values themselves: the env object need not be the same from request to request.
const validated = new Map<string, Vars>();

export function readVars(env: Env): Vars {
  const id = `${env.PUBLIC_BASE_URL}\n${env.CDN_URL}\n${env.LOOKUP_RESPONSE}`;
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
