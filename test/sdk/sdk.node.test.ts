import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigurationError, LogoLookup, ServerError } from "../../packages/sdk/src";

/** The SDK with Node's own fetch against real sockets: what fetch does with redirects and headers is Node's, not a stand-in's. */
const KEY = `sk_${"a".repeat(32)}`;
const servers: Server[] = [];
afterEach(() => Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve)))));

async function serve(
  answer: (request: IncomingMessage, respond: (status: number, headers?: Record<string, string>, body?: string) => void) => void,
) {
  const server = createServer((request, response) =>
    answer(request, (status, headers = {}, body = "") => response.writeHead(status, headers).end(body)),
  );
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("the SDK on Node's fetch", () => {
  it("never follows a redirect to another address: the key stays with the service", async () => {
    const reached: (string | undefined)[] = [];
    const elsewhere = await serve(
      (request, respond) => (reached.push(request.headers.authorization), respond(200, { "Content-Type": "image/png" }, "\x89PNG")),
    );
    const service = await serve((_request, respond) => respond(302, { Location: `${elsewhere}/stripe.com` }));
    const sdk = new LogoLookup({ secretKey: KEY, baseUrl: service });
    await expect(sdk.get("stripe.com")).rejects.toMatchObject({
      constructor: ServerError,
      status: 502,
      message: expect.stringContaining(`redirect to ${elsewhere}/stripe.com`),
    });
    expect(reached).toEqual([]);
  });

  it("a key with a line break is a ConfigurationError at once, not a NetworkError quoting it", () => {
    expect(() => new LogoLookup({ secretKey: `${KEY}\n`, baseUrl: "http://127.0.0.1:9" })).toThrow(ConfigurationError);
  });
});
