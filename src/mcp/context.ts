import type { LogoOverride, Plan } from "../../schema";
import type { CatalogueDb, Db } from "../lib/db";
import type { Toolset } from "../limits/mcpLimits";

/** Who is calling /mcp, as the endpoint established it before any tool runs. */
export interface McpCaller {
  accountId: string;
  /** The account's API client: what per-client limits (feedback) count against. */
  clientId: string;
  /** The OAuth client (agent application) the access token was issued to. */
  oauthClientId: string;
  plan: Plan;
  /** Whether the account's owner confirmed its email address (its discovery budget depends on it). */
  emailConfirmed: boolean;
  /** The request's address (limitedAddress), for the per-address discovery budget; null when it has none. */
  address: string | null;
  toolset: Toolset;
  /** Public origin for the URLs tools hand out. */
  base: string;
  /** This call's place in the plan's request window, for `_meta.usage`; null when unlimited. */
  requests: { current: number; limit: number } | null;
}

/** Everything a tool or resource handler works with: one per request, never shared. */
export interface ToolContext {
  /** The account's own logos by domain (src/corrections/overrides.ts), read once per request when a tool first asks. */
  overrides: () => Promise<ReadonlyMap<string, LogoOverride>>;
  caller: McpCaller;
  env: Env;
  /** Accounts, limits, feedback: the primary database. */
  db: Db;
  /** Catalogue reads: this request's D1 session, served by the nearest replica where replicated. */
  catalogue: CatalogueDb;
  /** Work to finish after the response (cache writes). */
  defer: (work: Promise<unknown>) => void;
  /**
   * Base64 characters this request's answer may still carry (MAX_REQUEST_BASE64_CHARS at its
   * start): the calls of a JSON-RPC batch share it (src/mcp/delivery.ts, base64Within).
   */
  base64Left: number;
}
