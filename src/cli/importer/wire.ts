import type { CompanyLogoInput, PreparedImage } from "../../catalogue/importLogo";

/**
 * How the importer hands a batch of logos to its writer (./worker.ts) in one request body:
 *
 *   [4 bytes: length of the header, big-endian] [header: JSON] [the images' bytes, back to back]
 *
 * The header lists each row's input and, when its image goes along, the image's fields: every
 * byte field of PreparedImage as {offset, length} into the bytes that follow, everything else as
 * is. Nothing here names the fields, so renditions can come and go without touching the wire.
 */
export interface WireLogo {
  input: CompanyLogoInput;
  image: PreparedImage | null;
}

interface BytesRef {
  offset: number;
  length: number;
}

type WireImage = Record<string, unknown> & { bytes: Record<string, BytesRef> };

export function encodeLogos(logos: WireLogo[]): Uint8Array {
  const chunks: Uint8Array[] = [];
  let offset = 0;
  const header = logos.map(({ input, image }) => {
    if (!image) return { input, image: null };
    const wire: WireImage = { bytes: {} };
    for (const [field, value] of Object.entries(image)) {
      if (value instanceof Uint8Array) {
        wire.bytes[field] = { offset, length: value.byteLength };
        chunks.push(value);
        offset += value.byteLength;
      } else wire[field] = value;
    }
    return { input, image: wire };
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
  const header = JSON.parse(new TextDecoder().decode(body.subarray(4, 4 + headLength))) as Array<{ input: CompanyLogoInput; image: WireImage | null }>;
  const bytes = body.subarray(4 + headLength);
  return header.map(({ input, image }) => {
    if (!image) return { input, image: null };
    const { bytes: refs, ...fields } = image;
    const decoded: Record<string, unknown> = { ...fields };
    for (const [field, { offset, length }] of Object.entries(refs)) decoded[field] = bytes.subarray(offset, offset + length);
    return { input, image: decoded as unknown as PreparedImage };
  });
}
