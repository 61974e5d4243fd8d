import { planNames } from "./plans";
import { Hono } from "hono";
import { publicBase, readVars } from "../env";
import { listKeys } from "../keys/apiKeys";
import { accountDiscoveriesPerDay, discoveryUsage } from "../limits/discoveryLimits";
import { dailyUsage } from "../limits/history";
import { accountLookupUsage } from "../limits/lookupLimits";
import { windowEnd } from "../limits/periods";
import { type PlanLimits, planLimits } from "../limits/plans";
import type { SessionAccount } from "../accounts/browserSessions";
import { count, dateTime } from "./format";
import { Page, render } from "./layout";
import { assetImages, keyImages, Playground, typedResult } from "./playground";
import { signedIn, type WebEnv } from "./session";

/**
 * The dashboard: the plan, this month's lookups (all keys together) against the plan's monthly
 * quota, today's MCP calls, companies and
 * discovered domains against the daily caps, when each resets, and the playground.
 */
export const dashboardPages = new Hono<WebEnv>();

interface Overview {
  /** Every key's lookups this month, those revoked this month included: what the monthly quota counts. */
  monthLookups: number;
  mcpToday: number;
  companiesToday: number;
  /** Discoveries of unknown domains the account's requests started today (src/limits/discoveryLimits.ts). */
  discoveriesToday: number;
  /** The account's discoveries a day: its plan's once its email is confirmed, a small budget until then. */
  discoveriesPerDay: number;
  monthResets: number;
  dayResets: number;
}

async function overview(env: Env, account: SessionAccount, now: number): Promise<Overview> {
  const discoveriesPerDay = accountDiscoveriesPerDay(account, readVars(env));
  const [month, today, discoveries] = await Promise.all([
    accountLookupUsage(env, account.id, account.plan, now),
    dailyUsage(env, account.id, account.plan, [], 1, now),
    discoveryUsage(env, account.id, discoveriesPerDay, now),
  ]);
  return {
    monthLookups: month.used,
    mcpToday: today.mcpCalls[0] ?? 0,
    companiesToday: today.companies[0] ?? 0,
    discoveriesToday: discoveries.used,
    discoveriesPerDay,
    monthResets: windowEnd("month", now),
    dayResets: windowEnd("day", now),
  };
}

/** An unconfirmed account is told why its discoveries are few, and can have the link mailed again. */
function ConfirmEmailNotice(props: { email: string; sent: boolean }) {
  return (
    <section class="notice" aria-labelledby="confirm-heading">
      <h2 id="confirm-heading">Confirm your email address</h2>
      <p>
        {props.sent ? "We mailed a new link" : "We mailed a link"} to {props.email}. Until you open it, lookups discover few unknown domains
        a day.
      </p>
      <form method="post" action="/portal/confirm-email/resend">
        <button type="submit" class="secondary">
          Send the link again
        </button>
      </form>
    </section>
  );
}

function mcpCap(limits: PlanLimits): string {
  const { perDay, perDayThreeTool, perMinute } = limits.mcp;
  if (perDay !== null) return `${count(perDay)} a day (${count(perDayThreeTool ?? perDay)} with the three-tool form)`;
  return perMinute !== null ? `no daily cap; ${count(perMinute)} a minute` : "no cap";
}

function DashboardPage(props: {
  account: SessionAccount;
  overview: Overview;
  welcome: boolean;
  /** A confirmation link was just mailed again. */
  confirmationSent: boolean;
  playground: Parameters<typeof Playground>[0];
}) {
  const limits = planLimits[props.account.plan];
  const { overview } = props;
  return (
    <Page title="Dashboard" account={props.account} section="dashboard">
      <h1>Dashboard</h1>
      {!props.account.emailConfirmed && <ConfirmEmailNotice email={props.account.email} sent={props.confirmationSent} />}
      {props.welcome && (
        <p class="notice" role="status">
          Your account is ready. <a href="/portal/keys">Create a publishable key</a> to put logos on your site.
        </p>
      )}
      <div class="grid">
        <section class="card" aria-labelledby="plan-heading">
          <h2 id="plan-heading">Plan</h2>
          <p class="figure">{planNames[props.account.plan]}</p>
          <p class="hint">
            <a href="/portal/billing">Compare plans</a>
          </p>
        </section>
        <section class="card" aria-labelledby="lookups-heading">
          <h2 id="lookups-heading">Lookups this month</h2>
          <p class="figure">{count(overview.monthLookups)}</p>
          <p class="hint" id="lookups-quota">
            All keys together, revoked ones included: {count(overview.monthLookups)} of the plan's {count(limits.lookup.perMonth)}, until{" "}
            {dateTime(overview.monthResets)}.
          </p>
          <meter
            id="lookups-meter"
            min={0}
            max={limits.lookup.perMonth}
            value={Math.min(overview.monthLookups, limits.lookup.perMonth)}
            aria-labelledby="lookups-quota"
          />
          <p class="hint">Each key may make {count(limits.lookup.perMinute)} a minute.</p>
        </section>
        <section class="card" aria-labelledby="mcp-heading">
          <h2 id="mcp-heading">MCP calls today</h2>
          <p class="figure">{count(overview.mcpToday)}</p>
          {limits.mcp.perDay !== null && (
            <meter min={0} max={limits.mcp.perDay} value={Math.min(overview.mcpToday, limits.mcp.perDay)} aria-labelledby="mcp-heading" />
          )}
          <p class="hint">
            Limit: {mcpCap(limits)}. Resets {dateTime(overview.dayResets)}.
          </p>
        </section>
        <section class="card" aria-labelledby="companies-heading">
          <h2 id="companies-heading">Companies today</h2>
          <p class="figure">{count(overview.companiesToday)}</p>
          <meter
            min={0}
            max={limits.companiesPerDay}
            value={Math.min(overview.companiesToday, limits.companiesPerDay)}
            aria-labelledby="companies-heading"
          />
          <p class="hint">
            Unique companies through MCP tools: {count(limits.companiesPerDay)} a day. Resets {dateTime(overview.dayResets)}.
          </p>
        </section>
        <section class="card" aria-labelledby="discoveries-heading">
          <h2 id="discoveries-heading">Domains discovered today</h2>
          <p class="figure">{count(overview.discoveriesToday)}</p>
          <meter
            min={0}
            max={overview.discoveriesPerDay}
            value={Math.min(overview.discoveriesToday, overview.discoveriesPerDay)}
            aria-labelledby="discoveries-heading"
          />
          <p class="hint">
            Sites fetched for domains the catalogue did not know: {count(overview.discoveriesPerDay)} a day; past that, such a domain is a
            plain miss. Resets {dateTime(overview.dayResets)}.
            {overview.discoveriesPerDay < limits.discoveriesPerDay &&
              ` Your plan's ${count(limits.discoveriesPerDay)} a day start once your email address is confirmed.`}
          </p>
        </section>
      </div>
      <Playground {...props.playground} />
    </Page>
  );
}

dashboardPages.get("/", signedIn, async (c) => {
  const account = c.get("account");
  const db = c.var.ctx.db;
  const now = Date.now();
  const keys = await listKeys(db, account.id);
  const publishable = keys.filter((key) => key.type === "publishable" && key.revokedAt === null);
  const selectedKey = publishable.find((key) => key.id === c.req.query("key")) ?? publishable[0];
  const base = publicBase(c.env, c.req.url);
  const typed = c.req.query("domain")?.trim();

  const { result, status } = typed
    ? await typedResult(c, { accountId: account.id }, typed, (logo, domain) =>
        selectedKey ? keyImages(logo, domain, selectedKey.id) : assetImages(c.env, base, logo),
      )
    : { result: null, status: 200 as const };
  return render(
    c,
    <DashboardPage
      account={account}
      overview={await overview(c.env, account, now)}
      welcome={c.req.query("welcome") === "1"}
      confirmationSent={c.req.query("confirmation") === "sent"}
      playground={{ action: "/portal", base, typed, result, keys: publishable, selectedKey, reportable: true }}
    />,
    status,
  );
});
