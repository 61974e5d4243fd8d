import type { ConsentDescription } from "@cloudflare/workers-oauth-provider";
import type { Child } from "hono/jsx";
import { SCOPE_DESCRIPTIONS } from "./authorizationServer";

/**
 * The pages of the authorization step: server-rendered, no JavaScript, one form each. Hono JSX
 * escapes every interpolated value, and everything a client registered (its name, its
 * redirect URI) is shown only that way.
 */
const styles = `
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1b1f24; }
  main { max-width: 28rem; margin: 4rem auto; padding: 2rem; background: #fff; border-radius: 12px; box-shadow: 0 1px 4px #0002; }
  h1 { font-size: 1.35rem; margin-top: 0; }
  label { display: block; margin: 1rem 0 .25rem; font-weight: 600; }
  input[type=email], input[type=password] { width: 100%; box-sizing: border-box; padding: .6rem; font: inherit; border: 1px solid #8a919c; border-radius: 6px; }
  input:focus-visible, button:focus-visible { outline: 3px solid #2463eb; outline-offset: 2px; }
  button { font: inherit; padding: .6rem 1.2rem; border-radius: 6px; border: 1px solid #1b1f24; cursor: pointer; margin: 1.25rem .5rem 0 0; }
  button.primary { background: #1b1f24; color: #fff; }
  .alert { padding: .75rem 1rem; border-radius: 6px; background: #fdecec; border: 1px solid #d93025; }
  .warning { padding: .75rem 1rem; border-radius: 6px; background: #fff6e0; border: 1px solid #b7791f; }
  dt { font-weight: 600; } dd { margin: 0 0 .75rem; }
`;

function Page(props: { title: string; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="robots" content="noindex" />
        <title>{props.title}</title>
        <style>{styles}</style>
      </head>
      <body>
        <main>{props.children}</main>
      </body>
    </html>
  );
}

/** Who vouches for an application's name: the domain its metadata document is published on, or no one. */
function NameVerification(props: { clientDomain?: string | undefined }) {
  return <>{props.clientDomain ? ` (published by ${props.clientDomain})` : " (name not verified)"}</>;
}

export function SignInPage(props: {
  clientName: string;
  clientDomain?: string | undefined;
  action: string;
  email?: string;
  error?: string;
}) {
  return (
    <Page title="Sign in">
      <h1>Sign in to connect {props.clientName}</h1>
      <p>
        Application: {props.clientName}
        <NameVerification clientDomain={props.clientDomain} />
      </p>
      {props.error && (
        <p class="alert" role="alert" id="sign-in-error">
          {props.error}
        </p>
      )}
      <form method="post" action={props.action}>
        <input type="hidden" name="step" value="sign-in" />
        <label for="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          value={props.email ?? ""}
          aria-describedby={props.error ? "sign-in-error" : undefined}
        />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button class="primary" type="submit">
          Sign in
        </button>
      </form>
    </Page>
  );
}

/**
 * A redirect host is familiar only when the client proved its domain (a Client ID Metadata
 * Document on https) and the tokens go to that domain. Anything else earns a warning:
 * self-registered names are unverified, and a loopback redirect reaches whatever program
 * listens on that port.
 */
export function isFamiliarRedirect(details: ConsentDescription): boolean {
  if (details.redirectIsLoopback || !details.clientDomain) return false;
  return details.redirectHost === details.clientDomain || details.redirectHost.endsWith(`.${details.clientDomain}`);
}

export function ConsentPage(props: { details: ConsentDescription; handle: string; email: string; accountId: string }) {
  const { details } = props;
  return (
    <Page title={`Allow ${details.clientName}?`}>
      <h1>Allow {details.clientName} to use your logo account?</h1>
      <p>
        Signed in as <strong>{props.email}</strong>.
      </p>
      <dl>
        <dt>Application</dt>
        <dd>
          {details.clientName}
          <NameVerification clientDomain={details.clientDomain} />
        </dd>
        <dt>Access will be sent to</dt>
        <dd>
          <strong>{details.redirectHost}</strong>
        </dd>
        <dt>It will be able to</dt>
        <dd>
          <ul>
            {details.scope.map((scope) => (
              <li>{SCOPE_DESCRIPTIONS[scope] ?? scope}</li>
            ))}
          </ul>
        </dd>
      </dl>
      {!isFamiliarRedirect(details) && (
        <p class="warning" role="note">
          {details.redirectIsLoopback
            ? "This sends access to a program on your own computer. Continue only if you just started connecting from it."
            : `${details.redirectHost} is not a domain this application has proved it owns. Continue only if you trust it.`}
        </p>
      )}
      <form method="post">
        <input type="hidden" name="step" value="consent" />
        <input type="hidden" name="handle" value={props.handle} />
        {/* The account this page names: another signed in since in this browser answers nothing. */}
        <input type="hidden" name="account" value={props.accountId} />
        <button class="primary" type="submit" name="decision" value="approve">
          Approve
        </button>
        <button type="submit" name="decision" value="deny">
          Deny
        </button>
      </form>
    </Page>
  );
}

export function ErrorPage(props: { title: string; message: string }) {
  return (
    <Page title={props.title}>
      <h1>{props.title}</h1>
      <p role="alert">{props.message}</p>
    </Page>
  );
}
