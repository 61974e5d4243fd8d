/**
 * The Cache-Tag every cached answer about a domain carries (resolutions, rendered images, asset
 * answers), so a zone's purge by tag drops them in every data centre at once (src/purge/cdn.ts).
 * `domain` is the company's primary domain, as its objects' keys name it.
 */
export const domainCacheTag = (domain: string) => `logo-domain:${domain}`;
