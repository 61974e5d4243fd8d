import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { deleteFile, uploadFile } from "../../src/files/fileApi";

const arrived = async (filename: string) =>
  (await (await fetch(`${env.ANTHROPIC_BASE_URL}/_uploads?filename=${filename}`)).json()) as Array<{ id: string; deleted: boolean }>;
const upload = (filename: string) => ({ bytes: new Uint8Array([0x89, 0x50, 0x4e, 0x47]), filename, mimeType: "image/png" });

describe("the file API", () => {
  it("follows no redirect, which would carry the key to whatever host it names", async () => {
    const moved = { ...env, ANTHROPIC_BASE_URL: `${env.ANTHROPIC_BASE_URL}/_moved` };
    const filename = `moved-${crypto.randomUUID()}.png`;
    expect((await uploadFile(moved, upload(filename))).ok).toBe(false);
    expect(await arrived(filename)).toEqual([]);

    const result = await uploadFile(env, upload(filename));
    expect(result.ok).toBe(true);
    const fileId = result.ok ? result.value.fileId : "";
    await deleteFile(moved, fileId);
    expect((await arrived(filename))[0]).toMatchObject({ id: fileId, deleted: false });
    await deleteFile(env, fileId);
    expect((await arrived(filename))[0]).toMatchObject({ id: fileId, deleted: true });
  });
});
