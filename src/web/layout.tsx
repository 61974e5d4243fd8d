import type { Context } from "hono";
import { html } from "hono/html";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { checkedVars } from "../env";
import type { SessionAccount } from "../accounts/browserSessions";
import { assetPaths } from "./staticFiles";

/**
 * The one layout of the web app (landing page and portal): server-rendered HTML, styles and
 * the one script served as files, and a Content Security Policy that allows nothing inline.
 * Hono JSX escapes every interpolated value.
 */
export type Section = "dashboard" | "keys" | "usage" | "billing" | "connections" | "corrections";

const sections: Array<{ id: Section; href: string; label: string }> = [
  { id: "dashboard", href: "/portal", label: "Dashboard" },
  { id: "keys", href: "/portal/keys", label: "Keys" },
  { id: "usage", href: "/portal/usage", label: "Usage" },
  { id: "billing", href: "/portal/billing", label: "Plan" },
  { id: "connections", href: "/portal/connections", label: "Connections" },
  { id: "corrections", href: "/portal/corrections", label: "Corrections" },
];

export interface PageProps {
  title: string;
  /** The signed-in account: the portal's navigation and sign-out. */
  account?: SessionAccount | null;
  section?: Section;
  /** Narrow single-column pages (sign-in, sign-up, confirmations). */
  narrow?: boolean;
  /** Pages of the signed-in portal stay out of search engines; the landing page does not. */
  indexable?: boolean;
  /** Whether to offer "Create account" to a visitor (SIGNUP is on). */
  signupOpen?: boolean;
  children: Child;
}

export function Page(props: PageProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {!props.indexable && <meta name="robots" content="noindex" />}
        <title>{`${props.title} · Logo Lookup`}</title>
        <link rel="icon" href={assetPaths.icon} type="image/svg+xml" />
        <link rel="stylesheet" href={assetPaths.css} />
        <script src={assetPaths.js} defer />
      </head>
      <body>
        <a class="skip-link" href="#main">
          Skip to content
        </a>
        <header class="site-header">
          <div class="bar">
            <a class="brand" href={props.account ? "/portal" : "/"}>
              <img src={assetPaths.icon} alt="" width="24" height="24" />
              Logo Lookup
            </a>
            {props.account ? (
              <PortalNav account={props.account} section={props.section} />
            ) : (
              <GuestNav signupOpen={props.signupOpen === true} />
            )}
          </div>
        </header>
        <main id="main" class={props.narrow ? "narrow" : undefined} tabindex={-1}>
          {props.children}
        </main>
      </body>
    </html>
  );
}

function PortalNav(props: { account: SessionAccount; section?: Section | undefined }) {
  return (
    <>
      <nav class="site-nav" aria-label="Portal">
        <ul>
          {sections.map((s) => (
            <li>
              <a href={s.href} aria-current={props.section === s.id ? "page" : undefined}>
                {s.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div class="account">
        <a href="/portal/password" title="Change password">
          {props.account.email}
        </a>
        <form method="post" action="/portal/logout">
          <button type="submit" class="link">
            Sign out
          </button>
        </form>
      </div>
    </>
  );
}

function GuestNav(props: { signupOpen: boolean }) {
  return (
    <nav class="site-nav account" aria-label="Account">
      <ul>
        <li>
          <a href="/docs">API reference</a>
        </li>
        <li>
          <a href="/portal/login">Sign in</a>
        </li>
        {props.signupOpen && (
          <li>
            <a href="/portal/signup">Create account</a>
          </li>
        )}
      </ul>
    </nav>
  );
}

/**
 * Where the pages may load images from: this Worker under the name it was asked by, its public
 * name (the playground's images and their redirects are built on PUBLIC_BASE_URL, and a page may
 * be opened under another, such as workers.dev), and the CDN when lookups redirect there.
 * Invalid vars leave only 'self', so that the page saying the service is misconfigured renders.
 */
function imageSources(env: Env): string {
  const vars = checkedVars(env);
  const origins = vars.ok ? [vars.value.PUBLIC_BASE_URL, vars.value.CDN_URL].filter(Boolean).map((url) => new URL(url).origin) : [];
  return ["'self'", ...new Set(origins)].join(" ");
}

/** A form's main button, in the row of actions every form ends with. */
export function SubmitRow(props: { label: string }) {
  return (
    <div class="actions">
      <button class="primary" type="submit">
        {props.label}
      </button>
    </div>
  );
}

/**
 * Headers of every page. Forms post only here, except that the plan page's forms end in a
 * redirect to Stripe's hosted pages, which form-action must allow as the browser follows it.
 */
export function pageHeaders(env: Env, cache: "no-store" | "public" = "no-store"): Record<string, string> {
  return {
    "Content-Security-Policy": [
      "default-src 'none'",
      "script-src 'self'",
      "style-src 'self'",
      `img-src ${imageSources(env)}`,
      "form-action 'self' https://checkout.stripe.com https://billing.stripe.com",
      "frame-ancestors 'none'",
      "base-uri 'none'",
    ].join("; "),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": cache === "public" ? "public, max-age=300" : "no-store",
  };
}

/** Answers with a page and the headers every page carries. */
export function render(c: Context, page: Child, status: ContentfulStatusCode = 200, cache: "no-store" | "public" = "no-store") {
  // The doctype keeps browsers out of quirks mode.
  return c.html(html`<!doctype html>${page}`, status, pageHeaders(c.env as Env, cache));
}
