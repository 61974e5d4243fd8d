import { createServer, type Server } from "node:http";

/**
 * A stand-in for the part of Stripe's API the service calls, on 127.0.0.1: Checkout Sessions
 * created (`POST /v1/checkout/sessions`, form-encoded with bracketed keys), retrieved
 * (`GET /v1/checkout/sessions/{id}`) and expired (`POST …/{id}/expire`, open ones only), and
 * customer portal sessions created
 * (`POST /v1/billing_portal/sessions`), and webhook endpoints created (`POST /v1/webhook_endpoints`,
 * `url` and `enabled_events[]`), updated (`POST /v1/webhook_endpoints/{id}`, `disabled` and
 * `enabled_events[]`) and listed a page at a time (`GET /v1/webhook_endpoints`, `limit` and
 * `starting_after`), with Stripe's bearer authentication and error shape
 * (`{error: {type, code, message}}`). Tests drive it through two routes of its own:
 * `POST /_complete/{id}` marks a checkout session paid, as a customer finishing checkout would,
 * and `GET /_sessions/{id}` shows the parameters a session (checkout or portal) was created with;
 * `POST /_complete/{id}?payment_status=unpaid` completes it unpaid, as Stripe does when the
 * payment method settles later (SEPA debit, say).
 *
 * Keys other than FAKE_STRIPE_SECRET_KEY are refused with 401, as Stripe refuses an invalid or
 * revoked key, except three variants of it that make the fake misbehave: `<key>_slow<ms>` answers
 * as the key would after <ms> milliseconds, `<key>_hang` never answers, and `<key>_status<code>`
 * answers <code> in Stripe's error shape (403 a restricted key, 429 a rate limit, 5xx Stripe's
 * outage). A Price id starting with `price_missing` is unknown to it (400 resource_missing), and
 * so is a customer id starting with `cus_deleted` (deleted in the dashboard).
 */
export const FAKE_STRIPE_SECRET_KEY = "sk_test_fake_0123456789";

/** What `<key>_status<code>` answers, in Stripe's words. */
const failures: Record<number, { type: string; message: string }> = {
  403: {
    type: "invalid_request_error",
    message: "The provided key 'rk_test_***' does not have the required permissions for this endpoint.",
  },
  429: { type: "invalid_request_error", message: "Request rate limit exceeded." },
  500: { type: "api_error", message: "An unknown error occurred" },
  503: { type: "api_error", message: "Service unavailable" },
};

interface StoredSession {
  params: Record<string, string>;
  session: Record<string, unknown>;
}

const stripeError = (status: number, type: string, message: string, code?: string, param?: string) => ({
  status,
  body: { error: { type, message, ...(code ? { code } : {}), ...(param ? { param } : {}) } },
});
/** A customer deleted in Stripe's dashboard: every call naming it is refused as Stripe refuses it. */
const deletedCustomer = (customer: string | undefined) =>
  customer?.startsWith("cus_deleted")
    ? stripeError(400, "invalid_request_error", `No such customer: '${customer}'`, "resource_missing", "customer")
    : null;

export async function startFakeStripe(): Promise<{ url: string; server: Server }> {
  const sessions = new Map<string, StoredSession>();
  const webhookEndpoints = new Map<string, Record<string, unknown>>();
  let n = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const send = ({ status, body }: { status: number; body: unknown }) => {
      res.writeHead(status, { "Content-Type": "application/json", "Request-Id": `req_fake_${++n}` });
      res.end(JSON.stringify(body));
    };

    const control = /^\/_(complete|sessions)\/((?:cs|bps)_\w+)$/.exec(url.pathname);
    if (control) {
      const stored = sessions.get(control[2]!);
      if (!stored) return send({ status: 404, body: { error: "no such session" } });
      if (control[1] === "complete") {
        // An expired session can no longer be paid.
        if (stored.session.status !== "open") return send({ status: 409, body: { error: `session is ${stored.session.status}` } });
        const paymentStatus = url.searchParams.get("payment_status") ?? "paid";
        Object.assign(stored.session, { status: "complete", payment_status: paymentStatus, customer: `cus_fake_${control[2]!.slice(-6)}` });
      }
      return send({ status: 200, body: control[1] === "complete" ? stored.session : stored.params });
    }

    const variant = new RegExp(`^Bearer ${FAKE_STRIPE_SECRET_KEY}(?:_(slow|hang|status)(\\d*))?$`).exec(req.headers.authorization ?? "");
    if (!variant) {
      return send(stripeError(401, "invalid_request_error", "Invalid API Key provided"));
    }
    // Accepts the connection and never answers (until the caller gives up).
    if (variant[1] === "hang") return;
    if (variant[1] === "slow") await new Promise((resolve) => setTimeout(resolve, Number(variant[2])));
    if (variant[1] === "status") {
      const status = Number(variant[2]);
      const failure = failures[status] ?? failures[500]!;
      return send(stripeError(status, failure.type, failure.message, status === 429 ? "rate_limit" : undefined));
    }
    if (req.method === "POST" && url.pathname === "/v1/checkout/sessions") {
      const params = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString("utf8")));
      for (const required of ["mode", "success_url", "line_items[0][price]"]) {
        if (!params[required])
          return send(stripeError(400, "invalid_request_error", `Missing required param: ${required}.`, "parameter_missing"));
      }
      const price = params["line_items[0][price]"]!;
      const gone = deletedCustomer(params.customer);
      if (gone) return send(gone);
      if (price.startsWith("price_missing")) {
        const missing = stripeError(400, "invalid_request_error", `No such price: '${price}'`, "resource_missing");
        return send({ ...missing, body: { error: { ...missing.body.error, param: "line_items[0][price]" } } });
      }
      const id = `cs_test_${(++n).toString(36)}${Math.random().toString(36).slice(2, 12)}`;
      const metadata = Object.fromEntries(
        Object.entries(params).flatMap(([k, v]) => (/^metadata\[(\w+)\]$/.exec(k) ? [[/^metadata\[(\w+)\]$/.exec(k)![1], v]] : [])),
      );
      const session = {
        id,
        object: "checkout.session",
        mode: params.mode,
        status: "open",
        payment_status: "unpaid",
        url: `https://checkout.stripe.com/c/pay/${id}`,
        client_reference_id: params.client_reference_id ?? null,
        customer: params.customer ?? null,
        customer_email: params.customer_email ?? null,
        metadata,
        success_url: params.success_url,
        cancel_url: params.cancel_url ?? null,
        subscription: null,
        livemode: false,
      };
      sessions.set(id, { params, session });
      return send({ status: 200, body: session });
    }
    if (req.method === "POST" && url.pathname === "/v1/billing_portal/sessions") {
      const params = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString("utf8")));
      if (!params.customer)
        return send(stripeError(400, "invalid_request_error", "Missing required param: customer.", "parameter_missing"));
      if (!params.customer.startsWith("cus_"))
        return send(stripeError(400, "invalid_request_error", `No such customer: '${params.customer}'`, "resource_missing"));
      const gone = deletedCustomer(params.customer);
      if (gone) return send(gone);
      const id = `bps_${(++n).toString(36)}${Math.random().toString(36).slice(2, 12)}`;
      const session = {
        id,
        object: "billing_portal.session",
        configuration: "bpc_fake_default",
        created: Math.floor(Date.now() / 1000),
        customer: params.customer,
        flow: null,
        livemode: false,
        locale: null,
        on_behalf_of: null,
        return_url: params.return_url ?? null,
        url: `https://billing.stripe.com/p/session/test_${id.slice(4)}`,
      };
      sessions.set(id, { params, session });
      return send({ status: 200, body: session });
    }
    const endpoint = /^\/v1\/webhook_endpoints(?:\/([^/]+))?$/.exec(url.pathname);
    if (endpoint) {
      const form = new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
      const events = form.getAll("enabled_events[]").concat([...form].filter(([k]) => /^enabled_events\[\d+\]$/.test(k)).map(([, v]) => v));
      if (req.method === "POST" && !endpoint[1]) {
        if (!form.get("url") || events.length === 0)
          return send(stripeError(400, "invalid_request_error", "Missing required param: url and enabled_events.", "parameter_missing"));
        const id = `we_${(++n).toString(36)}${Math.random().toString(36).slice(2, 12)}`;
        const created = {
          id,
          object: "webhook_endpoint",
          url: form.get("url"),
          enabled_events: events,
          status: "enabled",
          api_version: null,
          created: Math.floor(Date.now() / 1000),
          livemode: false,
          metadata: {},
        };
        webhookEndpoints.set(id, created);
        return send({ status: 200, body: { ...created, secret: `whsec_fake_${id}` } });
      }
      if (req.method === "POST") {
        const stored = webhookEndpoints.get(decodeURIComponent(endpoint[1]!));
        if (!stored)
          return send(stripeError(404, "invalid_request_error", `No such webhook endpoint: '${endpoint[1]}'`, "resource_missing"));
        if (form.has("disabled")) stored.status = form.get("disabled") === "true" ? "disabled" : "enabled";
        if (events.length > 0) stored.enabled_events = events;
        return send({ status: 200, body: stored });
      }
      if (req.method === "GET" && !endpoint[1]) {
        // Newest first, as Stripe lists them.
        const all = [...webhookEndpoints.values()].reverse();
        const after = url.searchParams.get("starting_after");
        const from = after ? all.findIndex((e) => e.id === after) + 1 : 0;
        const limit = Number(url.searchParams.get("limit") ?? 10);
        const data = all.slice(from, from + limit);
        return send({ status: 200, body: { object: "list", data, has_more: from + limit < all.length, url: "/v1/webhook_endpoints" } });
      }
    }
    const expire = /^\/v1\/checkout\/sessions\/([^/]+)\/expire$/.exec(url.pathname);
    if (req.method === "POST" && expire) {
      const stored = sessions.get(decodeURIComponent(expire[1]!));
      if (!stored) return send(stripeError(404, "invalid_request_error", `No such checkout.session: '${expire[1]}'`, "resource_missing"));
      if (stored.session.status !== "open") {
        return send(
          stripeError(
            400,
            "invalid_request_error",
            `Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of "${stored.session.status}".`,
          ),
        );
      }
      Object.assign(stored.session, { status: "expired", url: null });
      return send({ status: 200, body: stored.session });
    }
    const retrieve = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(url.pathname);
    if (req.method === "GET" && retrieve) {
      const stored = sessions.get(decodeURIComponent(retrieve[1]!));
      if (!stored) return send(stripeError(404, "invalid_request_error", `No such checkout.session: '${retrieve[1]}'`, "resource_missing"));
      return send({ status: 200, body: stored.session });
    }
    return send(stripeError(404, "invalid_request_error", `Unrecognized request URL (${req.method}: ${url.pathname}).`));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  server.unref();
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("fake Stripe: no port");
  return { url: `http://127.0.0.1:${address.port}`, server };
}
