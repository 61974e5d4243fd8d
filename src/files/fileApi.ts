import { z } from "zod";
import { readVars } from "../env";
import { fail, ok, type Result } from "../lib/errors";
import { log } from "../lib/log";

/**
 * Uploads to the AI provider's file API (spec: get_logo `returnType: "file"`, insert_logo),
 * in the wire format of Anthropic's Files API: `POST {ANTHROPIC_BASE_URL}/v1/files`, a
 * multipart body with one `file` field, the key in `x-api-key`. The answer names the file by
 * `id`, which the caller's own workflow refers to afterwards. A redirect is not followed: it
 * would carry the key to whatever host it names.
 */
const API_VERSION = "2023-06-01";
const FILES_BETA = "files-api-2025-04-14";
const UPLOAD_TIMEOUT_MS = 15_000;

const uploaded = z.object({ id: z.string().min(1), type: z.literal("file") });

export interface Upload {
  bytes: Uint8Array | ArrayBuffer;
  filename: string;
  mimeType: string;
}

/** Removes an uploaded file (best effort: a failure is logged, the caller has nothing to undo). */
export async function deleteFile(env: Env, fileId: string): Promise<void> {
  if (!env.ANTHROPIC_API_KEY) return;
  try {
    const response = await fetch(`${readVars(env).ANTHROPIC_BASE_URL}/v1/files/${encodeURIComponent(fileId)}`, {
      method: "DELETE",
      headers: filesHeaders(env.ANTHROPIC_API_KEY),
      redirect: "manual",
      signal: AbortSignal.timeout(UPLOAD_TIMEOUT_MS),
    });
    if (!response.ok) log.error("file_api.delete_refused", { fileId, status: response.status });
  } catch (error) {
    log.error("file_api.delete_failed", { fileId, error });
  }
}

const filesHeaders = (apiKey: string) => ({ "x-api-key": apiKey, "anthropic-version": API_VERSION, "anthropic-beta": FILES_BETA });

export async function uploadFile(env: Env, upload: Upload): Promise<Result<{ fileId: string }>> {
  const unavailable = fail("internal", "File upload failed");
  if (!env.ANTHROPIC_API_KEY) {
    log.error("file_api.key_not_set");
    return unavailable;
  }
  const form = new FormData();
  form.append("file", new File([upload.bytes], upload.filename, { type: upload.mimeType }));
  let response: Response;
  try {
    response = await fetch(`${readVars(env).ANTHROPIC_BASE_URL}/v1/files`, {
      method: "POST",
      headers: filesHeaders(env.ANTHROPIC_API_KEY),
      body: form,
      redirect: "manual",
      signal: AbortSignal.timeout(UPLOAD_TIMEOUT_MS),
    });
  } catch (error) {
    log.error("file_api.upload_failed", { error });
    return unavailable;
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch (error) {
    // The answer's body stalled past the deadline, or is no JSON: not a refusal the provider gave.
    log.error("file_api.answer_unreadable", { status: response.status, error });
    return unavailable;
  }
  const file = uploaded.safeParse(body);
  if (!response.ok || !file.success) {
    // The provider's error type and message say why (invalid key, quota); never the key itself.
    const reason = (body as { error?: { type?: string; message?: string } } | null)?.error;
    log.error("file_api.upload_refused", { status: response.status, type: reason?.type, detail: reason?.message });
    return unavailable;
  }
  return ok({ fileId: file.data.id });
}
