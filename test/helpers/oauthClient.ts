const REDIRECT_URI = "http://127.0.0.1:33418/callback";

/**
 * An access token for `<base>/mcp`, obtained the way an MCP client obtains one: client
 * registration, sign-in and consent in the pages a browser would see, then the code exchanged
 * with PKCE. For Node-side runs against a Worker on workerd (conformance, load).
 */
export async function accessTokenThroughOAuth(base: string, email: string, password: string): Promise<string> {
  const cookies = new Map<string, string>();
  const browse = async (url: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (cookies.size) headers.set("Cookie", [...cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    const response = await fetch(new URL(url, base), { ...init, headers, redirect: "manual" });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const at = pair!.indexOf("=");
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    return response;
  };
  // Browsers name the origin of every form post; the sign-in and consent pages check it.
  const form = (fields: Record<string, string>) => ({
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: new URL(base).origin },
    body: new URLSearchParams(fields).toString(),
  });
  const resource = new URL("/mcp", base).href;

  const registered = await fetch(new URL("/oauth/register", base), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: "Logo lookup test client",
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
    }),
  });
  if (registered.status !== 201) throw new Error(`client registration answered ${registered.status}: ${await registered.text()}`);
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  // PKCE S256 (RFC 7636 §4.1–4.2).
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  const challenge = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))).toString("base64url");
  const authorize = `/authorize?${new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    scope: "logos offline_access",
    state: "test",
    code_challenge: challenge,
    code_challenge_method: "S256",
    resource,
  })}`;
  const signedIn = await browse(authorize, form({ step: "sign-in", email, password }));
  if (signedIn.status !== 303) throw new Error(`sign-in answered ${signedIn.status}`);
  const consent = await (await browse(signedIn.headers.get("location")!)).text();
  const handle = /name="handle" value="([^"]+)"/.exec(consent)?.[1];
  if (!handle) throw new Error("the consent page has no consent form");
  const approved = await browse(authorize, form({ step: "consent", handle, decision: "approve" }));
  const code = new URL(approved.headers.get("location") ?? "", base).searchParams.get("code");
  if (approved.status !== 302 || !code) throw new Error(`consent answered ${approved.status} without a code`);
  const token = await fetch(new URL("/oauth/token", base), {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
      code_verifier: verifier,
      resource,
    }),
  });
  if (!token.ok) throw new Error(`token endpoint answered ${token.status}: ${await token.text()}`);
  return ((await token.json()) as { access_token: string }).access_token;
}
