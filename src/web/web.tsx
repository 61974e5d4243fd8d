import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { MISCONFIGURED } from "../lib/errors";
import { MAX_FORM_BYTES } from "../lib/params";
import { logFailure, retryLater } from "../lib/responses";
import { authPages } from "./auth";
import { billingPages } from "./billing";
import { connectionsPages } from "./connections";
import { correctionsPages, MAX_UPLOAD_FORM_BYTES, UPLOAD_FORM_PATHS } from "./corrections";
import { dashboardPages } from "./dashboard";
import { keysPages } from "./apiKeys";
import { currentSession } from "../accounts/browserSessions";
import { Page, render } from "./layout";
import { playgroundImages } from "./playground";
import type { WebEnv } from "./session";
import { usagePages } from "./usage";
import { staticFiles } from "./staticFiles";

/**
 * The portal as a web app, mounted at /portal (src/app.ts): server-rendered pages (Hono JSX),
 * forms that work without scripts, one stylesheet and one small script served as files under
 * /portal/assets (staticFiles). Every
 * form posted here must come from this origin (hono/csrf: Origin or Sec-Fetch-Site), and the
 * session cookie is SameSite=Lax, so no other site can post a form with it.
 */
export const portalPages = new Hono<WebEnv>();

const tooLarge = (c: Context) =>
  render(
    c,
    <Page title="Too large" narrow>
      <h1>This form is too large</h1>
      <p>
        Nothing was saved. <a href="/portal">Back to the portal</a>
      </p>
    </Page>,
    413,
  );
const formLimit = bodyLimit({ maxSize: MAX_FORM_BYTES, onError: tooLarge });
// Forms that carry an image (src/web/corrections.tsx) are held to an image's size instead.
const uploadLimit = bodyLimit({ maxSize: MAX_UPLOAD_FORM_BYTES, onError: tooLarge });
for (const path of ["/", "/*"])
  portalPages.use(path, csrf(), (c, next) => (UPLOAD_FORM_PATHS.some((p) => p.test(c.req.path)) ? uploadLimit : formLimit)(c, next));
portalPages.route("/assets", staticFiles);
// `/portal/` and `/portal/keys/` are the pages without the slash.
portalPages.get("/*", async (c, next) => {
  const url = new URL(c.req.url);
  if (!url.pathname.endsWith("/")) return next();
  return c.redirect(`${url.pathname.replace(/\/+$/, "")}${url.search}`, 301);
});
for (const pages of [authPages, dashboardPages, keysPages, usagePages, billingPages, connectionsPages, playgroundImages, correctionsPages])
  portalPages.route("/", pages);
// Any other path under /portal is a missing page of the portal, not a domain to look up; a
// signed-in visitor keeps the portal's navigation.
portalPages.all("/*", async (c) =>
  render(
    c,
    <Page title="Not found" narrow account={(await currentSession(c, c.var.ctx.db)) ?? undefined}>
      <h1>No such page</h1>
      <p>
        <a href="/portal">Go to the portal</a>
      </p>
    </Page>,
    404,
  ),
);

portalPages.onError((error, c) => {
  // hono/csrf refuses a cross-site form with a bare 403.
  const refused = error instanceof HTTPException && error.status === 403;
  const failure = refused ? null : logFailure(error, c.req.method, c.req.path);
  const unavailable = failure === "unavailable";
  const misconfigured = failure === "misconfigured";
  if (unavailable) c.header("Retry-After", retryLater["Retry-After"]);
  const [title, heading, text] = refused
    ? ["Refused", "This form came from another site", "Forms of this portal are accepted only from its own pages."]
    : unavailable
      ? ["Unavailable", "The portal is briefly unavailable", "Part of the service did not answer. Try again in a few seconds."]
      : misconfigured
        ? [MISCONFIGURED, MISCONFIGURED, "The service's configuration is invalid; its operator has been told in the logs."]
        : ["Something went wrong", "Something went wrong", "Try again in a moment."];
  return render(
    c,
    <Page title={title} narrow>
      <h1>{heading}</h1>
      <p>{text}</p>
      <p>
        <a href="/portal">Back to the portal</a>
      </p>
    </Page>,
    refused ? 403 : unavailable ? 503 : 500,
  );
});
