// The metrics module against the text exposition format 0.0.4: label values and help texts read back
// through a parser written from the format's description (not from the writer), histogram buckets
// cumulative and consistent with the observations, counters that never go down, NaN and infinities
// as Prometheus reads them, and promtool's own parser and linter on the output of every kubeward
// metric (when promtool is installed: .ci/run installs it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fc from 'fast-check';
import { Counter, Gauge, Histogram, Registry, escapeHelp, escapeLabelValue, formatValue } from './metrics.ts';
import { createMetricsRegistry } from './metrics-registry.ts';
import { WatchMetrics } from '../watch/watch-metrics.ts';
import { ProxyMetrics } from '../proxy/proxy-metrics.ts';
import { createRoutesMetrics } from '../routes/routes-metrics.ts';
import { createControllerMetrics } from '../controllers/runtime/controller-metrics.ts';
import { createRouteGcMetrics } from '../controllers/routegc/routegc-metrics.ts';
import { createFlightMetrics } from '../controllers/flight/flight-metrics.ts';
import { createDeorbitMetrics } from '../controllers/deorbit/deorbit-metrics.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Parsed {
  help: Map<string, string>;
  type: Map<string, string>;
  samples: Sample[];
}

/** The text format 0.0.4, read strictly: a line that does not fit throws. */
function parse(text: string): Parsed {
  assert.ok(text.endsWith('\n'), 'the exposition ends with a line feed');
  const out: Parsed = { help: new Map(), type: new Map(), samples: [] };
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/s.exec(line);
    if (meta) {
      if (meta[1] === 'HELP') out.help.set(meta[2]!, unescape(meta[3]!, false));
      else out.type.set(meta[2]!, meta[3]!);
      continue;
    }
    const name = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    assert.ok(name, `a sample line starts with a metric name: ${JSON.stringify(line)}`);
    let i = name[0].length;
    const labels: Record<string, string> = {};
    if (line[i] === '{') {
      i++;
      while (line[i] !== '}') {
        const l = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(i));
        assert.ok(l, `a label at ${i}: ${JSON.stringify(line)}`);
        i += l[0].length;
        let raw = '';
        while (line[i] !== '"') {
          assert.ok(i < line.length, `an unterminated label value: ${JSON.stringify(line)}`);
          if (line[i] === '\\') {
            raw += line.slice(i, i + 2);
            i += 2;
          } else raw += line[i++];
        }
        i++;
        assert.ok(!(l[1]! in labels), `label ${l[1]} twice: ${JSON.stringify(line)}`);
        labels[l[1]!] = unescape(raw, true);
        if (line[i] === ',') i++;
        else assert.equal(line[i], '}', `a comma or a brace after a label value: ${JSON.stringify(line)}`);
      }
      i++;
    }
    const value = /^ (NaN|[+-]Inf|[-+]?[0-9.]+(e[-+]?[0-9]+)?)$/.exec(line.slice(i));
    assert.ok(value, `a value after the labels: ${JSON.stringify(line)}`);
    const v = value[1]!;
    out.samples.push({ name: name[0], labels, value: v === 'NaN' ? NaN : v === '+Inf' ? Infinity : v === '-Inf' ? -Infinity : Number(v) });
  }
  return out;
}

function unescape(raw: string, quoted: boolean): string {
  return raw.replace(/\\(.)/g, (all, c: string) => {
    if (c === '\\') return '\\';
    if (c === 'n') return '\n';
    if (c === '"' && quoted) return '"';
    assert.fail(`an escape the format does not have: ${JSON.stringify(all)}`);
  });
}

/** Text with the characters the format escapes or uses as delimiters, and any other code point. */
const hostile = fc.string({
  unit: fc.oneof(fc.constantFrom('\\', '"', '\n', '{', '}', ',', '=', ' ', '#', '\r', '\t'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })),
  maxLength: 24,
});
const bounds = fc.uniqueArray(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 12, comparator: 'SameValueZero' });

test('label values and help texts read back as written, whatever characters they hold', async () => {
  await fc.assert(
    fc.asyncProperty(hostile, hostile, hostile, async (help, a, b) => {
      const registry = new Registry();
      registry.setDefaultLabels({ mode: b });
      const g = new Gauge({ name: 'x_values', help: help === '' ? ' ' : help, labelNames: ['a', 'b'], registers: [registry] });
      g.set({ a, b: 'fixed' }, 1);
      g.set({ b: a }, 2);
      const parsed = parse(await registry.metrics());
      assert.equal(parsed.help.get('x_values'), help === '' ? ' ' : help);
      assert.equal(parsed.type.get('x_values'), 'gauge');
      assert.deepEqual(parsed.samples, [
        { name: 'x_values', labels: { a, b: 'fixed', mode: b }, value: 1 },
        { name: 'x_values', labels: { b: a, mode: b }, value: 2 },
      ]);
    }),
  );
});

test('escaping: backslash, double quote and line feed in label values; backslash and line feed in help', () => {
  assert.equal(escapeLabelValue('a\\b"c\nd'), 'a\\\\b\\"c\\nd');
  assert.equal(escapeHelp('a\\b"c\nd'), 'a\\\\b"c\\nd');
});

test('histogram: cumulative buckets, +Inf equal to the count, each bucket counting the observations at or below its bound, and the sum', async () => {
  await fc.assert(
    fc.asyncProperty(bounds, fc.array(fc.double({ min: -2e6, max: 2e6, noNaN: true }), { minLength: 1, maxLength: 60 }), async (buckets, observations) => {
      const registry = new Registry();
      const h = new Histogram({ name: 'x_seconds', help: 'h', labelNames: ['k'], buckets, registers: [registry] });
      for (const o of observations) h.observe({ k: 'v' }, o);
      const { samples, type } = parse(await registry.metrics());
      assert.equal(type.get('x_seconds'), 'histogram');
      const bucketLines = samples.filter((s) => s.name === 'x_seconds_bucket');
      const sorted = [...buckets].sort((x, y) => x - y);
      assert.deepEqual(
        bucketLines.map((s) => s.labels.le),
        [...sorted.map(formatValue), '+Inf'],
      );
      for (let i = 1; i < bucketLines.length; i++) assert.ok(bucketLines[i]!.value >= bucketLines[i - 1]!.value, 'buckets never decrease');
      sorted.forEach((b, i) => assert.equal(bucketLines[i]!.value, observations.filter((o) => o <= b).length, `le=${b}`));
      const count = samples.find((s) => s.name === 'x_seconds_count')!.value;
      assert.equal(count, observations.length);
      assert.equal(bucketLines.at(-1)!.value, count);
      const sum = samples.find((s) => s.name === 'x_seconds_sum')!.value;
      assert.equal(
        sum,
        observations.reduce((n, o) => n + o, 0),
      );
      for (const s of samples) assert.equal(s.labels.k, 'v');
    }),
  );
});

test('an unlabelled histogram shows its zero buckets before any observation; startTimer observes the seconds since', async () => {
  const registry = new Registry();
  const h = new Histogram({ name: 'x_seconds', help: 'h', buckets: [1, 0.1], registers: [registry] });
  assert.equal(
    await registry.metrics(),
    '# HELP x_seconds h\n# TYPE x_seconds histogram\nx_seconds_bucket{le="0.1"} 0\nx_seconds_bucket{le="1"} 0\nx_seconds_bucket{le="+Inf"} 0\nx_seconds_sum 0\nx_seconds_count 0\n',
  );
  const seconds = h.startTimer()();
  assert.ok(seconds >= 0 && seconds < 60, String(seconds));
  assert.match(await registry.metrics(), /^x_seconds_count 1$/m);
  assert.throws(() => new Histogram({ name: 'y', help: 'h', labelNames: ['le'] }), /reserved/);
});

test('a counter never goes down: negative, NaN and infinite increments throw and change nothing', async () => {
  const op = fc.oneof(fc.double({ min: 0, max: 1e9, noNaN: true }), fc.double(), fc.constantFrom(NaN, Infinity, -Infinity, -1, 0));
  await fc.assert(
    fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom('a', 'b'), op), { maxLength: 40 }), async (ops) => {
      const registry = new Registry();
      const c = new Counter({ name: 'x_total', help: 'c', labelNames: ['k'], registers: [registry] });
      const last: Record<string, number> = {};
      for (const [k, v] of ops) {
        if (Number.isFinite(v) && v >= 0) c.inc({ k }, v);
        else assert.throws(() => c.inc({ k }, v));
        for (const s of parse(await registry.metrics()).samples) {
          assert.ok(s.value >= (last[s.labels.k!] ?? 0), `${s.labels.k}: ${s.value} after ${last[s.labels.k!]}`);
          last[s.labels.k!] = s.value;
        }
      }
    }),
  );
});

test('NaN and infinities are written as Prometheus reads them', async () => {
  assert.equal(formatValue(NaN), 'NaN');
  assert.equal(formatValue(Infinity), '+Inf');
  assert.equal(formatValue(-Infinity), '-Inf');
  assert.equal(formatValue(1e-7), '1e-7');
  assert.equal(formatValue(-0.5), '-0.5');
  const registry = new Registry();
  const g = new Gauge({ name: 'x', help: 'g', labelNames: ['k'], registers: [registry] });
  g.set({ k: 'nan' }, NaN);
  g.set({ k: 'inf' }, Infinity);
  g.set({ k: 'neg' }, -Infinity);
  const values = parse(await registry.metrics()).samples.map((s) => [s.labels.k, s.value]);
  assert.deepEqual(values, [
    ['nan', NaN],
    ['inf', Infinity],
    ['neg', -Infinity],
  ]);
});

test("as prom-client did: metrics in registration order, blank lines between them, labels in label-name order then the registry's default labels", async () => {
  const registry = new Registry();
  registry.setDefaultLabels({ mode: 'watch' });
  const c = new Counter({ name: 'a_total', help: 'c', registers: [registry] });
  const g = new Gauge({ name: 'b', help: 'g', labelNames: ['vip', 'state'], registers: [registry] });
  new Gauge({ name: 'c', help: 'labelled, never set', labelNames: ['x'], registers: [registry] });
  c.inc();
  c.inc(2);
  g.set({ state: 'up', vip: '10.0.0.1' }, 1);
  g.set({ vip: '10.0.0.1', state: 'up' }, 0);
  new Gauge({ name: 'd', help: 'its own mode', labelNames: ['mode'], registers: [registry] }).set({ mode: 'own' }, 1);
  assert.equal(
    await registry.metrics(),
    [
      '# HELP a_total c\n# TYPE a_total counter\na_total{mode="watch"} 3',
      '# HELP b g\n# TYPE b gauge\nb{vip="10.0.0.1",state="up",mode="watch"} 0',
      '# HELP c labelled, never set\n# TYPE c gauge',
      '# HELP d its own mode\n# TYPE d gauge\nd{mode="own"} 1\n',
    ].join('\n\n'),
  );
});

test('unknown labels, bad names and a name registered twice throw; remove and reset drop series', async () => {
  const registry = new Registry();
  const g = new Gauge({ name: 'x', help: 'g', labelNames: ['k'], registers: [registry] });
  assert.throws(() => g.set({ other: 'v' } as never, 1), /not included in initial labelset/);
  assert.throws(() => new Gauge({ name: 'x', help: 'again', registers: [registry] }), /already been registered/);
  assert.throws(() => new Gauge({ name: '1x', help: 'g' }), /Invalid metric name/);
  assert.throws(() => new Gauge({ name: 'y', help: 'g', labelNames: ['__k'] }), /Invalid label name/);
  g.set({ k: 'a' }, 1);
  g.set({ k: 'b' }, 2);
  g.remove({ k: 'a' });
  assert.deepEqual((await registry.getMetricsAsJSON())[0]!.values, [{ value: 2, labels: { k: 'b' } }]);
  g.reset();
  assert.deepEqual((await registry.getMetricsAsJSON())[0]!.values, []);
  const u = new Gauge({ name: 'u', help: 'g', registers: [registry] });
  u.inc(5);
  u.dec(2);
  assert.deepEqual((await registry.getMetricsAsJSON())[1]!.values, [{ value: 3, labels: {} }]);
  u.reset();
  assert.deepEqual((await registry.getMetricsAsJSON())[1]!.values, [{ value: 0, labels: {} }]);
});

test('collect runs at each scrape in registration order, before its metric is read (a collect may move later ones)', async () => {
  const registry = new Registry();
  let scrapes = 0;
  new Counter({
    name: 'first_total',
    help: 'c',
    registers: [registry],
    collect() {
      scrapes++;
      this.inc();
      second.inc(10);
    },
  });
  const second = new Counter({ name: 'second_total', help: 'c', registers: [registry] });
  const json = await registry.getMetricsAsJSON();
  assert.deepEqual(
    json.map((m) => [m.name, m.type, m.values[0]!.value]),
    [
      ['first_total', 'counter', 1],
      ['second_total', 'counter', 10],
    ],
  );
  await registry.metrics();
  assert.equal(scrapes, 2);
});

/** Every kubeward metric, on one registry, with a value in each and hostile label values where a label is free text. */
function everyKubewardMetric(text: string): Registry {
  const registry = createMetricsRegistry('agent');
  const watch = new WatchMetrics(registry);
  watch.observeProbe({ ok: true, reason: 'ok', latencyMs: 12 } as never, Date.now());
  watch.setState(['10.0.0.1', text], 'up');
  watch.transition('up');
  watch.writeError();
  const proxy = new ProxyMetrics(registry, () => [
    {
      name: text,
      localFault: false,
      connectionCap: 100,
      openConnections: 3,
      upstreams: [{ key: '127.0.0.1:6443', state: 'up', drained: false, active: 2, bytesToUpstream: 10, bytesToClient: 20 }],
    },
  ]);
  proxy.connections.inc({ frontend: text, upstream: '127.0.0.1:6443' });
  proxy.connectSeconds.observe({ frontend: text, upstream: '127.0.0.1:6443', result: 'ok' }, 0.002);
  proxy.checkSeconds.observe({ frontend: text, upstream: '127.0.0.1:6443' }, 0.004);
  const routes = createRoutesMetrics(registry);
  routes.applySeconds.observe(0.02);
  routes.auxiliaryFailures.inc({ check: text });
  const controllers = createControllerMetrics(registry);
  controllers.reconciles.inc({ controller: 'deorbit', result: 'success' });
  controllers.duration.observe({ controller: 'deorbit' }, 0.3);
  createRouteGcMetrics(registry).refused.inc({ cluster: text, reason: 'NodeListEmpty' });
  createFlightMetrics(registry).findings.set({ cluster: 'tenant/c', reason: text }, 2);
  createDeorbitMetrics(registry).refused('DeletionPolicyOrphan');
  return registry;
}

const promtool = process.env.PROMTOOL ?? 'promtool';
function checkMetrics(text: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(promtool, ['check', 'metrics'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, out }));
    p.stdin.end(text);
  });
}
const promtoolMissing = await checkMetrics('').then(
  () => false as const,
  () => `no promtool (.ci/run installs it from Debian's prometheus package; or set PROMTOOL)`,
);

test('promtool check metrics accepts every kubeward metric, hostile label values included', { skip: promtoolMissing }, async () => {
  const samples = ['plain', 'a\\b"c\nd', 'ünïcödé {x="y"}, ok', ''];
  for (const s of samples) {
    const text = await everyKubewardMetric(s).metrics();
    assert.equal(parse(text).samples.length > 50, true);
    const r = await checkMetrics(text);
    assert.equal(r.code, 0, `${JSON.stringify(s)}: ${r.out}`);
    assert.equal(r.out, '', `${JSON.stringify(s)}: ${r.out}`);
  }
});

test('promtool parses what the writer makes of random label values and help texts', { skip: promtoolMissing }, async () => {
  await fc.assert(
    fc.asyncProperty(hostile, hostile, fc.double(), async (help, value, v) => {
      const registry = new Registry();
      new Gauge({ name: 'x_value', help: `${help}.`, labelNames: ['k'], registers: [registry] }).set({ k: value }, v);
      const r = await checkMetrics(await registry.metrics());
      assert.equal(r.code, 0, r.out);
    }),
    { numRuns: 25 },
  );
});
