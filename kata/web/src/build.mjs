// Bundles editor.mjs and its packages into ../static/editor.js: one minified file, no imports,
// so the installed package needs no node and the page loads nothing from elsewhere. The bundle
// opens with the name, version and license of every package in it.
import { build } from "esbuild";
import { readFileSync, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const options = {
  entryPoints: [join(here, "editor.mjs")],
  bundle: true,
  minify: true,
  format: "iife",
  target: ["es2020"],
  legalComments: "none",
  logLevel: "info",
};

// the packages the bundle holds, from a first build's list of inputs
const probe = await build({ ...options, write: false, metafile: true, logLevel: "silent" });
const packages = new Set();
for (const input of Object.keys(probe.metafile.inputs)) {
  const m = input.match(/node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (m) packages.add(m[1]);
}
const notices = new Map(); // license text -> packages under it
for (const name of [...packages].sort()) {
  const dir = join(here, "node_modules", name);
  const meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  const file = ["LICENSE", "LICENSE.md", "LICENSE.txt"].map((f) => join(dir, f)).find(existsSync);
  const text = file ? readFileSync(file, "utf8").trim() : `${meta.license} License`;
  if (!notices.has(text)) notices.set(text, []);
  notices.get(text).push(`${meta.name}@${meta.version}`);
}
let banner = "/*! The practice room's code editor, bundled from these packages:\n";
for (const [text, names] of notices) {
  banner += `\n${names.join(", ")}:\n\n${text.replaceAll("*/", "* /")}\n`;
}
banner += "*/";

await build({ ...options, outfile: join(here, "..", "static", "editor.js"), banner: { js: banner } });
