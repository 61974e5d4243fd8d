import { Hono } from "hono";
import { publicBase, readVars } from "../env";
import type { AppEnv } from "../lib/context";
import { clientAddress, currentSession } from "../accounts/browserSessions";
import { Page, render } from "./layout";
import { assetImages, Playground, type PlaygroundResult, typedResult } from "./playground";

/**
 * `GET /` for browsers: a small landing page with the playground. Only a request that asks for
 * HTML gets it; every other client gets what `/` always answered (the lookup route's), and no
 * other path is touched, so lookups route exactly as before.
 */
export const landing = new Hono<AppEnv>();

function LandingPage(props: {
  base: string;
  signupOpen: boolean;
  signedIn: boolean;
  typed?: string | undefined;
  result: PlaygroundResult | null;
}) {
  return (
    <Page title="Company logos by domain" indexable signupOpen={props.signupOpen}>
      <section class="hero" aria-labelledby="hero-heading">
        <h1 id="hero-heading">Company logos, by domain</h1>
        <p>
          Put any company's logo on your site with one <code>&lt;img&gt;</code> tag, fetch logos from your servers, or let AI agents find
          them over MCP.
        </p>
        <p class="actions">
          {props.signedIn ? (
            <a class="button primary" href="/portal">
              Go to your dashboard
            </a>
          ) : (
            <>
              {props.signupOpen && (
                <a class="button primary" href="/portal/signup">
                  Create a free account
                </a>
              )}
              <a class="button" href="/portal/login">
                Sign in
              </a>
            </>
          )}
          <a href="/docs">API reference</a>
        </p>
      </section>
      <Playground action="/" base={props.base} typed={props.typed} result={props.result} />
    </Page>
  );
}

landing.get("/", async (c, next) => {
  if (!c.req.header("accept")?.includes("text/html")) return next();
  const base = publicBase(c.env, c.req.url);
  const db = c.var.ctx.db;
  const typed = c.req.query("domain")?.trim();
  const { result, status } = typed
    ? await typedResult(c, { address: clientAddress(c) }, typed, (logo) => assetImages(c.env, base, logo))
    : { result: null, status: 200 as const };
  const signedIn = (await currentSession(c, db)) !== null;
  // Shared caches must not keep a page made for one visitor (signed in or not, one domain or another).
  return render(
    c,
    <LandingPage base={base} signupOpen={readVars(c.env).SIGNUP === "on"} signedIn={signedIn} typed={typed} result={result} />,
    status,
  );
});
