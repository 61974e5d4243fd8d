/**
 * What per-address limits (sign-in, the landing page's playground, unknown keys) count a
 * client by: its IPv4 address (an IPv4-mapped IPv6 one included), or the /64 of its IPv6
 * address, since one subscriber is handed a whole /64 and may take any address in it. Anything
 * that does not read as an address is counted as it is.
 */
export function limitedAddress(address: string): string {
  if (!address.includes(":")) return address;
  const plain = address.replace(/%.*$/, "").toLowerCase();
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(plain);
  if (mapped) return mapped[1]!;
  const halves = plain.split("::");
  if (halves.length > 2) return address;
  const groupsOf = (half: string | undefined) => (half ? half.split(":") : []);
  const [head, tail] = [groupsOf(halves[0]), groupsOf(halves[1])];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return address;
  const groups = [...head, ...Array<string>(missing).fill("0"), ...tail];
  if (!groups.every((group) => /^[0-9a-f]{1,4}$/.test(group))) return address;
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(":")}::/64`;
}

/** The limited address of a request's client (Cloudflare's CF-Connecting-IP), or null when it has none. */
export function requestAddress(request: Request): string | null {
  const address = request.headers.get("cf-connecting-ip");
  return address ? limitedAddress(address.slice(0, 100)) : null;
}
