// Loads profiles through speedscope's own importer, in Node, and prints
// what it made of each as one JSON line: the importer's name for it and,
// per profile (one per thread), its weight unit, total weight, and per
// frame (function) its self and total weight and its calls (the calls the
// importer's call tree opens; a collapsed-stack file has one per line).
//
//   node speedscope_import.js SPEEDSCOPE_PACKAGE_DIR FILE...
//
// The npm package ships speedscope as a browser bundle: its importer module
// is reached by running the bundle with a window of stubs and taking the
// promise the app itself awaits for it (`importProfileGroupFromText`, the
// code speedscope runs on a dropped file). The bundle's text is matched
// for the pinned version (tests/integration/CMakeLists.txt): another
// version fails here, loudly, rather than testing something else.
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const [pkg, ...files] = process.argv.slice(2);
const dir = path.join(pkg, 'dist', 'release');
const bundle = fs.readdirSync(dir).find(f => /^speedscope-[A-Z0-9]+\.js$/.test(f));
if (!bundle) throw new Error(`no speedscope bundle in ${dir}`);
let src = fs.readFileSync(path.join(dir, bundle), 'utf8');
// The promise of the import module, as the app defines it.
const anchor = /var (\w+)=Promise\.resolve\(\)\.then\(\(\)=>\(\w+\(\),\w+\)\);\1\.then\(\(\)=>\{\}\);/;
const found = src.match(anchor);
if (!found) throw new Error(`${bundle}: the importer's promise was not found (another version?)`);
src = src.replace(anchor, `${found[0]}globalThis.__speedscopeImporter=${found[1]};`);

const ctx = {
  console: {log() {}, info() {}, warn() {}, error() {}, time() {}, timeEnd() {}},
  TextDecoder, TextEncoder, atob, btoa, setTimeout, clearTimeout, URL, WebAssembly, performance,
  navigator: {userAgent: 'node'},
  location: {hash: '', href: 'file:///speedscope', protocol: 'file:', search: ''},
  localStorage: {getItem: () => null, setItem() {}},
  // The app's rendering, which needs a real page, stops at its first use.
  document: new Proxy({}, {get: () => () => ({})}),
};
ctx.window = ctx.self = ctx.globalThis = ctx;
vm.createContext(ctx);
try {
  vm.runInContext(src, ctx);
} catch (e) {
  // Expected: the app's start-up after the importer's definition.
}

(async () => {
  if (!ctx.__speedscopeImporter) throw new Error('the bundle stopped before its importer');
  const importer = await ctx.__speedscopeImporter;
  for (const file of files) {
    const group = await importer.importProfileGroupFromText(
        path.basename(file), fs.readFileSync(file, 'utf8'));
    if (!group) {
      console.log(JSON.stringify({file, recognized: false}));
      continue;
    }
    const profiles = group.profiles.map(p => {
      const frames = {};
      p.forEachFrame(f => {
        frames[f.name] = {self: f.getSelfWeight(), total: f.getTotalWeight(), calls: 0};
      });
      p.forEachCall(node => { frames[node.frame.name].calls++; }, () => {});
      return {name: p.getName(), unit: p.getWeightUnit(), total: p.getTotalWeight(), frames};
    });
    console.log(JSON.stringify({file, recognized: true, name: group.name, profiles}));
  }
})().catch(e => {
  console.error(`speedscope import: ${e.message}`);
  process.exit(1);
});
