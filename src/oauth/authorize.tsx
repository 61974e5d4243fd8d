import {
  type AuthRequest,
  AuthorizationError,
  authorizationErrorRedirect,
  CimdFetchError,
  type OAuthHelpers,
} from "@cloudflare/workers-oauth-provider";
import { type Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { bodyLimit } from "hono/body-limit";
import { csrf } from "hono/csrf";
import { publicBase } from "../env";
import type { AppEnv } from "../lib/context";
import { localHostOnly } from "../lib/localHostOnly";
import { statusOf } from "../lib/errors";
import { formFields, MAX_FORM_BYTES } from "../lib/params";
import { clientAddress, currentSession, type SessionAccount, signInBrowser } from "../accounts/browserSessions";
import { authorizeAllowed } from "../accounts/signIn";
import { CLIENT_METADATA_URLS, strangerUrlProblem } from "../lib/strangerUrls";
import { type GrantProps, MCP_SCOPE, OFFLINE_SCOPE, oauthHelpers, SCOPE_DESCRIPTIONS } from "./authorizationServer";
import { shownClientName } from "./clientNames";
import { ConsentPage, ErrorPage, SignInPage } from "./pages";
import { log } from "../lib/log";

/**
 * GET/POST /authorize: the interactive step of the OAuth flow.
 *
 *   GET  → the request is validated (client, exact redirect URI, PKCE S256, resource);
 *          a browser without a portal session gets the sign-in form, one with a session the
 *          consent page.
 *   POST step=sign-in → email and password (rate limited per account and address); a fresh
 *          session cookie, then 303 back to GET, which now shows the consent page.
 *   POST step=consent → Approve issues the code and redirects to the client (with `iss`);
 *          Deny redirects with `error=access_denied`.
 *
 * Forgery: both forms need a same-origin Origin or Sec-Fetch-Site (hono/csrf), and the
 * consent form's handle is bound by the library to this browser and works once.
 */
/** Mounted at `/authorize` (src/app.ts). */
export const authorize = new Hono<AppEnv>();

authorize.use("/", csrf());

/**
 * Per address, before anything else: each /authorize request may make the Worker fetch the
 * metadata document of whatever client_id it names. A client_id that is a URL must pass the
 * guard for client metadata (https on 443, a public name) before the library is asked at all.
 */
authorize.use("/", async (c, next) => {
  const limit = await authorizeAllowed(c.env, clientAddress(c));
  if (!limit.allowed) {
    c.header("Retry-After", String(limit.retryAfter));
    c.header("Cache-Control", "no-store");
    return c.html(
      <ErrorPage title="Too many requests" message="Too many connection attempts from this address. Try again in a minute." />,
      429,
    );
  }
  const clientId = c.req.query("client_id");
  if (clientId && /^[a-z][a-z0-9+.-]*:/i.test(clientId)) {
    const problem = strangerUrlProblem(clientId, CLIENT_METADATA_URLS);
    if (problem !== null) {
      log.warn("oauth.client_id_refused", { reason: problem });
      return errorPage(c, 400, "This application could not be verified", "Its client metadata document is not at a public https address.");
    }
  }
  await next();
});

authorize.get(
  "/",
  localHostOnly,
  clientVerified(async (c) => {
    const helpers = oauthHelpers(c.env, publicBase(c.env, c.req.url));
    const request = await parseRequest(c, helpers);
    if (request instanceof Response) return request;
    const account = await currentSession(c, c.var.ctx.db);
    if (!account) return signInPage(c, helpers, request);
    return consentPage(c, helpers, request, account);
  }),
);

const formLimit = bodyLimit({
  maxSize: MAX_FORM_BYTES,
  onError: (c) => errorPage(c, 413, "This form is too large", "Start connecting again from the application."),
});

authorize.post(
  "/",
  localHostOnly,
  formLimit,
  clientVerified(async (c) => {
    const helpers = oauthHelpers(c.env, publicBase(c.env, c.req.url));
    const form = await formFields(c.req);
    const db = c.var.ctx.db;

    if (form.step === "sign-in") {
      const request = await parseRequest(c, helpers);
      if (request instanceof Response) return request;
      const result = await signInBrowser(c, db, { email: form.email, password: form.password });
      if (!result.ok) {
        if (result.retryAfter) c.header("Retry-After", String(result.retryAfter));
        const email = typeof form.email === "string" ? form.email : undefined;
        return signInPage(c, helpers, request, { error: result.error.message, email }, statusOf(result.error.code));
      }
      // Post/redirect/get: the consent page is shown by GET, with the session just set.
      return c.redirect(c.req.url, 303);
    }

    if (form.step === "consent") {
      const account = await currentSession(c, db);
      if (!account)
        return errorPage(c, 401, "Signed out", "Your session ended before you answered. Start connecting again from the application.");
      const handle = typeof form.handle === "string" ? form.handle : "";
      // The page named the account it would connect; the browser may have signed in as another
      // since (another tab). A page shown before pages named their account says none.
      if (typeof form.account === "string" && form.account !== account.id) {
        return errorPage(
          c,
          400,
          "This request can no longer be answered",
          "You signed in as another account after this page was shown. Start connecting again from the application.",
        );
      }
      try {
        if (form.decision === "approve") return await approve(c, helpers, handle, account);
        const denied = await helpers.denyConsent(c.req.raw, handle);
        return new Response(null, { status: 302, headers: denied.headers });
      } catch (error) {
        // Expired, reused, or started in another browser: nothing is granted.
        if (error instanceof AuthorizationError) return errorPage(c, 400, "This request can no longer be answered", error.description);
        throw error;
      }
    }

    return errorPage(c, 400, "Bad request", "The form was not recognised. Start connecting again from the application.");
  }),
);

/**
 * A client whose id is the URL of its metadata document is looked up again at every step
 * (sign-in page, consent page, approval), and the document fetched again unless its host let
 * it be cached: a host failing at any of them is the client's to answer for, with a page
 * saying so, never a 500.
 */
function clientVerified(handler: (c: Context<AppEnv>) => Promise<Response>) {
  return async (c: Context<AppEnv>): Promise<Response> => {
    try {
      return await handler(c);
    } catch (error) {
      if (!(error instanceof CimdFetchError)) throw error;
      log.warn("oauth.client_metadata_unavailable", { detail: error.detail });
      return errorPage(
        c,
        400,
        "This application could not be verified",
        "Its client metadata document could not be fetched or is invalid.",
      );
    }
  };
}

async function approve(c: Context<AppEnv>, helpers: OAuthHelpers, handle: string, account: SessionAccount): Promise<Response> {
  const approved = await helpers.approveConsent(c.req.raw, handle);
  const props: GrantProps = { accountId: account.id };
  const { redirectTo } = await helpers.completeAuthorization({
    request: approved.request,
    userId: account.id,
    metadata: { email: account.email },
    scope: approved.request.scope,
    props,
  });
  approved.headers.set("Location", redirectTo);
  return new Response(null, { status: 302, headers: approved.headers });
}

/**
 * The validated request, or the answer to an invalid one: back to the client with the error
 * when its redirect URI is proven, otherwise a page here (never a redirect to an unproven URI).
 */
async function parseRequest(c: Context<AppEnv>, helpers: OAuthHelpers): Promise<AuthRequest | Response> {
  let request: AuthRequest;
  try {
    request = await helpers.parseAuthRequest(c.req.raw);
  } catch (error) {
    if (error instanceof AuthorizationError) {
      if (error.redirectTo) return c.redirect(error.redirectTo, 302);
      return errorPage(c, 400, "This connection request is not valid", error.description);
    }
    // A client metadata document that cannot be fetched is answered by clientVerified.
    throw error;
  }
  // OAuth 2.1 and MCP: every client proves possession with PKCE S256, confidential ones too.
  if (!request.codeChallenge || request.codeChallengeMethod !== "S256") {
    return c.redirect(authorizationErrorRedirect(request, "invalid_request", "PKCE with code_challenge_method=S256 is required"), 302);
  }
  // Only scopes this service defines are shown and granted; anything else asked for is left
  // out (RFC 6749 §3.3 lets the server grant other than asked, and the token response says
  // what it got). `logos` is always granted, and so shown: /mcp requires it, and a grant
  // without it (a client asking only for offline_access) would be a token good for nothing,
  // which a client that cannot step up its scope could never get past. `offline_access` is
  // always granted, and so shown, too: every grant comes with a refresh token, and the person
  // consenting is told that the application stays connected.
  const known = request.scope.filter((scope) => Object.hasOwn(SCOPE_DESCRIPTIONS, scope));
  return { ...request, scope: [...new Set([MCP_SCOPE, OFFLINE_SCOPE, ...known])] };
}

async function signInPage(
  c: Context<AppEnv>,
  helpers: OAuthHelpers,
  request: AuthRequest,
  form: { error?: string; email?: string } = {},
  status: ContentfulStatusCode = 200,
): Promise<Response> {
  const client = await helpers.lookupClient(request.clientId);
  const clientName = shownClientName(client?.clientName, request.clientId);
  // As the consent page has it (the library's describeConsent): a client whose id is the https
  // URL of its metadata document is vouched for by that document's host.
  const clientDomain = client && request.clientId.startsWith("https://") ? new URL(request.clientId).hostname : undefined;
  c.header("Cache-Control", "no-store");
  c.header("X-Frame-Options", "DENY");
  c.header("Content-Security-Policy", "frame-ancestors 'none'");
  return c.html(
    <SignInPage clientName={clientName} clientDomain={clientDomain} action={c.req.url} error={form.error} email={form.email} />,
    status,
  );
}

async function consentPage(c: Context<AppEnv>, helpers: OAuthHelpers, request: AuthRequest, account: SessionAccount): Promise<Response> {
  // Described first: a client lookup that fails leaves nothing behind in KV.
  const described = await helpers.describeConsent(request);
  const details = { ...described, clientName: shownClientName(described.clientName, described.clientId) };
  const consent = await helpers.beginConsent(request);
  const page = await c.html(<ConsentPage details={details} handle={consent.handle} email={account.email} accountId={account.id} />);
  const headers = new Headers(page.headers);
  for (const [name, value] of consent.headers) headers.append(name, value);
  headers.set("Cache-Control", "no-store");
  return new Response(page.body, { status: 200, headers });
}

function errorPage(c: Context<AppEnv>, status: 400 | 401 | 413, title: string, message: string): Response | Promise<Response> {
  c.header("Cache-Control", "no-store");
  return c.html(<ErrorPage title={title} message={message} />, status);
}
