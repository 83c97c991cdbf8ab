import { readFileSync } from 'node:fs';
const anon = () => Number(readFileSync('/proc/self/status', 'utf8').match(/RssAnon:\s+(\d+)/)[1]) / 1024;
const rss = () => Number(readFileSync('/proc/self/status', 'utf8').match(/VmRSS:\s+(\d+)/)[1]) / 1024;
await new Promise((r) => setTimeout(r, 300));
globalThis.gc();
const a0 = anon(),
  r0 = rss();
const snip = process.argv[2];
await (async () => {
  const AsyncFunction = (async () => {}).constructor;
  await new AsyncFunction('imp', snip)((m) => import(m));
})();
await new Promise((r) => setTimeout(r, 1500));
globalThis.gc();
console.log(`anon+${(anon() - a0).toFixed(1)} rss+${(rss() - r0).toFixed(1)}  ${snip.slice(0, 110)}`);
setTimeout(() => process.exit(0), 10);
