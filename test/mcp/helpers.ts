import { type CallToolResult, Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import type { Plan } from "../../schema";
import { oauthHelpers } from "../../src/oauth/authorizationServer";
import { addCompany } from "../helpers/catalogue";
import type { Identifier } from "../../src/catalogue/identifiers";
import type { PreparedImage } from "../../src/catalogue/importLogo";
import { darkLogo40x20 } from "../fixtures/images";
import { fetchWith } from "../lookup/helpers";
import { authorizeUrl, BASE, exchangeCode, mcpAccount, pkcePair, registerClient } from "../oauth/helpers";

/**
 * An agent connected to /mcp with the MCP SDK's own client. The access token comes from the
 * real authorization server and token endpoint; only the interactive sign-in and consent
 * (tested in test/oauth) are skipped by completing the authorization as the consent page would.
 */
export async function accessToken(accountId: string): Promise<{ token: string; clientId: string }> {
  const clientId = await registerClient();
  const { verifier, challenge } = await pkcePair();
  const helpers = oauthHelpers(env, BASE);
  const request = await helpers.parseAuthRequest(new Request(authorizeUrl(clientId, challenge)));
  const { redirectTo } = await helpers.completeAuthorization({
    request,
    userId: accountId,
    metadata: {},
    scope: request.scope,
    props: { accountId },
  });
  const code = new URL(redirectTo).searchParams.get("code")!;
  const response = await exchangeCode(clientId, code, verifier);
  if (response.status !== 200) throw new Error(`token: ${response.status} ${await response.text()}`);
  return { token: ((await response.json()) as { access_token: string }).access_token, clientId };
}

export type Era = "2025" | "2026";

export async function connect(token: string, options: { toolset?: "three"; era?: Era; env?: Partial<Env> } = {}): Promise<Client> {
  const url = new URL(`${BASE}/mcp${options.toolset ? `?toolset=${options.toolset}` : ""}`);
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    // With other bindings than the runtime's, as a deployment's would behave otherwise.
    fetch: (input, init) =>
      options.env
        ? fetchWith(options.env, String(input instanceof Request ? input.url : input), init)
        : exports.default.fetch(new Request(input, init)),
  });
  const client = new Client(
    { name: "logo-tests", version: "1.0.0" },
    { versionNegotiation: { mode: options.era === "2026" ? "auto" : "legacy" } },
  );
  await client.connect(transport);
  return client;
}

export async function agent(plan: Plan = "launch", options: { toolset?: "three"; era?: Era; env?: Partial<Env> } = {}) {
  const account = await mcpAccount(plan);
  const { token, clientId } = await accessToken(account.id);
  const client = await connect(token, options);
  const call = (name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
  return { account, token, oauthClientId: clientId, client, call };
}

/** The structured result of a successful call, after checking the text carries the same JSON. */
export function structured<T = Record<string, unknown>>(result: CallToolResult): T {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  const text = result.content.find((block) => block.type === "text");
  expect(text && JSON.parse(text.text)).toEqual(result.structuredContent);
  return result.structuredContent as T;
}

/** The message of a failed call: `isError` and one text block, nothing structured. */
export function failure(result: CallToolResult): string {
  expect(result.isError).toBe(true);
  expect(result.structuredContent).toBeUndefined();
  const [block] = result.content;
  expect(block?.type).toBe("text");
  return (block as { text: string }).text;
}

let companies = 0;
/** A company with an icon and, optionally, a wordmark, both 40×20 PNGs. */
export async function company(
  name: string,
  domains: string[],
  options: {
    full?: boolean;
    icon?: boolean;
    ticker?: string;
    identifiers?: Identifier[];
    aliases?: string[];
    prominence?: number;
    brandColor?: string;
    image?: PreparedImage;
  } = {},
) {
  const base = {
    name,
    domains,
    aliases: options.aliases ?? [],
    prominence: options.prominence ?? 0,
    brandColor: options.brandColor,
    ...(options.ticker ? { ticker: { symbol: options.ticker, exchange: "NYSE" } } : {}),
    identifiers: options.identifiers,
  };
  const image = { ...(options.image ?? darkLogo40x20()), contentHash: `${++companies}`.padStart(64, "a") };
  const ids: { companyId: number; icon?: number; full?: number } = { companyId: 0 };
  if (options.icon !== false) {
    const icon = await addCompany({ ...base, variant: "icon" }, image);
    ids.companyId = icon.companyId;
    ids.icon = icon.logoId;
  }
  if (options.full) {
    const full = await addCompany({ ...base, variant: "full" }, { ...image, contentHash: `${image.contentHash.slice(1)}f` });
    ids.companyId = full.companyId;
    ids.full = full.logoId;
  }
  return ids;
}

export const assetPath = (url: string) => new URL(url).pathname;
