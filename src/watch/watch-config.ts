// kubeward watch's settings: defaults, the zod fields (flags and file), the flags' help, and the
// checks across keys. The command (src/cli/watch.ts), --help and docs/watch.md all come from here.
import { array, enum as zEnum, optional, prefault, refine, string, url } from 'zod/mini';
import { boolean, duration, filePath, integer, isHostName } from '../config/fields.ts';
import type { ModeConfig, ModeDeclaration } from '../config/mode-declaration.ts';
import { isDirectoryPath } from './state-record.ts';
import { vipAddress } from './vip-address.ts';

/** The defaults, once: the fields fill them in and --help shows them. */
export const DEFAULTS = {
  healthUrl: 'https://localhost:6443/readyz',
  dnsRefresh: '1m',
  stateDir: '/run/cloud-routes',
  lockTimeout: '5m',
  interval: '2s',
  timeout: '3s',
  rise: 1,
  fall: 8,
  heartbeat: '5s',
  onExit: 'down',
} as const;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const hostName = (what: string) => string().check(refine((n: string) => isHostName(n), { error: `expected ${what} (letters, digits, - and .)` }));

export const watchFields = {
  healthUrl: prefault(
    url({ protocol: /^https$/, error: 'expected an https:// URL such as https://localhost:6443/readyz' }).check(
      // Userinfo would be logged and shown in /status with the URL; credentials go in files.
      refine((u: string) => !/^https:\/\/[^/]*@/i.test(u), {
        error: 'a user or password in the URL is not accepted (it would show in logs and /status); use --token-file or --client-cert/--client-key',
      }),
    ),
    DEFAULTS.healthUrl,
  ),
  vip: prefault(array(vipAddress), []),
  vipFromDns: optional(hostName('a DNS name')),
  dnsRefresh: prefault(duration({ min: 1000 }), DEFAULTS.dnsRefresh),
  stateDir: prefault(filePath('a directory path'), DEFAULTS.stateDir),
  lockFile: optional(filePath()),
  lockTimeout: prefault(duration(), DEFAULTS.lockTimeout),
  handoverSocket: optional(filePath('a unix socket path')),
  interval: prefault(duration({ min: 100, max: HOUR }), DEFAULTS.interval),
  timeout: prefault(duration({ min: 50, max: 5 * MINUTE }), DEFAULTS.timeout),
  rise: prefault(integer(1, 100), DEFAULTS.rise),
  fall: prefault(integer(1, 100), DEFAULTS.fall),
  fastDownOnRefused: prefault(boolean, true),
  heartbeat: prefault(duration({ min: 100, max: HOUR }), DEFAULTS.heartbeat),
  heartbeatDir: optional(
    string().check(refine((d: string) => d === 'state-dir' || isDirectoryPath(d), { error: 'expected an absolute directory path or state-dir' })),
  ),
  caFile: optional(filePath()),
  insecureSkipTlsVerify: prefault(boolean, false),
  clientCert: optional(filePath()),
  clientKey: optional(filePath()),
  tokenFile: optional(filePath()),
  tlsServerName: optional(hostName('a DNS name (the name in the apiserver certificate)')),
  onExit: prefault(zEnum(['down', 'keep'], { error: 'expected down or keep' }), DEFAULTS.onExit),
};

export type WatchConfig = ModeConfig<typeof watchFields>;

const helpAfter = `
The watcher decides whether this node's kube-apiserver may receive the node's own traffic to the
API VIP, and says so with files: <VIP>.up or <VIP>.down in --state-dir, one JSON line each
(state, since, reason, pid, generation, heartbeat). "kubeward routes" (or any consumer of
OpenShift's apiserver-watcher files) turns them into packet rules.

Verdict: up after --rise consecutive HTTP 200s, down after --fall consecutive failures; a refused
connection (the apiserver process is gone) is down at once unless --no-fast-down-on-refused. Nothing
is written before the first verdict. On SIGTERM/SIGINT every VIP goes .down unless --on-exit keep.
One watcher per state directory: the lock file is waited for up to --lock-timeout.

Examples:
  kubeward watch --vip 10.0.0.100 --ca-file /etc/kubernetes/pki/ca.crt
  kubeward watch --vip-from-dns api-int.example.com --insecure-skip-tls-verify --fall 6 --interval 1s
`;

/** The watch mode's settings: flags, help, fields, admin port and the checks across keys. */
export const watchDeclaration: ModeDeclaration<typeof watchFields> = {
  name: 'watch',
  summary: 'probe the local apiserver and publish <VIP>.up / <VIP>.down state files',
  helpAfter,
  adminPort: 9450,
  fields: watchFields,
  flags: [
    { key: 'healthUrl', value: '<url>', help: 'the local apiserver health endpoint', defaultText: DEFAULTS.healthUrl },
    { key: 'vip', value: '<ip>', help: 'an API VIP (IPv4 or IPv6) to publish state for', repeatable: true },
    { key: 'vipFromDns', value: '<host>', help: 'also publish for every A/AAAA record of this name, re-resolved every --dns-refresh' },
    { key: 'dnsRefresh', value: '<duration>', help: 'how often --vip-from-dns is looked up again', defaultText: DEFAULTS.dnsRefresh },
    { key: 'stateDir', value: '<dir>', help: 'where state files go (created with mode 0755)', defaultText: DEFAULTS.stateDir },
    {
      key: 'lockFile',
      value: '<file>',
      help: "exclusive lock; the default is the one OpenShift's watcher takes, so the two exclude each other",
      defaultText: '<state-dir>/apiserver-watcher.lock',
    },
    { key: 'lockTimeout', value: '<duration>', help: 'how long to wait for another watcher to let go', defaultText: DEFAULTS.lockTimeout },
    {
      key: 'handoverSocket',
      value: '<path>',
      help: "upgrades without a gap: take the admin listening socket from the watcher serving this unix socket, which then lets go of the lock and leaves its files to this one (no .down); its directory must be this uid's, mode 0700",
    },
    { key: 'interval', value: '<duration>', help: 'time between probe starts (never two at once)', defaultText: DEFAULTS.interval },
    { key: 'timeout', value: '<duration>', help: 'deadline for one probe', defaultText: DEFAULTS.timeout },
    { key: 'rise', value: '<n>', help: 'consecutive successes that declare up', defaultText: String(DEFAULTS.rise) },
    { key: 'fall', value: '<n>', help: 'consecutive failures that declare down', defaultText: String(DEFAULTS.fall) },
    { key: 'fastDownOnRefused', help: 'a refused connection declares down at once', defaultText: 'on', negatable: true },
    { key: 'heartbeat', value: '<duration>', help: 'how often a fresh heartbeat is written', defaultText: DEFAULTS.heartbeat },
    {
      key: 'heartbeatDir',
      value: '<dir|state-dir>',
      help: "where heartbeats go (<VIP>.beat), kept out of --state-dir so OpenShift's consumers of it are not woken every beat; state-dir rewrites the state files every beat instead, for consumers that read the heartbeat there",
      defaultText: '<state-dir>-heartbeat',
    },
    { key: 'caFile', value: '<file>', help: 'CA bundle that signed the apiserver certificate' },
    { key: 'insecureSkipTlsVerify', help: "do not verify the apiserver certificate (what OpenShift's watcher does)" },
    { key: 'clientCert', value: '<file>', help: 'client certificate, for apiservers without anonymous access' },
    { key: 'clientKey', value: '<file>', help: 'key of --client-cert' },
    { key: 'tokenFile', value: '<file>', help: 'bearer token file, read on every probe' },
    { key: 'tlsServerName', value: '<name>', help: 'TLS server name to send and verify', defaultText: 'the URL host' },
    { key: 'onExit', value: '<down|keep>', help: 'on SIGTERM/SIGINT, publish down for every VIP, or leave the files', defaultText: DEFAULTS.onExit },
  ],
  check: (c) => {
    if (c.vip.length === 0 && !c.vipFromDns) return 'no VIP: give --vip IP (repeatable) and/or --vip-from-dns HOST';
    if (!c.caFile && !c.insecureSkipTlsVerify) {
      return '--ca-file FILE (the cluster CA, usually /etc/kubernetes/pki/ca.crt) or --insecure-skip-tls-verify is required';
    }
    if (c.caFile && c.insecureSkipTlsVerify) return '--ca-file and --insecure-skip-tls-verify contradict each other; give one';
    if (Boolean(c.clientCert) !== Boolean(c.clientKey)) return '--client-cert and --client-key go together';
    return undefined;
  },
};
