// The failover load: a new TLS connection with one HTTP request every intervalMs, each bounded by
// timeoutMs, logging who answered or how it failed. Times are relative to the event.
import { connect } from 'node:tls';
import type { RequestRecord } from './failover-analysis.ts';

export interface FailoverLoadOptions {
  port: number;
  ca: string;
  intervalMs: number;
  timeoutMs: number;
  /** performance.now() of the event; requests start from startAt and stop being started at endAt. */
  eventAt: number;
  startAt: number;
  endAt: number;
}

export async function runFailoverLoad(o: FailoverLoadOptions): Promise<RequestRecord[]> {
  const pending: Promise<RequestRecord>[] = [];
  await sleepUntil(o.startAt);
  // Bounded twice: by time (endAt) and by count (the window divided by the interval, plus slack).
  const maxRequests = Math.ceil((o.endAt - o.startAt) / o.intervalMs) + 10;
  for (let next = o.startAt; performance.now() < o.endAt && pending.length < maxRequests; next += o.intervalMs) {
    await sleepUntil(next);
    pending.push(requestOnce(o));
  }
  return Promise.all(pending);
}

function requestOnce(o: FailoverLoadOptions): Promise<RequestRecord> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    let done = false;
    let body = '';
    const finish = (result: { backend?: string; error?: string }): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ startMs: t0 - o.eventAt, latencyMs: performance.now() - t0, ...result });
    };
    const socket = connect({ host: '127.0.0.1', port: o.port, ca: o.ca, servername: 'localhost' });
    const timer = setTimeout(() => finish({ error: 'timeout' }), o.timeoutMs);
    socket.setEncoding('utf8');
    socket.once('secureConnect', () => socket.write('GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n'));
    socket.on('data', (s: string) => {
      body += s;
    });
    socket.once('end', () => finish(parseAnswer(body)));
    socket.once('error', (err: NodeJS.ErrnoException) => finish({ error: err.code ?? 'error' }));
    socket.once('close', () => finish(parseAnswer(body)));
  });
}

/** The backend's name from a 200 answer; otherwise an error naming what came back. */
export function parseAnswer(raw: string): { backend?: string; error?: string } {
  if (raw === '') return { error: 'closed-without-answer' };
  const [head, body] = raw.split('\r\n\r\n', 2);
  if (!head?.startsWith('HTTP/1.1 200')) return { error: `http-${head?.slice(9, 12) ?? 'garbage'}` };
  return { backend: body?.trim() ?? '' };
}

async function sleepUntil(t: number): Promise<void> {
  const ms = t - performance.now();
  if (ms > 0) await new Promise((r) => setTimeout(r, ms));
}
