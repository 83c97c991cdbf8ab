// The bad-input table of the node daemons and the front door, at the process level: each input is
// given to the real CLI, which must exit with the code in the table, print one line naming the
// flag or key (exit 2), never a stack trace, and never echo a secret. Counts go to the report.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestCa } from '../testkit/certs.ts';
import { KubewardProcess, envWithoutOpenStack } from '../testkit/kubeward-process.ts';

type Mode = 'proxy' | 'watch' | 'front door';

interface BadInput {
  mode: Mode;
  name: string;
  /** Arguments after the mode (the front door: the whole argument list); paths through f(). */
  args: (f: (name: string) => string) => string[];
  code: number;
  /** What the one line (exit 2) or the fatal log line (exit 1) must say. */
  says: RegExp;
  /** Text that must not appear anywhere in the output. */
  secret?: string;
  env?: (f: (name: string) => string) => NodeJS.ProcessEnv;
}

let dir: string;
const f = (name: string) => join(dir, name);
let busy: Server;
let busyPort = 0;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kw-bad-input-'));
  const ca = await createTestCa('bad-input-ca', dir);
  const client = await ca.issueClient('client', 'kubeward');
  const other = await ca.issueClient('other', 'kubeward');
  const files: Record<string, string> = {
    'ca.crt': ca.cert,
    'empty-ca.crt': '',
    'key-as-ca.crt': client.key,
    'client.crt': client.cert,
    'client.key': client.key,
    'other.key': other.key,
    'not-a-key.key': 'this is not a key\n',
    'token-two-lines': 'first-line-SECRET\nsecond-line-SECRET\n',
    'token-empty': '\n',
    'clouds-broken.yaml': 'clouds:\n  prod:\n    auth:\n      auth_url: http://127.0.0.1:1/v3\n      password: hunter2SECRET: oops\n',
    'kubeconfig-broken.yaml': 'apiVersion: v1\nusers:\n- name: a\n  user:\n    token: eyJSECRET: def\n   x: y\n',
    'proxy-long-interval.yaml':
      'frontends:\n  - name: api\n    listen: ["127.0.0.1:0"]\n    upstreams: ["127.0.0.1:6443"]\n    healthCheck: {type: tcp, interval: 1000h}\n',
    'kubeconfig.yaml':
      'apiVersion: v1\nclusters:\n- name: c\n  cluster: {server: "https://127.0.0.1:1"}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: abc}\n',
    'proxy-zone.yaml': 'frontends:\n  - name: api\n    listen: ["127.0.0.1:0"]\n    upstreams: ["[fe80::1%eth0]:6443"]\n    healthCheck: {type: tcp}\n',
    'proxy-no-ca.yaml': 'frontends:\n  - name: api\n    listen: ["127.0.0.1:0"]\n    upstreams: ["127.0.0.1:6443"]\n    healthCheck: {type: tls}\n',
    'proxy-broken.yaml': 'frontends:\n  - name: api\n    token: s3cretSECRET: x\n',
    'proxy-server-name.yaml':
      'frontends:\n  - name: api\n    listen: ["127.0.0.1:0"]\n    upstreams: ["127.0.0.1:6443"]\n    healthCheck: {type: tls, insecureSkipTlsVerify: true, serverName: "a b"}\n',
  };
  for (const [name, text] of Object.entries(files)) await writeFile(f(name), text);
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  busyPort = (busy.address() as { port: number }).port;
});

after(async () => {
  await new Promise<void>((resolve) => busy.close(() => resolve()));
  await rm(dir, { recursive: true, force: true });
});

const proxyBase = ['--admin-address', 'off', '--log-level', 'warn'];
const proxy = (...a: string[]) => ['--upstream', '127.0.0.1:6443', '--listen', '127.0.0.1:0', ...a];
const watchBase = (d: (n: string) => string) => ['--admin-address', 'off', '--state-dir', d('state'), '--log-level', 'warn'];

const table: BadInput[] = [
  // proxy: items 1, 2, 5, 6, 7
  {
    mode: 'proxy',
    name: 'an upstream with a zone id',
    args: () => ['--upstream', '[fe80::1%eth0]:6443', '--health-check', 'tcp'],
    code: 2,
    says: /^kubeward proxy: --upstream \(value 1\): "fe80::1%eth0" has a zone id/,
  },
  {
    mode: 'proxy',
    name: 'an upstream with a zone id in the file',
    args: (d) => ['--config', d('proxy-zone.yaml')],
    code: 2,
    says: /proxy-zone\.yaml: key "frontends\.0\.upstreams\.0": "fe80::1%eth0" has a zone id/,
  },
  {
    mode: 'proxy',
    name: 'upstream port 0',
    args: () => ['--upstream', '127.0.0.1:0', '--health-check', 'tcp'],
    code: 2,
    says: /--upstream \(value 1\): "127\.0\.0\.1:0": the port must be from 1 to 65535/,
  },
  {
    mode: 'proxy',
    name: 'upstream port 70000',
    args: () => ['--upstream', '127.0.0.1:70000', '--health-check', 'tcp'],
    code: 2,
    says: /--upstream \(value 1\): .*the port must be from 1 to 65535/,
  },
  {
    mode: 'proxy',
    name: 'an upstream with a line break',
    args: () => ['--upstream', 'api\nevil:6443', '--health-check', 'tcp'],
    code: 2,
    says: /--upstream \(value 1\): "api\\nevil:6443": the host must be/,
  },
  {
    mode: 'proxy',
    name: '--interval 1000h',
    args: () => proxy('--health-check', 'tcp', '--interval', '1000h'),
    code: 2,
    says: /--interval: 1000h is too long; the most accepted is 1h/,
  },
  {
    mode: 'proxy',
    name: 'interval 1000h in the file',
    args: (d) => ['--config', d('proxy-long-interval.yaml')],
    code: 2,
    says: /key "frontends\.0\.healthCheck\.interval": 1000h is too long/,
  },
  {
    mode: 'proxy',
    name: '--timeout 10m',
    args: () => proxy('--health-check', 'tcp', '--timeout', '10m'),
    code: 2,
    says: /--timeout: 10m is too long; the most accepted is 5m/,
  },
  {
    mode: 'proxy',
    name: 'a duration past the timer limit',
    args: () => proxy('--health-check', 'tcp', '--idle-timeout', '999999999999h'),
    code: 2,
    says: /--idle-timeout: .* is too long; the most accepted is 24h/,
  },
  {
    mode: 'proxy',
    name: '--shutdown-grace 2h',
    args: () => proxy('--health-check', 'tcp', '--shutdown-grace', '2h'),
    code: 2,
    says: /--shutdown-grace: 2h is too long/,
  },
  {
    mode: 'proxy',
    name: '--max-connections 0',
    args: () => proxy('--health-check', 'tcp', '--max-connections', '0'),
    code: 2,
    says: /--max-connections: must be at least 1/,
  },
  { mode: 'proxy', name: '--fall 1000', args: () => proxy('--health-check', 'tcp', '--fall', '1000'), code: 2, says: /--fall: must be at most 100/ },
  { mode: 'proxy', name: '--workers 65', args: () => proxy('--health-check', 'tcp', '--workers', '65'), code: 2, says: /--workers: must be at most 64/ },
  {
    mode: 'proxy',
    name: 'a readyz check without --ca-file',
    args: () => proxy(),
    code: 2,
    says: /--health-check readyz: give --ca-file FILE .*--insecure-skip-tls-verify/,
  },
  {
    mode: 'proxy',
    name: 'a tls check without a CA in the file',
    args: (d) => ['--config', d('proxy-no-ca.yaml')],
    code: 2,
    says: /frontends\[0\]\.healthCheck \(type tls\): give --ca-file/,
  },
  {
    mode: 'proxy',
    name: 'a CA file without a certificate',
    args: (d) => proxy('--ca-file', d('empty-ca.crt')),
    code: 2,
    says: /--ca-file .*empty-ca\.crt: holds no certificate/,
  },
  {
    mode: 'proxy',
    name: 'a CA file holding a key',
    args: (d) => proxy('--ca-file', d('key-as-ca.crt')),
    code: 2,
    says: /--ca-file .*key-as-ca\.crt: holds no certificate/,
    secret: 'PRIVATE KEY',
  },
  {
    mode: 'proxy',
    name: 'an unreadable CA file',
    args: (d) => proxy('--ca-file', d('missing.crt')),
    code: 2,
    says: /--ca-file .*missing\.crt: cannot read \(ENOENT/,
  },
  {
    mode: 'proxy',
    name: 'a token file with two lines',
    args: (d) => proxy('--ca-file', d('ca.crt'), '--token-file', d('token-two-lines')),
    code: 2,
    says: /--token-file .*token-two-lines: the token holds 2 lines/,
    secret: 'SECRET',
  },
  {
    mode: 'proxy',
    name: 'an empty token file',
    args: (d) => proxy('--ca-file', d('ca.crt'), '--token-file', d('token-empty')),
    code: 2,
    says: /--token-file .*token-empty: the token is empty/,
  },
  {
    mode: 'proxy',
    name: 'a missing token file',
    args: (d) => proxy('--ca-file', d('ca.crt'), '--token-file', d('no-token')),
    code: 2,
    says: /--token-file .*no-token: cannot read/,
  },
  {
    mode: 'proxy',
    name: 'a client key that is not a key',
    args: (d) => proxy('--ca-file', d('ca.crt'), '--client-cert', d('client.crt'), '--client-key', d('not-a-key.key')),
    code: 2,
    says: /--client-key .*not-a-key\.key: holds no PEM private key/,
  },
  {
    mode: 'proxy',
    name: 'a client key of another certificate',
    args: (d) => proxy('--ca-file', d('ca.crt'), '--client-cert', d('client.crt'), '--client-key', d('other.key')),
    code: 2,
    says: /--client-key .*other\.key: cannot be used with the certificate/,
    secret: 'PRIVATE KEY',
  },
  {
    mode: 'proxy',
    name: 'a CA path with a line break',
    args: () => proxy('--ca-file', '/etc/ca\n.crt'),
    code: 2,
    says: /--ca-file: expected a file path without control characters/,
  },
  {
    mode: 'proxy',
    name: 'a server name with a space',
    args: (d) => ['--config', d('proxy-server-name.yaml')],
    code: 2,
    says: /key "frontends\.0\.healthCheck\.serverName": expected a DNS name/,
  },
  {
    mode: 'proxy',
    name: 'a config file with a YAML error next to a secret',
    args: (d) => ['--config', d('proxy-broken.yaml')],
    code: 2,
    says: /proxy-broken\.yaml: not valid YAML: YAML syntax error at line 3, column \d+/,
    secret: 's3cret',
  },
  {
    mode: 'proxy',
    name: 'an admin port out of range',
    args: () => [...proxy('--health-check', 'tcp'), '--admin-address', '127.0.0.1:99999'],
    code: 2,
    says: /--admin-address: expected HOST:PORT/,
  },
  {
    mode: 'proxy',
    name: 'a listen address in use (after start-up: printed once)',
    args: () => ['--upstream', '127.0.0.1:6443', '--health-check', 'tcp', '--listen', `127.0.0.1:${busyPort}`],
    code: 2,
    says: /frontend "default": cannot listen on 127\.0\.0\.1:\d+ \(listen EADDRINUSE.*\); free the port or pick another$/,
  },

  // watch: items 2, 4, 5, 7
  {
    mode: 'watch',
    name: 'a VIP with a zone id',
    args: () => ['--vip', 'fe80::1%eth0', '--insecure-skip-tls-verify'],
    code: 2,
    says: /--vip \(value 1\): "fe80::1%eth0" has a zone id/,
  },
  {
    mode: 'watch',
    name: 'a VIP that is not an address',
    args: () => ['--vip', '999.1.1.1', '--insecure-skip-tls-verify'],
    code: 2,
    says: /--vip \(value 1\): "999\.1\.1\.1" is not an IPv4 or IPv6 address/,
  },
  {
    mode: 'watch',
    name: '--interval 1000h',
    args: () => ['--vip', '10.0.0.1', '--insecure-skip-tls-verify', '--interval', '1000h'],
    code: 2,
    says: /--interval: 1000h is too long; the most accepted is 1h/,
  },
  {
    mode: 'watch',
    name: '--heartbeat 2h',
    args: () => ['--vip', '10.0.0.1', '--insecure-skip-tls-verify', '--heartbeat', '2h'],
    code: 2,
    says: /--heartbeat: 2h is too long/,
  },
  {
    mode: 'watch',
    name: '--dns-refresh 25h',
    args: () => ['--vip', '10.0.0.1', '--insecure-skip-tls-verify', '--dns-refresh', '25h'],
    code: 2,
    says: /--dns-refresh: 25h is too long; the most accepted is 24h/,
  },
  {
    mode: 'watch',
    name: '--lock-timeout past the timer limit',
    args: () => ['--vip', '10.0.0.1', '--insecure-skip-tls-verify', '--lock-timeout', '100000h'],
    code: 2,
    says: /--lock-timeout: 100000h is too long/,
  },
  {
    mode: 'watch',
    name: '--rise 0',
    args: () => ['--vip', '10.0.0.1', '--insecure-skip-tls-verify', '--rise', '0'],
    code: 2,
    says: /--rise: must be at least 1/,
  },
  {
    mode: 'watch',
    name: 'neither --ca-file nor --insecure-skip-tls-verify',
    args: () => ['--vip', '10.0.0.1'],
    code: 2,
    says: /--ca-file FILE .* or --insecure-skip-tls-verify is required/,
  },
  {
    mode: 'watch',
    name: 'a CA file without a certificate',
    args: (d) => ['--vip', '10.0.0.1', '--ca-file', d('empty-ca.crt')],
    code: 2,
    says: /--ca-file .*empty-ca\.crt: holds no certificate/,
  },
  {
    mode: 'watch',
    name: 'a token file with two lines',
    args: (d) => ['--vip', '10.0.0.1', '--ca-file', d('ca.crt'), '--token-file', d('token-two-lines')],
    code: 2,
    says: /--token-file .*: the token holds 2 lines/,
    secret: 'SECRET',
  },
  {
    mode: 'watch',
    name: 'a client key that is not a key',
    args: (d) => ['--vip', '10.0.0.1', '--ca-file', d('ca.crt'), '--client-cert', d('client.crt'), '--client-key', d('not-a-key.key')],
    code: 2,
    says: /--client-key .*: holds no PEM private key/,
  },
  {
    mode: 'watch',
    name: 'a health URL with a password',
    args: () => ['--vip', '10.0.0.1', '--insecure-skip-tls-verify', '--health-url', 'https://admin:hunter2SECRET@127.0.0.1:6443/readyz'],
    code: 2,
    says: /--health-url: a user or password in the URL is not accepted/,
    secret: 'hunter2SECRET',
  },
  {
    mode: 'watch',
    name: 'a plain http health URL',
    args: () => ['--vip', '10.0.0.1', '--insecure-skip-tls-verify', '--health-url', 'http://127.0.0.1:6443/readyz'],
    code: 2,
    says: /--health-url: expected an https:\/\/ URL/,
  },
  {
    mode: 'watch',
    name: 'a --vip-from-dns that is not a name',
    args: () => ['--vip-from-dns', 'api int!', '--insecure-skip-tls-verify'],
    code: 2,
    says: /--vip-from-dns: expected a DNS name/,
  },
  {
    mode: 'watch',
    name: 'a --tls-server-name with a line break',
    args: () => ['--vip', '10.0.0.1', '--insecure-skip-tls-verify', '--tls-server-name', 'a\nb'],
    code: 2,
    says: /--tls-server-name: expected a DNS name/,
  },
  {
    mode: 'watch',
    name: 'a state dir with a line break',
    args: () => ['--vip', '10.0.0.1', '--insecure-skip-tls-verify', '--state-dir', '/tmp/a\nb'],
    code: 2,
    says: /--state-dir: expected a directory path without control characters/,
  },
  {
    mode: 'watch',
    name: 'a state dir under /proc that cannot be made',
    args: () => ['--vip', '10.0.0.1', '--insecure-skip-tls-verify', '--state-dir', '/proc/kubeward-bad-input'],
    code: 2,
    says: /--state-dir \/proc\/kubeward-bad-input: cannot create it \(ENOENT/,
  },
  {
    mode: 'watch',
    name: 'a state dir under /proc that exists (no lock file possible)',
    args: () => ['--vip', '10.0.0.1', '--insecure-skip-tls-verify', '--state-dir', '/proc/self'],
    code: 2,
    says: /--state-dir \/proc\/self: cannot lock \/proc\/self\/apiserver-watcher\.lock/,
  },
  {
    mode: 'watch',
    name: 'a --vip-from-dns name that does not resolve (fatal, not a hang)',
    args: () => ['--vip-from-dns', 'kubeward-bad-input.invalid', '--insecure-skip-tls-verify'],
    code: 1,
    says: /--vip-from-dns kubeward-bad-input\.invalid: no VIP found \(.*ENOTFOUND/,
  },

  // the front door: item 8, and secrets in credential files (item 12)
  { mode: 'front door', name: 'no arguments at all', args: () => [], code: 2, says: /^kubeward: no mode given; see the modes above$/ },
  { mode: 'front door', name: 'an unknown mode', args: () => ['prxy'], code: 2, says: /^kubeward: unknown command 'prxy' \(Did you mean proxy\?\)/ },
  {
    mode: 'front door',
    name: 'an unknown flag',
    args: () => ['proxy', '--upstreams', '127.0.0.1:1'],
    code: 2,
    says: /^kubeward proxy: unknown option '--upstreams'/,
  },
  {
    mode: 'front door',
    name: 'a missing --config file',
    args: (d) => ['watch', '--config', d('none.yaml')],
    code: 2,
    says: /--config .*none\.yaml: cannot read the file \(ENOENT/,
  },
  {
    mode: 'front door',
    name: 'a required flag left out names the flag',
    args: (d) => ['routegc', '--kubeconfig', d('none.yaml'), '--once'],
    code: 2,
    says: /^kubeward routegc: --[a-z-]+: /,
  },
  {
    mode: 'front door',
    name: 'routes --resync 1000h (the shared duration layer bounds every mode)',
    args: () => ['routes', '--provider', 'gcp', '--resync', '1000h', '--admin-address', 'off'],
    code: 2,
    says: /^kubeward routes: --resync: 1000h is too long; the most accepted is 24h$/,
  },
  {
    mode: 'front door',
    name: 'clouds.yaml with a YAML error next to a password (exit 2, no password)',
    args: (d) => ['deorbit', '--os-cloud', 'prod', '--kubeconfig', d('kubeconfig.yaml'), '--context', 'c'],
    env: (d) => envWithoutOpenStack({ OS_CLIENT_CONFIG_FILE: d('clouds-broken.yaml') }),
    code: 2,
    says: /clouds-broken\.yaml is not valid YAML: YAML syntax error at line 5, column \d+/,
    secret: 'hunter2SECRET',
  },
  {
    mode: 'front door',
    name: 'a kubeconfig with a YAML error next to a token (exit 2, no token)',
    args: (d) => ['operator', '--kubeconfig', d('kubeconfig-broken.yaml'), '--admin-address', 'off'],
    code: 2,
    says: /--kubeconfig .*kubeconfig-broken\.yaml: not a kubeconfig \(YAML syntax error at line 5, column \d+/,
    secret: 'eyJSECRET',
  },
];

/** The base flags (pairs of flag and value) the case does not set itself. */
function withoutFlagsIn(base: string[], own: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < base.length; i += 2) if (!own.includes(base[i]!)) out.push(base[i]!, base[i + 1]!);
  return out;
}

const outcomes = new Map<Mode, { tried: number; passed: number; byCode: Record<number, number> }>();

describe('bad inputs exit with a code and one line naming the flag or key, never a stack trace or a secret', { concurrency: 4 }, () => {
  for (const c of table) {
    test(`${c.mode}: ${c.name}`, async () => {
      const o = outcomes.get(c.mode) ?? { tried: 0, passed: 0, byCode: {} };
      outcomes.set(c.mode, o);
      o.tried++;
      const own = c.args(f);
      const base = c.mode === 'proxy' ? proxyBase : c.mode === 'watch' ? watchBase(f) : [];
      const args = c.mode === 'front door' ? own : [c.mode, ...own, ...withoutFlagsIn(base, own)];
      const p = new KubewardProcess(args, { env: c.env?.(f) });
      const timer = setTimeout(() => p.child.kill('SIGKILL'), 20_000);
      const { code, signal } = await p.exited;
      clearTimeout(timer);
      o.byCode[code ?? -1] = (o.byCode[code ?? -1] ?? 0) + 1;
      const out = p.stderr + p.stdout;
      assert.equal(signal, null, `ended by itself within 20 s (no hang); stderr: ${p.stderr}`);
      assert.equal(code, c.code, p.stderr);
      assert.doesNotMatch(out, /\n\s+at .+:\d+:\d+/, 'no stack trace');
      if (c.secret) assert.ok(!out.includes(c.secret), `the secret stays out of the output: ${out}`);
      if (c.code === 2) {
        // One plain line, printed once; log lines of a daemon that had started (a lock wait, say) may precede it.
        const lines = p.stderr.trimEnd().split('\n');
        const plain = lines.filter((l) => !l.startsWith('{'));
        const last = lines.at(-1)!;
        if (c.mode !== 'front door' || c.args(f).length > 0) assert.equal(plain.length, 1, `one line: ${p.stderr}`);
        assert.match(last, c.says);
        const words = last.replace(/^kubeward( \w+)?: /, '').slice(0, 40);
        assert.equal(p.stderr.split(words).length - 1, 1, `printed once: ${p.stderr}`);
      } else {
        const fatal = p.logs.find((l) => l.level === 60);
        assert.ok(fatal, `a fatal log line: ${p.stderr}`);
        assert.match(String(fatal.err), c.says);
      }
      o.passed++;
    });
  }
});

after(() => {
  for (const [mode, o] of outcomes) {
    process.stdout.write(`# bad inputs, ${mode}: ${o.tried} tried, ${o.passed} as expected; exit codes ${JSON.stringify(o.byCode)}\n`);
  }
});
