// What the demo prints: a live table of upstreams, clients and the watcher, and the summary. Pure.
import type { LoadCounters } from './demo-load.ts';

export interface UpstreamRow {
  name: string;
  address: string;
  /** What the proxy believes. */
  proxyState: string;
  active: number;
  total: number;
  /** What the stand-in is really doing. */
  truth: string;
}

export interface EventRow {
  atMs: number;
  says: string;
  /** How long until the proxy stopped sending new connections there; undefined while waiting. */
  ejectedAfterMs?: number;
  timed: boolean;
  happened: boolean;
}

export interface DemoSnapshot {
  elapsedMs: number;
  durationMs: number;
  upstreams: UpstreamRow[];
  load: LoadCounters;
  watcher: { target: string; state: string; reason: string; files: string[] };
  events: EventRow[];
}

const COLORS = { up: '\x1b[32m', down: '\x1b[31m', unknown: '\x1b[33m', dim: '\x1b[2m', bold: '\x1b[1m', reset: '\x1b[0m' } as const;

export function renderTable(s: DemoSnapshot, color: boolean): string {
  const paint = (text: string, c: keyof typeof COLORS) => (color ? `${COLORS[c]}${text}${COLORS.reset}` : text);
  const stateColor = (st: string): keyof typeof COLORS => (st === 'up' ? 'up' : st === 'down' ? 'down' : 'unknown');
  const lines: string[] = [];
  lines.push(paint(`kubeward demo   t=${secs(s.elapsedMs)} of ${secs(s.durationMs)}`, 'bold'));
  lines.push(
    `clients: ${s.load.sent} requests sent, ${s.load.ok} ok, ${s.load.failed} failed` +
      `   watches: ${s.load.watchesOpen} open, ${s.load.watchReconnects} re-established`,
  );
  lines.push('');
  lines.push(`${pad('UPSTREAM', 14)}${pad('ADDRESS', 18)}${pad('PROXY SAYS', 12)}${pad('CONNS', 7)}${pad('TOTAL', 7)}REALITY`);
  for (const u of s.upstreams) {
    lines.push(
      `${pad(u.name, 14)}${pad(u.address, 18)}${paint(pad(u.proxyState, 12), stateColor(u.proxyState))}${pad(String(u.active), 7)}${pad(String(u.total), 7)}${u.truth}`,
    );
  }
  lines.push('');
  lines.push(`watcher on ${s.watcher.target}: ${paint(s.watcher.state, stateColor(s.watcher.state))}  files: ${s.watcher.files.join(' ') || '(none yet)'}`);
  lines.push(paint(`  ${s.watcher.reason}`, 'dim'));
  lines.push('');
  lines.push('events:');
  for (const e of s.events) {
    const mark = e.happened ? '*' : ' ';
    const outcome =
      !e.happened || !e.timed
        ? ''
        : e.ejectedAfterMs === undefined
          ? '  → waiting for the proxy…'
          : `  → proxy stopped using it after ${secs(e.ejectedAfterMs)}`;
    lines.push(paint(`  ${mark} ${pad(secs(e.atMs), 7)}${e.says}${outcome}`, e.happened ? 'reset' : 'dim'));
  }
  return lines.join('\n');
}

export function renderSummary(s: DemoSnapshot): string {
  const timed = s.events.filter((e) => e.timed);
  const lines = [
    '',
    'summary',
    `  requests: ${s.load.sent} sent, ${s.load.ok} ok, ${s.load.failed} failed${s.load.lastError ? ` (last error: ${s.load.lastError})` : ''}`,
    `  watch streams re-established after their apiserver went away: ${s.load.watchReconnects}`,
    ...timed.map((e) => `  ${e.says}: ${e.ejectedAfterMs === undefined ? 'not taken out' : `taken out after ${secs(e.ejectedAfterMs)}`}`),
  ];
  return lines.join('\n');
}

function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

function pad(text: string, width: number): string {
  return text.length >= width ? text + ' ' : text + ' '.repeat(width - text.length);
}
