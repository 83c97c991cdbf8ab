#!/usr/bin/env node
// The installed entry point: runs the production build in dist/ (npm run build), with the V8
// settings kubeward ships with. The development workflow (npm run kubeward, the tests) runs the
// TypeScript sources directly and does not come through here.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { modeEnv, modeNodeFlags, modeV8Flags } from './mode-flags.js';

const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `kubeward needs Node.js 24 or newer; this is ${process.version}.\n` +
      'From a checkout, "npm ci" installs Node 24 into node_modules and "npm run kubeward -- <mode> ..." uses it.\n',
  );
  process.exit(2);
}

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
if (!existsSync(MAIN)) {
  process.stderr.write(
    `kubeward: the program is not built (${MAIN} is missing); run "npm run build" in ${fileURLToPath(new URL('..', import.meta.url))} first.\n` +
      'From a checkout, "npm run kubeward -- <mode> ..." runs the sources without a build.\n',
  );
  process.exit(2);
}

/**
 * V8 settings for a small, mostly idle daemon (docs/design/node-footprint.md; the bench
 * measures their cost). A 1 MiB semi-space keeps the young generation small (V8's default grows it
 * to 16 MiB under load and keeps the pages); one GC thread and a worker pool of one spare the
 * threads' stacks and malloc arenas. Maglev tiers up after 12,000 calls instead of 400: start-up
 * code stays interpreted instead of paging in the optimizing compiler (about 1.6 MiB RSS at rest).
 * 4,000 was not enough: loading the build's chunks calls Node's path functions once per character
 * of each chunk's path, about 7,000 times here and more under a longer install path (docs/footprint.md).
 * The data path, called thousands of times a second under load, is still optimized within seconds.
 * No Sparkplug (the baseline compiler between the interpreter and Maglev): its code for warm
 * start-up and probe functions is 0.5 MiB of private memory at rest, and the hot path goes to Maglev
 * and TurboFan either way (CPU per request unchanged within this machine's noise, docs/footprint.md).
 * Each mode may add to it (bin/mode-flags.js). KUBEWARD_V8_FLAGS replaces the mode's list ("" for V8's defaults).
 */
const DEFAULT_FLAGS = [
  '--max-semi-space-size=1',
  '--single-threaded-gc',
  '--v8-pool-size=1',
  '--invocation-count-for-maglev=12000',
  '--invocation-count-for-maglev-osr=1000',
  '--no-sparkplug',
];

// The mode's V8 list (bin/mode-flags.js: the operator adds to it).
const modeV8 = modeV8Flags(process.argv[2], DEFAULT_FLAGS);
const v8Flags = process.env.KUBEWARD_V8_FLAGS !== undefined ? process.env.KUBEWARD_V8_FLAGS.split(/\s+/).filter(Boolean) : modeV8;
// Node settings of one mode (bin/mode-flags.js), whatever KUBEWARD_V8_FLAGS says.
const flags = [...v8Flags, ...modeNodeFlags(process.argv[2], process.env.NODE_OPTIONS)];
const missing = flags.filter((f) => !process.execArgv.includes(f));
// malloc settings of one mode (bin/mode-flags.js): glibc reads them only at start, as V8 its flags.
let envAdded;
try {
  envAdded = modeEnv(process.argv[2], process.env);
} catch (err) {
  process.stderr.write(`kubeward: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
}
if ((missing.length > 0 || Object.keys(envAdded).length > 0) && typeof process.execve === 'function') {
  // Heap and thread settings apply only at start: run again, same PID, with them in front.
  process.execve(process.execPath, [process.execPath, ...missing, ...process.execArgv, ...process.argv.slice(1)], { ...process.env, ...envAdded });
}

process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});
const { main } = await import(MAIN);
await main(process.argv.slice(2));
