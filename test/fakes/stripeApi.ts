import { createServer, type Server } from "node:http";

/**
 * A stand-in for the part of Stripe's API the service calls, on 127.0.0.1: Checkout Sessions
 * created (`POST /v1/checkout/sessions`, form-encoded with bracketed keys), retrieved
 * (`GET /v1/checkout/sessions/{id}`) and expired (`POST …/{id}/expire`, open ones only), and
 * customer portal sessions created
 * (`POST /v1/billing_portal/sessions`), with Stripe's bearer authentication and error shape
 * (`{error: {type, code, message}}`). Tests drive it through two routes of its own:
 * `POST /_complete/{id}` marks a checkout session paid, as a customer finishing checkout would,
 * and `GET /_sessions/{id}` shows the parameters a session (checkout or portal) was created with.
 */
export const FAKE_STRIPE_SECRET_KEY = "sk_test_fake_0123456789";

interface StoredSession {
  params: Record<string, string>;
  session: Record<string, unknown>;
}

const stripeError = (status: number, type: string, message: string, code?: string) => ({ status, body: { error: { type, message, ...(code ? { code } : {}) } } });

export async function startFakeStripe(): Promise<{ url: string; server: Server }> {
  const sessions = new Map<string, StoredSession>();
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
        Object.assign(stored.session, { status: "complete", payment_status: "paid", customer: `cus_fake_${control[2]!.slice(-6)}` });
      }
      return send({ status: 200, body: control[1] === "complete" ? stored.session : stored.params });
    }

    if (req.headers.authorization !== `Bearer ${FAKE_STRIPE_SECRET_KEY}`) {
      return send(stripeError(401, "invalid_request_error", "Invalid API Key provided"));
    }
    if (req.method === "POST" && url.pathname === "/v1/checkout/sessions") {
      const params = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString("utf8")));
      for (const required of ["mode", "success_url", "line_items[0][price]"]) {
        if (!params[required]) return send(stripeError(400, "invalid_request_error", `Missing required param: ${required}.`, "parameter_missing"));
      }
      const id = `cs_test_${(++n).toString(36)}${Math.random().toString(36).slice(2, 12)}`;
      const metadata = Object.fromEntries(Object.entries(params).flatMap(([k, v]) => (/^metadata\[(\w+)\]$/.exec(k) ? [[/^metadata\[(\w+)\]$/.exec(k)![1], v]] : [])));
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
      if (!params.customer) return send(stripeError(400, "invalid_request_error", "Missing required param: customer.", "parameter_missing"));
      if (!params.customer.startsWith("cus_")) return send(stripeError(400, "invalid_request_error", `No such customer: '${params.customer}'`, "resource_missing"));
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
    const expire = /^\/v1\/checkout\/sessions\/([^/]+)\/expire$/.exec(url.pathname);
    if (req.method === "POST" && expire) {
      const stored = sessions.get(decodeURIComponent(expire[1]!));
      if (!stored) return send(stripeError(404, "invalid_request_error", `No such checkout.session: '${expire[1]}'`, "resource_missing"));
      if (stored.session.status !== "open") {
        return send(stripeError(400, "invalid_request_error", `Only Checkout Sessions with a status in ["open"] can be expired. This Checkout Session has a status of "${stored.session.status}".`));
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
