// Forwarded IPs from the GCP metadata server, walked as the guest tools do
// (`instance/network-interfaces/N/forwarded-ips/I`, and `forwarded-ipv6s`). A failed read keeps
// the last good set: a metadata hiccup must never take the incoming redirect away.
import { KubewardError, describeError } from '../base/errors.ts';
import type { Clock } from '../base/clock.ts';
import { collectForwarded, parseForwardedValue, parseIndexList, type ForwardedIps, type ForwardedValue } from './gcp-metadata.ts';

export const DEFAULT_METADATA_URL = 'http://metadata.google.internal/computeMetadata/v1/';
const MAX_BODY = 64 * 1024;

export interface GcpVipSourceStatus {
  url: string;
  /** The set in use: the last successful read. */
  lastGood?: ForwardedIps;
  lastGoodAt?: string;
  lastError?: string;
  lastErrorAt?: string;
  reads: number;
  failures: number;
}

export class GcpVipSource {
  readonly #base: string;
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  #status: GcpVipSourceStatus;
  #inFlight: Promise<{ changed: boolean; error?: string }> | undefined;

  constructor(baseUrl: string, timeoutMs: number, clock: Clock) {
    this.#base = baseUrl.endsWith('/') ? baseUrl : baseUrl + '/';
    this.#timeoutMs = timeoutMs;
    this.#clock = clock;
    this.#status = { url: this.#base, reads: 0, failures: 0 };
  }

  get status(): GcpVipSourceStatus {
    return this.#status;
  }

  /** The last good forwarded VIPs ([] before the first good read). */
  get vips(): string[] {
    return this.#status.lastGood?.vips ?? [];
  }

  /** Reads the metadata once; returns whether the VIP set changed. Never throws. A call while a read is in flight joins it. */
  refresh(): Promise<{ changed: boolean; error?: string }> {
    this.#inFlight ??= this.#refresh().finally(() => (this.#inFlight = undefined));
    return this.#inFlight;
  }

  async #refresh(): Promise<{ changed: boolean; error?: string }> {
    const now = new Date(this.#clock.now()).toISOString();
    this.#status.reads++;
    try {
      const got = await this.#readAll();
      const before = JSON.stringify(this.#status.lastGood);
      this.#status = { ...this.#status, lastGood: got, lastGoodAt: now };
      return { changed: before !== JSON.stringify(got) };
    } catch (err) {
      this.#status = { ...this.#status, lastError: describeError(err), lastErrorAt: now, failures: this.#status.failures + 1 };
      return { changed: false, error: describeError(err) };
    }
  }

  async #readAll(): Promise<ForwardedIps> {
    const nics = parseIndexList((await this.#get('instance/network-interfaces/'))!, 'dirs');
    const values: ForwardedValue[] = [];
    for (const nic of nics) {
      for (const [dir, family] of [
        ['forwarded-ips', 4],
        ['forwarded-ipv6s', 6],
      ] as const) {
        const path = `instance/network-interfaces/${nic}/${dir}/`;
        const listing = await this.#get(path, true);
        if (listing === undefined) continue;
        for (const i of parseIndexList(listing, 'leaves')) values.push(parseForwardedValue((await this.#get(`${path}${i}`))!, family));
      }
    }
    return collectForwarded(values);
  }

  /** GET with the metadata header; 404 is undefined when allowed. Anything unexpected throws. */
  async #get(path: string, allow404 = false): Promise<string | undefined> {
    const url = new URL(path, this.#base);
    let res: Response;
    try {
      res = await fetch(url, { headers: { 'Metadata-Flavor': 'Google' }, redirect: 'manual', signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (err) {
      throw new KubewardError('E_HTTP', `GET ${url.pathname}: ${describeError(err)}`, { cause: err });
    }
    // The real server marks every answer, its 404s included; a proxy or captive portal does not
    // (their HTML pages were once parsed as VIPs upstream, and an unmarked 404 must not read as
    // "this NIC forwards nothing", which would empty the VIP list).
    const genuine = res.headers.get('metadata-flavor') === 'Google';
    if (res.status === 404 && allow404 && genuine) {
      await res.body?.cancel();
      return undefined;
    }
    if (res.status !== 200 || !genuine) {
      await res.body?.cancel();
      throw new KubewardError('E_HTTP', `GET ${url.pathname}: HTTP ${res.status}${genuine ? '' : ' without Metadata-Flavor: Google'}`);
    }
    return readBounded(res, url.pathname);
  }
}

/** The body as text, refusing (and cancelling) an answer larger than MAX_BODY without buffering it. */
async function readBounded(res: Response, path: string): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > MAX_BODY) {
    await res.body?.cancel();
    throw new KubewardError('E_HTTP', `GET ${path}: answer too large (${declared} bytes)`);
  }
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY) {
      await reader.cancel();
      throw new KubewardError('E_HTTP', `GET ${path}: answer too large (over ${MAX_BODY} bytes)`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
