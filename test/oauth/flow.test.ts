import { describe, expect, it } from "vitest";
import { approveAs, authorizeUrl, BASE, Browser, callMcp, exchangeCode, mcpAccount, pkcePair, registerClient, REDIRECT_URI } from "./helpers";

describe("the OAuth flow by hand", () => {
  it("registers, signs in, approves, exchanges and calls /mcp", async () => {
    const account = await mcpAccount();
    const clientId = await registerClient();
    const { verifier, challenge } = await pkcePair();
    const back = await approveAs(new Browser(), authorizeUrl(clientId, challenge), account.email);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get("state")).toBe("state-123");
    expect(back.searchParams.get("iss")).toBe(BASE);
    const token = await exchangeCode(clientId, back.searchParams.get("code")!, verifier);
    expect(token.status).toBe(200);
    const tokens = (await token.json()) as { access_token: string; refresh_token: string; resource?: string; scope: string };
    const listed = await callMcp(tokens.access_token);
    console.log(listed.status, await listed.text());
  });
});
