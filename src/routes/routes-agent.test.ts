import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../admin/metrics.ts';
import { createSilentLogger } from '../base/logger.ts';
import { ManualClock } from '../base/clock.ts';
import { waitFor } from '../../testkit/wait-for.ts';
import { RoutesAgent, type RoutesAgentOptions } from './routes-agent.ts';
import { createRoutesMetrics } from './routes-metrics.ts';
import type { DesiredRuleset } from './desired-ruleset.ts';
import type { RulesBackend } from './rules-backend.ts';
import type { LocalRoute } from './conflicting-routes.ts';
import type { StateFile } from './vip-states.ts';

/** A kernel stand-in: the last applied ruleset is "in force" until something wipes it. */
class FakeBackend implements RulesBackend {
  readonly name = 'nftables' as const;
  kernel: DesiredRuleset | undefined;
  applies = 0;
  attempts = 0;
  failNext = 0;
  delayMs = 0;
  cleaned = false;
  readonly clock: ManualClock;
  /** Slow applies take delayMs of the agent's (manual) clock. */
  constructor(clock: ManualClock) {
    this.clock = clock;
  }
  async apply(ruleset: DesiredRuleset): Promise<void> {
    if (this.delayMs) await this.clock.sleep(this.delayMs);
    this.attempts++;
    if (this.failNext > 0) {
      this.failNext--;
      throw new Error('nft: simulated failure');
    }
    this.applies++;
    this.kernel = structuredClone(ruleset);
  }
  async readBack(): Promise<string> {
    return this.kernel ? JSON.stringify(this.kernel) : '';
  }
  async cleanup(): Promise<void> {
    this.cleaned = true;
    this.kernel = undefined;
  }
  outputVips(): string[] {
    return (this.kernel?.nat ?? []).filter((r) => r.hook === 'output').flatMap((r) => r.vips);
  }
}

class FakeReader {
  readonly dir = '/fake';
  watching = true;
  files = new Map<string, string>();
  async read(): Promise<StateFile[]> {
    return [...this.files].map(([name, content]) => ({ name, content }));
  }
  async ensureWatching(): Promise<void> {}
  close(): void {}
}

const baseOptions: RoutesAgentOptions = {
  provider: 'azure',
  staleAfterMs: 30_000,
  resyncMs: 100,
  ports: [6443],
  natTarget: 'redirect',
  nodeIps: {},
  healthCheckerCidrs: [],
  vips: [],
  removeConflictingRoutes: false,
  cleanupOnExit: true,
};

/** Lets every promise chain the agent has started run to its next wait (the fakes wait on nothing else). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

/** Moves the manual clock by stepMs per poll until check() holds: time passes only as fast as the agent keeps up. */
function advanceUntil<T>(clock: ManualClock, stepMs: number, check: () => T, what: string): Promise<NonNullable<T>> {
  return waitFor(() => check() || (clock.advance(stepMs), undefined), { what });
}

function makeAgent(t: { after: (fn: () => Promise<void>) => void }, options: Partial<RoutesAgentOptions> = {}, extra: object = {}) {
  const clock = new ManualClock(Date.parse('2026-01-01T00:00:00Z'));
  const reader = new FakeReader();
  const backend = new FakeBackend(clock);
  const registry = new Registry();
  const agent = new RoutesAgent(
    { ...baseOptions, ...options },
    { reader, backend, clock, log: createSilentLogger(), metrics: createRoutesMetrics(registry), ...extra },
  );
  t.after(() => agent.close());
  return { agent, reader, backend, registry, clock };
}

test('rapid flips while applies are slow end in the rules of the final files, with merged applies', async (t) => {
  const { agent, reader, backend, clock } = makeAgent(t, { resyncMs: 60_000 });
  await agent.start();
  backend.delayMs = 15;
  for (let i = 0; i < 40; i++) {
    reader.files.clear();
    reader.files.set(i % 2 ? '10.0.0.100.down' : '10.0.0.100.up', '');
    agent.requestSync('event');
    clock.advance(2); // each apply spans several flips
    await settle();
  }
  reader.files.clear();
  reader.files.set('10.0.0.100.up', '');
  agent.requestSync('event');
  await advanceUntil(clock, 15, () => backend.outputVips().includes('10.0.0.100'), 'final up applied');
  assert.ok(backend.applies < 40, `requests merged: ${backend.applies} applies for 41 requests`);
});

test('rules wiped by something else are restored at the next resync and counted as drift', async (t) => {
  const { agent, reader, backend, registry, clock } = makeAgent(t);
  reader.files.set('10.0.0.100.up', '');
  await agent.start();
  assert.deepEqual(backend.outputVips(), ['10.0.0.100']);
  backend.kernel = undefined;
  await settle();
  assert.equal(backend.kernel, undefined, 'nothing restores the rules before the resync');
  clock.advance(baseOptions.resyncMs);
  await waitFor(() => backend.kernel !== undefined, { what: 'restored rules' });
  assert.deepEqual(backend.outputVips(), ['10.0.0.100']);
  assert.match(await registry.metrics(), /^kubeward_routes_drift_repairs_total 1$/m);
});

test('a failed apply makes the agent unready and is retried until it succeeds', async (t) => {
  const { agent, reader, backend, clock } = makeAgent(t, { resyncMs: 60_000 });
  reader.files.set('10.0.0.100.up', '');
  backend.failNext = 1;
  await agent.start();
  assert.equal(agent.ready, false);
  clock.advance(1000); // the first retry delay
  await waitFor(() => agent.ready, { timeoutMs: 3000, what: 'retry after failure' });
  assert.deepEqual(backend.outputVips(), ['10.0.0.100']);
});

test('a heartbeat that goes stale withdraws the redirect without any file event', async (t) => {
  const { agent, reader, backend, clock } = makeAgent(t, { resyncMs: 60_000, staleAfterMs: 300 });
  const heartbeat = new Date(clock.now()).toISOString();
  reader.files.set('10.0.0.100.up', JSON.stringify({ state: 'up', since: heartbeat, reason: 'x', pid: 1, generation: 1, heartbeat }));
  await agent.start();
  assert.deepEqual(backend.outputVips(), ['10.0.0.100']);
  clock.advance(300);
  await settle();
  assert.deepEqual(backend.outputVips(), ['10.0.0.100'], 'still fresh at exactly staleAfterMs');
  clock.advance(1); // older than staleAfterMs: the stale check armed at start fires
  await waitFor(() => backend.outputVips().length === 0, { timeoutMs: 2000, what: 'stale withdrawal' });
});

test('gcp keeps the last good forwarded IPs when metadata fails, and reports conflicting local routes', async (t) => {
  let answer: string[] | Error = ['10.0.0.100'];
  let failedReads = 0;
  const vipSource = {
    vips: [] as string[],
    status: { url: 'fake', reads: 0, failures: 0 },
    async refresh() {
      if (answer instanceof Error) return (failedReads++, { changed: false, error: answer.message });
      const changed = JSON.stringify(answer) !== JSON.stringify(this.vips);
      this.vips = answer;
      return { changed };
    },
  };
  const removed: LocalRoute[] = [];
  const route: LocalRoute = { family: 4, dst: '10.0.0.100', dev: 'eth0' };
  const localRoutes = { list: async () => (removed.length ? [] : [route]), remove: async (r: LocalRoute) => void removed.push(r) };
  const { agent, backend, clock } = makeAgent(
    t,
    { provider: 'gcp', healthCheckerCidrs: ['35.191.0.0/16'], removeConflictingRoutes: true },
    { vipSource, localRoutes },
  );
  await agent.start();
  await waitFor(() => backend.kernel?.nat.some((r) => r.hook === 'prerouting' && r.vips.includes('10.0.0.100')), { what: 'prerouting for forwarded IP' });
  answer = new Error('HTTP 500');
  // Two failed metadata reads, each followed by a full resync.
  await advanceUntil(clock, baseOptions.resyncMs, () => failedReads >= 2, 'two failed metadata reads');
  clock.advance(baseOptions.resyncMs);
  await settle();
  assert.ok(
    backend.kernel?.nat.some((r) => r.vips.includes('10.0.0.100')),
    'a failed read keeps the VIP',
  );
  await advanceUntil(clock, baseOptions.resyncMs, () => removed.length === 1, 'conflicting route removed');
  assert.deepEqual(backend.kernel?.forwardDrop, [{ family: 4, sources: ['35.191.0.0/16'] }]);
});

test('close removes our rules, unless told to keep them', async (t) => {
  const a = makeAgent(t);
  await a.agent.start();
  await a.agent.close();
  assert.equal(a.backend.cleaned, true);
  const b = makeAgent(t, { cleanupOnExit: false });
  await b.agent.start();
  await b.agent.close();
  assert.equal(b.backend.cleaned, false);
  // After a listener hand-over the successor keeps the rules, whatever cleanupOnExit says.
  const c = makeAgent(t);
  c.reader.files.set('10.0.0.100.up', '');
  await c.agent.start();
  await c.agent.close({ keepRules: true });
  assert.equal(c.backend.cleaned, false, 'kept for the successor');
  assert.deepEqual(c.backend.outputVips(), ['10.0.0.100'], 'with the redirect as the files say');
});

test('a second close() joins the first: it resolves only once the rules are removed', async (t) => {
  const { agent, backend } = makeAgent(t);
  await agent.start();
  const gate = Promise.withResolvers<void>();
  const cleanup = backend.cleanup.bind(backend);
  backend.cleanup = async () => {
    await gate.promise;
    await cleanup();
  };
  const first = agent.close();
  let secondDone = false;
  const second = agent.close().then(() => (secondDone = true));
  await settle();
  assert.equal(secondDone, false, 'the second caller waits for the rules to go');
  gate.resolve();
  await Promise.all([first, second]);
  assert.equal(backend.cleaned, true);
});

test('kept rules match the state files at exit: a .down written just before close is applied, not lost', async (t) => {
  const { agent, reader, backend } = makeAgent(t, { cleanupOnExit: false, resyncMs: 60_000 });
  reader.files.set('10.0.0.100.up', '');
  await agent.start();
  assert.deepEqual(backend.outputVips(), ['10.0.0.100']);
  // kubeward agent: the watcher publishes its exit verdict, then routes closes at once, before any
  // inotify event or resync could have run.
  reader.files.delete('10.0.0.100.up');
  reader.files.set('10.0.0.100.down', '');
  await agent.close();
  assert.equal(backend.cleaned, false, 'the rules stay');
  assert.deepEqual(backend.outputVips(), [], 'but without the redirect of the VIP that went down');
});

test('one state file with a bad name is skipped and reported; the other VIPs keep being reconciled', async (t) => {
  const { agent, reader, backend, registry } = makeAgent(t, { resyncMs: 60_000 });
  reader.files.set('fe80::1%eth0.up', '');
  reader.files.set('169.254.169.254.up', '');
  reader.files.set('10.0.0.100.up', '');
  await agent.start();
  assert.equal(agent.ready, true);
  assert.deepEqual(backend.outputVips(), ['10.0.0.100']);
  // The failure this replaces: a VIP going down while a bad name sits in the directory kept its redirect.
  reader.files.delete('10.0.0.100.up');
  reader.files.set('10.0.0.100.down', '');
  agent.requestSync('event');
  await waitFor(() => backend.outputVips().length === 0, { what: 'withdrawn despite the bad name' });
  const status = agent.status() as { badStateFiles: string[] };
  assert.deepEqual(status.badStateFiles.sort(), ['169.254.169.254.up', 'fe80::1%eth0.up']);
  assert.match(await registry.metrics(), /^kubeward_routes_bad_state_files 2$/m);
});

test('failed syncs are retried by one timer with a doubling delay, however many requests fail meanwhile', async (t) => {
  const { agent, reader, backend, registry, clock } = makeAgent(t, { resyncMs: 60_000 });
  reader.files.set('10.0.0.100.up', '');
  backend.failNext = 1_000;
  await agent.start();
  assert.deepEqual(agent.retry, { failures: 1, nextDelayMs: 2000, armed: true });
  // File events during the failure each try once; none adds a timer or shortens the delay.
  for (let i = 0; i < 20; i++) {
    agent.requestSync('event');
    await waitFor(() => agent.retry.failures === 2 + i, { what: `failure ${2 + i}` });
  }
  assert.deepEqual(agent.retry, { failures: 21, nextDelayMs: 2000, armed: true });
  const attempts = backend.attempts;
  clock.advance(999);
  await settle();
  assert.equal(backend.attempts, attempts, 'the first retry waits its full delay');
  clock.advance(1); // the timer armed at start (1000 ms) fires, once
  await waitFor(() => backend.attempts === attempts + 1, { timeoutMs: 3000, what: 'the timer retries once' });
  await waitFor(() => agent.retry.armed, { what: 're-armed' });
  assert.equal(agent.retry.nextDelayMs, 4000, 'the next delay doubles');
  clock.advance(1999); // just short of the re-armed 2000 ms delay
  await settle();
  assert.equal(backend.attempts, attempts + 1, 'no second timer fired meanwhile');
  assert.match(await registry.metrics(), /^kubeward_routes_sync_failures_total 22$/m);
  backend.failNext = 0;
  agent.requestSync('event');
  await waitFor(() => agent.ready, { what: 'recovered' });
  assert.deepEqual(agent.retry, { failures: 0, nextDelayMs: 1000, armed: false });
});

test('auxiliary checks that fail never keep the rules from being applied', async (t) => {
  const localRoutes = { list: async (): Promise<LocalRoute[]> => Promise.reject(new Error('ip: command not found')), remove: async () => {} };
  const foreignTables = async (): Promise<string[]> => Promise.reject(new Error('nft: EPERM'));
  const { agent, backend, registry } = makeAgent(t, { provider: 'gcp', vips: ['10.0.0.100'], resyncMs: 60_000 }, { localRoutes, foreignTables });
  await agent.start();
  assert.equal(agent.ready, true);
  assert.deepEqual(backend.outputVips(), ['10.0.0.100'], 'no file: up with the GCP reading');
  assert.deepEqual(backend.kernel?.nat.find((r) => r.hook === 'prerouting')?.vips, ['10.0.0.100']);
  assert.deepEqual(Object.keys((agent.status() as { auxiliaryErrors: object }).auxiliaryErrors).sort(), ['conflicting local routes', 'foreign route tables']);
  assert.match(await registry.metrics(), /kubeward_routes_auxiliary_check_failures_total\{check="conflicting local routes"\} 1/);
});

test('gcp with upstream semantics: a VIP without a state file is up, only .down withdraws it', async (t) => {
  const { agent, reader, backend } = makeAgent(t, { provider: 'gcp', vips: ['10.0.0.100'], resyncMs: 60_000, withoutStateFile: 'up' });
  await agent.start();
  assert.deepEqual(backend.outputVips(), ['10.0.0.100']);
  reader.files.set('10.0.0.100.down', '');
  agent.requestSync('event');
  await waitFor(() => backend.outputVips().length === 0, { what: 'withdrawn by .down' });
});

test('OpenShift tables next to ours are reported in /status', async (t) => {
  const { agent } = makeAgent(t, { resyncMs: 60_000 }, { foreignTables: async () => ['inet azure-vips'] });
  await agent.start();
  assert.deepEqual((agent.status() as { foreignTables: string[] }).foreignTables, ['inet azure-vips']);
});

test('metadata reads never overlap, however short the resync', async (t) => {
  let inFlight = 0;
  let maxInFlight = 0;
  let reads = 0;
  const slow: { clock?: ManualClock } = {};
  const vipSource = {
    vips: ['10.0.0.100'],
    status: { url: 'fake', reads: 0, failures: 0 },
    async refresh() {
      inFlight++;
      reads++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await slow.clock!.sleep(150); // a read that spans several resync ticks
      inFlight--;
      return { changed: false };
    },
  };
  const { agent, clock } = makeAgent(t, { provider: 'gcp', resyncMs: 20 }, { vipSource });
  slow.clock = clock;
  const started = agent.start();
  await advanceUntil(clock, 20, () => reads >= 4, 'several reads');
  await started;
  assert.equal(maxInFlight, 1);
});

test('the OVN reroute follows the up VIPs, and its failure never keeps the rules out', async (t) => {
  const calls: string[][] = [];
  let fail = false;
  const ovn = {
    status: {},
    async sync(up: readonly string[]) {
      if (fail) throw new Error('crictl: connection refused');
      calls.push([...up]);
    },
    async removeAll() {
      return 0;
    },
  };
  const { agent, reader, backend } = makeAgent(t, { resyncMs: 60_000 }, { ovn });
  reader.files.set('10.0.0.100.up', '');
  await agent.start();
  assert.deepEqual(calls.at(-1), ['10.0.0.100']);
  reader.files.delete('10.0.0.100.up');
  reader.files.set('10.0.0.100.down', '');
  agent.requestSync('event');
  await waitFor(() => calls.at(-1)?.length === 0, { what: 'withdrawn from OVN on down' });
  fail = true;
  reader.files.delete('10.0.0.100.down');
  reader.files.set('10.0.0.100.up', '');
  agent.requestSync('event');
  await waitFor(() => backend.outputVips().includes('10.0.0.100'), { what: 'rules applied although OVN failed' });
  assert.equal(agent.ready, true);
});

test('down-peer: a down VIP goes to a healthy peer for the window, then to the LB path; a failing peer and exit withdraw it', async (t) => {
  const peers = { list: ['10.0.2.12'], healthy: () => peers.list, status: {} };
  const { agent, reader, backend, clock, registry } = makeAgent(
    t,
    { provider: 'gcp', vips: ['10.0.0.100'], downPeerWindowMs: 30_000, cleanupOnExit: false, resyncMs: 60_000 },
    { peers },
  );
  reader.files.set('10.0.0.100.up', '');
  await agent.start();
  const peerRules = () => (backend.kernel?.nat ?? []).filter((r) => r.peer).map((r) => `${r.vips.join()}->${r.to}`);
  assert.deepEqual(peerRules(), [], 'up: no peer rule');
  reader.files.clear();
  reader.files.set('10.0.0.100.down', '');
  agent.requestSync('event');
  await waitFor(() => peerRules().length === 1, { what: 'peer rule' });
  assert.deepEqual(peerRules(), ['10.0.0.100->10.0.2.12']);
  assert.match(await registry.metrics(), /^kubeward_routes_down_peer_redirects 1$/m);
  peers.list = [];
  agent.requestSync('event');
  await waitFor(() => peerRules().length === 0, { what: 'failing peer withdraws the rule' });
  peers.list = ['10.0.2.12'];
  agent.requestSync('event');
  await waitFor(() => peerRules().length === 1, { what: 'peer back' });
  await advanceUntil(clock, 1000, () => peerRules().length === 0, 'window over without any event');
  assert.ok(clock.now() >= Date.parse('2026-01-01T00:00:30Z'), 'not before the window ends');
  reader.files.clear();
  reader.files.set('10.0.0.100.up', '');
  agent.requestSync('event');
  await waitFor(() => backend.outputVips().includes('10.0.0.100'), { what: 'up again' });
  reader.files.clear();
  reader.files.set('10.0.0.100.down', '');
  agent.requestSync('event');
  await waitFor(() => peerRules().length === 1, { what: 'a new down opens a new window' });
  await agent.close();
  assert.deepEqual(peerRules(), [], 'exit: rules stay, but no peer rule nobody checks any more');
  assert.ok(backend.kernel && backend.kernel.nat.some((r) => r.hook === 'prerouting'), 'the rest of the rules stay');
});
