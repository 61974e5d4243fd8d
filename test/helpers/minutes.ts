/**
 * Limits count calendar minutes (UTC): a test whose requests must all fall in one minute waits
 * out a minute with less than `needed` milliseconds left, rather than fail when its requests
 * straddle the turn of the minute (a loaded machine makes that likelier).
 */
export async function withinOneMinute(needed: number): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (60_000 - intoMinute < needed) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50));
}
