import { constantTimeEqual, toHex } from "../src/lib/encoding";

/**
 * The tool workers (the import writer, admin's discovery) listen on a loopback port for the
 * process that started them, for as long as it runs: days for a bulk import, against the
 * deployment's storage with `--remote`. Any other process on the machine can reach that port,
 * so each run makes a token, hands it to its worker as the TOOL_TOKEN var, and sends it with
 * every request; the worker answers nothing else.
 */
export function newToolToken(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(32)));
}

export const toolAuthorization = (token: string) => ({ authorization: `Bearer ${token}` });

/** Whether a request to a tool worker comes from the process that started it (compared in constant time). */
export function fromTool(request: Request, token: string | undefined): boolean {
  if (!token) return false;
  const encoder = new TextEncoder();
  return constantTimeEqual(
    encoder.encode(request.headers.get("authorization") ?? ""),
    encoder.encode(toolAuthorization(token).authorization),
  );
}

export const NOT_FROM_TOOL = () => new Response("Unauthorized", { status: 401 });
