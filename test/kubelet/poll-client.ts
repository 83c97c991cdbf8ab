// A client on the node polling the API through the node-local proxy: every --every ms a new TCP
// and TLS connection and GET /readyz (so every request needs a listener to accept it), counted.
// Runs until SIGTERM or --max-seconds, then prints one JSON line: sent, ok, failed, the first
// failures and the longest gap between two successes. Run it inside the node's namespace.
//   node poll-client.ts --url https://127.0.0.1:6443/readyz --ca ca.crt [--every 50] [--max-seconds 300]
import { readFileSync } from 'node:fs';
import { request } from 'node:https';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!, process.argv[i + 1] ?? '');
const url = new URL(args.get('--url') ?? 'https://127.0.0.1:6443/readyz');
const ca = readFileSync(args.get('--ca') ?? '/dev/null');
const every = Number(args.get('--every') ?? 50);
const maxMs = Number(args.get('--max-seconds') ?? 300) * 1000;

let sent = 0;
let ok = 0;
const failures: { at: string; error: string }[] = [];
let lastOk = Date.now();
let longestGapMs = 0;
const started = Date.now();

function once(): Promise<void> {
  sent++;
  return new Promise((resolve) => {
    const req = request(url, { ca, agent: false, timeout: 5000 }, (res) => {
      res.resume();
      res.on('end', () => {
        if (res.statusCode === 200) {
          ok++;
          const now = Date.now();
          longestGapMs = Math.max(longestGapMs, now - lastOk);
          lastOk = now;
        } else failures.push({ at: new Date().toISOString(), error: `HTTP ${res.statusCode}` });
        resolve();
      });
      res.on('error', (err) => {
        failures.push({ at: new Date().toISOString(), error: String(err) });
        resolve();
      });
    });
    req.on('timeout', () => req.destroy(new Error('timeout after 5s')));
    req.on('error', (err) => {
      failures.push({ at: new Date().toISOString(), error: String(err) });
      resolve();
    });
    req.end();
  });
}

let stopping = false;
process.on('SIGTERM', () => (stopping = true));
while (!stopping && Date.now() - started < maxMs) {
  const t = Date.now();
  await once();
  await new Promise((r) => setTimeout(r, Math.max(0, every - (Date.now() - t))));
}
process.stdout.write(JSON.stringify({ sent, ok, failed: failures.length, failures: failures.slice(0, 20), longestGapMs }) + '\n');
