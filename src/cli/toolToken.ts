/**
 * The tool workers (the import writer, admin's discovery) listen on a loopback port for the
 * process that started them, for as long as it runs: days for a bulk import, against the
 * deployment's storage with `--remote`. Any other process on the machine can reach that port,
 * so each run makes a token, hands it to its worker as the TOOL_TOKEN var, and sends it with
 * every request; the worker answers nothing else.
 */
export function newToolToken(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(32)), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

export const toolAuthorization = (token: string) => ({ authorization: `Bearer ${token}` });

/** Whether a request to a tool worker comes from the process that started it (in workerd: compared in constant time). */
export function fromTool(request: Request, token: string | undefined): boolean {
  if (!token) return false;
  const given = new TextEncoder().encode(request.headers.get("authorization") ?? "");
  const expected = new TextEncoder().encode(`Bearer ${token}`);
  return given.byteLength === expected.byteLength && crypto.subtle.timingSafeEqual(given, expected);
}

export const NOT_FROM_TOOL = () => new Response("Unauthorized", { status: 401 });
