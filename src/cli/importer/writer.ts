import { rmSync } from "node:fs";
import type { LogoVariant } from "../../../schema";
import type { CompanyLogoInput, ImportedLogo, PreparedImage } from "../../catalogue/importLogo";
import type { Result } from "../../lib/errors";
import { type PlatformOptions, startToolWorker, writeStorageToolConfig } from "../platform";

export type WriteResult = Result<ImportedLogo> | { ok: false; needsImage: true };

/** The importer's handle on its write side (./worker.ts) running in workerd. */
export interface ImportWriter {
  sourceHash(domains: string[], variant: LogoVariant, sourceSet: string): Promise<string | null>;
  write(input: CompanyLogoInput, image: PreparedImage | null): Promise<WriteResult>;
  stop(): Promise<void>;
}

export async function startImportWriter(options: PlatformOptions): Promise<ImportWriter> {
  const configPath = writeStorageToolConfig(options, "importer");

  const worker = await startToolWorker("src/cli/importer/worker.ts", configPath, options);

  const post = async <T>(path: string, body: string | FormData): Promise<T> => {
    // Serialise here: the fetch wrangler hands out does not recognise Node's FormData.
    const encoded = new Response(body);
    const headers = { "content-type": encoded.headers.get("content-type") ?? "application/json" };
    const response = await worker.fetch(path, { method: "POST", headers, body: new Uint8Array(await encoded.arrayBuffer()) });
    if (!response.ok) throw new Error(`import writer answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as T;
  };

  return {
    sourceHash: async (domains, variant, sourceSet) =>
      (await post<{ sourceHash: string | null }>("/source-hash", JSON.stringify({ domains, variant, sourceSet }))).sourceHash,
    write: (input, image) => {
      const form = new FormData();
      form.set("input", JSON.stringify(input));
      if (image) {
        const { original, files, vector, ...meta } = image;
        form.set("image", JSON.stringify(meta));
        const parts: Record<string, Uint8Array | null | undefined> = { original, vector };
        for (const [name, bytes] of Object.entries(files)) parts[`file:${name}`] = bytes;
        for (const [name, bytes] of Object.entries(parts)) if (bytes) form.set(name, new Blob([bytes]));
      }
      return post<WriteResult>("/logo", form);
    },
    stop: async () => {
      await worker.stop();
      rmSync(configPath, { force: true });
    },
  };
}
