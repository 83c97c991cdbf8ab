// Config files for the programs the benchmark starts: nginx as the backend, nginx stream and
// HAProxy as kubespray configures them, and kubeward proxy's flags. Pure: values in, text out.

export const NGINX_STREAM_MODULE = '/usr/lib/nginx/modules/ngx_stream_module.so';
/** File descriptors for every process the bench starts (the machine allows 20,000 per process). */
export const NOFILE = 20000;

export interface BackendOptions {
  /** nginx prefix: pid, logs and temp paths go here. */
  dir: string;
  port: number;
  /** The response body of GET /, so a client can tell which backend answered. */
  name: string;
  /** Certificate for the TLS listeners. */
  tls?: { certFile: string; keyFile: string };
  /** The main port speaks TLS like an apiserver (failover runs: HAProxy's check-ssl and kubeward's readyz need it). */
  tlsMainPort?: boolean;
  /** An extra TLS port with the same locations, for HAProxy's check-ssl while the main port is plain HTTP. */
  checkPort?: number;
  /** Directory served under /files/ (the 100 MB bulk file). */
  filesDir?: string;
  /** While this file exists /readyz answers 503 and everything else is still served (graceful shutdown). */
  readyzDownFlag: string;
}

/**
 * One process (master_process off), so SIGKILL or SIGSTOP of its pid kills or hangs the whole backend.
 * /healthz stays 200 while /readyz is 503, as kube-apiserver does during its shutdown delay.
 */
export function renderBackendNginx(o: BackendOptions): string {
  const listen = [`listen 127.0.0.1:${o.port} backlog=4096${o.tlsMainPort ? ' ssl' : ''};`];
  if (o.checkPort) listen.push(`listen 127.0.0.1:${o.checkPort} ssl;`);
  if (o.tls) listen.push(`ssl_certificate ${o.tls.certFile};`, `ssl_certificate_key ${o.tls.keyFile};`);
  return `daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile ${NOFILE};
pid ${o.dir}/nginx.pid;
error_log ${o.dir}/error.log warn;
events { worker_connections ${NOFILE}; }
http {
  access_log off;
  client_body_temp_path ${o.dir}/body;
  proxy_temp_path ${o.dir}/proxy;
  fastcgi_temp_path ${o.dir}/fastcgi;
  uwsgi_temp_path ${o.dir}/uwsgi;
  scgi_temp_path ${o.dir}/scgi;
  keepalive_requests 10000000;
  keepalive_timeout 300s;
  client_header_timeout 300s;
  sendfile on;
  server {
${listen.map((l) => `      ${l}`).join('\n')}
      location = / { default_type text/plain; return 200 "${o.name}\\n"; }
      location = /healthz { default_type text/plain; return 200 "ok\\n"; }
      location = /readyz {
        default_type text/plain;
        if (-f ${o.readyzDownFlag}) { return 503 "shutting down\\n"; }
        return 200 "ok\\n";
      }
${o.filesDir ? `      location /files/ { alias ${o.filesDir}/; }\n` : ''}  }
}
`;
}

export interface ProxyConfigOptions {
  dir: string;
  listenPort: number;
  upstreamPorts: readonly number[];
  /** nginx worker processes: kubespray's 2, or 1 against a single kubeward process. */
  workers?: 1 | 2;
  /**
   * Parameters added to nginx's listen directive (bench --nginx-listen): `reuseport` gives each
   * worker a socket of its own, spread by the kernel's hash as kubeward's --workers are, instead of
   * kubespray's one shared socket, where EPOLLEXCLUSIVE wakes one worker for a burst.
   */
  listenParams?: readonly string[];
}

/** An nginx listen parameter the bench may add: a word, or word=value (reuseport, backlog=8192, so_keepalive=on). */
export function isNginxListenParam(p: string): boolean {
  return /^[a-z_]+(=[A-Za-z0-9:._-]+)?$/.test(p);
}

/**
 * kubespray's nginx-proxy (roles/kubernetes/node/templates/loadbalancer/nginx.conf.j2): 2 workers,
 * 16384 connections each, least_conn without a zone, passive checks only (max_fails=1,
 * fail_timeout=10s by default), connect timeout 1 s, idle timeout 10 min. The health-check http
 * server is left out; rlimit is the machine's 20,000 rather than kubespray's 130048.
 */
export function renderNginxStream(o: ProxyConfigOptions): string {
  const bad = o.listenParams?.find((p) => !isNginxListenParam(p));
  if (bad !== undefined) throw new Error(`nginx listen parameter "${bad}": expected a word or word=value`);
  return `load_module ${NGINX_STREAM_MODULE};
daemon off;
pid ${o.dir}/nginx.pid;
error_log ${o.dir}/error.log notice;
worker_processes ${o.workers ?? 2};
worker_rlimit_nofile ${NOFILE};
worker_shutdown_timeout 10s;
events {
  multi_accept on;
  use epoll;
  worker_connections 16384;
}
stream {
  upstream kube_apiserver {
    least_conn;
${o.upstreamPorts.map((p) => `    server 127.0.0.1:${p};`).join('\n')}
  }
  server {
    listen ${['127.0.0.1:' + o.listenPort, ...(o.listenParams ?? [])].join(' ')};
    proxy_pass kube_apiserver;
    proxy_timeout 10m;
    proxy_connect_timeout 1s;
  }
}
`;
}

export interface HaproxyOptions extends ProxyConfigOptions {
  /** Upstreams speak TLS: kubespray's check-ssl /healthz check works. Otherwise checks go to checkPort. */
  checkPort?: number;
}

/**
 * kubespray's haproxy.cfg.j2, tcp frontend and backend: leastconn, inter/downinter 15s rise 2 fall 2,
 * slowstart 60s, weight 100, httpchk GET /healthz over TLS without verification, timeout connect 30s,
 * retries 5, option redispatch, timeout check 30s. Changed: no syslog (nothing listens; per-connection
 * log lines would be pure cost) and maxconn 9000/5000 instead of 4000/1000, so 5,000 idle
 * connections are held rather than queued (maxqueue 256 kept); 9000 is what 20,000 files allow.
 */
export function renderHaproxy(o: HaproxyOptions): string {
  const checkPort = o.checkPort ? ` port ${o.checkPort}` : '';
  return `global
    maxconn 9000
    pidfile ${o.dir}/haproxy.pid

defaults
    mode tcp
    option dontlognull
    option redispatch
    retries 5
    timeout queue 5m
    timeout connect 30s
    timeout client 5m
    timeout server 15m
    timeout check 30s
    maxconn 9000

frontend kube_api_frontend
    bind 127.0.0.1:${o.listenPort}
    mode tcp
    default_backend kube_api_backend

backend kube_api_backend
    mode tcp
    balance leastconn
    default-server inter 15s downinter 15s rise 2 fall 2 slowstart 60s maxconn 5000 maxqueue 256 weight 100
    option httpchk GET /healthz
    http-check expect status 200
${o.upstreamPorts.map((p, i) => `    server b${i + 1} 127.0.0.1:${p} check check-ssl verify none${checkPort}`).join('\n')}
`;
}

export interface KubewardOptions {
  listenPort: number;
  upstreamPorts: readonly number[];
  adminPort: number;
  /** readyz (HTTPS /readyz, verified with caFile) for TLS backends, tcp for the plain HTTP one. */
  check: 'readyz' | 'tcp';
  caFile?: string;
  extraArgs?: readonly string[];
}

/** kubeward proxy's flags: its defaults (1 s interval and timeout, rise 2, fall 2, connect timeout 1 s). */
export function kubewardArgs(o: KubewardOptions): string[] {
  return [
    'proxy',
    '--listen',
    `127.0.0.1:${o.listenPort}`,
    ...o.upstreamPorts.flatMap((p) => ['--upstream', `127.0.0.1:${p}`]),
    '--admin-address',
    `127.0.0.1:${o.adminPort}`,
    '--health-check',
    o.check,
    ...(o.caFile ? ['--ca-file', o.caFile] : []),
    '--log-level',
    'warn',
    ...(o.extraArgs ?? []),
  ];
}

/**
 * The data path kubeward's extra flags ask for (`--relay X` or `--relay=X`, the last one wins), or
 * the default, native. The bench checks each started kubeward against it: a proxy that fell back
 * (no addon in dist/) would otherwise be measured as if it were the shipped one.
 */
export function askedRelay(args: readonly string[]): string {
  let asked = 'native';
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a.startsWith('--relay=')) asked = a.slice('--relay='.length);
    else if (a === '--relay' && i + 1 < args.length) asked = args[++i]!;
  }
  return asked;
}
