// Counters, gauges, histograms and a registry that writes the Prometheus text exposition format
// 0.0.4: the part of prom-client kubeward used, with the same class names and call shapes, so a
// metrics file changes by its import line only. Our own because prom-client at rest costs about
// 2.7 MiB of private memory in every daemon with an admin listener (docs/footprint.md).
//
// Behaviour matched to prom-client 15 (node_modules/prom-client/lib/{counter,gauge,histogram,
// registry,util}.js as of 15.1.3): a metric with no label names starts with one series at 0; reset()
// empties a labelled metric and zeroes an unlabelled one; collect() runs at each scrape, in
// registration order, before the metric is read; series print in the order they were first
// written, labels in label-name order, then `le`, then the registry's default labels; metrics are
// separated by a blank line. Differences, on purpose: NaN prints as `NaN` (prom-client writes
// `Nan`), and a series' labels print in label-name order whatever order the caller wrote them in.

export type LabelValues<T extends string> = Partial<Record<T, string | number>>;

export type MetricType = 'counter' | 'gauge' | 'histogram';

export interface MetricValue {
  value: number;
  /** The series' labels, `le` for a bucket. */
  labels: LabelValues<string>;
  /** For a histogram's lines: the name with _bucket, _sum or _count. */
  metricName?: string;
}

export interface MetricObjectWithValues {
  name: string;
  help: string;
  type: MetricType;
  values: MetricValue[];
  aggregator: 'sum';
}

interface MetricConfiguration<T extends string, M> {
  name: string;
  help: string;
  labelNames?: readonly T[];
  registers?: readonly Registry[];
  /** Called at each scrape before the metric is read (to set it from a sample). */
  collect?: (this: M) => void | Promise<void>;
}

export interface HistogramConfiguration<T extends string> extends MetricConfiguration<T, Histogram<T>> {
  buckets?: readonly number[];
}

// https://prometheus.io/docs/concepts/data_model/#metric-names-and-labels
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** prom-client's default buckets (lib/histogram.js). */
const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** A sample value as the text format writes it: Go's ParseFloat reads all of these back. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

/** A label value inside double quotes: backslash, double quote and line feed escaped. */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === '\\' ? '\\\\' : c === '"' ? '\\"' : '\\n'));
}

/** A HELP text: backslash and line feed escaped (quotes stay as they are). */
export function escapeHelp(text: string): string {
  return text.replace(/[\\\n]/g, (c) => (c === '\\' ? '\\\\' : '\\n'));
}

interface Series<T extends string> {
  labels: LabelValues<T>;
  value: number;
}

interface HistogramSeries<T extends string> {
  labels: LabelValues<T>;
  /** Per bucket, observations at or below its bound and above the one before (not cumulative). */
  counts: number[];
  sum: number;
  count: number;
}

abstract class Metric<T extends string, M> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly T[];
  abstract readonly type: MetricType;
  readonly #collect: ((this: M) => void | Promise<void>) | undefined;

  constructor(config: MetricConfiguration<T, M>, reserved: readonly string[] = []) {
    if (!METRIC_NAME.test(config.name)) throw new Error(`Invalid metric name: ${config.name}`);
    if (typeof config.help !== 'string' || config.help === '') throw new Error(`Missing help for metric ${config.name}`);
    const labelNames = config.labelNames ?? [];
    for (const l of labelNames) {
      if (!LABEL_NAME.test(l) || l.startsWith('__')) throw new Error(`Invalid label name: ${l}`);
      if (reserved.includes(l)) throw new Error(`${l} is a reserved label keyword`);
    }
    this.name = config.name;
    this.help = config.help;
    this.labelNames = [...labelNames];
    this.#collect = config.collect;
  }

  /** Registers on each registry; called by the subclass once its own fields are set. */
  protected register(registers: readonly Registry[] | undefined): void {
    for (const r of registers ?? []) r.registerMetric(this as unknown as AnyMetric);
  }

  /** The series key: the values of the known labels in label-name order; an unknown label throws. */
  protected key(labels: LabelValues<T> | undefined): string {
    if (labels === undefined) return '';
    for (const k of Object.keys(labels)) {
      if (!(this.labelNames as readonly string[]).includes(k))
        throw new Error(`Added label "${k}" is not included in initial labelset: ${JSON.stringify(this.labelNames)}`);
    }
    let key = '';
    for (const l of this.labelNames) {
      const v = labels[l];
      if (v !== undefined) key += `${l}\u0000${String(v)}\u0001`;
    }
    return key;
  }

  /** A copy of the labels, known ones only, in label-name order. */
  protected ordered(labels: LabelValues<T> | undefined): LabelValues<T> {
    const out: LabelValues<T> = {};
    for (const l of this.labelNames) {
      const v = labels?.[l];
      if (v !== undefined) out[l] = v;
    }
    return out;
  }

  async get(): Promise<MetricObjectWithValues> {
    if (this.#collect !== undefined) await this.#collect.call(this as unknown as M);
    return { name: this.name, help: this.help, type: this.type, values: this.values(), aggregator: 'sum' };
  }

  protected abstract values(): MetricValue[];
  abstract reset(): void;
}

/** The two value kinds (counter, gauge): one number per label set. */
abstract class ScalarMetric<T extends string, M> extends Metric<T, M> {
  protected series = new Map<string, Series<T>>();

  constructor(config: MetricConfiguration<T, M>) {
    super(config);
    this.reset();
    this.register(config.registers);
  }

  reset(): void {
    this.series = new Map();
    if (this.labelNames.length === 0) this.series.set('', { labels: {}, value: 0 });
  }

  remove(labels: LabelValues<T>): void {
    this.series.delete(this.key(labels));
  }

  protected add(labels: LabelValues<T> | undefined, delta: number): void {
    const key = this.key(labels);
    const s = this.series.get(key);
    if (s !== undefined) s.value += delta;
    else this.series.set(key, { labels: this.ordered(labels), value: delta });
  }

  protected values(): MetricValue[] {
    return [...this.series.values()].map((s) => ({ value: s.value, labels: { ...s.labels } }));
  }
}

/** Labels and value from prom-client's two call shapes: (value?) and (labels, value?). */
function args<T extends string>(a: LabelValues<T> | number | undefined, b: number | undefined): [LabelValues<T> | undefined, number | undefined] {
  return typeof a === 'object' ? [a, b] : [undefined, a];
}

export class Counter<T extends string = string> extends ScalarMetric<T, Counter<T>> {
  readonly type = 'counter';

  constructor(config: MetricConfiguration<T, Counter<T>>) {
    super(config);
  }

  /** Adds to the counter (1 when no value is given); a negative or non-finite value throws, as in prom-client. */
  inc(value?: number): void;
  inc(labels: LabelValues<T>, value?: number): void;
  inc(a?: LabelValues<T> | number, b?: number): void {
    const [labels, value = 1] = args(a, b);
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${String(value)}`);
    if (value < 0) throw new Error('It is not possible to decrease a counter');
    this.add(labels, value);
  }
}

export class Gauge<T extends string = string> extends ScalarMetric<T, Gauge<T>> {
  readonly type = 'gauge';

  constructor(config: MetricConfiguration<T, Gauge<T>>) {
    super(config);
  }

  set(value: number): void;
  set(labels: LabelValues<T>, value: number): void;
  set(a: LabelValues<T> | number, b?: number): void {
    const [labels, value] = args(a, b);
    if (typeof value !== 'number') throw new TypeError(`Value is not a valid number: ${String(value)}`);
    const key = this.key(labels);
    const s = this.series.get(key);
    if (s !== undefined) s.value = value;
    else this.series.set(key, { labels: this.ordered(labels), value });
  }

  inc(value?: number): void;
  inc(labels: LabelValues<T>, value?: number): void;
  inc(a?: LabelValues<T> | number, b?: number): void {
    const [labels, value = 1] = args(a, b);
    this.add(labels, value);
  }

  dec(value?: number): void;
  dec(labels: LabelValues<T>, value?: number): void;
  dec(a?: LabelValues<T> | number, b?: number): void {
    const [labels, value = 1] = args(a, b);
    this.add(labels, -value);
  }
}

export class Histogram<T extends string = string> extends Metric<T, Histogram<T>> {
  readonly type = 'histogram';
  /** Upper bounds, ascending, without +Inf (the count is the +Inf bucket). */
  readonly upperBounds: readonly number[];
  #series = new Map<string, HistogramSeries<T>>();

  constructor(config: HistogramConfiguration<T>) {
    super(config, ['le']);
    const buckets = [...(config.buckets ?? DEFAULT_BUCKETS)].filter((b) => b !== Infinity).sort((x, y) => x - y);
    for (const b of buckets) if (!Number.isFinite(b)) throw new Error(`Invalid bucket bound for ${config.name}: ${b}`);
    if (new Set(buckets).size !== buckets.length) throw new Error(`Duplicate bucket bound for ${config.name}`);
    this.upperBounds = buckets;
    this.reset();
    this.register(config.registers);
  }

  reset(): void {
    this.#series = new Map();
    if (this.labelNames.length === 0) this.#series.set('', this.#empty(undefined));
  }

  remove(labels: LabelValues<T>): void {
    this.#series.delete(this.key(labels));
  }

  observe(value: number): void;
  observe(labels: LabelValues<T>, value: number): void;
  observe(a: LabelValues<T> | number, b?: number): void {
    const [labels, value] = args(a, b);
    if (typeof value !== 'number') throw new TypeError(`Value is not a valid number: ${String(value)}`);
    const key = this.key(labels);
    let s = this.#series.get(key);
    if (s === undefined) {
      s = this.#empty(labels);
      this.#series.set(key, s);
    }
    // The first bound at or above the value (le is "less than or equal"); above all: only +Inf.
    const i = this.upperBounds.findIndex((bound) => value <= bound);
    if (i >= 0) s.counts[i]! += 1;
    s.sum += value;
    s.count += 1;
  }

  /** Starts a stopwatch; calling the result observes the seconds since (with both label sets merged) and returns them. */
  startTimer(labels?: LabelValues<T>): (endLabels?: LabelValues<T>) => number {
    const start = process.hrtime.bigint();
    return (endLabels) => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      this.observe({ ...labels, ...endLabels } as LabelValues<T>, seconds);
      return seconds;
    };
  }

  #empty(labels: LabelValues<T> | undefined): HistogramSeries<T> {
    return { labels: this.ordered(labels), counts: this.upperBounds.map(() => 0), sum: 0, count: 0 };
  }

  protected values(): MetricValue[] {
    const out: MetricValue[] = [];
    for (const s of this.#series.values()) {
      let cumulative = 0;
      this.upperBounds.forEach((bound, i) => {
        cumulative += s.counts[i]!;
        out.push({ value: cumulative, labels: { ...s.labels, le: bound }, metricName: `${this.name}_bucket` });
      });
      out.push({ value: s.count, labels: { ...s.labels, le: '+Inf' }, metricName: `${this.name}_bucket` });
      out.push({ value: s.sum, labels: { ...s.labels }, metricName: `${this.name}_sum` });
      out.push({ value: s.count, labels: { ...s.labels }, metricName: `${this.name}_count` });
    }
    return out;
  }
}

type AnyMetric = Counter | Gauge | Histogram;

export class Registry {
  static readonly PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE;
  readonly #metrics = new Map<string, AnyMetric>();
  #defaultLabels: Record<string, string | number> = {};

  registerMetric(metric: AnyMetric): void {
    const known = this.#metrics.get(metric.name);
    if (known !== undefined && known !== metric) throw new Error(`A metric with the name ${metric.name} has already been registered.`);
    this.#metrics.set(metric.name, metric);
  }

  /** Labels added to every series that does not set them itself. */
  setDefaultLabels(labels: Record<string, string | number>): void {
    for (const l of Object.keys(labels)) if (!LABEL_NAME.test(l) || l.startsWith('__')) throw new Error(`Invalid label name: ${l}`);
    this.#defaultLabels = { ...labels };
  }

  getSingleMetric(name: string): AnyMetric | undefined {
    return this.#metrics.get(name);
  }

  removeSingleMetric(name: string): void {
    this.#metrics.delete(name);
  }

  clear(): void {
    this.#metrics.clear();
    this.#defaultLabels = {};
  }

  resetMetrics(): void {
    for (const m of this.#metrics.values()) m.reset();
  }

  /** Every metric after its collect(), in registration order, default labels added. */
  async getMetricsAsJSON(): Promise<MetricObjectWithValues[]> {
    const out: MetricObjectWithValues[] = [];
    // One at a time, in registration order: a collect may move metrics registered after it.
    for (const m of this.#metrics.values()) {
      const item = (await m.get()) as MetricObjectWithValues;
      for (const v of item.values) v.labels = this.#withDefaults(v.labels);
      out.push(item);
    }
    return out;
  }

  /** The text exposition format 0.0.4. */
  async metrics(): Promise<string> {
    const blocks: string[] = [];
    for (const item of await this.getMetricsAsJSON()) {
      const lines = [`# HELP ${item.name} ${escapeHelp(item.help)}`, `# TYPE ${item.name} ${item.type}`];
      for (const v of item.values) lines.push(`${v.metricName ?? item.name}${formatLabels(v.labels)} ${formatValue(v.value)}`);
      blocks.push(lines.join('\n'));
    }
    return `${blocks.join('\n\n')}\n`;
  }

  #withDefaults(labels: LabelValues<string>): LabelValues<string> {
    const out: LabelValues<string> = { ...labels };
    for (const [k, v] of Object.entries(this.#defaultLabels)) if (out[k] === undefined) out[k] = v;
    return out;
  }
}

function formatLabels(labels: LabelValues<string>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(labels)) {
    if (v === undefined) continue;
    parts.push(`${k}="${escapeLabelValue(typeof v === 'number' ? formatValue(v) : v)}"`);
  }
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}
