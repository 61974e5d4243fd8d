import { z } from "zod";

/**
 * Query parameters as the spec's tables define them. Strict on purpose: "12px", "1e2",
 * " 5" or "5.0" are malformed, not rounded, and each failure names its parameter.
 */
export function integerParam(name: string, min: number, max: number) {
  const message = `Invalid ${name}: must be a whole number from ${min} to ${max}`;
  return z
    .string({ message })
    .regex(/^[0-9]{1,6}$/, message)
    .transform(Number)
    .pipe(z.number().min(min, message).max(max, message));
}

const TRUE = ["true", "1", "yes"];
const FALSE = ["false", "0", "no"];

export function booleanParam(name: string) {
  const message = `Invalid ${name}: must be true, 1, yes, false, 0 or no`;
  return z
    .string({ message })
    .transform((value) => value.toLowerCase())
    .refine((value) => TRUE.includes(value) || FALSE.includes(value), message)
    .transform((value) => TRUE.includes(value));
}

/** The first issue's message: the one an API caller gets back. */
export function firstMessage(error: z.ZodError): string {
  return error.issues[0]?.message ?? "Invalid request";
}

/**
 * The most a sign-in or portal form's body may hold (hono/body-limit): none comes near it (a
 * key's allowed origins take at most 32 KB), and a larger one, which pages open to anyone
 * would otherwise read whole, is refused with 413 before it is read.
 */
export const MAX_FORM_BYTES = 64 * 1024;

/**
 * A form body's fields, or none when the body cannot be read as a form (multipart without its
 * boundary, cut off): the form's own checks then answer as for missing fields, where Hono's
 * parser threw and the page answered 500.
 */
export async function formFields(request: {
  parseBody(): Promise<Record<string, string | File | (string | File)[]>>;
}): Promise<Record<string, unknown>> {
  try {
    return await request.parseBody();
  } catch {
    return {};
  }
}
