import { createServer, type Server } from "node:http";

/**
 * A stand-in for Postmark's email API on 127.0.0.1, in its wire format: `POST /email` with the
 * server token in `X-Postmark-Server-Token` and a JSON message (`From`, `To`, `Subject`,
 * `TextBody` or `HtmlBody`), answered `{To, SubmittedAt, MessageID, ErrorCode: 0, Message: "OK"}`;
 * a missing or wrong token is refused 401 with ErrorCode 10, a message without a sender, a
 * recipient or a body 422 with ErrorCode 300, as Postmark answers them. A recipient at
 * `refused.example` is refused 422 with ErrorCode 406 (an inactive recipient).
 *
 * Tests read what was sent through routes of its own: `GET /_messages?to=<address>` lists the
 * accepted messages (all, without `to`), oldest first.
 */
export const FAKE_MAIL_TOKEN = "fake-postmark-server-token";
export const FAKE_MAIL_FROM = "logos@service.example";

interface Message {
  From: string;
  To: string;
  Subject: string;
  TextBody?: string;
  HtmlBody?: string;
  MessageStream?: string;
}

export async function startFakeMailApi(): Promise<{ url: string; server: Server }> {
  const sent: Array<Message & { MessageID: string }> = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const reply = (status: number, body: unknown) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(body));
    };
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method === "GET" && url.pathname === "/_messages") {
      const to = url.searchParams.get("to");
      return reply(200, to === null ? sent : sent.filter((m) => m.To === to));
    }
    if (req.method !== "POST" || url.pathname !== "/email") return reply(404, { ErrorCode: 404, Message: "Not found" });
    if (req.headers["x-postmark-server-token"] !== FAKE_MAIL_TOKEN) {
      return reply(401, {
        ErrorCode: 10,
        Message:
          "No Account or Server API tokens were supplied in the HTTP headers. Please add a header for either X-Postmark-Server-Token or X-Postmark-Account-Token.",
      });
    }
    let message: Partial<Message>;
    try {
      message = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return reply(422, { ErrorCode: 402, Message: "Received invalid JSON input." });
    }
    if (!message.From || !message.To || !message.Subject || !(message.TextBody || message.HtmlBody)) {
      return reply(422, { ErrorCode: 300, Message: "Invalid email request" });
    }
    if (message.To.endsWith("@refused.example")) {
      return reply(422, { ErrorCode: 406, Message: "You tried to send to a recipient that has been marked as inactive." });
    }
    const id = crypto.randomUUID();
    sent.push({ ...(message as Message), MessageID: id });
    return reply(200, { To: message.To, SubmittedAt: new Date().toISOString(), MessageID: id, ErrorCode: 0, Message: "OK" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  server.unref();
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("the fake mail API has no port");
  return { url: `http://127.0.0.1:${address.port}`, server };
}
