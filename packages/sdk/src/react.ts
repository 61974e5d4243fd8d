import { createElement, type ImgHTMLAttributes, type ReactElement, type SyntheticEvent, useState } from "react";

/**
 * `<Logo>`: a company's logo on a web page, as an `<img>` of the lookup URL with a publishable
 * key (`pk_…`, the key pages use; never a secret key). A second width for screens of twice the
 * density (`srcSet`), lazy loading, the width and height set so that nothing shifts as it
 * loads, and a fallback when the service has no logo for the domain: its monogram (the
 * default), an image of your own, or nothing at all.
 *
 *   <Logo domain="stripe.com" token="pk_…" baseUrl="https://logos.example.com" size={64} />
 */
export interface LogoProps extends Omit<ImgHTMLAttributes<HTMLImageElement>, "src" | "srcSet" | "width" | "height" | "alt"> {
  /** The company's domain, as the lookup takes it (`stripe.com`). */
  domain: string;
  /** A publishable key (`pk_…`). */
  token: string;
  /** The service's address (`https://logos.example.com`). */
  baseUrl: string;
  /** Width in CSS pixels, 1–800 (default 64); the height follows the logo's aspect ratio. */
  size?: number;
  /** Height in CSS pixels, if known, so that the page keeps its place (default: `size`, square). */
  height?: number;
  /** Text for people who cannot see the image (default: "<domain> logo"); "" marks it decorative. */
  alt?: string;
  theme?: "light" | "dark";
  greyscale?: boolean;
  format?: "png" | "webp" | "avif" | "jpg";
  /**
   * What shows for a domain without a logo: "monogram" (default) asks the service for one; a URL
   * shows that image; null shows nothing.
   */
  fallback?: "monogram" | string | null;
}

/** The lookup URL of a logo, as `<Logo>` asks for it. */
export function logoUrl(
  props: Pick<LogoProps, "domain" | "token" | "baseUrl" | "size" | "theme" | "greyscale" | "format" | "fallback">,
  dpr = 1,
): string {
  const size = props.size ?? 64;
  if (!Number.isInteger(size) || size < 1 || size > 800) throw new RangeError("size must be a whole number from 1 to 800");
  const params = new URLSearchParams({ token: props.token, size: String(size) });
  if (dpr !== 1) params.set("dpr", String(dpr));
  if (props.theme) params.set("theme", props.theme);
  if (props.greyscale) params.set("greyscale", "true");
  if (props.format && props.format !== "png") params.set("format", props.format);
  params.set("fallback", props.fallback === undefined || props.fallback === "monogram" ? "monogram" : "none");
  return `${props.baseUrl.replace(/\/+$/, "")}/${encodeURIComponent(props.domain.trim().toLowerCase())}?${params}`;
}

export function Logo(props: LogoProps): ReactElement | null {
  const { domain, token, baseUrl, size = 64, height, alt, theme, greyscale, format, fallback = "monogram", onError, ...rest } = props;
  const [failed, setFailed] = useState(false);
  const asked = { domain, token, baseUrl, size, theme, greyscale, format, fallback };
  const own = fallback !== "monogram" && fallback !== null ? fallback : null;
  if (failed && own === null) return null;
  const image: ImgHTMLAttributes<HTMLImageElement> = {
    loading: "lazy",
    decoding: "async",
    ...rest,
    src: failed && own ? own : logoUrl(asked),
    srcSet: failed ? undefined : `${logoUrl(asked, 2)} 2x`,
    width: size,
    height: height ?? size,
    alt: alt ?? `${domain.trim().toLowerCase()} logo`,
    onError: (event: SyntheticEvent<HTMLImageElement, Event>) => {
      onError?.(event);
      if (!failed) setFailed(true);
    },
  };
  return createElement("img", image);
}
