import type { CompanyLogoInput, PreparedImage } from "../../src/catalogue/importLogo";

/**
 * How the importer hands a batch of logos to its writer (./worker.ts) in one request body:
 *
 *   [4 bytes: length of the header, big-endian] [header: JSON] [the images' bytes, back to back]
 *
 * The header lists each row's input and, when its image goes along, the image's fields: every
 * byte field of PreparedImage, at any depth, as {offset, length} into the bytes that follow,
 * everything else as is. Nothing here names the fields, so renditions can come and go without touching the wire.
 */
export interface WireLogo {
  input: CompanyLogoInput;
  image: PreparedImage | null;
}

interface BytesRef {
  offset: number;
  length: number;
}

/** The image's fields with every byte field (at any depth) left out and listed by its path ("files.master"). */
type WireImage = Record<string, unknown> & { bytes: Record<string, BytesRef> };

export function encodeLogos(logos: WireLogo[]): Uint8Array {
  const chunks: Uint8Array[] = [];
  let offset = 0;
  const strip = (value: Record<string, unknown>, path: string, refs: Record<string, BytesRef>): Record<string, unknown> => {
    const kept: Record<string, unknown> = {};
    for (const [field, item] of Object.entries(value)) {
      if (item instanceof Uint8Array) {
        refs[path + field] = { offset, length: item.byteLength };
        chunks.push(item);
        offset += item.byteLength;
      } else if (item && typeof item === "object" && !Array.isArray(item))
        kept[field] = strip(item as Record<string, unknown>, `${path}${field}.`, refs);
      else kept[field] = item;
    }
    return kept;
  };
  const header = logos.map(({ input, image }) => {
    if (!image) return { input, image: null };
    const bytes: Record<string, BytesRef> = {};
    return { input, image: { ...strip(image as unknown as Record<string, unknown>, "", bytes), bytes } };
  });
  const head = new TextEncoder().encode(JSON.stringify(header));
  const body = new Uint8Array(4 + head.byteLength + offset);
  new DataView(body.buffer).setUint32(0, head.byteLength);
  body.set(head, 4);
  let at = 4 + head.byteLength;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.byteLength;
  }
  return body;
}

export function decodeLogos(body: Uint8Array): WireLogo[] {
  const headLength = new DataView(body.buffer, body.byteOffset, body.byteLength).getUint32(0);
  const header = JSON.parse(new TextDecoder().decode(body.subarray(4, 4 + headLength))) as Array<{
    input: CompanyLogoInput;
    image: WireImage | null;
  }>;
  const bytes = body.subarray(4 + headLength);
  return header.map(({ input, image }) => {
    if (!image) return { input, image: null };
    const { bytes: refs, ...fields } = image;
    const decoded: Record<string, unknown> = { ...fields };
    for (const [path, { offset, length }] of Object.entries(refs)) {
      const names = path.split(".");
      let at = decoded;
      for (const name of names.slice(0, -1)) at = at[name] as Record<string, unknown>;
      at[names.at(-1)!] = bytes.subarray(offset, offset + length);
    }
    return { input, image: decoded as unknown as PreparedImage };
  });
}
