// Long-lived watches through the node-local proxy, as controllers and the kubelet hold them: --count
// watches of ConfigMaps in one namespace, each re-established (from its last resourceVersion) when
// its stream ends or fails. One JSON line per event on stdout: {"w":i,"ev":"established"|"closed"|
// "object","name"?,"error"?}. Runs until SIGTERM or --max-seconds. Run it inside the node's namespace.
//   node watch-client.ts --server https://127.0.0.1:6443 --ca ca.crt --token-file t --namespace default [--count 6]
import { readFileSync } from 'node:fs';
import { request } from 'node:https';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!, process.argv[i + 1] ?? '');
const server = args.get('--server') ?? 'https://127.0.0.1:6443';
const ca = readFileSync(args.get('--ca') ?? '/dev/null');
const token = readFileSync(args.get('--token-file') ?? '/dev/null', 'utf8').trim();
const ns = args.get('--namespace') ?? 'default';
const count = Number(args.get('--count') ?? 6);
const maxMs = Number(args.get('--max-seconds') ?? 300) * 1000;
const emit = (o: object) => process.stdout.write(JSON.stringify(o) + '\n');

function watch(w: number, rv: string): void {
  const path = `/api/v1/namespaces/${ns}/configmaps?watch=1&allowWatchBookmarks=false${rv ? `&resourceVersion=${rv}` : ''}`;
  let last = rv;
  let buf = '';
  let again = false;
  const reconnect = (why: string) => {
    if (again) return;
    again = true;
    emit({ w, ev: 'closed', error: why });
    setTimeout(() => watch(w, last), 200);
  };
  const req = request(new URL(path, server), { ca, agent: false, headers: { authorization: `Bearer ${token}` } }, (res) => {
    if (res.statusCode !== 200) {
      res.resume();
      return reconnect(`HTTP ${res.statusCode}`);
    }
    emit({ w, ev: 'established' });
    res.setEncoding('utf8');
    res.on('data', (d: string) => {
      buf += d;
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          const ev = JSON.parse(line) as { type: string; object: { metadata?: { name?: string; resourceVersion?: string } } };
          if (ev.type === 'ERROR') {
            last = ''; // expired resourceVersion: start over
            continue;
          }
          last = ev.object.metadata?.resourceVersion ?? last;
          emit({ w, ev: 'object', type: ev.type, name: ev.object.metadata?.name });
        } catch {
          // a partial line cannot happen after the split; ignore anything else
        }
      }
    });
    res.on('end', () => reconnect('stream ended'));
    res.on('error', (err) => reconnect(String(err)));
  });
  req.on('error', (err) => reconnect(String(err)));
  req.end();
}

for (let i = 0; i < count; i++) setTimeout(() => watch(i, ''), i * 300);
process.on('SIGTERM', () => process.exit(0));
setTimeout(() => process.exit(0), maxMs);
