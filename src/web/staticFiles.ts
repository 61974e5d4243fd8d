import { Hono } from "hono";
import type { AppEnv } from "../lib/context";

/**
 * The web app's stylesheet, script and icon, served as files so that the pages' Content
 * Security Policy can forbid inline styles and scripts. The script is progressive
 * enhancement only (the copy buttons): every page works without it.
 */
const css = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #4b5563; --line: #d0d5dd; --paper: #fff; --wash: #f5f6f8; --accent: #1d4ed8; --accent-ink: #fff; --danger: #b42318; --ok: #067647; --focus: #2463eb; }
*, *::before, *::after { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; color: var(--ink); background: var(--wash); }
a { color: var(--accent); }
a:hover { text-decoration-thickness: 2px; }
:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip-link { position: absolute; left: .5rem; top: -3rem; padding: .5rem .75rem; background: var(--paper); border: 2px solid var(--focus); border-radius: 6px; z-index: 10; }
.skip-link:focus { top: .5rem; }
.site-header { background: var(--paper); border-bottom: 1px solid var(--line); }
.site-header .bar { max-width: 68rem; margin: 0 auto; padding: .75rem 1rem; display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1.5rem; }
.brand { font-weight: 700; font-size: 1.1rem; color: var(--ink); text-decoration: none; display: inline-flex; align-items: center; gap: .5rem; }
.brand img { width: 24px; height: 24px; }
.site-nav ul { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem 1rem; }
.site-nav a { color: var(--ink); text-decoration: none; padding: .25rem 0; border-bottom: 2px solid transparent; }
.site-nav a[aria-current="page"] { border-bottom-color: var(--accent); font-weight: 600; }
.site-nav a:hover { border-bottom-color: var(--line); }
.account { margin-left: auto; display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; color: var(--muted); font-size: .9rem; }
.account form { margin: 0; }
/* An email or a typed domain may be one long word: it wraps rather than widening the page. */
.account a, .alert, .notice, .warning, .field-error { overflow-wrap: anywhere; }
main { display: block; max-width: 68rem; margin: 0 auto; padding: 1.5rem 1rem 3rem; }
main.narrow { max-width: 28rem; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: .5rem 0 1rem; }
h2 { font-size: 1.2rem; margin: 0 0 .75rem; }
h3 { font-size: 1rem; margin: 0 0 .5rem; }
p { margin: 0 0 1rem; }
.muted { color: var(--muted); }
.card { background: var(--paper); border: 1px solid var(--line); border-radius: 10px; padding: 1.25rem; margin: 0 0 1.25rem; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(15rem, 1fr)); gap: 1rem; margin: 0 0 1.25rem; }
.grid .card { margin: 0; }
.figure { font-size: 1.6rem; font-weight: 700; margin: 0; }
meter { display: block; width: 100%; height: .75rem; margin: .5rem 0; }
label { display: block; font-weight: 600; margin: 1rem 0 .25rem; }
fieldset { border: 1px solid var(--line); border-radius: 8px; margin: 1rem 0 0; padding: .5rem 1rem 1rem; }
legend { font-weight: 600; padding: 0 .25rem; }
fieldset label { display: flex; gap: .5rem; align-items: baseline; font-weight: 400; margin: .5rem 0 0; }
.hint { color: var(--muted); font-size: .9rem; margin: .25rem 0 0; }
.field-error { color: var(--danger); font-size: .95rem; margin: .25rem 0 0; font-weight: 600; }
input[type=email], input[type=password], input[type=text], input[type=search], textarea, select { width: 100%; padding: .6rem; font: inherit; color: inherit; background: var(--paper); border: 1px solid #8a919c; border-radius: 6px; }
input[aria-invalid=true], textarea[aria-invalid=true] { border-color: var(--danger); }
textarea { min-height: 5rem; resize: vertical; }
.button, button { display: inline-block; font: inherit; font-weight: 600; padding: .55rem 1.1rem; border-radius: 6px; border: 1px solid var(--ink); background: var(--paper); color: var(--ink); cursor: pointer; text-decoration: none; line-height: 1.4; }
.button.primary, button.primary { background: var(--ink); color: var(--paper); }
.button.danger, button.danger { background: var(--danger); border-color: var(--danger); color: #fff; }
button.link { border: 0; background: none; padding: 0; color: var(--accent); text-decoration: underline; font-weight: 400; }
.actions { display: flex; flex-wrap: wrap; gap: .75rem; align-items: center; margin: 1.25rem 0 0; }
.alert, .notice, .warning { padding: .75rem 1rem; border-radius: 8px; margin: 0 0 1.25rem; }
.alert { background: #fdecec; border: 1px solid var(--danger); }
.notice { background: #ecfdf3; border: 1px solid var(--ok); }
.warning { background: #fff6e0; border: 1px solid #b7791f; }
.table-wrap { overflow-x: auto; margin: 0 0 1rem; }
table { border-collapse: collapse; width: 100%; background: var(--paper); font-size: .95rem; }
caption { text-align: left; font-weight: 600; padding: 0 0 .5rem; }
th, td { text-align: left; padding: .5rem .75rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { white-space: nowrap; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
code, pre, .key { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .9em; }
.key { white-space: nowrap; }
pre { background: var(--wash); border: 1px solid var(--line); border-radius: 6px; padding: .75rem; overflow-x: auto; white-space: pre-wrap; word-break: break-all; margin: 0; }
.secret { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.secret input { flex: 1 1 16rem; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.copy-status { min-width: 5rem; color: var(--ok); font-weight: 600; }
.badge { display: inline-block; margin-left: .4rem; vertical-align: middle; font-size: .8rem; font-weight: 600; padding: .1rem .5rem; border-radius: 99px; border: 1px solid var(--line); background: var(--wash); }
.badge.live { border-color: var(--ok); color: var(--ok); }
.badge.revoked { color: var(--muted); }
.playground form { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: flex-end; }
.playground form > div { flex: 1 1 14rem; }
.playground form label { margin-top: 0; }
.playground .result { margin-top: 1rem; }
.swatches { display: grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap: 1rem; margin: 1rem 0; }
.swatch { border: 1px solid var(--line); border-radius: 8px; padding: 1rem; display: flex; flex-wrap: wrap; align-items: flex-end; gap: 1rem; min-height: 10.5rem; }
.swatch.light { background: #fff; color: var(--ink); }
.swatch.dark { background: #16181d; color: #f2f4f7; }
.swatch figure { margin: 0; text-align: center; }
.swatch img { display: block; max-width: 100%; height: auto; margin: 0 auto .25rem; }
.swatch figcaption { font-size: .8rem; }
.plans { display: grid; grid-template-columns: repeat(auto-fit, minmax(14rem, 1fr)); gap: 1rem; margin: 0 0 1.25rem; }
.plan { background: var(--paper); border: 1px solid var(--line); border-radius: 10px; padding: 1.25rem; display: flex; flex-direction: column; }
.plan.current { border: 2px solid var(--accent); }
.plan .price { font-size: 1.5rem; font-weight: 700; margin: 0 0 .75rem; }
.plan ul { padding-left: 1.1rem; margin: 0 0 1rem; flex: 1; }
.plan form { margin: 0; }
.chart { display: block; width: 100%; height: auto; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 1rem; }
.charts figure { margin: 0; }
.charts figcaption { font-weight: 600; margin: 0 0 .25rem; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1rem; margin: 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
.hero { padding: 1rem 0 .5rem; }
.wall { list-style: none; margin: 0; padding: 1rem; display: flex; flex-wrap: wrap; gap: 1rem 1.25rem; align-items: center; justify-content: center; min-height: 0; }
.wall li { display: flex; align-items: center; justify-content: center; width: 48px; height: 48px; }
.wall img { max-width: 48px; max-height: 48px; width: auto; height: auto; }
.snippets { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 24rem), 1fr)); gap: 1.25rem; }
.snippet { min-width: 0; }
.snippet .actions { margin: .5rem 0 0; }
.formats { display: flex; flex-wrap: wrap; gap: 1rem; align-items: flex-end; margin: 0 0 1rem; }
.formats figure { margin: 0; text-align: center; }
.formats figcaption { font-size: .8rem; }
.hero p { font-size: 1.1rem; max-width: 40rem; }
@media (max-width: 40rem) {
  h1 { font-size: 1.35rem; }
  .account { margin-left: 0; width: 100%; }
  .card { padding: 1rem; }
  th, td { padding: .4rem .5rem; }
}
`;

const script = `
// Copy buttons: copy the text of the element the button names, and say so.
for (const button of document.querySelectorAll("button[data-copy]")) {
  button.addEventListener("click", async () => {
    const source = document.getElementById(button.dataset.copy);
    const status = document.getElementById(button.dataset.status);
    const text = "value" in source ? source.value : source.textContent;
    try {
      await navigator.clipboard.writeText(text);
      if (status) status.textContent = "Copied";
    } catch {
      if (source.select) source.select();
      if (status) status.textContent = "Press Ctrl+C to copy";
    }
  });
}
`;

const icon = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1b1f24"/><circle cx="12" cy="13" r="5" fill="#fff"/><rect x="15" y="16" width="10" height="9" rx="2" fill="#60a5fa"/></svg>`;

/** Changes whenever a file changes, so the long cache lifetime below never serves a stale one. */
function version(text: string): string {
  let hash = 5381;
  for (let i = 0; i < text.length; i++) hash = ((hash * 33) ^ text.charCodeAt(i)) >>> 0;
  return hash.toString(36);
}

const files = {
  css: { name: `portal.${version(css)}.css`, body: css, type: "text/css; charset=utf-8" },
  js: { name: `portal.${version(script)}.js`, body: script, type: "text/javascript; charset=utf-8" },
  icon: { name: `icon.${version(icon)}.svg`, body: icon, type: "image/svg+xml" },
};

/** Where the pages link them: the portal is mounted at /portal (src/app.ts), these files at its /assets (web.tsx). */
const MOUNTED_AT = "/portal/assets";
export const assetPaths = {
  css: `${MOUNTED_AT}/${files.css.name}`,
  js: `${MOUNTED_AT}/${files.js.name}`,
  icon: `${MOUNTED_AT}/${files.icon.name}`,
};

export const staticFiles = new Hono<AppEnv>();
for (const file of Object.values(files)) {
  staticFiles.get(`/${file.name}`, (c) =>
    c.body(file.body, 200, {
      "Content-Type": file.type,
      "Cache-Control": "public, max-age=31536000, immutable",
      "X-Content-Type-Options": "nosniff",
    }),
  );
}
