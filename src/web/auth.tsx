import { type Context, Hono } from "hono";
import { z } from "zod";
import { createAccount, emailSchema, passwordSchema, setPassword } from "../accounts/accounts";
import { CONFIRM_PATH, confirmEmail, sendConfirmation } from "../accounts/emailConfirmation";
import { confirmationMailAllowed, credentialsSchema, signIn, signUpAllowed } from "../accounts/signIn";
import { publicBase, readVars } from "../env";
import { type ErrorCode, statusOf } from "../lib/errors";
import { formFields } from "../lib/params";
import {
  clientAddress,
  currentSession,
  endBrowserSession,
  replaceSession,
  type SessionAccount,
  signInBrowser,
  signInClient,
} from "../accounts/browserSessions";
import { Page, render, SubmitRow } from "./layout";
import { field, portalPath, signedIn, type WebEnv } from "./session";
import { log } from "../lib/log";

/**
 * Sign-up, sign-in, sign-out and password pages. They share the JSON sign-in's rules: the same
 * validation and limits (src/accounts/signIn.ts; sign-up counts against its address), forms
 * accepted only from this origin (hono/csrf, attached by the router), and a fresh session id
 * at every sign-in. Changing the password asks for the current one, as a sign-in would, and
 * ends every other session of the account. Sign-up mails a link that confirms the address
 * (src/accounts/emailConfirmation.ts); the dashboard offers to mail it again.
 */
export const authPages = new Hono<WebEnv>();

interface FormState {
  email?: string;
  error?: string;
  fieldErrors?: { email?: string; password?: string };
  /** Fields the form's error (#form-error) is about: sign-in names the problem once, above the fields. */
  invalid?: ReadonlySet<"email" | "password">;
  next?: string;
  notice?: string;
}

function Field(props: {
  /** `current`: the current password, beside a new one. */
  name: "email" | "password" | "current";
  label: string;
  value?: string;
  error?: string | undefined;
  /** The form's error above is about this field too. */
  formError?: boolean | undefined;
  autocomplete: string;
  hint?: string;
}) {
  const described = [props.hint ? `${props.name}-hint` : "", props.error ? `${props.name}-error` : "", props.formError ? "form-error" : ""]
    .filter(Boolean)
    .join(" ");
  return (
    <>
      <label for={props.name}>{props.label}</label>
      <input
        id={props.name}
        name={props.name}
        type={props.name === "email" ? "email" : "password"}
        autocomplete={props.autocomplete}
        required
        value={props.value}
        aria-invalid={props.error || props.formError ? "true" : undefined}
        aria-describedby={described || undefined}
      />
      {props.hint && (
        <p class="hint" id={`${props.name}-hint`}>
          {props.hint}
        </p>
      )}
      {props.error && (
        <p class="field-error" id={`${props.name}-error`}>
          {props.error}
        </p>
      )}
    </>
  );
}

/** The form's error, above its fields; a field it is about points at it (Field's `formError`). */
function FormError(props: { error?: string | undefined }) {
  return props.error ? (
    <p class="alert" role="alert" id="form-error">
      {props.error}
    </p>
  ) : null;
}

function SignInPage(props: FormState & { signupOpen: boolean }) {
  return (
    <Page title="Sign in" narrow signupOpen={props.signupOpen}>
      <h1>Sign in</h1>
      {props.notice && <p class="notice">{props.notice}</p>}
      <FormError error={props.error} />
      <form method="post" action="/portal/login" class="card">
        {props.next && <input type="hidden" name="next" value={props.next} />}
        <Field name="email" label="Email" value={props.email} autocomplete="username" formError={props.invalid?.has("email")} />
        <Field name="password" label="Password" autocomplete="current-password" formError={props.invalid?.has("password")} />
        <SubmitRow label="Sign in" />
      </form>
      {props.signupOpen && (
        <p>
          New here? <a href="/portal/signup">Create an account</a>
        </p>
      )}
    </Page>
  );
}

function SignUpPage(props: FormState) {
  return (
    <Page title="Create account" narrow signupOpen>
      <h1>Create your account</h1>
      <p class="muted">Free plan: 500,000 lookups a month, and MCP access for your AI tools. No card needed.</p>
      <FormError error={props.error} />
      <form method="post" action="/portal/signup" class="card">
        <Field name="email" label="Email" value={props.email} autocomplete="username" error={props.fieldErrors?.email} />
        <Field
          name="password"
          label="Password"
          autocomplete="new-password"
          hint="At least 10 characters."
          error={props.fieldErrors?.password}
        />
        <SubmitRow label="Create account" />
      </form>
      <p>
        Already have an account? <a href="/portal/login">Sign in</a>
      </p>
    </Page>
  );
}

function SignUpClosedPage() {
  return (
    <Page title="Sign-up is closed" narrow>
      <h1>Sign-up is closed</h1>
      <p>This service does not take new accounts on its own. Ask its operator for one.</p>
      <p>
        <a href="/portal/login">Sign in</a>
      </p>
    </Page>
  );
}

const signupOpen = (env: Env) => readVars(env).SIGNUP === "on";

/**
 * The fields a failed sign-in is about: the malformed ones, or both for wrong credentials
 * (which never says which one is wrong); none when attempts are spent.
 */
function invalidFields(code: ErrorCode, credentials: { email: string; password: string }): Set<"email" | "password"> {
  if (code === "unauthorized") return new Set(["email", "password"]);
  if (code !== "invalid_argument") return new Set();
  const issues = credentialsSchema.safeParse(credentials).error?.issues ?? [];
  return new Set(issues.map((issue) => issue.path[0]).filter((name) => name === "email" || name === "password"));
}

authPages.get("/login", async (c) => {
  if (await currentSession(c, c.var.ctx.db)) return c.redirect(portalPath(c.req.query("next")), 303);
  const next = c.req.query("next");
  const notice = c.req.query("ended")
    ? "Your session ended. Sign in again to continue."
    : c.req.query("signedOut")
      ? "You are signed out."
      : undefined;
  return render(c, <SignInPage next={next ? portalPath(next) : undefined} notice={notice} signupOpen={signupOpen(c.env)} />);
});

authPages.post("/login", async (c) => {
  const form = await formFields(c.req);
  const email = field(form, "email");
  const next = portalPath(field(form, "next"));
  const db = c.var.ctx.db;
  const credentials = { email, password: field(form, "password") };
  const result = await signInBrowser(c, db, credentials);
  if (!result.ok) {
    if (result.retryAfter) c.header("Retry-After", String(result.retryAfter));
    const message = result.error.code === "invalid_argument" ? "Enter your email address and password." : result.error.message;
    const invalid = invalidFields(result.error.code, credentials);
    return render(
      c,
      <SignInPage email={email} error={message} invalid={invalid} next={next} signupOpen={signupOpen(c.env)} />,
      statusOf(result.error.code),
    );
  }
  return c.redirect(next, 303);
});

authPages.post("/logout", async (c) => {
  await endBrowserSession(c, c.var.ctx.db);
  return c.redirect("/portal/login?signedOut=1", 303);
});

authPages.get("/signup", async (c) => {
  if (!signupOpen(c.env)) return render(c, <SignUpClosedPage />, 403);
  if (await currentSession(c, c.var.ctx.db)) return c.redirect("/portal", 303);
  return render(c, <SignUpPage />);
});

const signUpInput = z.object({ email: emailSchema, password: passwordSchema });

authPages.post("/signup", async (c) => {
  if (!signupOpen(c.env)) return render(c, <SignUpClosedPage />, 403);
  const form = await formFields(c.req);
  const email = field(form, "email");
  const parsed = await signUpInput.safeParseAsync({ email, password: field(form, "password") });
  if (!parsed.success) {
    const fieldErrors: FormState["fieldErrors"] = {};
    for (const issue of parsed.error.issues) {
      const name = issue.path[0];
      if ((name === "email" || name === "password") && !fieldErrors[name]) {
        fieldErrors[name] = name === "email" ? "Enter an email address, like name@example.com." : `The password ${issue.message}.`;
      }
    }
    return render(c, <SignUpPage email={email} fieldErrors={fieldErrors} error="Check the fields below." />, 400);
  }
  const limit = await signUpAllowed(c.env, clientAddress(c));
  if (!limit.allowed) {
    c.header("Retry-After", String(limit.retryAfter));
    return render(c, <SignUpPage email={email} error="Too many attempts. Try again in a minute." />, 429);
  }
  const db = c.var.ctx.db;
  const created = await createAccount(db, { ...parsed.data, plan: "free" });
  if (!created.ok) {
    if (created.error.code === "conflict") {
      return render(
        c,
        <SignUpPage
          email={email}
          fieldErrors={{ email: "An account with this email already exists. Sign in instead." }}
          error="Check the fields below."
        />,
        409,
      );
    }
    return failed(c, created.error.message);
  }
  await replaceSession(c, db, created.value);
  // The account exists either way: a mail that could not be sent is asked for again from the dashboard.
  const mailed = await sendConfirmation(c.env, created.value, publicBase(c.env, c.req.url));
  if (!mailed.ok) log.error("portal.confirmation_not_sent", { detail: mailed.error.message });
  return c.redirect("/portal?welcome=1", 303);
});

function ConfirmedPage(props: { error?: string; errorTitle?: string; already?: boolean; signedIn: boolean }) {
  const title = props.error ? (props.errorTitle ?? "Link not valid") : "Email address confirmed";
  return (
    <Page title={title} narrow>
      <h1>{title}</h1>
      {props.error ? (
        <p class="alert" role="alert">
          {props.error}
        </p>
      ) : (
        <p>
          {props.already ? "This address was confirmed already." : "Thank you."} Your account has its plan's full daily budget of discovered
          domains.
        </p>
      )}
      <p>
        <a href={props.signedIn ? "/portal" : "/portal/login"}>{props.signedIn ? "Go to the dashboard" : "Sign in"}</a>
      </p>
    </Page>
  );
}

authPages.get(CONFIRM_PATH.replace(/^\/portal/, ""), async (c) => {
  const db = c.var.ctx.db;
  const token = c.req.query("token") ?? "";
  const confirmed = await confirmEmail(db, c.env.SIGNED_URL_SECRET, token);
  const signedIn = (await currentSession(c, db)) !== null;
  if (!confirmed.ok)
    return render(c, <ConfirmedPage error={confirmed.error.message} signedIn={signedIn} />, statusOf(confirmed.error.code));
  return render(c, <ConfirmedPage already={confirmed.value.already} signedIn={signedIn} />);
});

authPages.post(`${CONFIRM_PATH.replace(/^\/portal/, "")}/resend`, signedIn, async (c) => {
  const account = c.get("account");
  if (account.emailConfirmed) return c.redirect("/portal", 303);
  const limit = await confirmationMailAllowed(c.env, account.id);
  if (!limit.allowed) {
    c.header("Retry-After", String(limit.retryAfter));
    return render(
      c,
      <ConfirmedPage errorTitle="Link not sent" error="Too many links asked for today. Try again tomorrow." signedIn />,
      429,
    );
  }
  const mailed = await sendConfirmation(c.env, account, publicBase(c.env, c.req.url));
  if (!mailed.ok) {
    log.error("portal.confirmation_not_sent", { detail: mailed.error.message });
    return render(c, <ConfirmedPage errorTitle="Link not sent" error="The link could not be sent. Try again later." signedIn />, 503);
  }
  return c.redirect("/portal?confirmation=sent", 303);
});

function failed(c: Context<WebEnv>, detail: string) {
  log.error("portal.sign_up_failed", { detail });
  return render(c, <SignUpPage error="Your account could not be created. Try again later." />, 500);
}

function PasswordPage(props: {
  account: SessionAccount;
  error?: string | undefined;
  fieldError?: string | undefined;
  invalidCurrent?: boolean;
  notice?: string | undefined;
}) {
  return (
    <Page title="Change password" account={props.account} narrow>
      <h1>Change password</h1>
      {props.notice && <p class="notice">{props.notice}</p>}
      <FormError error={props.error} />
      <form method="post" action="/portal/password" class="card">
        <Field name="current" label="Current password" autocomplete="current-password" formError={props.invalidCurrent} />
        <Field
          name="password"
          label="New password"
          autocomplete="new-password"
          hint="At least 10 characters. Every other browser signed in to this account is signed out; MCP connections and keys stay until you revoke them."
          error={props.fieldError}
        />
        <SubmitRow label="Change password" />
      </form>
    </Page>
  );
}

authPages.get("/password", signedIn, (c) =>
  render(
    c,
    <PasswordPage
      account={c.get("account")}
      notice={
        c.req.query("changed")
          ? "Password changed. Other browsers were signed out. MCP connections and keys stay: review them under Connections and Keys."
          : undefined
      }
    />,
  ),
);

authPages.post("/password", signedIn, async (c) => {
  const account = c.get("account");
  const form = await formFields(c.req);
  const db = c.var.ctx.db;
  const fresh = await passwordSchema.safeParseAsync(field(form, "password"));
  if (!fresh.success)
    return render(
      c,
      <PasswordPage account={account} error="Check the fields below." fieldError={`The password ${fresh.error.issues[0]!.message}.`} />,
      400,
    );
  // The current password, checked as a sign-in is (its limits too): a browser left signed in is
  // not enough to change it. (What such a browser already made, keys and MCP connections,
  // stays for the owner to revoke: the page says so.)
  const current = await signIn(c.env, db, { email: account.email, password: field(form, "current") }, signInClient(c));
  if (!current.ok) {
    if (current.retryAfter) c.header("Retry-After", String(current.retryAfter));
    const wrong = current.error.code === "unauthorized" || current.error.code === "invalid_argument";
    const message = wrong ? "The current password is not right." : current.error.message;
    return render(c, <PasswordPage account={account} error={message} invalidCurrent={wrong} />, wrong ? 401 : statusOf(current.error.code));
  }
  const changed = await setPassword(db, account.id, fresh.data);
  if (!changed.ok) {
    log.error("portal.password_change_failed", { detail: changed.error.message });
    return render(c, <PasswordPage account={account} error="Your password could not be changed. Try again later." />, 500);
  }
  // Every session went with the old password; this browser gets a new one.
  await replaceSession(c, db, account);
  return c.redirect("/portal/password?changed=1", 303);
});
