import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Structured logs: one JSON line per event, `{"level","event","requestId",…fields}`, written
 * through the console method of its level so that Workers Logs (and `wrangler tail`) file it
 * under that level. The request id comes from the request being served (its scope is set by
 * the request context, src/lib/context.ts), so a line written deep in the catalogue or a
 * provider's client is tied to the request and to the error body its caller saw.
 *
 * Nothing secret is ever written: every string is passed through `redact`, which replaces API
 * keys, bearer and OAuth tokens, and provider secrets with their non-secret prefix.
 */
export type LogLevel = "info" | "warn" | "error";

export type LogFields = Record<string, unknown>;

export interface Logger {
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
}

/** What the lines written while a request is served carry: its id. */
export interface LogScope {
  requestId: string;
}

const scope = new AsyncLocalStorage<LogScope>();

/** Runs `work` with `requestScope` as the scope every log line written within it carries. */
export function withLogScope<T>(requestScope: LogScope, work: () => T): T {
  return scope.run(requestScope, work);
}

/** The id of the request being served, if any (a queue batch or a Durable Object's alarm has none). */
export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}

// API keys (`pk_`/`sk_` and 32 base62), OAuth tokens as the provider issues them
// (`{accountId}:{16-char grant}:{32-char secret}`), bearer credentials of any shape, Stripe's
// and the file API's secrets, signed-URL signatures, sessions and device cookies; and the local
// part of an email address (a lookup's `/email/{address}`, a portal user's), plain or %-encoded.
const SECRETS: [RegExp, (match: string, ...groups: string[]) => string][] = [
  [/\b(pk|sk)_([0-9A-Za-z]{6})[0-9A-Za-z]{26}\b/g, (_, type, start) => `${type}_${start}…`],
  [/\b(Bearer\s+)\S+/gi, (_, bearer) => `${bearer}…`],
  [/\b([^\s:"']{1,128}:[\w-]{16}:)[\w-]{32}\b/g, (_, grant) => `${grant}…`],
  [/\b(whsec_|sk_live_|sk_test_|rk_live_|rk_test_|sk-ant-)[\w-]+/g, (_, kind) => `${kind}…`],
  [/\b(sig|signature|token|password|code|session|device)=([^&\s"']+)/gi, (_, name) => `${name}=…`],
  [/(__Host-(?:session|device)=)[^;\s"']+/g, (_, cookie) => `${cookie}…`],
  [/[^\s/@"'<>()[\],;:=?&]{1,64}(@|%40)(?=(?:[\w-]+\.)+[a-z][a-z0-9-]+\b)/gi, (_, at) => `…${at}`],
];

/** `text` with every secret it holds replaced by its non-secret prefix. */
export function redact(text: string): string {
  let out = text;
  for (const [pattern, replace] of SECRETS) out = out.replace(pattern, replace as (match: string) => string);
  return out;
}

/** An error as loggable fields: its name, message, stack and causes, all redacted. */
function errorFields(error: unknown, depth = 0): unknown {
  if (!(error instanceof Error)) return typeof error === "string" ? redact(error) : error;
  const fields: LogFields = { name: error.name, message: redact(error.message) };
  if (error.stack) fields.stack = redact(error.stack);
  if (error.cause !== undefined && depth < 4) fields.cause = errorFields(error.cause, depth + 1);
  return fields;
}

/** A JSON.stringify replacer that redacts strings and spells errors out. */
function safeValue(_key: string, value: unknown): unknown {
  if (typeof value === "string") return redact(value);
  if (value instanceof Error) return errorFields(value);
  if (typeof value === "bigint") return value.toString();
  return value;
}

const write: Record<LogLevel, (line: string) => void> = {
  info: (line) => console.log(line),
  warn: (line) => console.warn(line),
  error: (line) => console.error(line),
};

/** Writes one event as a JSON line. */
export function logEvent(level: LogLevel, event: string, fields: LogFields = {}): void {
  const requestId = currentRequestId();
  let line: string;
  try {
    line = JSON.stringify({ level, event, ...(requestId ? { requestId } : {}), ...fields }, safeValue);
  } catch {
    // A field that cannot be written (a cycle) must not lose the event.
    line = JSON.stringify({ level, event, ...(requestId ? { requestId } : {}), unloggable: true });
  }
  write[level](line);
}

/** The service's logger: every line carries the id of the request it was written for. */
export const log: Logger = {
  info: (event, fields) => logEvent("info", event, fields),
  warn: (event, fields) => logEvent("warn", event, fields),
  error: (event, fields) => logEvent("error", event, fields),
};
