import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import { AwsV4Signer } from "aws4fetch";

/**
 * A stand-in for R2's S3-compatible API on 127.0.0.1: path-style `PUT` and `DELETE` of
 * `/{bucket}/{key}`, each signed with AWS Signature Version 4 (region `auto`, service `s3`),
 * checked as S3 checks it: the signature recomputed from the request as received, and the
 * `x-amz-content-sha256` header against the body (or `UNSIGNED-PAYLOAD`). Bad signatures get S3's `403
 * SignatureDoesNotMatch`; a key containing "put-fails" gets a `500`. Objects are kept in
 * memory with their Content-Type, Content-Disposition and `x-amz-meta-*` headers for tests to inspect,
 * or, with `discardBodies` (a benchmark's stand-in for the bucket), without their bytes, whose
 * count `received` keeps.
 */
export const FAKE_S3 = { accessKeyId: "AKIAFAKE0123456789", secretAccessKey: "fake-secret-0123456789abcdef", bucket: "logo-lookup-logos" };

export interface StoredObject {
  body: Uint8Array;
  contentType: string | undefined;
  contentDisposition: string | undefined;
  metadata: Record<string, string>;
}

const s3Error = (code: string, message: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`;

export interface FakeR2S3 {
  url: string;
  server: Server;
  objects: Map<string, StoredObject>;
  requests: string[];
  received: { puts: number; bytes: number };
}

export async function startFakeR2S3(options: { discardBodies?: boolean } = {}): Promise<FakeR2S3> {
  const objects = new Map<string, StoredObject>();
  const requests: string[] = [];
  const received = { puts: 0, bytes: 0 };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = new Uint8Array(Buffer.concat(chunks));
    const reply = (status: number, text = "") => {
      res.writeHead(status, { "content-type": "application/xml" });
      res.end(text);
    };
    requests.push(`${req.method} ${req.url}`);

    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
    const authorization = headers.get("authorization") ?? "";
    const signed =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/\d{8}\/auto\/s3\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
        authorization,
      );
    if (!signed || signed[1] !== FAKE_S3.accessKeyId) return reply(403, s3Error("InvalidAccessKeyId", "unknown access key"));
    // The payload is either hashed into the signature or declared unsigned, as S3 allows.
    const payload = headers.get("x-amz-content-sha256");
    if (payload !== "UNSIGNED-PAYLOAD" && payload !== createHash("sha256").update(body).digest("hex")) {
      return reply(400, s3Error("XAmzContentSHA256Mismatch", "payload hash does not match"));
    }
    // Recompute the signature over exactly the headers the client signed.
    const signedHeaders = new Headers();
    for (const name of signed[2]!.split(";")) signedHeaders.set(name, headers.get(name) ?? "");
    const expected = await new AwsV4Signer({
      method: req.method,
      url: `http://${headers.get("host")}${req.url}`,
      headers: signedHeaders,
      body,
      accessKeyId: FAKE_S3.accessKeyId,
      secretAccessKey: FAKE_S3.secretAccessKey,
      service: "s3",
      region: "auto",
      datetime: headers.get("x-amz-date") ?? "",
      allHeaders: true,
    }).sign();
    if (!expected.headers.get("authorization")?.endsWith(`Signature=${signed[3]}`)) {
      return reply(403, s3Error("SignatureDoesNotMatch", "signature does not match"));
    }

    const path = decodeURIComponent(new URL(req.url ?? "/", "http://127.0.0.1").pathname);
    const prefix = `/${FAKE_S3.bucket}/`;
    if (!path.startsWith(prefix)) return reply(404, s3Error("NoSuchBucket", "no such bucket"));
    const key = path.slice(prefix.length);
    if (key.includes("put-fails")) return reply(500, s3Error("InternalError", "we encountered an internal error"));
    if (req.method === "PUT") {
      const metadata: Record<string, string> = {};
      for (const [name, value] of headers) if (name.startsWith("x-amz-meta-")) metadata[name.slice("x-amz-meta-".length)] = value;
      received.puts++;
      received.bytes += body.byteLength;
      objects.set(key, {
        body: options.discardBodies ? new Uint8Array(0) : body,
        contentType: headers.get("content-type") ?? undefined,
        contentDisposition: headers.get("content-disposition") ?? undefined,
        metadata,
      });
      return reply(200);
    }
    if (req.method === "DELETE") {
      objects.delete(key);
      return reply(204);
    }
    return reply(405, s3Error("MethodNotAllowed", "method not allowed"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("fake S3 did not start");
  return { url: `http://127.0.0.1:${address.port}`, server, objects, requests, received };
}
