import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FailoverSample } from './failover-analysis.ts';
import { formatNumber, renderFailoverTable, renderMedianTable } from './render-table.ts';

test('a metric row shows each peer, one kubeward process against one nginx worker, two against two, HAProxy and direct', () => {
  const table = renderMedianTable({ kaRps: { kubeward: 30_000, nginx: 40_000, 'kubeward-2': 45_000, 'nginx-2': 50_000, haproxy: 20_000, direct: 60_000 } });
  const row = table.split('\n')[2];
  assert.equal(row, '| keep-alive requests/s (64 conns) | 30,000 | 40,000 | 45,000 | 50,000 | 20,000 | 60,000 | 0.75x | 0.90x | 1.50x | 0.50x |');
});

test('proxy-only metrics have no ratio to direct, and metrics without samples are left out', () => {
  const table = renderMedianTable({ kaCpuUsPerReq: { kubeward: 18, nginx: 12, haproxy: 9 } });
  const lines = table.split('\n');
  assert.equal(lines.length, 3);
  assert.equal(lines[2], '| proxy CPU per keep-alive request (µs) | 18.0 | 12.0 | — | — | 9.0 | — | 1.50x | — | 2.00x | — |');
});

test('numbers get separators and fixed decimals, and missing ones a dash', () => {
  assert.equal(formatNumber(1234.567, 1), '1,234.6');
  assert.equal(formatNumber(undefined, 1), '—');
});

test('the failover table gives medians and reads stop times as seconds, none, or not within the window', () => {
  const base = { scenario: 'hang', windowMs: 15_000, requests: 700, slow: 0, inFlightLost: 0, errors: {} } as const;
  const samples: FailoverSample[] = [
    { ...base, peer: 'kubeward', round: 1, failed: 40, stopMs: 2100, markedDownMs: 2000 },
    { ...base, peer: 'kubeward', round: 2, failed: 60, stopMs: 2500 },
    { ...base, peer: 'kubeward', round: 3, failed: 50, stopMs: 2300, markedDownMs: 1900 },
    { ...base, peer: 'nginx-2', round: 1, failed: 90, stopMs: 'not-within-window' },
    { ...base, scenario: 'kill', peer: 'nginx-2', round: 1, failed: 0, stopMs: 'none' },
  ];
  const lines = renderFailoverTable(samples).split('\n');
  assert.equal(lines[2], '| backend killed (SIGKILL) | nginx (2 workers) | 1 | 0 | 0 | no connection affected | not reported |');
  assert.equal(lines[3], '| backend hangs (SIGSTOP: accepts, never answers) | kubeward (1 process) | 3 | 50 | 0 | 2.30 s | 2.00 s |');
  assert.equal(lines[4], '| backend hangs (SIGSTOP: accepts, never answers) | nginx (2 workers) | 1 | 90 | 0 | not within 15 s | not reported |');
});

test("the host's steal is shown per peer as a condition of the run, never as a ratio", () => {
  const table = renderMedianTable({ kpStealPct: { kubeward: 0.4, nginx: 0.8, 'kubeward-2': 1.2, 'nginx-2': 0.6, haproxy: 0.5, direct: 0.3 } });
  const line = table.split('\n').find((l) => l.startsWith("| the host's steal during the paced load"));
  assert.ok(line, table);
  assert.equal(line, "| the host's steal during the paced load (% of the machine's CPU time) | 0.4 | 0.8 | 1.2 | 0.6 | 0.5 | 0.3 | — | — | — | — |");
});
