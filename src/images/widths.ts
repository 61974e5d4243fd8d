/**
 * The widths the public asset route renders for anyone. Every width it resizes to is a new
 * image in the cache, so widths asked without this Worker's signature are rounded to a fixed
 * ladder: `width` up to the next rung (the image is at least as wide as asked, and CSS scales
 * it down), `maxWidth` down to the rung below (it is a maximum; below 16 it stays as asked). A lookup's redirect to a
 * width between the rungs carries a signature and gets its exact width.
 */
export const WIDTH_LADDER = [
  16, 24, 32, 48, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024, 1280, 1600, 2048, 2560, 3200,
] as const;

export function ladderUp(width: number): number {
  return WIDTH_LADDER.find((rung) => rung >= width) ?? WIDTH_LADDER.at(-1)!;
}

/** Below the smallest rung, widths stay as asked: there are only 15 of them. */
export function ladderDown(width: number): number {
  return WIDTH_LADDER.findLast((rung) => rung <= width) ?? width;
}

/**
 * The width a `maxWidth` scales a source `sourceWidth` wide down to, or undefined when it
 * serves the source as stored. At or above the source width it changes nothing (spec 3: "When
 * it is omitted or larger than the source, the original dimensions are served"), so it is
 * compared with the source before it is rounded: rounded first, a maxWidth of 45 shrank a
 * 40-wide logo to 32. Below the source it goes down to the ladder.
 */
export function scaleDownTo(sourceWidth: number, maxWidth: number | undefined): number | undefined {
  return maxWidth === undefined || maxWidth >= sourceWidth ? undefined : ladderDown(maxWidth);
}
