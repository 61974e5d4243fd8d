import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";

/**
 * A stand-in for the AI provider's file API (Anthropic's Files API wire format) on 127.0.0.1,
 * run by vitest in Node beside workerd. It answers `POST /v1/files` as the real API does:
 * multipart `file`, `x-api-key`, `anthropic-version` and the files beta header required,
 * `{ id, type: "file", … }` on success and `{ type: "error", error: { type, message } }` on
 * failure. A file whose name contains "upload-fails" is refused with a 500, so a test can
 * make one upload fail without touching any other test's.
 *
 * `DELETE /v1/files/{id}` removes a file (`{ id, type: "file_deleted" }`, 404 for an unknown id).
 * Any path under `/_moved/` answers `307` to the same path without it, as a gateway that
 * moved would. `GET /_uploads?filename=…` lets tests see what arrived (size, SHA-256, type, headers) and
 * whether it was deleted since; `DELETE /_uploads` forgets every upload (the worker tests'
 * setup, before each test: file names repeat once the database's ids start again from 1).
 */
export const FAKE_FILES_API_KEY = "sk-ant-test-0123456789";

interface Received {
  id: string;
  filename: string;
  mimeType: string;
  sizeBytes: number;
  sha256: string;
  anthropicVersion: string | null;
  anthropicBeta: string | null;
  deleted: boolean;
}

const errorBody = (type: string, message: string) => JSON.stringify({ type: "error", error: { type, message } });

export async function startFakeFilesApi(): Promise<{ url: string; server: Server }> {
  let received: Received[] = [];
  // Ids stay unique across forgetting: a file id is never handed out twice.
  let uploads = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const reply = (status: number, body: string) => {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(body);
    };

    if (req.method === "DELETE" && url.pathname === "/_uploads") {
      received = [];
      return reply(200, "{}");
    }
    if (req.method === "GET" && url.pathname === "/_uploads") {
      const filename = url.searchParams.get("filename");
      return reply(200, JSON.stringify(received.filter((r) => filename === null || r.filename === filename)));
    }
    // A gateway that moved: every path under /_moved answers 307 to the same path without it.
    if (url.pathname.startsWith("/_moved/")) {
      res.writeHead(307, { Location: `http://${req.headers.host}${url.pathname.slice("/_moved".length)}` });
      return res.end();
    }
    const fileRoute = /^\/v1\/files\/([^/]+)$/.exec(url.pathname);
    if (!(req.method === "POST" && url.pathname === "/v1/files") && !(req.method === "DELETE" && fileRoute)) {
      return reply(404, errorBody("not_found_error", "Not found"));
    }
    if (req.headers["x-api-key"] !== FAKE_FILES_API_KEY) return reply(401, errorBody("authentication_error", "invalid x-api-key"));
    if (!String(req.headers["anthropic-beta"] ?? "").includes("files-api-2025-04-14")) {
      return reply(400, errorBody("invalid_request_error", "files API requires the anthropic-beta header"));
    }
    if (fileRoute) {
      const file = received.find((r) => r.id === decodeURIComponent(fileRoute[1]!) && !r.deleted);
      if (!file) return reply(404, errorBody("not_found_error", "File not found"));
      file.deleted = true;
      return reply(200, JSON.stringify({ id: file.id, type: "file_deleted" }));
    }

    let file: File | null = null;
    try {
      const form = await new Request("http://127.0.0.1/v1/files", {
        method: "POST",
        headers: { "content-type": String(req.headers["content-type"] ?? "") },
        body: Buffer.concat(chunks),
      }).formData();
      const value = form.get("file");
      file = value instanceof File ? value : null;
    } catch {
      file = null;
    }
    if (!file) return reply(400, errorBody("invalid_request_error", "file: field required"));
    if (file.name.includes("upload-fails")) return reply(500, errorBody("api_error", "Internal server error"));

    const bytes = Buffer.from(await file.arrayBuffer());
    const id = `file_${createHash("sha256").update(bytes).update(String(uploads++)).digest("hex").slice(0, 24)}`;
    received.push({
      id,
      filename: file.name,
      mimeType: file.type,
      sizeBytes: bytes.byteLength,
      sha256: createHash("sha256").update(bytes).digest("hex"),
      anthropicVersion: (req.headers["anthropic-version"] as string | undefined) ?? null,
      anthropicBeta: (req.headers["anthropic-beta"] as string | undefined) ?? null,
      deleted: false,
    });
    return reply(
      200,
      JSON.stringify({
        id,
        type: "file",
        filename: file.name,
        mime_type: file.type,
        size_bytes: bytes.byteLength,
        created_at: new Date().toISOString(),
        downloadable: false,
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  // Not holding vitest open at exit.
  server.unref();
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("fake files API: no port");
  return { url: `http://127.0.0.1:${address.port}`, server };
}
