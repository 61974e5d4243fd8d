/** How the pages write numbers and times: plain English, UTC (every limit resets on UTC boundaries). */
const numbers = new Intl.NumberFormat("en-US");

export const count = (n: number) => numbers.format(n);

export function dateTime(at: Date | number): string {
  return `${new Date(at).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

export function day(at: Date | number): string {
  return new Date(at).toISOString().slice(0, 10);
}

/** How people see a key: its prefix and last four characters, never more. */
export function keyLabel(key: { prefix: string; lastFour: string | null }): string {
  return key.lastFour ? `${key.prefix}…${key.lastFour}` : `${key.prefix}…`;
}
