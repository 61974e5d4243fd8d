import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { isValidIsin } from "../../src/lib/isin";
import { redact } from "../../src/lib/log";
import { darkLogo40x20 } from "../fixtures/images";
import { addCompany } from "../helpers/catalogue";
import { assetKeyOf, BASE, fetchWith, freshKey } from "./helpers";

/** Lookups by the other keys a company holds: ISIN, crypto symbol, an email address's domain. */
const get = (path: string) => exports.default.fetch(`${BASE}${path}`, { redirect: "manual" });
const answer = async (response: Response) => [response.status, response.status === 302 ? "" : await response.text()];

const unique = () => crypto.randomUUID().replaceAll("-", "").slice(0, 8).toUpperCase();

/** A made-up ISIN whose check digit passes: nine random characters after the country, then the digit. */
function freshIsin(country = "US"): string {
  const body = `${country}${unique()
    .replace(/[^0-9]/g, "7")
    .padEnd(9, "1")
    .slice(0, 9)}`;
  const digit = [..."0123456789"].find((d) => isValidIsin(body + d))!;
  return body + digit;
}

/** The same ISIN with a check digit that fails. */
const wrongCheckDigit = (isin: string) => isin.slice(0, 11) + ((Number(isin[11]) + 1) % 10);

async function company(overrides: { domains?: string[]; isins?: string[]; crypto?: string[] } = {}) {
  const domain = overrides.domains?.[0] ?? `keyed-${unique().toLowerCase()}.com`;
  const written = await addCompany(
    {
      name: `Keyed ${unique()}`,
      domains: overrides.domains ?? [domain],
      identifiers: [
        ...(overrides.isins ?? []).map((value) => ({ scheme: "isin" as const, value })),
        ...(overrides.crypto ?? []).map((value) => ({ scheme: "crypto" as const, value })),
      ],
    },
    darkLogo40x20(),
  );
  return { domain, ...written };
}

describe("GET /isin/{isin}", () => {
  it("redirects to the logo of the company holding the ISIN, however it is cased", async () => {
    const isin = freshIsin();
    const { domain } = await company({ isins: [isin, freshIsin("GB")] });
    const token = await freshKey();
    for (const asked of [isin, isin.toLowerCase()]) {
      const response = await get(`/isin/${asked}?token=${token}`);
      expect(response.status, asked).toBe(302);
      expect(assetKeyOf(response.headers.get("location")!)).toContain(`logos/${domain}/`);
    }
  });

  it("refuses an ISIN whose check digit fails, or of the wrong shape, with 400 and why; an unknown one is a 404", async () => {
    const isin = freshIsin();
    await company({ isins: [isin] });
    const token = await freshKey();
    expect(await answer(await get(`/isin/${wrongCheckDigit(isin)}?token=${token}`))).toEqual([
      400,
      "Invalid ISIN: the check digit does not match",
    ]);
    for (const shape of ["US037833100", "US03783310055", "1S0378331005", "US03783310-5", "US0378331005%2Fx", ""]) {
      expect(await answer(await get(`/isin/${shape}?token=${token}`)), shape).toEqual([
        400,
        "Invalid ISIN: two letters, nine letters or digits, and a check digit",
      ]);
    }
    // Another path segment is no ISIN.
    expect((await get(`/isin/${isin}/more?token=${token}`)).status).toBe(400);
    expect(await answer(await get(`/isin/${freshIsin()}?token=${token}`))).toEqual([404, "Logo not found"]);
  });

  it("checks the key before the ISIN: no key, no answer about it", async () => {
    expect((await get(`/isin/${wrongCheckDigit(freshIsin())}`)).status).toBe(401);
  });
});

describe("GET /crypto/{symbol}", () => {
  it("redirects to the logo of the coin or token, a network of its own with no company behind it", async () => {
    const symbol = `Z${unique().slice(0, 5)}`;
    const { domain } = await company({ crypto: [symbol] });
    const token = await freshKey();
    const response = await get(`/crypto/${symbol.toLowerCase()}?token=${token}`);
    expect(response.status).toBe(302);
    expect(assetKeyOf(response.headers.get("location")!)).toContain(`logos/${domain}/`);
  });

  it("answers an unknown symbol 404 and refuses one that is no symbol with 400", async () => {
    const token = await freshKey();
    expect(await answer(await get(`/crypto/Q${unique()}?token=${token}`))).toEqual([404, "Logo not found"]);
    for (const bad of ["BT%24C", "BTC-USD", "A".repeat(13), "", "BTC%2FETH"]) {
      expect(await answer(await get(`/crypto/${bad}?token=${token}`)), bad).toEqual([
        400,
        "Invalid crypto symbol: 1 to 12 letters or digits",
      ]);
    }
  });

  it("serves a symbol's monogram when asked to, as for any miss", async () => {
    const token = await freshKey();
    const response = await get(`/crypto/Q${unique()}?token=${token}&fallback=monogram`);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-logo-source")).toBe("monogram");
  });
});

describe("GET /email/{address}", () => {
  it("redirects to the logo of the address's domain, whatever the local part holds", async () => {
    const { domain } = await company();
    const token = await freshKey();
    for (const address of [`jane@${domain}`, `Jane.Doe+Invoices@${domain.toUpperCase()}`, `jane%40${domain}`, `jane@sales.${domain}`]) {
      const response = await get(`/email/${address}?token=${token}`);
      expect(response.status, address).toBe(302);
      expect(assetKeyOf(response.headers.get("location")!)).toContain(`logos/${domain}/`);
    }
  });

  it("reads an internationalised domain as its punycode host", async () => {
    const host = `bücher-${unique().toLowerCase()}.de`;
    const ascii = new URL(`http://${host}`).hostname;
    await company({ domains: [ascii] });
    const token = await freshKey();
    expect((await get(`/email/${encodeURIComponent(`anna@${host}`)}?token=${token}`)).status).toBe(302);
    expect((await get(`/email/anna@${ascii}?token=${token}`)).status).toBe(302);
  });

  it("answers a person's address at a free or disposable mail provider with a 404 that says so", async () => {
    const token = await freshKey();
    for (const address of [
      "jane@gmail.com",
      "JANE@GMAIL.COM",
      "jane@outlook.com",
      "jane@mailinator.com",
      "jane@mail.yahoo.co.jp",
      "jane@fastmail.com",
    ]) {
      const response = await get(`/email/${address}?token=${token}`);
      expect(await answer(response), address).toEqual([404, "Personal email address: no company logo"]);
      // Counted as any lookup is: the caller spent a lookup on it.
      expect(response.headers.get("x-ratelimit-remaining"), address).not.toBeNull();
    }
    // Even when a monogram is asked for: a person's address names no company to letter.
    expect((await get(`/email/jane@gmail.com?token=${token}&fallback=monogram`)).status).toBe(404);
  });

  it("refuses what is no address, 400 with why", async () => {
    const token = await freshKey();
    for (const [address, message] of [
      ["jane.stripe.com", "Invalid email address: no @"],
      ["", "Invalid email address: no @"],
      ["jane@localhost", "Invalid email address: its domain is not a public hostname"],
      ["jane@stripe", "Invalid email address: its domain is not a public hostname"],
      ["jane@192.168.0.1", "Invalid email address: its domain is not a public hostname"],
      ["@stripe.com", "Invalid email address: 1 to 64 characters before the @, 254 in all"],
      [`${"j".repeat(65)}@stripe.com`, "Invalid email address: 1 to 64 characters before the @, 254 in all"],
      ["jane@stripe.com/more", "Invalid email address: its domain is not a public hostname"],
    ]) {
      expect(await answer(await get(`/email/${address}?token=${token}`)), address).toEqual([400, message]);
    }
  });

  it("never writes the address's local part to a log line", async () => {
    const { domain } = await company();
    const token = await freshKey();
    const lines: string[] = [];
    const original = console.log;
    console.log = (line: string) => void lines.push(String(line));
    try {
      // Every request's access line, warm lookups' too.
      const response = await fetchWith({ ACCESS_LOG: "all" }, `${BASE}/email/secret.person@${domain}?token=${token}`, {
        redirect: "manual",
      });
      expect(response.status).toBe(302);
    } finally {
      console.log = original;
    }
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join("\n")).not.toContain("secret.person");
    // And whatever a line quotes, an address in it keeps only its domain.
    expect(redact(`GET /email/secret.person@${domain} and /email/other%40${domain}`)).toBe(
      `GET /email/…@${domain} and /email/…%40${domain}`,
    );
  });
});
