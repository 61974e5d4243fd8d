/**
 * The write side of the importer, run by the importer inside workerd (wrangler's local
 * runtime) next to the storage it writes: D1 and R2 calls stay in-process instead of
 * crossing the platform proxy one blocking round trip at a time. Not part of the deployed
 * Worker; it listens on a loopback port for the importer process that started it.
 *
 *   POST /source-hash  {domains, variant, sourceSet}        → {sourceHash: string | null}
 *   POST /logo         multipart: `input` (JSON) and, when the image changed, `image` (JSON
 *                      metadata) with `original`, `vector` and a `file:<rendition>` per PNG rendition
 *                      → Result<ImportedLogo>, or {ok:false, needsImage:true}
 */
import { type CompanyLogoInput, importCompanyLogo, type PreparedImage, storedSourceHash } from "../../catalogue/importLogo";
import { createDb } from "../../lib/db";
import { fail } from "../../lib/errors";

interface ToolEnv {
  DB: D1Database;
  LOGOS: R2Bucket;
}

async function bytesOf(form: FormData, name: string): Promise<Uint8Array | null> {
  const part = form.get(name);
  return part instanceof File ? new Uint8Array(await part.arrayBuffer()) : null;
}

export default {
  async fetch(request: Request, env: ToolEnv): Promise<Response> {
    const db = createDb(env.DB);
    const { pathname } = new URL(request.url);
    if (request.method === "POST" && pathname === "/source-hash") {
      const { domains, variant, sourceSet } = (await request.json()) as { domains: string[]; variant: "full" | "icon"; sourceSet: string };
      return Response.json({ sourceHash: await storedSourceHash(db, domains, variant, sourceSet) });
    }
    if (request.method === "POST" && pathname === "/logo") {
      const form = await request.formData();
      const input = JSON.parse(String(form.get("input"))) as CompanyLogoInput;
      const meta = form.get("image");
      let needsImage = false;
      const result = await importCompanyLogo(db, env.LOGOS, input, async () => {
        if (typeof meta !== "string") {
          needsImage = true;
          return fail("invalid_argument", "image needed");
        }
        const files: Record<string, Uint8Array> = {};
        for (const [name, part] of form) if (name.startsWith("file:") && part instanceof File) files[name.slice(5)] = new Uint8Array(await part.arrayBuffer());
        const image: PreparedImage = {
          ...(JSON.parse(meta) as Omit<PreparedImage, "original" | "files" | "vector">),
          original: (await bytesOf(form, "original"))!,
          files: files as PreparedImage["files"],
          vector: await bytesOf(form, "vector"),
        };
        return { ok: true, value: image };
      });
      return Response.json(needsImage ? { ok: false, needsImage: true } : result);
    }
    return new Response("Not found", { status: 404 });
  },
};
