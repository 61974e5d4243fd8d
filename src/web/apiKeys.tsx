import { Hono } from "hono";
import { publicBase } from "../env";
import { type CreatedKey, createKey, type ListedKey, listedKey, listKeys, originSchema, revokeAccountKey } from "../keys/apiKeys";
import { KEY_CACHE_TTL_MS } from "../keys/verify";
import { formFields } from "../lib/params";
import type { SessionAccount } from "../accounts/browserSessions";
import { dateTime, keyLabel } from "./format";
import { Page, render, SubmitRow } from "./layout";
import { field, signedIn, type WebEnv } from "./session";

/**
 * Keys: the account's keys (never the key itself: its prefix and last four characters), a
 * form to create one, whose full value is shown once on the answer to that form, and
 * revocation behind a confirmation page (no script needed).
 */
export const keysPages = new Hono<WebEnv>();

const REVOCATION_DELAY = `${KEY_CACHE_TTL_MS / 1000} seconds`;

interface CreateForm {
  type: "publishable" | "secret";
  origins: string;
  attribution: boolean;
  errors?: { origins?: string; type?: string; attribution?: string; form?: string };
}

function KeysPage(props: {
  account: SessionAccount;
  keys: ListedKey[];
  base: string;
  created?: CreatedKey;
  form?: CreateForm;
  notice?: string;
}) {
  const form = props.form ?? { type: "publishable", origins: "", attribution: false };
  const { form: formError, ...fieldErrors } = form.errors ?? {};
  const failed = formError !== undefined || Object.keys(fieldErrors).length > 0;
  return (
    <Page title={failed ? "Error: Keys" : "Keys"} account={props.account} section="keys">
      <h1>Keys</h1>
      {/* Announced first, above a listing of up to 100 keys: the form is at the end of the page. */}
      {failed && (
        <p class="alert" role="alert" id="form-error">
          {formError ?? "The key was not created: check the fields of the form."} <a href="#create-heading">Go to the form</a>
        </p>
      )}
      {props.notice && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
      {props.created && <CreatedPanel created={props.created} base={props.base} />}
      <section class="card" aria-labelledby="keys-heading">
        <h2 id="keys-heading">Your keys</h2>
        {props.keys.length === 0 ? (
          <p>No keys yet. Create one below.</p>
        ) : (
          <section class="table-wrap" tabindex={0} aria-labelledby="keys-heading">
            <table>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Type</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Allowed origins</th>
                  <th scope="col">Attribution</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {props.keys.map((key) => (
                  <tr>
                    <td class="key">{keyLabel(key)}</td>
                    <td>{key.type}</td>
                    <td>{dateTime(key.createdAt)}</td>
                    <td>{key.lastUsedAt ? dateTime(key.lastUsedAt) : "never"}</td>
                    <td>{key.type === "secret" ? "–" : key.allowedOrigins.length ? key.allowedOrigins.join(", ") : "any"}</td>
                    <td>{key.type === "secret" ? "–" : key.requireAttribution ? "required" : "not required"}</td>
                    <td>
                      {key.revokedAt ? (
                        <span class="badge revoked">revoked {dateTime(key.revokedAt)}</span>
                      ) : (
                        <a href={`/portal/keys/${key.id}/revoke`} aria-label={`Revoke ${keyLabel(key)}`}>
                          Revoke
                        </a>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        )}
      </section>
      <section class="card" aria-labelledby="create-heading">
        <h2 id="create-heading">Create a key</h2>
        <form method="post" action="/portal/keys">
          <fieldset aria-describedby={form.errors?.type ? "type-error" : undefined}>
            <legend>Type</legend>
            <label>
              <input type="radio" name="type" value="publishable" checked={form.type === "publishable"} />
              <span>
                Publishable (<code>pk_…</code>): goes in web pages, in <code>&lt;img&gt;</code> URLs
              </span>
            </label>
            <label>
              <input type="radio" name="type" value="secret" checked={form.type === "secret"} />
              <span>
                Secret (<code>sk_…</code>): for your servers and the REST API; never in a page
              </span>
            </label>
            {form.errors?.type && (
              <p class="field-error" id="type-error">
                {form.errors.type}
              </p>
            )}
          </fieldset>
          <label for="origins">Allowed origins (publishable keys, optional)</label>
          <textarea
            id="origins"
            name="origins"
            rows={3}
            aria-describedby={form.errors?.origins ? "origins-hint origins-error" : "origins-hint"}
            aria-invalid={form.errors?.origins ? "true" : undefined}
          >
            {form.origins}
          </textarea>
          <p class="hint" id="origins-hint">
            One per line, like https://www.example.com. Empty: any site may use the key.
          </p>
          {form.errors?.origins && (
            <p class="field-error" id="origins-error">
              {form.errors.origins}
            </p>
          )}
          <fieldset>
            <legend>Attribution (publishable keys)</legend>
            <label>
              <input
                type="checkbox"
                name="attribution"
                value="required"
                checked={form.attribution}
                aria-describedby={form.errors?.attribution ? "attribution-hint attribution-error" : "attribution-hint"}
                aria-invalid={form.errors?.attribution ? "true" : undefined}
              />
              <span>Require attribution: serve only requests made from web pages</span>
            </label>
            <p class="hint" id="attribution-hint">
              Server-side fetches and images with <code>referrerpolicy="no-referrer"</code> are then refused.
            </p>
            {form.errors?.attribution && (
              <p class="field-error" id="attribution-error">
                {form.errors.attribution}
              </p>
            )}
          </fieldset>
          <SubmitRow label="Create key" />
        </form>
      </section>
    </Page>
  );
}

function CreatedPanel(props: { created: CreatedKey; base: string }) {
  const { created } = props;
  return (
    <section class="card" aria-labelledby="created-heading">
      <h2 id="created-heading">Your new {created.type} key</h2>
      <p class="warning">This is the only time the whole key is shown. Copy it now and keep it somewhere safe.</p>
      <label for="new-key">Key</label>
      <div class="secret">
        <input id="new-key" type="text" readonly value={created.key} spellcheck={false} autocomplete="off" />
        <button type="button" data-copy="new-key" data-status="copy-status">
          Copy
        </button>
        <span id="copy-status" class="copy-status" role="status" />
      </div>
      {created.type === "publishable" ? (
        <>
          <p class="hint">In a page:</p>
          <pre>
            <code>{`<img src="${props.base}/github.com?token=${created.key}&size=128" alt="GitHub logo">`}</code>
          </pre>
        </>
      ) : (
        <>
          <p class="hint">From a server:</p>
          <pre>
            <code>{`curl -H "Authorization: Bearer ${created.key}" ${props.base}/v1/companies/search?q=github`}</code>
          </pre>
        </>
      )}
    </section>
  );
}

function RevokePage(props: { account: SessionAccount; apiKey: ListedKey }) {
  const label = keyLabel(props.apiKey);
  return (
    <Page title="Revoke key" account={props.account} section="keys" narrow>
      <h1>Revoke {label}?</h1>
      <p>
        Requests with this {props.apiKey.type} key stop working within {REVOCATION_DELAY}
        {props.apiKey.type === "publishable"
          ? ", and logos embedded with it stop showing once browsers' copies expire (a day at most)"
          : ""}
        . This cannot be undone.
      </p>
      <form method="post" action={`/portal/keys/${props.apiKey.id}/revoke`}>
        <div class="actions">
          <button class="danger" type="submit">
            Revoke key
          </button>
          <a href="/portal/keys">Cancel</a>
        </div>
      </form>
    </Page>
  );
}

function NotFoundPage(props: { account: SessionAccount; revoked?: boolean }) {
  return (
    <Page title={props.revoked ? "Key already revoked" : "No such key"} account={props.account} section="keys" narrow>
      <h1>{props.revoked ? "Key already revoked" : "No such key"}</h1>
      <p>
        {props.revoked ? "This key is revoked already." : "This account has no key with that id."}{" "}
        <a href="/portal/keys">Back to your keys</a>
      </p>
    </Page>
  );
}

keysPages.get("/keys", signedIn, async (c) => {
  const account = c.get("account");
  const db = c.var.ctx.db;
  const keys = await listKeys(db, account.id);
  const revokedId = c.req.query("revoked");
  // By id: a key revoked among many need not be in the listing.
  const revoked = revokedId ? await listedKey(db, account.id, revokedId) : undefined;
  const notice = revoked?.revokedAt
    ? `${keyLabel(revoked)} is revoked. Requests with it stop working within ${REVOCATION_DELAY}.`
    : undefined;
  return render(c, <KeysPage account={account} keys={keys} base={publicBase(c.env, c.req.url)} notice={notice} />);
});

/**
 * Room for the 100 origins a key takes at most, each as long as an origin can be (`https://`, a
 * 253-character host and `:65535`: 267 characters), one a line; more is no list of origins.
 */
const MAX_ORIGINS_TEXT = 32 * 1024;

/** Origins typed one per line (commas and spaces also separate), each checked as the API checks it. */
function parseOrigins(text: string): { origins: string[] } | { error: string } {
  if (text.length > MAX_ORIGINS_TEXT)
    return { error: `Too long: the allowed origins take at most ${MAX_ORIGINS_TEXT / 1024} KB, one origin a line.` };
  const entries = text.split(/[\s,]+/).filter(Boolean);
  if (entries.length > 100) return { error: "At most 100 origins." };
  const origins: string[] = [];
  for (const entry of entries) {
    const parsed = originSchema.safeParse(entry);
    if (!parsed.success) return { error: parsed.error.issues[0]?.message ?? `"${entry}" is not an origin` };
    origins.push(parsed.data);
  }
  return { origins: [...new Set(origins)] };
}

keysPages.post("/keys", signedIn, async (c) => {
  const account = c.get("account");
  const db = c.var.ctx.db;
  const body = await formFields(c.req);
  const type = field(body, "type");
  const form: CreateForm = {
    type: type === "secret" ? "secret" : "publishable",
    origins: field(body, "origins"),
    attribution: field(body, "attribution") === "required",
  };
  const origins = parseOrigins(form.origins);
  const errors: NonNullable<CreateForm["errors"]> = {};
  if (type !== "publishable" && type !== "secret") errors.type = "Choose publishable or secret.";
  if ("error" in origins) errors.origins = origins.error;
  else if (form.type === "secret" && origins.origins.length > 0)
    errors.origins = "Allowed origins apply to publishable keys only: clear them, or choose publishable.";
  if (form.type === "secret" && form.attribution)
    errors.attribution = "Attribution applies to publishable keys only: clear it, or choose publishable.";
  const base = publicBase(c.env, c.req.url);
  if (Object.keys(errors).length > 0 || "error" in origins) {
    return render(c, <KeysPage account={account} keys={await listKeys(db, account.id)} base={base} form={{ ...form, errors }} />, 400);
  }
  const created = await createKey(db, {
    accountId: account.id,
    type: form.type,
    allowedOrigins: origins.origins,
    requireAttribution: form.attribution,
  });
  if (!created.ok && created.error.code === "conflict") {
    return render(
      c,
      <KeysPage
        account={account}
        keys={await listKeys(db, account.id)}
        base={base}
        form={{ ...form, errors: { form: `${created.error.message}.` } }}
      />,
      409,
    );
  }
  if (!created.ok) throw new Error(`portal: creating a key failed: ${created.error.message}`);
  // Answered here rather than redirected: the key appears in this one response and in no URL.
  return render(c, <KeysPage account={account} keys={await listKeys(db, account.id)} base={base} created={created.value} />, 201);
});

keysPages.get("/keys/:id/revoke", signedIn, async (c) => {
  const account = c.get("account");
  const key = await listedKey(c.var.ctx.db, account.id, c.req.param("id"));
  if (!key || key.revokedAt) return render(c, <NotFoundPage account={account} revoked={key !== undefined} />, 404);
  return render(c, <RevokePage account={account} apiKey={key} />);
});

keysPages.post("/keys/:id/revoke", signedIn, async (c) => {
  const account = c.get("account");
  const revoked = await revokeAccountKey(c.var.ctx.db, account.id, c.req.param("id"));
  if (!revoked.ok) return render(c, <NotFoundPage account={account} />, 404);
  return c.redirect(`/portal/keys?revoked=${encodeURIComponent(revoked.value.id)}`, 303);
});
