/**
 * Resizing at the edge, through the Images binding: the only transform the lookup and asset
 * routes need (greyscale and inverted renditions are prepared at import), and the only one
 * the local binding performs.
 */
export type Resize =
  /** Exactly this width, aspect kept; small sources are enlarged. */
  | { width: number; enlarge: true }
  /** At most this width, aspect kept; never enlarged. */
  | { width: number; enlarge: false };

export async function resizePng(images: ImagesBinding, source: ReadableStream<Uint8Array>, resize: Resize): Promise<ReadableStream<Uint8Array>> {
  const result = await images
    .input(source)
    .transform({ width: resize.width, fit: resize.enlarge ? "contain" : "scale-down" })
    .output({ format: "image/png" });
  return result.image();
}

/** Output height for a width, keeping the aspect ratio as the resize does. */
export function scaledHeight(sourceWidth: number, sourceHeight: number, width: number): number {
  return Math.max(1, Math.round((sourceHeight * width) / sourceWidth));
}
