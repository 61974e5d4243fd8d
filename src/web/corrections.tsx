import { type Context, Hono } from "hono";
import { type BrandClaim, type LogoVariant, reportKinds } from "../../schema";
import type { SessionAccount } from "../accounts/browserSessions";
import { setOwnerDetails, setOwnerLogo } from "../corrections/brand";
import { listOverrides, type OverrideSummary, removeOverride, setOverride } from "../corrections/overrides";
import { claimsOf, DNS_RECORD_PREFIX, startClaim, verifiedClaim, verifyClaim } from "../corrections/ownership";
import { fileReport, MAX_MESSAGE_LENGTH, reportsOfAccount } from "../corrections/reports";
import { MAX_UPLOAD_BYTES } from "../corrections/upload";
import { OWNERSHIP_FILE_PATH } from "../corrections/wellKnown";
import { findCompanyByDomain } from "../catalogue/companies";
import { publicBase } from "../env";
import { assetUrl } from "../images/assetUrls";
import { catalogueWriter } from "../lib/db";
import { normaliseDomain } from "../lib/domain";
import { formFields } from "../lib/params";
import { dateTime } from "./format";
import { Page, render, SubmitRow } from "./layout";
import { field, signedIn, type WebEnv } from "./session";

/**
 * Corrections (docs/corrections.md): what the account reported and what came of it, the logos it
 * pinned for itself, and the brands it claims as their domain's owner. Forms that work without
 * scripts; every change answers with a redirect back here and a notice, or this page again with
 * the error at its top.
 */
export const correctionsPages = new Hono<WebEnv>();

/** Paths whose forms carry an image: held to MAX_UPLOAD_BYTES (and some room for the form) rather than the portal's 64 KB. */
export const UPLOAD_FORM_PATHS = [/^\/portal\/corrections\/overrides$/, /^\/portal\/corrections\/brands\/[^/]+\/logo$/];
export const MAX_UPLOAD_FORM_BYTES = MAX_UPLOAD_BYTES + 64 * 1024;

const kindLabels: Record<(typeof reportKinds)[number], string> = {
  wrong_logo: "It is the wrong logo",
  outdated: "It is an old logo",
  wrong_name: "The company's name is wrong",
  poor_quality: "It is blurred or badly cut",
  takedown_request: "The owner wants it taken down",
  other: "Something else",
};

const statusLabels = { open: "Open", resolved: "Resolved", dismissed: "Dismissed" } as const;
const actionLabels = {
  rediscover: "the logo was looked up again on the site",
  forget: "the discovered logo was removed",
  replace: "the logo was replaced",
  dismiss: "no change",
} as const;

interface PageState {
  error?: string | undefined;
  notice?: string | undefined;
}

async function CorrectionsPage(props: { c: Context<WebEnv>; account: SessionAccount; state: PageState }) {
  const { c, account, state } = props;
  const db = catalogueWriter(c.env.DB);
  const [reports, overrides, claims] = await Promise.all([
    reportsOfAccount(db, account.id),
    listOverrides(db, account.id),
    claimsOf(db, account.id),
  ]);
  const base = publicBase(c.env, c.req.url);
  return (
    <Page title={state.error ? "Error: Corrections" : "Corrections"} account={account} section="corrections">
      <h1>Corrections</h1>
      <Messages error={state.error} notice={state.notice} />
      <section class="card" aria-labelledby="reports-heading" id="reports">
        <h2 id="reports-heading">Your reports</h2>
        {reports.length === 0 ? (
          <p>
            No reports yet. Seen a wrong logo? Use <strong>Report this logo</strong> under it in the <a href="/portal">playground</a>.
          </p>
        ) : (
          <section class="table-wrap" tabindex={0} aria-labelledby="reports-heading">
            <table>
              <thead>
                <tr>
                  <th scope="col">Logo</th>
                  <th scope="col">Reported</th>
                  <th scope="col">Sent</th>
                  <th scope="col">Status</th>
                  <th scope="col">Outcome</th>
                </tr>
              </thead>
              <tbody>
                {reports.map((report) => (
                  <tr>
                    <td>{report.domain}</td>
                    <td>{kindLabels[report.kind]}</td>
                    <td>{dateTime(report.at)}</td>
                    <td>
                      <span class={`badge ${report.status}`}>{statusLabels[report.status]}</span>
                    </td>
                    <td>
                      {report.status === "open"
                        ? "Waiting for an operator"
                        : `${report.action ? actionLabels[report.action] : ""}${report.note ? `: ${report.note}` : ""}${
                            report.resolvedAt ? ` (${dateTime(report.resolvedAt)})` : ""
                          }`}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        )}
      </section>
      <OverridesSection overrides={overrides} base={base} />
      <BrandsSection claims={claims} />
    </Page>
  );
}

function OverridesSection(props: { overrides: OverrideSummary[]; base: string }) {
  return (
    <section class="card" aria-labelledby="overrides-heading" id="overrides">
      <h2 id="overrides-heading">Your own logos</h2>
      <p class="hint">
        A logo you pin for a domain is what your keys' lookups, your MCP tools and the SDK answer for it, within seconds. Nobody else sees
        it.
      </p>
      {props.overrides.length > 0 && (
        <section class="table-wrap" tabindex={0} aria-labelledby="overrides-heading">
          <table>
            <thead>
              <tr>
                <th scope="col">Domain</th>
                <th scope="col">Logo</th>
                <th scope="col">Pinned</th>
                <th scope="col">
                  <span class="visually-hidden">Remove</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {props.overrides.map((override) => (
                <tr>
                  <td>{override.domain}</td>
                  <td>
                    <img
                      src={`${assetUrl(props.base, override.masterKey)}?maxWidth=64`}
                      alt={`Your logo for ${override.domain}`}
                      width={32}
                      height={Math.max(1, Math.round((32 * override.height) / override.width))}
                    />
                  </td>
                  <td>{dateTime(Date.parse(override.updatedAt))}</td>
                  <td>
                    <form method="post" action="/portal/corrections/overrides/remove">
                      <input type="hidden" name="domain" value={override.domain} />
                      <button type="submit" class="link" aria-label={`Remove your logo for ${override.domain}`}>
                        Remove
                      </button>
                    </form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      <form method="post" action="/portal/corrections/overrides" enctype="multipart/form-data">
        <label for="override-domain">Domain</label>
        <input
          id="override-domain"
          name="domain"
          type="text"
          inputmode="url"
          autocomplete="off"
          spellcheck={false}
          required
          placeholder="acme.com"
        />
        <label for="override-file">Logo (PNG or SVG, up to {MAX_UPLOAD_BYTES / 1024} KB)</label>
        <input id="override-file" name="file" type="file" accept="image/png,image/svg+xml" required />
        <SubmitRow label="Pin this logo" />
      </form>
    </section>
  );
}

const claimStatusLabels = { pending: "Waiting for proof", verified: "Verified", lapsed: "Lapsed: proof gone" } as const;

function BrandsSection(props: { claims: BrandClaim[] }) {
  return (
    <section class="card" aria-labelledby="brands-heading" id="brands">
      <h2 id="brands-heading">Your brands</h2>
      <p class="hint">
        Own a domain? Prove it, and set its logo, name and colour for everyone. Every change is public in the{" "}
        <a href="/changes">change log</a>.
      </p>
      {props.claims.map((claim) => (
        <article class="claim" aria-labelledby={`claim-${claim.id}`}>
          <h3 id={`claim-${claim.id}`}>
            {claim.domain} <span class={`badge ${claim.status}`}>{claimStatusLabels[claim.status]}</span>
          </h3>
          {claim.status === "verified" ? (
            <p>
              {`Verified ${claim.verifiedAt ? dateTime(claim.verifiedAt) : ""} by ${claim.method === "dns" ? "DNS record" : "file on the site"}; checked again daily.`}{" "}
              <a href={`/portal/corrections/brands/${encodeURIComponent(claim.domain)}`}>Edit the brand</a>
            </p>
          ) : (
            <>
              <p>Publish this token in either place, then check:</p>
              <pre>
                <code>{claim.token}</code>
              </pre>
              <ul>
                <li>
                  a TXT record at <code>{`${DNS_RECORD_PREFIX}${claim.domain}`}</code>, or
                </li>
                <li>
                  a line of the file <code>{`https://${claim.domain}${OWNERSHIP_FILE_PATH}`}</code>
                </li>
              </ul>
              <form method="post" action="/portal/corrections/brands/verify">
                <input type="hidden" name="domain" value={claim.domain} />
                <SubmitRow label={`Check ${claim.domain} now`} />
              </form>
            </>
          )}
        </article>
      ))}
      <form method="post" action="/portal/corrections/brands">
        <label for="claim-domain">Claim a domain</label>
        <input
          id="claim-domain"
          name="domain"
          type="text"
          inputmode="url"
          autocomplete="off"
          spellcheck={false}
          required
          placeholder="acme.com"
        />
        <SubmitRow label="Get a verification token" />
      </form>
    </section>
  );
}

async function page(c: Context<WebEnv>, state: PageState, status: 200 | 400 | 403 | 404 | 409 | 413 | 429 = 200) {
  return render(c, await CorrectionsPage({ c, account: c.get("account"), state }), status);
}

const statusOf = (code: string) =>
  (({ invalid_argument: 400, forbidden: 403, not_found: 404, conflict: 409, payload_too_large: 413, rate_limited: 429 }) as const)[
    code as "invalid_argument"
  ] ?? 400;

/**
 * What the last form did, said on the page its redirect leads to: a fixed sentence per outcome
 * and a domain (checked as one), never text taken from the URL as it is.
 */
const notices = {
  reported: (d: string) => `Thank you: your report of ${d}'s logo is in the queue.`,
  pinned: (d: string) => `Your logo for ${d} is pinned: your lookups answer it within seconds.`,
  unpinned: (d: string) => `Your logo for ${d} is removed: the catalogue's logo again.`,
  claimed: (d: string) => `Publish the token for ${d}, then check.`,
  verified: (d: string) => `${d} is verified: you can now set its logo, name and colour.`,
  saved: () => "Saved: live for everyone within a minute.",
  unchanged: () => "Nothing changed.",
  icon: () => "The icon is published: live for everyone within a minute.",
  full: () => "The full logo is published: live for everyone within a minute.",
} as const;
type Notice = keyof typeof notices;

function noticeOf(c: Context): string | undefined {
  const done = c.req.query("done") as Notice | undefined;
  const domain = normaliseDomain(c.req.query("domain") ?? "");
  return done && Object.hasOwn(notices, done) ? notices[done](domain.ok ? domain.domain : "the domain") : undefined;
}

const noticeQuery = (done: Notice, domain: string) => `done=${done}&domain=${encodeURIComponent(domain)}`;

const back = (c: Context, done: Notice, domain: string, anchor: string) =>
  c.redirect(`/portal/corrections?${noticeQuery(done, domain)}#${anchor}`, 303);

correctionsPages.get("/corrections", signedIn, async (c) => page(c, { notice: noticeOf(c) }));

function ReportPage(props: { account: SessionAccount; domain: string; logoId: string; companyName: string | null; error?: string }) {
  return (
    <Page title={props.error ? "Error: Report a logo" : "Report a logo"} account={props.account} section="corrections" narrow>
      <h1>Report the logo of {props.domain}</h1>
      {props.error && (
        <p class="alert" role="alert">
          {props.error}
        </p>
      )}
      {props.companyName && <p class="hint">The catalogue names it {props.companyName}.</p>}
      <form method="post" action="/portal/corrections/report">
        <input type="hidden" name="domain" value={props.domain} />
        <input type="hidden" name="logoId" value={props.logoId} />
        <label for="kind">What is wrong?</label>
        <select id="kind" name="kind">
          {reportKinds.map((kind) => (
            <option value={kind}>{kindLabels[kind]}</option>
          ))}
        </select>
        <label for="message">Tell us more</label>
        <textarea id="message" name="message" rows={4} maxlength={MAX_MESSAGE_LENGTH} required aria-describedby="message-hint" />
        <p class="hint" id="message-hint">
          Where the right logo is, what is wrong with this one. Operators read every report; you see what came of it under Corrections.
        </p>
        <SubmitRow label="Send report" />
      </form>
    </Page>
  );
}

correctionsPages.get("/corrections/report", signedIn, async (c) => {
  const domain = (c.req.query("domain") ?? "").trim().slice(0, 253);
  const logoId = /^\d{1,15}$/.test(c.req.query("logoId") ?? "") ? c.req.query("logoId")! : "";
  if (!domain) return c.redirect("/portal", 303);
  const company = await findCompanyByDomain(catalogueWriter(c.env.DB), domain).catch(() => null);
  return render(c, <ReportPage account={c.get("account")} domain={domain} logoId={logoId} companyName={company?.companyName ?? null} />);
});

correctionsPages.post("/corrections/report", signedIn, async (c) => {
  const body = await formFields(c.req);
  const domain = field(body, "domain");
  const logoId = field(body, "logoId");
  const kind = field(body, "kind");
  const account = c.get("account");
  const refuse = (error: string, status: 400 | 404 | 429) =>
    render(c, <ReportPage account={account} domain={domain} logoId={logoId} companyName={null} error={error} />, status);
  if (!(reportKinds as readonly string[]).includes(kind)) return refuse("Choose what is wrong.", 400);
  const filed = await fileReport(catalogueWriter(c.env.DB), {
    domain: domain || undefined,
    logoId: /^\d{1,15}$/.test(logoId) && logoId !== "0" ? Number(logoId) : undefined,
    kind: kind as (typeof reportKinds)[number],
    message: field(body, "message"),
    accountId: account.id,
    via: "portal",
  });
  if (!filed.ok) return refuse(`The report was not sent: ${filed.error.message}`, statusOf(filed.error.code) as 400);
  return back(c, "reported", filed.value.domain, "reports");
});

/** The image of an upload form, or why there is none. */
function uploaded(body: Record<string, unknown>): File | string {
  const file = body.file;
  if (!(file instanceof File) || file.size === 0) return "Choose an image file.";
  if (file.size > MAX_UPLOAD_BYTES) return `The image is larger than ${MAX_UPLOAD_BYTES / 1024} KB.`;
  return file;
}

correctionsPages.post("/corrections/overrides", signedIn, async (c) => {
  const body = await formFields(c.req);
  const file = uploaded(body);
  if (typeof file === "string") return page(c, { error: file }, 400);
  const set = await setOverride(
    c.env,
    catalogueWriter(c.env.DB),
    c.get("account").id,
    field(body, "domain"),
    new Uint8Array(await file.arrayBuffer()),
    file.type || undefined,
  );
  if (!set.ok) return page(c, { error: `The logo was not pinned: ${set.error.message}` }, statusOf(set.error.code));
  return back(c, "pinned", set.value.override.domain, "overrides");
});

correctionsPages.post("/corrections/overrides/remove", signedIn, async (c) => {
  const body = await formFields(c.req);
  const removed = await removeOverride(c.env, catalogueWriter(c.env.DB), c.get("account").id, field(body, "domain"));
  if (!removed.ok) return page(c, { error: removed.error.message }, statusOf(removed.error.code));
  return back(c, "unpinned", field(body, "domain"), "overrides");
});

correctionsPages.post("/corrections/brands", signedIn, async (c) => {
  const body = await formFields(c.req);
  const claim = await startClaim(catalogueWriter(c.env.DB), c.get("account").id, field(body, "domain"));
  if (!claim.ok) return page(c, { error: claim.error.message }, statusOf(claim.error.code));
  return back(c, "claimed", claim.value.domain, "brands");
});

correctionsPages.post("/corrections/brands/verify", signedIn, async (c) => {
  const body = await formFields(c.req);
  const verified = await verifyClaim(c.env, catalogueWriter(c.env.DB), c.get("account").id, field(body, "domain"));
  if (!verified.ok) return page(c, { error: verified.error.message }, statusOf(verified.error.code));
  return back(c, "verified", verified.value.domain, "brands");
});

function BrandPage(props: {
  account: SessionAccount;
  claim: BrandClaim;
  name: string;
  brandColor: string;
  error?: string;
  notice?: string;
}) {
  const { claim } = props;
  const logoForm = (variant: LogoVariant, label: string) => (
    <form method="post" action={`/portal/corrections/brands/${encodeURIComponent(claim.domain)}/logo`} enctype="multipart/form-data">
      <input type="hidden" name="variant" value={variant} />
      <label for={`file-${variant}`}>
        {label} (PNG or SVG, up to {MAX_UPLOAD_BYTES / 1024} KB)
      </label>
      <input id={`file-${variant}`} name="file" type="file" accept="image/png,image/svg+xml" required />
      <SubmitRow label={`Publish the ${variant === "icon" ? "icon" : "full logo"}`} />
    </form>
  );
  return (
    <Page title={props.error ? `Error: ${claim.domain}` : claim.domain} account={props.account} section="corrections">
      <h1>The brand of {claim.domain}</h1>
      <Messages error={props.error} notice={props.notice} />
      <p class="hint">
        What you publish here is served to everyone within a minute, before the catalogue's and discovered logos, and entered in the public{" "}
        <a href={`/changes?domain=${encodeURIComponent(claim.domain)}`}>change log</a>. It lasts while your proof does.
      </p>
      <section class="card" aria-labelledby="logos-heading">
        <h2 id="logos-heading">Logos</h2>
        {logoForm("icon", "Icon (square mark)")}
        {logoForm("full", "Full logo (wordmark)")}
      </section>
      <section class="card" aria-labelledby="details-heading">
        <h2 id="details-heading">Name and colour</h2>
        <form method="post" action={`/portal/corrections/brands/${encodeURIComponent(claim.domain)}`}>
          <label for="brand-name">Company name</label>
          <input id="brand-name" name="name" type="text" maxlength={100} value={props.name} />
          <label for="brand-colour">Brand colour</label>
          <input
            id="brand-colour"
            name="brandColor"
            type="text"
            pattern="#[0-9a-fA-F]{6}"
            placeholder="#635bff"
            value={props.brandColor}
            aria-describedby="colour-hint"
          />
          <p class="hint" id="colour-hint">
            As #rrggbb; empty clears it.
          </p>
          <SubmitRow label="Save name and colour" />
        </form>
      </section>
      <p>
        <a href="/portal/corrections#brands">Back to your brands</a>
      </p>
    </Page>
  );
}

async function brandPage(c: Context<WebEnv>, claim: BrandClaim, state: PageState, status: 200 | 400 | 403 | 404 | 409 | 413 | 429 = 200) {
  const company = await findCompanyByDomain(catalogueWriter(c.env.DB), claim.domain);
  const own = company?.domain === claim.domain ? company : null;
  return render(
    c,
    <BrandPage
      account={c.get("account")}
      claim={claim}
      name={own?.companyName ?? ""}
      brandColor={own?.brandColor ?? ""}
      error={state.error}
      notice={state.notice}
    />,
    status,
  );
}

correctionsPages.get("/corrections/brands/:domain", signedIn, async (c) => {
  const claim = await verifiedClaim(catalogueWriter(c.env.DB), c.get("account").id, c.req.param("domain"));
  if (!claim.ok) return page(c, { error: claim.error.message }, statusOf(claim.error.code));
  return brandPage(c, claim.value, { notice: noticeOf(c) });
});

correctionsPages.post("/corrections/brands/:domain", signedIn, async (c) => {
  const db = catalogueWriter(c.env.DB);
  const claim = await verifiedClaim(db, c.get("account").id, c.req.param("domain"));
  if (!claim.ok) return page(c, { error: claim.error.message }, statusOf(claim.error.code));
  const body = await formFields(c.req);
  const set = await setOwnerDetails(c.env, db, claim.value, {
    name: field(body, "name") || undefined,
    brandColor: field(body, "brandColor"),
  });
  if (!set.ok) return brandPage(c, claim.value, { error: set.error.message }, statusOf(set.error.code));
  const done = set.value.changed.length === 0 ? "unchanged" : "saved";
  return c.redirect(`/portal/corrections/brands/${encodeURIComponent(claim.value.domain)}?${noticeQuery(done, claim.value.domain)}`, 303);
});

correctionsPages.post("/corrections/brands/:domain/logo", signedIn, async (c) => {
  const db = catalogueWriter(c.env.DB);
  const claim = await verifiedClaim(db, c.get("account").id, c.req.param("domain"));
  if (!claim.ok) return page(c, { error: claim.error.message }, statusOf(claim.error.code));
  const body = await formFields(c.req);
  const variant = field(body, "variant") === "full" ? "full" : "icon";
  const file = uploaded(body);
  if (typeof file === "string") return brandPage(c, claim.value, { error: file }, 400);
  const set = await setOwnerLogo(c.env, db, claim.value, variant, new Uint8Array(await file.arrayBuffer()), file.type || undefined);
  if (!set.ok) return brandPage(c, claim.value, { error: `Not published: ${set.error.message}` }, statusOf(set.error.code));
  return c.redirect(
    `/portal/corrections/brands/${encodeURIComponent(claim.value.domain)}?${noticeQuery(variant, claim.value.domain)}`,
    303,
  );
});

/** What the last form did: its error (announced at once) or its notice. */
function Messages(props: { error?: string | undefined; notice?: string | undefined }) {
  return (
    <>
      {props.error && (
        <p class="alert" role="alert">
          {props.error}
        </p>
      )}
      {props.notice && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
    </>
  );
}
