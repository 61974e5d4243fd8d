import { Hono } from "hono";
import { listChanges, type PublishedChange } from "../catalogue/changes";
import type { AppEnv } from "../lib/context";
import { catalogueReader } from "../lib/db";
import { normaliseDomain, registrableDomain } from "../lib/domain";
import { dateTime } from "./format";
import { Page, render } from "./layout";

/**
 * `GET /changes`: the public change log as a page (the same entries as GET /v1/changes), newest
 * first, fifty a page: what verified owners changed of their brands and how they proved it,
 * takedowns, operators' replacements, icons a refresh replaced.
 */
export const changesPage = new Hono<AppEnv>();

const PAGE_SIZE = 50;

const changeLabels: Record<string, string> = {
  icon: "Icon replaced",
  full: "Full logo replaced",
  name: "Name changed",
  brand_color: "Brand colour changed",
  verified: "Owner verified",
  lapsed: "Owner's verification lapsed",
  takedown: "Logos taken down",
  takedown_lifted: "Takedown lifted",
};

const methodLabels: Record<string, string> = {
  dns: "owner, by DNS record",
  well_known: "owner, by file on the site",
  operator: "operator",
  refresh: "the site's own icon changed",
};

function ChangesPage(props: { changes: PublishedChange[]; domain: string | undefined; next: number | null }) {
  const query = (before: number) =>
    `/changes?${new URLSearchParams({ ...(props.domain ? { domain: props.domain } : {}), before: String(before) })}`;
  return (
    <Page title={props.domain ? `Changes of ${props.domain}` : "Change log"} indexable>
      <h1>{props.domain ? `Changes of ${props.domain}` : "Change log"}</h1>
      <p class="hint">
        Every change a domain's verified owner made to its logo, name or colour, every takedown, and every logo replaced since. Also as
        JSON: <a href="/v1/changes">/v1/changes</a>.
      </p>
      {props.changes.length === 0 ? (
        <p>No changes{props.domain ? ` of ${props.domain}` : ""} yet.</p>
      ) : (
        <section class="table-wrap" tabindex={0} aria-labelledby="changes-caption">
          <table>
            <caption id="changes-caption" class="visually-hidden">
              Changes, newest first
            </caption>
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Domain</th>
                <th scope="col">What changed</th>
                <th scope="col">Detail</th>
                <th scope="col">On whose authority</th>
              </tr>
            </thead>
            <tbody>
              {props.changes.map((change) => (
                <tr>
                  <td>{dateTime(Date.parse(change.at))}</td>
                  <td>
                    <a href={`/changes?domain=${encodeURIComponent(change.domain)}`}>{change.domain}</a>
                  </td>
                  <td>{changeLabels[change.change] ?? change.change}</td>
                  <td>{change.detail ?? ""}</td>
                  <td>{methodLabels[change.method] ?? change.method}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      {props.next !== null && (
        <p>
          <a href={query(props.next)}>Older changes</a>
        </p>
      )}
    </Page>
  );
}

changesPage.get("/", async (c) => {
  const typed = c.req.query("domain");
  const host = typed ? normaliseDomain(typed) : undefined;
  const domain = host?.ok ? (registrableDomain(host.domain) ?? host.domain) : undefined;
  const beforeText = c.req.query("before");
  const before = beforeText && /^[1-9]\d{0,14}$/.test(beforeText) ? Number(beforeText) : undefined;
  const changes = await listChanges(catalogueReader(c.env.DB), { before, domain, limit: PAGE_SIZE });
  return render(
    c,
    <ChangesPage changes={changes} domain={domain} next={changes.length === PAGE_SIZE ? changes.at(-1)!.id : null} />,
    200,
    "public",
  );
});
