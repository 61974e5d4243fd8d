import { parse } from "tldts";

/**
 * The one guard for every URL the service fetches on a stranger's say-so: a site's page,
 * manifest and icons (discovery), an OAuth client's metadata document (its `client_id`), the
 * keys and logo that document names, and anything else a request or a fetched document
 * chooses. Checked before any connection is opened:
 *
 *  - only the policy's schemes and ports (client metadata: https on 443 alone), no
 *    credentials in the URL;
 *  - no IP-literal host in any spelling (the URL parser turns `0x7f.1`, `2130706433` and the
 *    like into dotted IPv4 first, so every spelling is caught);
 *  - only names under an ICANN public suffix (`localhost`, `.local`, `.internal`, `.arpa`,
 *    `.onion` refused), and none that is known to resolve to a private address: names that
 *    spell an address in their labels (`127.0.0.1.nip.io`, `10-0-0-1.sslip.io`) and the
 *    wildcard names that point at loopback (`localtest.me`, `lvh.me`, …).
 *
 * What a name resolves to cannot be known here: workerd has no resolver. In production,
 * Cloudflare's `global_fetch_strictly_public` keeps fetches from private addresses; where the
 * code runs on an operator's machine (`npm run admin -- discover`, `npm start`) the Node side
 * resolves each name and refuses it when any address is not public (tools/outbound/).
 * isPublicAddress is that rule, shared by both.
 */
export interface UrlPolicy {
  readonly name: string;
  readonly schemes: readonly string[];
  /** As `URL.port` spells them: "" is the scheme's default. */
  readonly ports: readonly string[];
}

/** A site's own pages and files: http or https on their usual ports. */
export const SITE_URLS: UrlPolicy = { name: "site", schemes: ["https:", "http:"], ports: ["", "80", "443"] };
/** OAuth client metadata documents (CIMD) and what they name: https on 443 only. */
export const CLIENT_METADATA_URLS: UrlPolicy = { name: "client metadata", schemes: ["https:"], ports: ["", "443"] };

/**
 * Registrable domains whose every name resolves to loopback, or to the address its labels
 * spell: nothing of a public site is ever there.
 */
const PRIVATE_NAME_DOMAINS = new Set([
  "localtest.me",
  "lvh.me",
  "vcap.me",
  "lacolhost.com",
  "localhost.direct",
  "fuf.me",
  "localho.st",
  "nip.io",
  "sslip.io",
  "xip.io",
  "traefik.me",
  "nip.direct",
]);

/** Why a URL may not be fetched under `policy`, or null when it may. */
export function strangerUrlProblem(raw: string | URL, policy: UrlPolicy): string | null {
  let url: URL;
  try {
    url = typeof raw === "string" ? new URL(raw) : raw;
  } catch {
    return "not a URL";
  }
  if (!policy.schemes.includes(url.protocol)) return `scheme ${url.protocol} refused`;
  if (!policy.ports.includes(url.port)) return `port ${url.port} refused`;
  if (url.username !== "" || url.password !== "") return "credentials in URL refused";
  return hostProblem(url.hostname);
}

/** Why a host name may not be fetched on a stranger's say-so, or null. */
export function hostProblem(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host.startsWith("[") || /^[\d.]+$/.test(host) || host.includes(":")) return `IP address ${host} refused`;
  const parsed = parse(host);
  if (parsed.isIp || parsed.domain === null || !parsed.isIcann) return `host ${host} is not a public name`;
  const last = host.split(".").at(-1)!;
  if (last === "arpa" || last === "onion") return `host ${host} is a special-use name`;
  const embedded = embeddedAddress(host);
  if (embedded !== null && !isPublicAddress(embedded)) return `host ${host} names the private address ${embedded}`;
  if (PRIVATE_NAME_DOMAINS.has(parsed.domain) && (embedded === null || !isPublicAddress(embedded)))
    return `host ${host} resolves to a private address`;
  return null;
}

/**
 * An IPv4 address a name spells in its labels, as the wildcard DNS services read them: four
 * labels in a row (`10.0.0.1.nip.io`), one label of four numbers joined by dashes, maybe after
 * a word (`app-10-0-0-1.sslip.io`), or eight hex digits (`0a000001.nip.io`); null for none.
 */
function embeddedAddress(host: string): string | null {
  const labels = host.split(".");
  const octet = (s: string) => /^\d{1,3}$/.test(s) && Number(s) <= 255;
  for (let i = 0; i + 4 <= labels.length - 1; i++) {
    if (labels.slice(i, i + 4).every(octet))
      return labels
        .slice(i, i + 4)
        .map(Number)
        .join(".");
  }
  for (const label of labels.slice(0, -1)) {
    const dashed = /(?:^|-)(\d{1,3})-(\d{1,3})-(\d{1,3})-(\d{1,3})$/.exec(label);
    if (dashed?.slice(1).every(octet)) return dashed.slice(1).map(Number).join(".");
    const hex = /(?:^|-)([0-9a-f]{8})$/.exec(label);
    if (hex) {
      const n = Number.parseInt(hex[1]!, 16);
      return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
    }
  }
  return null;
}

const v4 = (address: string): number[] | null => {
  const parts = address.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return parts.map(Number);
};

/** IPv4 ranges that are not the public internet (RFC 6890 and its updates) as [first octets, prefix length]. */
const V4_NOT_PUBLIC: Array<[number[], number]> = [
  [[0], 8],
  [[10], 8],
  [[100, 64], 10],
  [[127], 8],
  [[169, 254], 16],
  [[172, 16], 12],
  [[192, 0, 0], 24],
  [[192, 0, 2], 24],
  [[192, 88, 99], 24],
  [[192, 168], 16],
  [[198, 18], 15],
  [[198, 51, 100], 24],
  [[203, 0, 113], 24],
  [[224], 4],
  [[240], 4],
];

function inV4Range(octets: number[], [start, bits]: [number[], number]): boolean {
  const value = ((octets[0]! << 24) | (octets[1]! << 16) | (octets[2]! << 8) | octets[3]!) >>> 0;
  const base = (((start[0] ?? 0) << 24) | ((start[1] ?? 0) << 16) | ((start[2] ?? 0) << 8) | (start[3] ?? 0)) >>> 0;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return (value & mask) >>> 0 === (base & mask) >>> 0;
}

/** The eight 16-bit groups of an IPv6 address, or null when it does not read as one. */
function v6Groups(address: string): number[] | null {
  let text = address
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/%.*$/, "");
  // An IPv4 tail (`::ffff:10.0.0.1`) as two groups.
  const tail = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(text);
  if (tail) {
    const octets = v4(tail[1]!);
    if (!octets) return null;
    text = `${text.slice(0, -tail[1]!.length)}${((octets[0]! << 8) | octets[1]!).toString(16)}:${((octets[2]! << 8) | octets[3]!).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groupsOf = (half: string | undefined) => (half ? half.split(":") : []);
  const [head, rest] = [groupsOf(halves[0]), groupsOf(halves[1])];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 1 ? 0 : missing).fill("0"), ...rest];
  if (!groups.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return groups.map((g) => Number.parseInt(g, 16));
}

/**
 * Whether an address is on the public internet: not private, loopback, link-local, shared
 * (CGNAT), documentation, benchmarking, multicast or reserved; IPv6's unique-local,
 * link-local, site-local, multicast, documentation and the forms that carry an IPv4 address
 * (mapped, NAT64, 6to4, Teredo) judged by that address. Anything unreadable is not public.
 */
export function isPublicAddress(address: string): boolean {
  const octets = v4(address);
  if (octets) return !V4_NOT_PUBLIC.some((range) => inV4Range(octets, range)) && address !== "255.255.255.255";
  const g = v6Groups(address);
  if (!g) return false;
  const embeddedV4 = (hi: number, lo: number) => isPublicAddress(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`);
  if (g.slice(0, 7).every((x) => x === 0)) return false; // :: and ::1
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return embeddedV4(g[6]!, g[7]!); // mapped
  if (g[0] === 0x64 && g[1] === 0xff9b) return embeddedV4(g[6]!, g[7]!); // NAT64
  if (g[0] === 0x2002) return embeddedV4(g[1]!, g[2]!); // 6to4
  if (g[0] === 0x2001 && g[1] === 0) return false; // Teredo
  if (g[0] === 0x2001 && g[1] === 0xdb8) return false; // documentation
  if (g[0] === 0x2001 && g[1]! < 0x200) return false; // IETF protocol assignments
  if (g[0] === 0x100 && g[1] === 0 && g[2] === 0 && g[3] === 0) return false; // discard
  // Global unicast is 2000::/3; everything else (fc00::/7, fe80::/10, ff00::/8, …) is not public.
  return (g[0]! & 0xe000) === 0x2000;
}
