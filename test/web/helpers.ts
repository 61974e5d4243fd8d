import { BASE, Browser, PASSWORD } from "../oauth/helpers";

export { BASE, Browser, PASSWORD };

let n = 0;
export const freshEmail = () => `web${++n}-${crypto.randomUUID().slice(0, 8)}@example.com`;

/** A browser that signed up through the page, as a person would. */
export async function signedUp(email = freshEmail()): Promise<{ browser: Browser; email: string }> {
  const browser = new Browser();
  const response = await browser.postForm("/portal/signup", { email, password: PASSWORD });
  if (response.status !== 303) throw new Error(`sign-up answered ${response.status}: ${await response.text()}`);
  return { browser, email };
}

/** The text of a page with tags removed and whitespace folded: what a reader sees, roughly. */
export async function textOf(response: Response): Promise<string> {
  const html = await response.text();
  return html
    .replace(/<(script|style)[\s\S]*?<\/\1>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/\s+/g, " ")
    .trim();
}

/** The full key shown once on the answer to the create-key form. */
export const createdKeyOf = (html: string) => /id="new-key"[^>]*value="((?:pk|sk)_[0-9A-Za-z]{32})"/.exec(html)?.[1];
