import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { systemClock } from '../base/clock.ts';
import { KubewardError } from '../base/errors.ts';
import { checkVip } from '../watch/vip-address.ts';
import { GcpVipSource } from './gcp-vip-source.ts';
import { parseForwardedValue, parseIndexList } from './gcp-metadata.ts';

type Handler = (path: string, res: ServerResponse) => void;

/** A metadata stand-in on 127.0.0.1 whose answers the test decides per path. */
async function metadataServer(t: { after: (fn: () => Promise<void>) => void }, handler: Handler): Promise<string> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) =>
    handler(new URL(req.url!, 'http://x').pathname.replace('/computeMetadata/v1/', ''), res),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/computeMetadata/v1/`;
}

const google = { 'Metadata-Flavor': 'Google', 'Content-Type': 'application/text' };

function standard(path: string, res: ServerResponse, notFound: Record<string, string> = google): void {
  const answers: Record<string, string> = {
    'instance/network-interfaces/': '0/\n',
    'instance/network-interfaces/0/forwarded-ips/': '0\n',
    'instance/network-interfaces/0/forwarded-ips/0': '10.0.0.100',
  };
  if (path in answers) res.writeHead(200, google).end(answers[path]);
  else res.writeHead(404, notFound).end('not found');
}

test('a 404 from the real metadata server (with its header) means "nothing forwarded here"', async (t) => {
  const url = await metadataServer(t, (p, res) => standard(p, res));
  const src = new GcpVipSource(url, 2000, systemClock);
  assert.deepEqual(await src.refresh(), { changed: true });
  assert.deepEqual(src.vips, ['10.0.0.100']);
});

test('a 404 without Metadata-Flavor: Google is an error, and the last good VIPs stay', async (t) => {
  let genuine = true;
  const url = await metadataServer(t, (p, res) => standard(p, res, genuine ? google : { 'Content-Type': 'text/html' }));
  const src = new GcpVipSource(url, 2000, systemClock);
  await src.refresh();
  genuine = false;
  const r = await src.refresh();
  assert.match(r.error ?? '', /HTTP 404 without Metadata-Flavor: Google/);
  assert.deepEqual(src.vips, ['10.0.0.100'], "never an empty list from a stranger's 404");
});

test('an answer larger than 64 KiB is refused without being buffered whole', async (t) => {
  const url = await metadataServer(t, (p, res) => {
    if (p !== 'instance/network-interfaces/') return standard(p, res);
    res.writeHead(200, google); // chunked: no content-length to go by
    let sent = 0;
    const chunk = Buffer.alloc(16 * 1024, '0');
    const more = () => {
      while (sent < 64 * 1024 * 1024 && res.write(chunk)) sent += chunk.length;
      if (sent < 64 * 1024 * 1024) res.once('drain', more);
      else res.end();
    };
    res.on('error', () => {});
    more();
  });
  const src = new GcpVipSource(url, 5000, systemClock);
  const r = await src.refresh();
  assert.match(r.error ?? '', /answer too large/);
});

test('a forwarded IP that is not a valid VIP fails the read: the metadata server gets no more trust than a flag', async (t) => {
  const url = await metadataServer(t, (p, res) => {
    if (p === 'instance/network-interfaces/0/forwarded-ips/0') return void res.writeHead(200, google).end('169.254.169.254');
    standard(p, res);
  });
  const r = await new GcpVipSource(url, 2000, systemClock).refresh();
  assert.match(r.error ?? '', /169\.254\.169\.254 is link-local/);
});

test('property: metadata bodies never throw anything but KubewardError; accepted values are valid VIPs or ranges', () => {
  const bodies = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc
      .array(
        fc.oneof(
          fc.nat(99999).map(String),
          fc.nat(9999).map((n) => `${n}/`),
          fc.string({ maxLength: 8 }),
        ),
        { maxLength: 6 },
      )
      .map((a) => a.join('\n')),
    fc
      .oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended())
      .chain((ip) => fc.constantFrom(ip, `${ip}/32`, `${ip}/128`, `${ip}/24`, `${ip}%eth0`, `${ip}\n`, `<html>${ip}</html>`)),
  );
  fc.assert(
    fc.property(
      bodies,
      fc.constantFrom('dirs', 'leaves') as fc.Arbitrary<'dirs' | 'leaves'>,
      fc.constantFrom(4, 6) as fc.Arbitrary<4 | 6>,
      (body, kind, family) => {
        for (const fn of [() => parseIndexList(body, kind), () => parseForwardedValue(body, family)]) {
          try {
            const v = fn();
            if (Array.isArray(v)) assert.ok(v.every((n) => Number.isInteger(n) && n >= 0 && n <= 9999));
            else if ('vip' in v) assert.ok(checkVip(v.vip).ok && !/\s/.test(v.vip));
            else assert.match(v.range, /^[0-9a-f.:]+\/\d{1,3}$/);
          } catch (err) {
            if (!(err instanceof KubewardError)) throw err;
            assert.ok(!err.message.includes('\n'), err.message);
          }
        }
        return true;
      },
    ),
    { numRuns: 3000 },
  );
});

test('concurrent refreshes share one read: requests never overlap', async (t) => {
  let inFlight = 0;
  let max = 0;
  let requests = 0;
  const url = await metadataServer(t, (p, res) => {
    inFlight++;
    requests++;
    max = Math.max(max, inFlight);
    setTimeout(() => {
      inFlight--;
      standard(p, res);
    }, 20);
  });
  const src = new GcpVipSource(url, 2000, systemClock);
  const results = await Promise.all([src.refresh(), src.refresh(), src.refresh()]);
  assert.equal(max, 1);
  assert.equal(requests, 4, 'one walk: NICs, forwarded-ips/, its value, forwarded-ipv6s/ (404)');
  assert.equal(src.status.reads, 1);
  assert.deepEqual(
    results.map((r) => r.changed),
    [true, true, true],
  );
});
