// One failover round: each proxy in front of three TLS backends of its own, all under the same
// new-connection load; at the same moment backend b1 of every proxy is killed, stopped (hangs) or
// starts answering /readyz with 503. The three proxies run side by side, so one window serves all.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePorts } from '../testkit/wait-for.ts';
import { FAILOVER_PEERS, type ProxyPeer } from './bench-stats.ts';
import { analyzeFailover, type FailoverSample, type Scenario } from './failover-analysis.ts';
import { runFailoverLoad } from './failover-client.ts';
import type { Running } from './process-group.ts';
import { startBackend, startProxy, type PeerEnv, type StartedProxy } from './start-peer.ts';

export interface FailoverSettings {
  windowMs: number;
  warmupMs: number;
  intervalMs: number;
  /** Client request timeout for kill and readyz-503. */
  timeoutMs: number;
  /**
   * Client request timeout while a backend hangs. Short on purpose: least-connections keeps new
   * connections off a backend while its hung ones are open, so a long timeout would hide whether
   * the proxy itself noticed. A timed-out request frees its slot and the next one shows it.
   */
  hangTimeoutMs: number;
}

export interface BackendCert {
  caFile: string;
  ca: string;
  certFile: string;
  keyFile: string;
}

interface Setup {
  peer: ProxyPeer;
  proxy: StartedProxy;
  backends: Running[];
  ports: number[];
  flag: string;
}

export async function runFailoverRound(env: PeerEnv, scenario: Scenario, round: number, s: FailoverSettings, cert: BackendCert): Promise<FailoverSample[]> {
  const started: Running[] = [];
  const setups: Setup[] = [];
  try {
    for (const peer of FAILOVER_PEERS) {
      const flag = join(env.dir, `readyz-down-${peer}-${scenario}-${round}`);
      const ports = await freePorts(3);
      const backends: Running[] = [];
      for (const [i, port] of ports.entries()) {
        const b = await startBackend(env, { port, name: `b${i + 1}`, tls: cert, tlsMainPort: true, readyzDownFlag: i === 0 ? flag : `${flag}-never` });
        backends.push(b);
        started.push(b);
      }
      const proxy = await startProxy(env, peer, { upstreamPorts: ports, tlsUpstreams: true, caFile: cert.caFile }, `fo-${scenario}-${round}`);
      started.push(proxy.process);
      setups.push({ peer, proxy, backends, ports, flag });
    }
    const startAt = performance.now() + 100;
    const eventAt = startAt + s.warmupMs;
    const eventWallMs = Date.now() + (eventAt - performance.now());
    const endAt = eventAt + s.windowMs;
    const event = new Promise<void>((resolve, reject) => {
      setTimeout(() => Promise.all(setups.map((x) => strike(scenario, x))).then(() => resolve(), reject), eventAt - performance.now());
    });
    const timeoutMs = scenario === 'hang' ? s.hangTimeoutMs : s.timeoutMs;
    const logs = await Promise.all(
      setups.map((x) => runFailoverLoad({ port: x.proxy.port, ca: cert.ca, intervalMs: s.intervalMs, timeoutMs, eventAt, startAt, endAt })),
    );
    await event;
    const markedDown = await Promise.all(
      setups.map((x) =>
        x.proxy.adminPort ? kubewardMarkedDownMs(x.proxy.adminPort, x.proxy.adminHeaders ?? {}, x.ports[0] as number, eventWallMs) : undefined,
      ),
    );
    return setups.map((x, i) => ({
      scenario,
      peer: x.peer,
      round,
      windowMs: s.windowMs,
      // "Still at the end" must allow for the gap between two timed-out requests.
      ...analyzeFailover(logs[i] ?? [], { affected: 'b1', windowMs: s.windowMs, tailMs: Math.max(1000, 2.5 * timeoutMs) }),
      ...(markedDown[i] === undefined ? {} : { markedDownMs: markedDown[i] }),
    }));
  } finally {
    await Promise.all(started.map((p) => env.group.stop(p, 1000)));
  }
}

interface StatusView {
  frontends?: { upstreams?: { upstream: string; transitions?: { at?: string; to?: string }[] }[] }[];
}

/** The first transition of b1 to "down" at or after the event, from kubeward's /status. */
async function kubewardMarkedDownMs(adminPort: number, headers: Record<string, string>, port: number, eventWallMs: number): Promise<number | undefined> {
  const status = (await (await fetch(`http://127.0.0.1:${adminPort}/status`, { headers })).json()) as StatusView;
  const ups = status.frontends?.flatMap((f) => f.upstreams ?? []) ?? [];
  const mine = ups.find((u) => u.upstream === `127.0.0.1:${port}`);
  const downs = (mine?.transitions ?? [])
    .filter((t) => t.to === 'down' && t.at !== undefined)
    .map((t) => Date.parse(t.at as string) - eventWallMs)
    .filter((d) => d >= -50);
  return downs.length > 0 ? Math.min(...downs) : undefined;
}

/** What happens to b1: SIGKILL, SIGSTOP (the kernel still completes handshakes into its backlog), or /readyz 503. */
async function strike(scenario: Scenario, x: Setup): Promise<void> {
  const b1 = x.backends[0] as Running;
  if (scenario === 'kill') process.kill(b1.pid, 'SIGKILL');
  else if (scenario === 'hang') process.kill(b1.pid, 'SIGSTOP');
  else await writeFile(x.flag, '');
}
