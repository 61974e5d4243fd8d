import { readVars } from "../env";
import { fail, ok, type Result } from "../lib/errors";
import { log } from "../lib/log";

/**
 * Mail the service sends (sign-up's confirmation link), through a transactional mail API in
 * Postmark's wire format: `POST {MAIL_API_BASE}/email` with the server token in
 * `X-Postmark-Server-Token` and `{From, To, Subject, TextBody, MessageStream}`, answered
 * `{ErrorCode: 0, MessageID, …}` when accepted (https://postmarkapp.com/developer/api/email-api).
 * Without a token or a sender (a local server), nothing is sent: the message goes to the log,
 * where `npm start` shows it.
 */
export interface Mail {
  to: string;
  subject: string;
  text: string;
}

export type MailSent = { sent: "api"; messageId: string } | { sent: "log" };

const MAIL_TIMEOUT_MS = 10_000;

export async function sendMail(env: Env, mail: Mail): Promise<Result<MailSent>> {
  const vars = readVars(env);
  if (!env.MAIL_API_TOKEN || vars.MAIL_FROM === "") {
    log.info("mail.not_sent", { reason: "no MAIL_API_TOKEN or MAIL_FROM: the message is logged instead", subject: mail.subject });
    // A console line of its own, so that a local server's terminal shows the link whole.
    console.log(`\nMail to ${mail.to}: ${mail.subject}\n\n${mail.text}\n`);
    return ok({ sent: "log" });
  }
  try {
    const response = await fetch(`${vars.MAIL_API_BASE}/email`, {
      method: "POST",
      headers: { Accept: "application/json", "Content-Type": "application/json", "X-Postmark-Server-Token": env.MAIL_API_TOKEN },
      body: JSON.stringify({ From: vars.MAIL_FROM, To: mail.to, Subject: mail.subject, TextBody: mail.text, MessageStream: "outbound" }),
      signal: AbortSignal.timeout(MAIL_TIMEOUT_MS),
    });
    const body = (await response.json().catch(() => null)) as { ErrorCode?: number; Message?: string; MessageID?: string } | null;
    if (response.ok && body?.ErrorCode === 0 && typeof body.MessageID === "string") return ok({ sent: "api", messageId: body.MessageID });
    log.error("mail.refused", { status: response.status, errorCode: body?.ErrorCode, message: body?.Message?.slice(0, 200) });
    return fail("unavailable", "The mail could not be sent");
  } catch (error) {
    log.error("mail.unreachable", { error });
    return fail("unavailable", "The mail could not be sent");
  }
}
