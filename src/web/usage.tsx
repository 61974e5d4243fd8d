import { Hono } from "hono";
import { keysInUseSince, type ListedKey } from "../keys/apiKeys";
import { createDb } from "../lib/db";
import { type DailyUsage, dailyUsage } from "../limits/history";
import { lastDays } from "../limits/periods";
import type { SessionAccount } from "../accounts/browserSessions";
import { BarChart } from "./chart";
import { count, day, keyLabel } from "./format";
import { Page, render } from "./layout";
import { signedIn, type WebEnv } from "./session";

/**
 * Usage of the last 30 days, per UTC day: lookups per key and in all, MCP calls, unique
 * companies. Read from the limiters that count them (they keep 100 days); drawn as charts, the
 * same numbers as a table, and as CSV.
 */
export const usagePages = new Hono<WebEnv>();

export const USAGE_DAYS = 30;

interface Report {
  usage: DailyUsage;
  /** Keys shown as columns: live ones, and revoked ones that served lookups in the period. */
  keys: Array<{ key: ListedKey; counts: number[] }>;
}

async function report(env: Env, account: SessionAccount): Promise<Report> {
  const now = Date.now();
  const keys = await keysInUseSince(createDb(env.DB), account.id, new Date(lastDays(USAGE_DAYS, now)[0]!));
  const usage = await dailyUsage(env, account.id, account.plan, keys, USAGE_DAYS, now);
  return {
    usage,
    keys: keys
      .map((key, i) => ({ key, counts: usage.lookups[i]!.counts }))
      .filter(({ key, counts }) => key.revokedAt === null || counts.some((n) => n > 0)),
  };
}

function UsagePage(props: { account: SessionAccount; report: Report }) {
  const { usage, keys } = props.report;
  const newestFirst = usage.days.map((_, i) => usage.days.length - 1 - i);
  return (
    <Page title="Usage" account={props.account} section="usage">
      <h1>Usage</h1>
      <p class="muted">
        The last {USAGE_DAYS} days, by UTC day. Lookups count when an edge server reserves them for a key, so today's figure may run a few
        ahead of the lookups served.
      </p>
      <section class="card" aria-labelledby="charts-heading">
        <h2 id="charts-heading">Last {USAGE_DAYS} days</h2>
        <div class="charts">
          <figure>
            <figcaption>Lookups</figcaption>
            <BarChart
              id="chart-lookups"
              title="Lookups a day"
              days={usage.days}
              values={usage.totalLookups}
              color="#1d4ed8"
              describedBy="usage-table-caption"
            />
          </figure>
          <figure>
            <figcaption>MCP calls</figcaption>
            <BarChart
              id="chart-mcp"
              title="MCP calls a day"
              days={usage.days}
              values={usage.mcpCalls}
              color="#6941c6"
              describedBy="usage-table-caption"
            />
          </figure>
          <figure>
            <figcaption>Unique companies</figcaption>
            <BarChart
              id="chart-companies"
              title="Unique companies a day"
              days={usage.days}
              values={usage.companies}
              color="#067647"
              describedBy="usage-table-caption"
            />
          </figure>
        </div>
        <p class="actions">
          <a class="button" href="/portal/usage.csv" download>
            Download CSV
          </a>
        </p>
      </section>
      <section class="table-wrap" tabindex={0} aria-labelledby="usage-table-caption">
        <table>
          <caption id="usage-table-caption">Usage per day, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              {keys.map(({ key }) => (
                <th scope="col" class="num">
                  <span class="key">{keyLabel(key)}</span>
                </th>
              ))}
              <th scope="col" class="num">
                Lookups
              </th>
              <th scope="col" class="num">
                MCP calls
              </th>
              <th scope="col" class="num">
                Companies
              </th>
            </tr>
          </thead>
          <tbody>
            {newestFirst.map((i) => (
              <tr>
                <th scope="row">{day(usage.days[i]!)}</th>
                {keys.map(({ counts }) => (
                  <td class="num">{count(counts[i]!)}</td>
                ))}
                <td class="num">{count(usage.totalLookups[i]!)}</td>
                <td class="num">{count(usage.mcpCalls[i]!)}</td>
                <td class="num">{count(usage.companies[i]!)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </Page>
  );
}

usagePages.get("/usage", signedIn, async (c) => {
  const account = c.get("account");
  return render(c, <UsagePage account={account} report={await report(c.env, account)} />);
});

/** RFC 4180: fields with commas, quotes or line breaks are quoted. Key labels never need it, but stay safe. */
const csvField = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value);

usagePages.get("/usage.csv", signedIn, async (c) => {
  const account = c.get("account");
  const { usage, keys } = await report(c.env, account);
  const header = ["date", ...keys.map(({ key }) => `lookups ${keyLabel(key)}`), "lookups", "mcp_calls", "companies"];
  const rows = usage.days.map((start, i) => [
    day(start),
    ...keys.map(({ counts }) => String(counts[i])),
    String(usage.totalLookups[i]),
    String(usage.mcpCalls[i]),
    String(usage.companies[i]),
  ]);
  // With a byte-order mark: spreadsheets read a CSV without one in the system's code page, and
  // the key labels' "…" would show as "â€¦".
  const csv = `\uFEFF${[header, ...rows].map((row) => row.map(csvField).join(",")).join("\r\n")}\r\n`;
  return c.body(csv, 200, {
    "Content-Type": "text/csv; charset=utf-8",
    "Content-Disposition": `attachment; filename="usage-${day(Date.now())}.csv"`,
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
  });
});
