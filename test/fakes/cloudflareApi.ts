import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A stand-in for the part of Cloudflare's API (v4) a first deployment uses, on 127.0.0.1: D1
 * databases, R2 buckets, KV namespaces and queues listed and created, and a Worker's secret
 * names listed, every answer in the API's envelope. It keeps one account's resources in memory
 * and every request it was sent, for a test to read.
 */
export interface FakeCloudflare {
  /** The API's base, as CLOUDFLARE_API_BASE_URL takes it. */
  url: string;
  token: string;
  accountId: string;
  requests: { method: string; path: string }[];
  account: {
    databases: { uuid: string; name: string }[];
    buckets: string[];
    namespaces: { id: string; title: string }[];
    queues: { queue_id: string; queue_name: string }[];
    /** Secret names of each Worker that exists. */
    scripts: Map<string, Set<string>>;
  };
  close(): Promise<void>;
}

const envelope = (result: unknown) => JSON.stringify({ success: true, errors: [], messages: [], result });
const failure = (code: number, message: string) =>
  JSON.stringify({ success: false, errors: [{ code, message }], messages: [], result: null });

async function bodyOf(request: IncomingMessage): Promise<Record<string, string>> {
  let text = "";
  for await (const chunk of request) text += chunk;
  return text ? (JSON.parse(text) as Record<string, string>) : {};
}

export async function startFakeCloudflare(): Promise<FakeCloudflare> {
  const token = `cf-test-token-${randomUUID()}`;
  const accountId = randomUUID().replaceAll("-", "");
  const account: FakeCloudflare["account"] = { databases: [], buckets: [], namespaces: [], queues: [], scripts: new Map() };
  const requests: FakeCloudflare["requests"] = [];
  const server: Server = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://fake");
    requests.push({ method: request.method ?? "", path: url.pathname + url.search });
    const answer = (status: number, body: string) => response.writeHead(status, { "Content-Type": "application/json" }).end(body);
    if (request.headers.authorization !== `Bearer ${token}`) return answer(403, failure(10000, "Authentication error"));
    const prefix = `/client/v4/accounts/${accountId}`;
    if (!url.pathname.startsWith(prefix)) return answer(404, failure(7003, "Could not route to the account"));
    const path = url.pathname.slice(prefix.length);
    const method = request.method;
    if (path === "/d1/database" && method === "GET") {
      const name = url.searchParams.get("name");
      return answer(200, envelope(account.databases.filter((d) => !name || d.name === name)));
    }
    if (path === "/d1/database" && method === "POST") {
      const { name } = await bodyOf(request);
      if (account.databases.some((d) => d.name === name)) return answer(400, failure(7502, "A database with that name already exists"));
      const database = { uuid: randomUUID(), name: name! };
      account.databases.push(database);
      return answer(200, envelope(database));
    }
    const bucket = /^\/r2\/buckets\/([^/]+)$/.exec(path);
    if (bucket && method === "GET") {
      const name = decodeURIComponent(bucket[1]!);
      return account.buckets.includes(name)
        ? answer(200, envelope({ name }))
        : answer(404, failure(10006, "The specified bucket does not exist."));
    }
    if (path === "/r2/buckets" && method === "POST") {
      const { name } = await bodyOf(request);
      if (account.buckets.includes(name!)) return answer(409, failure(10004, "The bucket you tried to create already exists"));
      account.buckets.push(name!);
      return answer(200, envelope({ name }));
    }
    if (path === "/storage/kv/namespaces" && method === "GET") return answer(200, envelope(account.namespaces));
    if (path === "/storage/kv/namespaces" && method === "POST") {
      const { title } = await bodyOf(request);
      const namespace = { id: randomUUID().replaceAll("-", ""), title: title! };
      account.namespaces.push(namespace);
      return answer(200, envelope(namespace));
    }
    if (path === "/queues" && method === "GET") return answer(200, envelope(account.queues));
    if (path === "/queues" && method === "POST") {
      const { queue_name } = await bodyOf(request);
      const queue = { queue_id: randomUUID().replaceAll("-", ""), queue_name: queue_name! };
      account.queues.push(queue);
      return answer(200, envelope(queue));
    }
    const secrets = /^\/workers\/scripts\/([^/]+)\/secrets$/.exec(path);
    if (secrets && method === "GET") {
      const names = account.scripts.get(decodeURIComponent(secrets[1]!));
      return names
        ? answer(200, envelope([...names].map((name) => ({ name, type: "secret_text" }))))
        : answer(404, failure(10007, "This Worker does not exist on your account."));
    }
    return answer(404, failure(7000, `No route for ${method} ${path}`));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/client/v4`,
    token,
    accountId,
    requests,
    account,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
