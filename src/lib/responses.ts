/** The lookup and asset routes answer errors in plain text (spec, Errors: domain lookup). */
export function plainText(message: string, status: number, headers: Record<string, string> = {}): Response {
  return new Response(message, { status, headers: { "Content-Type": "text/plain; charset=utf-8", ...headers } });
}
