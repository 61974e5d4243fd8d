import type { Context } from "hono";
import { carriesSecretKey, keyTypeOf, SECRET_KEY_IN_URL, visiblePrefix } from "../keys/format";
import { checkRestrictions } from "../keys/restrictions";
import { unknownKeysRefusal, verifyAskedKey } from "../keys/unknownKeys";
import type { VerifiedKey } from "../keys/verify";
import type { AppEnv } from "../lib/context";
import { bearerToken, plainText } from "../lib/responses";
import { ANY_ORIGIN, SECRET_CALLER } from "./headers";

const INVALID_TOKEN = "Missing or invalid token";

/** `cors`: the headers every answer to this caller carries because of who it is (CORS, Vary). */
export type Caller = { kind: "publishable" | "secret"; cors: Record<string, string>; key: VerifiedKey };

/** Who is asking: a publishable key from the query, or a secret key from the Authorization header. */
export async function identify(c: Context<AppEnv>): Promise<Identified> {
  const db = c.var.ctx.db;
  const token = c.req.query("token");
  const authorization = c.req.header("authorization");
  const bearer = bearerToken(authorization);

  // A secret key anywhere in a URL is refused outright (and, like every key, never logged).
  if (carriesSecretKey(c.req.url)) return { ok: false, response: plainText(SECRET_KEY_IN_URL, 401, ANY_ORIGIN) };

  // A page's own bearer (an app's session token that a fetch wrapper adds to every request, a
  // gateway's) is not ours to judge when the URL carries the publishable key: only a bearer
  // shaped like a secret key, or one standing alone, is the credential.
  const asked = (presented: string) => {
    c.var.ctx.keyPrefix = visiblePrefix(presented);
    return verifyAskedKey(db, c.env, c.req.raw, presented, c.var.ctx.defer);
  };
  if (bearer !== undefined && (keyTypeOf(bearer) === "secret" || token === undefined)) {
    const key = keyTypeOf(bearer) === "secret" ? await asked(bearer) : null;
    if (key === "refused") return { ok: false, response: unknownKeysRefused() };
    if (!key) return { ok: false, response: plainText(INVALID_TOKEN, 401, { "WWW-Authenticate": "Bearer", ...ANY_ORIGIN }) };
    return { ok: true, caller: { kind: "secret", key, cors: SECRET_CALLER } };
  }

  const key = token !== undefined && keyTypeOf(token) === "publishable" ? await asked(token) : null;
  if (key === "refused") return { ok: false, response: unknownKeysRefused() };
  return publishableCaller(c.req.raw.headers, key);
}

/** An address past the limit on unknown keys (src/keys/unknownKeys.ts): the spec's 429, readable by a page's script as a 401 is. */
const unknownKeysRefused = () => plainText("Rate limit exceeded", 429, { ...unknownKeysRefusal(), ...ANY_ORIGIN });

export type Identified = { ok: true; caller: Caller } | { ok: false; response: Response };

export function publishableCaller(headers: Headers, key: Caller["key"] | null): Identified {
  if (!key) return { ok: false, response: plainText(INVALID_TOKEN, 401, ANY_ORIGIN) };
  const restriction = checkRestrictions(key, headers);
  if (!restriction.ok) return { ok: false, response: plainText(restriction.message, 403, restriction.headers) };
  return { ok: true, caller: { kind: "publishable", key, cors: restriction.cors } };
}
