import { CimdFetchError, type GrantSummary, type OAuthHelpers } from "@cloudflare/workers-oauth-provider";
import { Hono } from "hono";
import { publicBase } from "../env";
import { oauthHelpers, SCOPE_DESCRIPTIONS } from "../oauth/authorizationServer";
import { shownClientName } from "../oauth/clientNames";
import type { SessionAccount } from "../accounts/browserSessions";
import { dateTime } from "./format";
import { Page, render } from "./layout";
import { signedIn, type WebEnv } from "./session";

/**
 * Connections: the MCP clients this account approved through OAuth (one grant per approval;
 * grants are stored under the account's id). Disconnecting revokes the grant, which deletes
 * its access and refresh tokens with it, so they stop working at once.
 */
export const connectionsPages = new Hono<WebEnv>();

/** Grants asked of the library at once (it answers at most 1,000). */
const GRANTS_PER_PAGE = 100;

interface Connection {
  grantId: string;
  clientName: string;
  redirectHost: string;
  scopes: string[];
  approvedAt: Date;
}

/**
 * The account's grants, page by page through the library's cursor: it lists them in grant-id
 * order, not by age, so a first page alone would leave out arbitrary ones.
 */
async function* grantPages(helpers: OAuthHelpers, accountId: string): AsyncGenerator<GrantSummary[]> {
  let cursor: string | undefined;
  do {
    const page = await helpers.listUserGrants(accountId, { limit: GRANTS_PER_PAGE, cursor });
    yield page.items;
    cursor = page.cursor;
  } while (cursor);
}

async function connectionsOf(helpers: OAuthHelpers, accountId: string): Promise<Connection[]> {
  const grants: GrantSummary[] = [];
  for await (const page of grantPages(helpers, accountId)) grants.push(...page);
  const connections = await Promise.all(grants.map((grant) => describe(helpers, grant)));
  return connections.sort((a, b) => b.approvedAt.getTime() - a.approvedAt.getTime());
}

/** Whether the account holds this grant; its client is not looked up (that may fetch its metadata document). */
async function hasGrant(helpers: OAuthHelpers, accountId: string, grantId: string): Promise<boolean> {
  for await (const page of grantPages(helpers, accountId)) if (page.some((grant) => grant.id === grantId)) return true;
  return false;
}

async function describe(helpers: OAuthHelpers, grant: GrantSummary): Promise<Connection> {
  let client = null;
  try {
    client = await helpers.lookupClient(grant.clientId);
  } catch (error) {
    // A metadata-document client whose document cannot be fetched now is still listed, by its id.
    if (!(error instanceof CimdFetchError)) throw error;
  }
  const redirect = grant.redirectUri ?? client?.redirectUris[0];
  let redirectHost = "unknown";
  try {
    if (redirect) redirectHost = new URL(redirect).host;
  } catch {
    // Not a URL: leave it unknown.
  }
  return {
    grantId: grant.id,
    clientName: shownClientName(client?.clientName, grant.clientId),
    redirectHost,
    scopes: grant.scope,
    // The library keeps Unix seconds.
    approvedAt: new Date(grant.createdAt * 1000),
  };
}

function ConnectionsPage(props: { account: SessionAccount; connections: Connection[]; notice?: string | undefined }) {
  return (
    <Page title="Connections" account={props.account} section="connections">
      <h1>Connections</h1>
      <p class="muted">
        AI tools you allowed to use this account through MCP. Disconnecting one signs it out at once: its tokens stop working, and it has to
        ask you again.
      </p>
      {props.notice && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
      {props.connections.length === 0 ? (
        <p class="card">
          No connected applications. Point an MCP client at <code>/mcp</code> to connect one.
        </p>
      ) : (
        <section class="table-wrap" tabindex={0} aria-labelledby="connections-caption">
          <table>
            <caption id="connections-caption">Connected applications</caption>
            <thead>
              <tr>
                <th scope="col">Application</th>
                <th scope="col">Sends access to</th>
                <th scope="col">Can</th>
                <th scope="col">Approved</th>
                <th scope="col">
                  <span class="muted">Action</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {props.connections.map((connection) => (
                <tr>
                  <td>{connection.clientName}</td>
                  <td>{connection.redirectHost}</td>
                  <td>
                    <ul>
                      {connection.scopes.map((scope) => (
                        <li>{SCOPE_DESCRIPTIONS[scope] ?? scope}</li>
                      ))}
                    </ul>
                  </td>
                  <td>{dateTime(connection.approvedAt)}</td>
                  <td>
                    <form method="post" action={`/portal/connections/${encodeURIComponent(connection.grantId)}/disconnect`}>
                      <button type="submit" class="danger" aria-label={`Disconnect ${connection.clientName}`}>
                        Disconnect
                      </button>
                    </form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </Page>
  );
}

connectionsPages.get("/connections", signedIn, async (c) => {
  const account = c.get("account");
  const connections = await connectionsOf(oauthHelpers(c.env, publicBase(c.env, c.req.url)), account.id);
  const notice = c.req.query("disconnected") ? "Disconnected: that application's tokens no longer work." : undefined;
  return render(c, <ConnectionsPage account={account} connections={connections} notice={notice} />);
});

connectionsPages.post("/connections/:grantId/disconnect", signedIn, async (c) => {
  const account = c.get("account");
  const helpers = oauthHelpers(c.env, publicBase(c.env, c.req.url));
  const grantId = c.req.param("grantId");
  // Only a grant of this account: the library files grants under their user, the account id.
  if (!(await hasGrant(helpers, account.id, grantId)))
    return render(
      c,
      <ConnectionsPage
        account={account}
        connections={await connectionsOf(helpers, account.id)}
        notice="That connection no longer exists."
      />,
      404,
    );
  await helpers.revokeGrant(grantId, account.id);
  return c.redirect("/portal/connections?disconnected=1", 303);
});
