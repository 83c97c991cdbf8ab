// Starts one of the compared programs (kubeward proxy, nginx stream, HAProxy) or a backend nginx
// in a directory of its own, and waits until it serves.
import { connect } from 'node:net';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePort, waitFor } from '../testkit/wait-for.ts';
import { adminTokenFixture } from '../testkit/admin-token.ts';
import type { ProxyPeer } from './bench-stats.ts';
import { askedRelay, kubewardArgs, renderBackendNginx, renderHaproxy, renderNginxStream, type BackendOptions } from './peer-configs.ts';
import type { ProcessGroup, Running } from './process-group.ts';

export interface PeerEnv {
  group: ProcessGroup;
  /** Where config files and logs go (a fresh temporary directory per run). */
  dir: string;
  /** kubeward's entry (bin/kubeward.js: the build, as shipped) and the Node that runs it. */
  kubewardMain: string;
  nodeBin: string;
  kubewardExtraArgs: readonly string[];
  /** Parameters added to the nginx peers' listen directive (--nginx-listen). */
  nginxListenParams?: readonly string[];
  /** Node and V8 flags in front of kubewardMain (A/B of V8 settings; none as the bench runs it). */
  kubewardNodeArgs?: readonly string[];
}

export interface ProxySpec {
  upstreamPorts: readonly number[];
  /** TLS upstreams (failover): kubeward checks /readyz against caFile, HAProxy checks them with check-ssl. */
  tlsUpstreams: boolean;
  caFile?: string;
  /** Plain upstreams: a TLS port on the backend that answers HAProxy's check-ssl /healthz. */
  haproxyCheckPort?: number;
}

export interface StartedProxy {
  peer: ProxyPeer;
  port: number;
  process: Running;
  /** kubeward's admin listener (/status, /readyz). */
  adminPort?: number;
  /** The Authorization header /status asks for. */
  adminHeaders?: Record<string, string>;
}

export async function startProxy(env: PeerEnv, peer: ProxyPeer, spec: ProxySpec, tag: string): Promise<StartedProxy> {
  const port = await freePort();
  const dir = join(env.dir, `${peer}-${tag}`);
  await mkdir(dir, { recursive: true });
  let proc: Running;
  let adminPort: number | undefined;
  let adminHeaders: Record<string, string> | undefined;
  if (peer === 'kubeward' || peer === 'kubeward-2') {
    adminPort = await freePort();
    const token = adminTokenFixture();
    adminHeaders = token.headers;
    const extraArgs = [...(peer === 'kubeward-2' ? ['--workers=2'] : []), ...token.args, ...env.kubewardExtraArgs];
    const args = kubewardArgs({
      listenPort: port,
      upstreamPorts: spec.upstreamPorts,
      adminPort,
      check: spec.tlsUpstreams ? 'readyz' : 'tcp',
      caFile: spec.caFile,
      extraArgs,
    });
    proc = env.group.start(`kubeward-${tag}`, env.nodeBin, [...(env.kubewardNodeArgs ?? []), env.kubewardMain, ...args]);
    await waitServing(proc, async () => (await fetch(`http://127.0.0.1:${adminPort}/readyz`).catch(() => undefined))?.ok === true);
    await checkRelay(proc, adminPort, adminHeaders, askedRelay(env.kubewardExtraArgs));
  } else if (peer === 'nginx' || peer === 'nginx-2') {
    const conf = join(dir, 'nginx.conf');
    await writeFile(
      conf,
      renderNginxStream({
        dir,
        listenPort: port,
        upstreamPorts: spec.upstreamPorts,
        workers: peer === 'nginx' ? 1 : 2,
        listenParams: env.nginxListenParams,
      }),
    );
    proc = env.group.start(`nginx-${tag}`, 'nginx', ['-p', dir, '-e', join(dir, 'error.log'), '-c', conf]);
    await waitServing(proc, () => accepts(port));
  } else {
    const conf = join(dir, 'haproxy.cfg');
    await writeFile(conf, renderHaproxy({ dir, listenPort: port, upstreamPorts: spec.upstreamPorts, checkPort: spec.haproxyCheckPort }));
    proc = env.group.start(`haproxy-${tag}`, 'haproxy', ['-db', '-f', conf]);
    await waitServing(proc, () => accepts(port));
  }
  return { peer, port, process: proc, adminPort, adminHeaders };
}

export async function startBackend(env: PeerEnv, o: Omit<BackendOptions, 'dir'>): Promise<Running> {
  const dir = join(env.dir, `backend-${o.name}-${o.port}`);
  await mkdir(dir, { recursive: true });
  const conf = join(dir, 'nginx.conf');
  await writeFile(conf, renderBackendNginx({ ...o, dir }));
  const proc = env.group.start(`backend-${o.name}`, 'nginx', ['-p', dir, '-e', join(dir, 'error.log'), '-c', conf]);
  await waitServing(proc, () => accepts(o.port));
  return proc;
}

/**
 * Fails unless kubeward runs the data path it was asked for: a proxy that fell back (the addon
 * missing from dist/, this Node's internals not fitting) logs why at warn, and its figures would
 * not be the shipped path's.
 */
async function checkRelay(proc: Running, adminPort: number, headers: Record<string, string>, asked: string): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${adminPort}/status`, { headers });
  if (!res.ok) throw new Error(`${proc.name}: /status answered ${res.status}`);
  const { relay } = (await res.json()) as { relay?: string };
  if (relay !== asked)
    throw new Error(`${proc.name} relays on the ${relay} path, not the ${asked} one it was asked for; stderr: ${proc.stderrTail().trim().slice(-1000)}`);
}

/** Waits up to 15 s for ready(), failing early with the process's stderr if it exits. */
async function waitServing(proc: Running, ready: () => Promise<boolean>): Promise<void> {
  let exited = false;
  void proc.exited.then(() => (exited = true));
  await waitFor(
    async () => {
      if (exited) throw new Error(`${proc.name} exited: ${proc.stderrTail().trim()}`);
      return ready();
    },
    { timeoutMs: 15_000, intervalMs: 50, what: `${proc.name} to serve` },
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}; stderr: ${proc.stderrTail().trim().slice(-1000)}`);
  });
}

/** True when a TCP connection to 127.0.0.1:port is accepted. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.setTimeout(1000, () => s.destroy());
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
    s.once('close', () => resolve(false));
  });
}
