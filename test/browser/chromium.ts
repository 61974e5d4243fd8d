import { type Browser, chromium } from "playwright-core";

/**
 * The browser of the browser tests: the Chromium that ships inside the @sparticuz/chromium npm
 * package (unpacked from the package itself on first use, nothing downloaded), or an installed
 * one named by CHROMIUM_PATH (e.g. /usr/bin/chromium from Debian's package).
 */
export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH || (await (await import("@sparticuz/chromium")).default.executablePath());
  return chromium.launch({
    executablePath,
    headless: true,
    args: [
      // The tests run as root in a container: Chromium's sandbox needs namespaces it cannot have there.
      "--no-sandbox",
      "--disable-gpu",
      // No traffic but to the Worker under test: the machine has no other network.
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--disable-quic",
      "--no-first-run",
    ],
  });
}
