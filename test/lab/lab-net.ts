// Throwaway network namespaces for tests: uniquely named per lab (kwl-<pid>-<random>-<name>), veth
// pairs between them, commands and long-running processes inside them, and a teardown that kills
// what was started (by PID) and deletes every namespace, even after a failed test.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { execCommand, type ExecOptions, type ExecResult } from '../../src/sys/exec.ts';
import { isAlive } from '../../testkit/process-alive.ts';

export const REPO = join(import.meta.dirname, '..', '..');
export const NODE = join(REPO, 'node_modules', '.bin', 'node');

/** Why lab tests cannot run here, or undefined when they can. */
export async function labSkipReason(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return 'network-namespace lab tests need root (run the tests as root, as CI does)';
  for (const tool of [
    ['ip', 'netns', 'list'],
    ['nft', '--version'],
    ['sysctl', '--version'],
  ]) {
    try {
      await execCommand(tool, { timeoutMs: 5000 });
    } catch {
      return `network-namespace lab tests need "${tool.join(' ')}" to work (install iproute2, nftables and procps)`;
    }
  }
  return undefined;
}

export class LabNet {
  readonly prefix: string;
  readonly #namespaces: string[] = [];
  readonly #children = new Set<ChildProcess>();

  constructor() {
    this.prefix = `kwl-${process.pid}-${randomBytes(2).toString('hex')}-`;
  }

  /** Deletes namespaces left by lab runs whose process is gone (a killed test run). */
  static async sweepStale(): Promise<void> {
    const { stdout } = await execCommand(['ip', 'netns', 'list']);
    for (const line of stdout.split('\n')) {
      const m = /^(kwl-(\d+)-\S+)/.exec(line);
      if (!m || isAlive(Number(m[2]))) continue;
      await execCommand(['ip', 'netns', 'del', m[1]!], { okCodes: [0, 1, 255] });
    }
  }

  ns(name: string): string {
    return this.prefix + name;
  }

  /** Creates namespaces (loopback up, rp_filter off, the given sysctls), one `ip -batch` for all. */
  async addNamespaces(specs: Record<string, Record<string, string>>): Promise<void> {
    const names = Object.keys(specs);
    this.#namespaces.push(...names.map((n) => this.ns(n)));
    await this.batch(
      undefined,
      names.map((n) => `netns add ${this.ns(n)}`),
    );
    for (const [name, sysctls] of Object.entries(specs)) {
      const all = { 'net.ipv4.conf.all.rp_filter': '0', 'net.ipv4.conf.default.rp_filter': '0', ...sysctls };
      await this.exec(name, ['sysctl', '-qw', ...Object.entries(all).map(([k, v]) => `${k}=${v}`)]);
    }
  }

  /** Runs `ip` commands (one per line) in one process, in a namespace or the root one. */
  async batch(ns: string | undefined, lines: string[]): Promise<void> {
    if (lines.length === 0) return;
    await execCommand(['ip', ...(ns ? ['-n', this.ns(ns)] : []), '-batch', '-'], { input: lines.join('\n') + '\n', timeoutMs: 20_000 });
  }

  /** The `ip -batch` line for a veth pair with one end in each namespace (ends stay down). */
  vethLine(a: string, aIf: string, b: string, bIf: string): string {
    return `link add ${aIf} netns ${this.ns(a)} type veth peer name ${bIf} netns ${this.ns(b)}`;
  }

  ip(ns: string, ...args: string[]): Promise<ExecResult> {
    return execCommand(['ip', '-n', this.ns(ns), ...args], { timeoutMs: 10_000 });
  }

  exec(ns: string, argv: string[], opts: ExecOptions = {}): Promise<ExecResult> {
    return execCommand(['ip', 'netns', 'exec', this.ns(ns), ...argv], { timeoutMs: 15_000, ...opts });
  }

  nft(ns: string, script: string): Promise<ExecResult> {
    return this.exec(ns, ['nft', '-f', '-'], { input: script });
  }

  /** Starts a process inside the namespace (`ip netns exec` execs, so the PID is the process's). */
  spawn(ns: string, argv: string[]): ChildProcess {
    const child = spawn('ip', ['netns', 'exec', this.ns(ns), ...argv], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
    this.#children.add(child);
    child.on('exit', () => this.#children.delete(child));
    return child;
  }

  /** Kills every process started here (TERM, then KILL after 3 s) and deletes the namespaces. */
  async destroy(): Promise<void> {
    await Promise.all([...this.#children].map((c) => stopChild(c, 'SIGTERM', 3000)));
    for (const ns of this.#namespaces.splice(0)) await execCommand(['ip', 'netns', 'del', ns], { okCodes: [0, 1, 255] });
  }
}

/** Sends a signal and waits for the exit, escalating to SIGKILL after graceMs. */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals, graceMs: number): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  if (child.pid) process.kill(child.pid, signal);
  const timer = setTimeout(() => child.pid && child.exitCode === null && process.kill(child.pid, 'SIGKILL'), graceMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}
