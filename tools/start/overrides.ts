import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "dotenv";
import { unstable_readConfig } from "wrangler";

/** Every var of wrangler.toml and every secret named in .dev.vars.example. */
export function configurableNames(root: string): string[] {
  const config = unstable_readConfig({ config: join(root, "wrangler.toml") });
  const secrets = readFileSync(join(root, ".dev.vars.example"), "utf8")
    .split("\n")
    .map((line) => /^([A-Z][A-Z0-9_]*)=/.exec(line)?.[1])
    .filter((name): name is string => name !== undefined);
  return [...new Set([...Object.keys(config.vars ?? {}), ...secrets])];
}

/**
 * Writes the project's .dev.vars and the environment's values for those names (which win) to
 * one dotenv file for `wrangler dev --env-file` (readable by the owner only: it may hold
 * secrets, which must stay out of the process list). Returns its path, or undefined when
 * there is nothing to pass. .dev.vars is read as wrangler reads it when it loads the file
 * itself, word for word: given as an --env-file, wrangler would expand `$NAME` in it.
 */
export function writeOverrides(root: string, environment: Record<string, string | undefined>, file: string): string | undefined {
  const values = devVarsOf(join(root, ".dev.vars"));
  for (const name of configurableNames(root)) if (environment[name] !== undefined) values[name] = environment[name];
  const lines = Object.entries(values).map(([name, value]) => `${name}=${literal(name, value)}`);
  if (lines.length === 0) return undefined;
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, `${lines.join("\n")}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

/**
 * A value as wrangler's --env-file reading (dotenv, then dotenv-expand) gives it back word
 * for word: quoted, so that dotenv turns no `\n` into a line break and keeps `#` and spaces,
 * with every `$` escaped, which dotenv-expand would read as a variable (`abc$HOME` became
 * `abc`, a signing secret cut short) and gives back without the backslash.
 */
function literal(name: string, value: string): string {
  const escaped = value.replaceAll("$", "\\$");
  const quote = ["'", "`", '"'].find((mark) => !value.includes(mark) && (mark !== '"' || !/\\[nr]/.test(value)));
  if (!quote) throw new Error(`${name} holds quotes of every kind (' \` "), which wrangler's env files cannot carry`);
  return `${quote}${escaped}${quote}`;
}

/**
 * The deployment's addresses (PUBLIC_BASE_URL, CDN_URL in wrangler.toml) are not the local
 * server's: a local server names its URLs after the request (http://localhost:8787) and
 * redirects to its own /assets, unless the environment or .dev.vars says otherwise.
 */
export function localAddresses(devVars: string, environment: Record<string, string | undefined> = process.env): Record<string, string> {
  const local: Record<string, string> = {};
  for (const name of ["PUBLIC_BASE_URL", "CDN_URL"]) {
    if (environment[name] === undefined && !setInDevVars(devVars, name)) local[name] = "";
  }
  return local;
}

/** Whether the server is given a public address of its own (PUBLIC_BASE_URL, in the environment or .dev.vars). */
export function publicAddressSet(devVars: string, environment: Record<string, string | undefined> = process.env): boolean {
  const value = environment.PUBLIC_BASE_URL ?? devVarsOf(devVars).PUBLIC_BASE_URL;
  return Boolean(value?.trim());
}

/** The values of a .dev.vars file, as wrangler reads it when it loads the file itself (dotenv, nothing expanded); none without one. */
function devVarsOf(devVars: string): Record<string, string> {
  return existsSync(devVars) ? parse(readFileSync(devVars)) : {};
}

/** Whether the project's .dev.vars sets `name`. */
function setInDevVars(devVars: string, name: string): boolean {
  return Object.hasOwn(devVarsOf(devVars), name);
}

/**
 * Signed asset URLs need SIGNED_URL_SECRET. When neither the environment nor .dev.vars sets
 * it, a local server gets a random one, kept in its local state so that URLs handed out stay
 * valid across restarts.
 */
export function localSigningSecret(devVars: string, environment: Record<string, string | undefined> = process.env): Record<string, string> {
  if (environment.SIGNED_URL_SECRET) return {};
  if (setInDevVars(devVars, "SIGNED_URL_SECRET")) return {};
  const file = join(devVars, "..", ".wrangler", "state", "signed-url-secret");
  if (!existsSync(file)) {
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(file, randomBytes(32).toString("base64url"), { mode: 0o600 });
  }
  return { SIGNED_URL_SECRET: readFileSync(file, "utf8").trim() };
}
