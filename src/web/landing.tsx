import { Hono } from "hono";
import { plans } from "../../schema";
import { type ResolvedLogo, resolveLogo, withThemes } from "../catalogue/resolveLogo";
import { publicBase, readVars } from "../env";
import { redirectTarget } from "../images/assetUrls";
import { lookKey } from "../images/objectKeys";
import { scaledHeight } from "../images/transform";
import type { AppEnv } from "../lib/context";
import { escapeMarkup } from "../lib/markup";
import { clientAddress, currentSession } from "../accounts/browserSessions";
import { Page, render } from "./layout";
import { assetImages, Playground, type PlaygroundResult, typedResult } from "./playground";
import { PlanLimits, planNames, planPrice } from "./plans";
import { WALL_DOMAINS } from "./wall";

/**
 * `GET /` for browsers: the product before any sign-up. A wall of real logos from the
 * catalogue on light and dark, the playground (sizes, themes and formats side by side), the
 * snippets that use the service (an `<img>`, curl, the SDK, an MCP client) written with this
 * deployment's own address, the plans and their limits from the one place billing reads them,
 * and where the documentation is. Only a request that asks for HTML gets it; every other
 * client gets what `/` always answered (the lookup route's), and no other path is touched.
 */
export const landing = new Hono<AppEnv>();

const WALL_WIDTH = 48;

interface WallLogo {
  domain: string;
  name: string;
  light: string;
  dark: string;
  width: number;
  height: number;
}

function wallLogo(env: Env, base: string, domain: string, logo: ResolvedLogo): WallLogo {
  const src = (page: "light" | "dark") =>
    redirectTarget(
      { cdn: readVars(env).CDN_URL, base, secret: env.SIGNED_URL_SECRET },
      { key: lookKey(logo, { theme: page, greyscale: false }), format: "png", width: WALL_WIDTH, page },
    );
  return {
    domain,
    name: logo.companyName,
    light: src("light"),
    dark: src("dark"),
    width: WALL_WIDTH,
    height: scaledHeight(logo.width, logo.height, WALL_WIDTH),
  };
}

function LogoWall(props: { logos: WallLogo[] }) {
  if (props.logos.length === 0) return null;
  return (
    <section class="card" aria-labelledby="wall-heading">
      <h2 id="wall-heading">From the catalogue</h2>
      <p class="muted">The same logos, drawn for a light page and for a dark one: ink that would vanish is lightened or darkened.</p>
      <div class="swatches">
        {(["light", "dark"] as const).map((page) => (
          <ul class={`wall swatch ${page}`} aria-label={`Logos on a ${page} page`}>
            {props.logos.map((logo) => (
              <li>
                <img src={logo[page]} alt={logo.name} title={logo.domain} width={logo.width} height={logo.height} loading="lazy" />
              </li>
            ))}
          </ul>
        ))}
      </div>
    </section>
  );
}

/** One snippet with its copy button (the button is the script's; the text is there without it). */
function Snippet(props: { id: string; title: string; text: string; note?: string }) {
  return (
    <div class="snippet">
      <h3>{props.title}</h3>
      <pre id={props.id}>
        <code>{props.text}</code>
      </pre>
      <p class="actions">
        <button type="button" data-copy={props.id} data-status={`${props.id}-status`} aria-label={`Copy: ${props.title}`}>
          Copy
        </button>
        <span id={`${props.id}-status`} class="copy-status" role="status" />
      </p>
      {props.note && <p class="hint">{props.note}</p>}
    </div>
  );
}

/** How to use the service, written with this deployment's address. */
export function snippets(base: string, domain: string, name: string) {
  return {
    html: `<img src="${base}/${domain}?token=YOUR_PUBLISHABLE_KEY&size=128" alt="${escapeMarkup(name)} logo" width="128" loading="lazy">`,
    curl: `curl -H "Authorization: Bearer YOUR_SECRET_KEY" "${base}/${domain}?size=256&format=webp" -o ${domain.split(".")[0]}.webp`,
    sdk: `// npm install @logo-lookup/sdk
import { LogoLookup } from "@logo-lookup/sdk";

const logos = new LogoLookup({ baseUrl: "${base}", secretKey: process.env.LOGO_LOOKUP_SECRET_KEY });
const logo = await logos.get("${domain}", { size: 256, theme: "dark" });
console.log(logo.companyName, logo.width, logo.bytes.length);`,
    mcp: JSON.stringify({ mcpServers: { "logo-lookup": { url: `${base}/mcp` } } }, null, 2),
  };
}

function UseIt(props: { base: string; example: { domain: string; name: string } }) {
  const text = snippets(props.base, props.example.domain, props.example.name);
  return (
    <section class="card" aria-labelledby="use-heading">
      <h2 id="use-heading">Use it</h2>
      <div class="snippets">
        <Snippet id="snippet-html" title="On a web page" text={text.html} note="A publishable key may be limited to your sites' origins." />
        <Snippet
          id="snippet-curl"
          title="From a server"
          text={text.curl}
          note="Secret keys go in the Authorization header, never in a URL."
        />
        <Snippet id="snippet-sdk" title="With the SDK" text={text.sdk} note="Node 20+, Workers, Deno and Bun: fetch and nothing else." />
        <Snippet
          id="snippet-mcp"
          title="In an MCP client"
          text={text.mcp}
          note="Cursor's mcp.json; Claude Desktop, VS Code and the MCP Inspector take the same address. The client signs you in with OAuth."
        />
      </div>
    </section>
  );
}

function Plans() {
  return (
    <section aria-labelledby="plans-heading">
      <h2 id="plans-heading">Plans</h2>
      <div class="plans">
        {plans.map((plan) => (
          <section class="plan" aria-labelledby={`landing-plan-${plan}`}>
            <h3 id={`landing-plan-${plan}`}>{planNames[plan]}</h3>
            <p class="price">{planPrice(plan)}</p>
            <PlanLimits plan={plan} />
          </section>
        ))}
      </div>
      <p class="hint">Every plan includes the lookup, the REST API, the SDK and the MCP tools.</p>
    </section>
  );
}

function Documentation(props: { docsUrl: string }) {
  return (
    <section class="card" aria-labelledby="docs-heading">
      <h2 id="docs-heading">Documentation</h2>
      <ul>
        {props.docsUrl && (
          <li>
            <a href={props.docsUrl}>Guides</a>: lookups, MCP clients, the REST API and SDK, the portal, running your own
          </li>
        )}
        <li>
          <a href="/docs">REST API reference</a> and its <a href="/openapi.json">OpenAPI document</a>
        </li>
        <li>
          <a href="/.well-known/oauth-protected-resource">MCP's OAuth metadata</a>, for clients that discover it
        </li>
        <li>
          <a href="/licences">Licences</a> of the logo sets the catalogue draws from
        </li>
        <li>
          <a href="/changes">Change log</a>: every logo, name and colour a verified owner changed, and every takedown
        </li>
      </ul>
    </section>
  );
}

function LandingPage(props: {
  base: string;
  signupOpen: boolean;
  signedIn: boolean;
  docsUrl: string;
  wall: WallLogo[];
  typed?: string | undefined;
  result: PlaygroundResult | null;
}) {
  const example = props.wall[0] ?? { domain: "github.com", name: "GitHub" };
  return (
    <Page title="Company logos by domain" indexable signupOpen={props.signupOpen}>
      <section class="hero" aria-labelledby="hero-heading">
        <h1 id="hero-heading">Company logos, by domain</h1>
        <p>
          Put any company's logo on your site with one <code>&lt;img&gt;</code> tag, fetch logos from your servers, or let AI agents find
          them over MCP.
        </p>
        <p class="actions">
          {props.signedIn ? (
            <a class="button primary" href="/portal">
              Go to your dashboard
            </a>
          ) : (
            <>
              {props.signupOpen && (
                <a class="button primary" href="/portal/signup">
                  Create a free account
                </a>
              )}
              <a class="button" href="/portal/login">
                Sign in
              </a>
            </>
          )}
          <a href="#docs-heading">Documentation</a>
        </p>
      </section>
      <LogoWall logos={props.wall} />
      <Playground action="/" base={props.base} typed={props.typed} result={props.result} />
      <UseIt base={props.base} example={example} />
      <Plans />
      <Documentation docsUrl={props.docsUrl} />
    </Page>
  );
}

landing.get("/", async (c, next) => {
  if (!c.req.header("accept")?.includes("text/html")) return next();
  const { db } = c.var.ctx;
  const vars = c.var.ctx.vars;
  const base = publicBase(c.env, c.req.url);
  const typed = c.req.query("domain")?.trim();
  const [{ result, status }, signedIn, wall] = await Promise.all([
    typed
      ? typedResult(c, { address: clientAddress(c) }, typed, (logo) => assetImages(c.env, base, logo))
      : Promise.resolve({ result: null, status: 200 as const }),
    currentSession(c, db).then((account) => account !== null),
    Promise.all(
      WALL_DOMAINS.map(async (domain) => {
        const subject = { kind: "domain", value: domain } as const;
        const logo = await resolveLogo(db, subject);
        // Only the catalogue's own: never a mark a stranger's site served to discovery.
        return logo?.source === "catalogue" ? wallLogo(c.env, base, domain, await withThemes(c.env.LOGOS, db, subject, logo)) : null;
      }),
    ).then((logos) => logos.filter((logo) => logo !== null)),
  ]);
  // Shared caches must not keep a page made for one visitor (signed in or not, one domain or another).
  return render(
    c,
    <LandingPage
      base={base}
      signupOpen={vars.SIGNUP === "on"}
      signedIn={signedIn}
      docsUrl={vars.DOCS_URL}
      wall={wall}
      typed={typed}
      result={result}
    />,
    status,
  );
});
