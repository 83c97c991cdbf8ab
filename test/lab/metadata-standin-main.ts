// A GCP metadata server stand-in for the lab, run inside a namespace. Each request re-reads the
// control file (JSON), so a test changes answers by rewriting it:
//   {"mode": "ok" | "error500" | "garbage" | "hang" | "no-flavor", "nics": [{"ips": [...], "ipv6s": [...]}]}
// Answers the directory walk under /computeMetadata/v1/instance/network-interfaces/ like the real one.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { host: { type: 'string', default: '0.0.0.0' }, port: { type: 'string', default: '80' }, file: { type: 'string' } } });
if (!values.file) {
  process.stderr.write('usage: metadata-standin-main.ts --file CONTROL.json [--host H] [--port P]\n');
  process.exit(2);
}

interface Control {
  mode: 'ok' | 'error500' | 'garbage' | 'hang' | 'no-flavor';
  nics: { ips?: string[]; ipv6s?: string[] }[];
}

const PREFIX = '/computeMetadata/v1/instance/network-interfaces/';

function answer(control: Control, path: string): { status: number; body: string } {
  if (!path.startsWith(PREFIX)) return { status: 404, body: 'not found' };
  const parts = path.slice(PREFIX.length).split('/');
  if (parts[0] === '') return { status: 200, body: control.nics.map((_, i) => `${i}/\n`).join('') };
  const nic = control.nics[Number(parts[0])];
  const key = parts[1] === 'forwarded-ips' ? 'ips' : parts[1] === 'forwarded-ipv6s' ? 'ipv6s' : undefined;
  if (!nic || !key) return { status: 404, body: 'not found' };
  const list = nic[key] ?? [];
  if (parts[2] === '') return { status: 200, body: list.map((_, i) => `${i}\n`).join('') };
  const item = list[Number(parts[2])];
  return item === undefined ? { status: 404, body: 'not found' } : { status: 200, body: item };
}

const server = createServer((req, res) => {
  void (async () => {
    const control = JSON.parse(await readFile(values.file!, 'utf8')) as Control;
    if (control.mode === 'hang') return; // the client's timeout ends it
    if (req.headers['metadata-flavor'] !== 'Google') {
      res.writeHead(403).end('Missing Metadata-Flavor:Google header.');
      return;
    }
    if (control.mode === 'error500') {
      res.writeHead(500, { 'Metadata-Flavor': 'Google' }).end('internal error');
      return;
    }
    if (control.mode === 'garbage') {
      res.writeHead(200, { 'Metadata-Flavor': 'Google', 'content-type': 'text/html' }).end('<html><body>10.0.0.66 Service Unavailable</body></html>');
      return;
    }
    const { status, body } = answer(control, new URL(req.url ?? '/', 'http://x').pathname);
    const headers: Record<string, string> = { 'content-type': 'application/text' };
    if (control.mode !== 'no-flavor') headers['Metadata-Flavor'] = 'Google';
    res.writeHead(status, headers).end(body);
  })().catch(() => res.writeHead(500).end());
});
server.listen(Number(values.port), values.host, () => process.stdout.write(`listening ${values.host} ${values.port}\n`));
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
