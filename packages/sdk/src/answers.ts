import { errorForStatus, type LogoLookupError, NetworkError } from "./errors.js";
import type { Logo, LogoMetadata } from "./types.js";

/** What the service's answers say: a logo's bytes and metadata, or an error. */

export const logoOf = async (response: Response): Promise<Logo> => ({
  ...metadataOf(response),
  bytes: new Uint8Array(await response.arrayBuffer()),
});

/** The body, its failure while read (the connection dropped, the time ran out) a NetworkError. */
export function brokenOffAsNetworkError(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (cause) {
        controller.error(new NetworkError(`The answer broke off: ${messageOf(cause)}`, cause));
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

const SOURCES: readonly string[] = ["catalogue", "discovered", "owner", "override", "monogram"] satisfies LogoMetadata["source"][];
const sourceOf = (value: string): LogoMetadata["source"] => (SOURCES.includes(value) ? (value as LogoMetadata["source"]) : "catalogue");
const dateOf = (value: string): Date | null => (value && !Number.isNaN(Date.parse(value)) ? new Date(value) : null);

function metadataOf(response: Response): LogoMetadata {
  const header = (name: string) => response.headers.get(name) ?? "";
  const number = (name: string) => Number(header(name));
  return {
    logoId: number("x-logo-id"),
    companyId: number("x-company-id"),
    companyName: decodeURIComponent(header("x-company-name")),
    domain: header("x-logo-domain"),
    variant: header("x-logo-variant") === "full" ? "full" : "icon",
    width: number("x-logo-width"),
    height: number("x-logo-height"),
    sourceWidth: number("x-source-width"),
    sourceHeight: number("x-source-height"),
    contentType: header("content-type"),
    source: sourceOf(header("x-logo-source")),
    updatedAt: dateOf(header("x-logo-updated")),
    format: formatOf(header("content-type")),
    brandColor: /^#[0-9a-f]{6}$/.test(header("x-brand-color")) ? header("x-brand-color") : null,
  };
}

/** The service's plain-text messages are a short line; anything longer is not one of them. */
const MAX_PLAIN_MESSAGE = 500;

const FORMATS: Record<string, string> = {
  "image/png": "png",
  "image/webp": "webp",
  "image/avif": "avif",
  "image/jpeg": "jpg",
  "image/svg+xml": "svg",
};
const formatOf = (contentType: string) => FORMATS[contentType.split(";")[0]!.trim()] ?? contentType;

/**
 * The service answers lookups in plain text (one short line) and its JSON surfaces as
 * `{error: <message>, code: <code>}`; servers before that shape answered `{error: {code,
 * message}}`, read too. Without a code in the body, the error's code is the status's
 * (errorForStatus). Any other body (a proxy's HTML error page) is not a message: the status
 * line stands for it.
 */
export async function errorFrom(response: Response): Promise<LogoLookupError> {
  const text = (await response.text().catch(() => "")).trim();
  let message = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ""}`;
  let code: string | null = null;
  const type = response.headers.get("content-type") ?? "";
  if (type.startsWith("text/plain") && text && text.length <= MAX_PLAIN_MESSAGE && !text.includes("\n")) message = text;
  try {
    const body = JSON.parse(text) as { error?: string | { code?: string; message?: string }; code?: string };
    const error = typeof body.error === "string" ? { message: body.error, code: body.code } : body.error;
    if (typeof error?.message === "string" && error.message) {
      message = error.message;
      code = error.code ?? null;
    }
  } catch {
    // Not the JSON shape.
  }
  return errorForStatus(response.status, message, code);
}

const messageOf = (cause: unknown) => (cause instanceof Error ? cause.message : String(cause));
