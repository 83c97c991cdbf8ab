// Client side of ns-agent-main.ts: one helper process per namespace, driven over stdin/stdout.
import { createInterface } from 'node:readline';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { NODE, type LabNet } from './lab-net.ts';

export type Outcome = { answer: string } | { error: string };

export class NsAgent {
  readonly ns: string;
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, (r: Record<string, unknown>) => void>();
  #next = 1;
  readonly #ready: Promise<void>;
  #dead: string | undefined;

  /** ns: the lab's short name for the namespace ("m1"). */
  constructor(net: LabNet, ns: string) {
    this.ns = ns;
    this.#child = net.spawn(ns, [NODE, join(import.meta.dirname, 'ns-agent-main.ts')]);
    let markReady: () => void = () => {};
    this.#ready = new Promise((r) => (markReady = r));
    let stderr = '';
    this.#child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-2000)));
    // A dead helper answers every pending and later call with an error instead of hanging the test.
    this.#child.on('exit', (code) => {
      this.#dead = `ns agent in ${ns} exited (${code}): ${stderr.trim()}`;
      markReady();
      for (const [, done] of this.#pending) done({ error: this.#dead });
      this.#pending.clear();
    });
    createInterface({ input: this.#child.stdout! }).on('line', (line) => {
      const msg = JSON.parse(line) as { id: number } & Record<string, unknown>;
      if (msg.id === 0) return markReady();
      this.#pending.get(msg.id)?.(msg);
      this.#pending.delete(msg.id);
    });
  }

  async call(op: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    await this.#ready;
    if (this.#dead) return { error: this.#dead };
    const id = this.#next++;
    return new Promise((resolve) => {
      this.#pending.set(id, resolve);
      this.#child.stdin!.write(JSON.stringify({ id, op, ...args }) + '\n');
    });
  }

  /** Starts a greeting TCP server named `name` (the lab's apiserver stand-in). */
  async serve(name: string, host = '::', port = 6443): Promise<void> {
    const r = await this.call('serve', { name, host, port });
    if (r.error) throw new Error(`${this.ns}: serve ${name} on ${host}:${port}: ${String(r.error)}`);
  }

  async unserve(name: string): Promise<void> {
    await this.call('unserve', { name });
  }

  /** Who answers a new connection: the greeting, or the error (ECONNREFUSED, timeout, ...). */
  async whoAnswers(host: string, port = 6443, opts: { timeoutMs?: number; localPort?: number } = {}): Promise<string> {
    const r = await this.call('connect', { host, port, timeoutMs: opts.timeoutMs ?? 1500, localPort: opts.localPort });
    return String(r.answer ?? `error:${String(r.error)}`);
  }

  async open(conn: string, host: string, port = 6443): Promise<string> {
    const r = await this.call('open', { conn, host, port, timeoutMs: 1500 });
    return String(r.answer ?? `error:${String(r.error)}`);
  }

  async talk(conn: string, text: string): Promise<string> {
    const r = await this.call('talk', { conn, text, timeoutMs: 1500 });
    return String(r.reply ?? `error:${String(r.error)}`);
  }

  async close(conn: string): Promise<void> {
    await this.call('close', { conn });
  }

  async httpGet(url: string, timeoutMs = 2000, headers: Record<string, string> = {}): Promise<{ status: number; body: string } | { error: string }> {
    const r = await this.call('http', { url, timeoutMs, headers });
    return r.error ? { error: String(r.error) } : { status: Number(r.status), body: String(r.body) };
  }
}
