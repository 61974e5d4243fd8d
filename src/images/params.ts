import { z } from "zod";
import { type Density, requestFormats } from "./transform";
import { booleanParam } from "../lib/params";

/**
 * The image options the lookup and the asset route share, with the messages a caller gets for
 * a bad value. `dpr` and `retina` (its synonym for 2) are exclusive: see densityOf.
 */
export const imageParams = {
  theme: z.enum(["light", "dark"], { message: "Invalid theme: must be light or dark" }).optional(),
  format: z.enum(requestFormats, { message: `Invalid format: must be ${requestFormats.join(", ")}` }).default("png"),
  dpr: z.enum(["1", "2", "3"], { message: "Invalid dpr: must be 1, 2 or 3" }).optional(),
  retina: booleanParam("retina").optional(),
};

export const densityRule = [
  (q: { dpr?: string | undefined; retina?: boolean | undefined }) => q.dpr === undefined || q.retina === undefined,
  { message: "Invalid retina: give dpr or retina, not both" },
] as const;

export const densityOf = (q: { dpr?: string | undefined; retina?: boolean | undefined }) =>
  (q.dpr ? Number(q.dpr) : q.retina ? 2 : 1) as Density;
