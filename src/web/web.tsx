import { Hono } from "hono";
import { csrf } from "hono/csrf";
import { HTTPException } from "hono/http-exception";
import { authPages } from "./auth";
import { billingPages } from "./billing";
import { connectionsPages } from "./connections";
import { dashboardPages } from "./dashboard";
import { keysPages } from "./keys";
import { Page, render } from "./layout";
import { playgroundImages } from "./playground";
import type { WebEnv } from "./session";
import { usagePages } from "./usage";

/**
 * The portal as a web app, under /portal: server-rendered pages (Hono JSX), forms that work
 * without scripts, one stylesheet and one small script served as files (webAssets). Every
 * form posted here must come from this origin (hono/csrf: Origin or Sec-Fetch-Site), and the
 * session cookie is SameSite=Lax, so no other site can post a form with it.
 */
export const portalPages = new Hono<WebEnv>();

portalPages.use("/portal/*", csrf());
portalPages.use("/portal", csrf());
for (const pages of [authPages, dashboardPages, keysPages, usagePages, billingPages, connectionsPages, playgroundImages]) portalPages.route("/", pages);
// Any other path under /portal is a missing page of the portal, not a domain to look up.
portalPages.all("/portal/*", (c) =>
  render(
    c,
    <Page title="Not found" narrow>
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
  if (!refused) console.error(`unhandled error on ${c.req.method} ${c.req.path}`, error);
  return render(
    c,
    <Page title={refused ? "Refused" : "Something went wrong"} narrow>
      <h1>{refused ? "This form came from another site" : "Something went wrong"}</h1>
      <p>{refused ? "Forms of this portal are accepted only from its own pages." : "Try again in a moment."}</p>
      <p>
        <a href="/portal">Back to the portal</a>
      </p>
    </Page>,
    refused ? 403 : 500,
  );
});
