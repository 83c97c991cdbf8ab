// A helper process that lives inside one lab network namespace and does network things there on
// command: JSON lines on stdin ({id, op, ...}), one JSON line answer each on stdout ({id, ...}).
//   serve {name, host, port}      TCP server greeting each connection with "<name>\n", then echoing
//                                 every line as "<name>:<line>\n" (the stand-in apiserver of the lab)
//   unserve {name}                stop it and drop its connections, as a killed apiserver would
//   connect {host, port, timeoutMs, localPort?}   one connection: who greets? → {answer} | {error}
//   open {conn, host, port, timeoutMs}            a long-lived connection → {answer} | {error}
//   talk {conn, text, timeoutMs}  one line there and back on it → {reply} | {error}
//   close {conn}
//   http {url, timeoutMs, insecure?}  GET over http(s) → {status, body} | {error}
import { createServer, connect, type Server, type Socket } from 'node:net';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createInterface } from 'node:readline';

type Cmd = Record<string, unknown> & { id: number; op: string };

const servers = new Map<string, { server: Server; sockets: Set<Socket> }>();
const conns = new Map<string, { socket: Socket; lines: string[]; waiters: ((l: string | Error) => void)[] }>();

function reply(id: number, body: Record<string, unknown>): void {
  process.stdout.write(JSON.stringify({ id, ...body }) + '\n');
}

function serve(name: string, host: string, port: number): Promise<number> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    s.write(`${name}\n`);
    // readline re-emits its input's errors; a client reset (a redirect withdrawn under an open
    // connection) is normal here and must not kill the agent, so it is handled on both.
    createInterface({ input: s })
      .on('line', (l) => s.writable && s.write(`${name}:${l}\n`))
      .on('error', () => {});
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port, ipv6Only: false }, () => {
      servers.set(name, { server, sockets });
      resolve((server.address() as { port: number }).port);
    });
  });
}

/** Connects and waits for the greeting line. Errors come back as short codes (ECONNREFUSED, timeout, ...). */
function openConn(host: string, port: number, timeoutMs: number, localPort?: number): Promise<{ socket: Socket; answer: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, localPort, timeout: timeoutMs });
    let buf = '';
    const fail = (e: Error | string) => {
      socket.destroy();
      reject(typeof e === 'string' ? new Error(e) : e);
    };
    socket.on('timeout', () => fail('timeout'));
    socket.on('error', (e: NodeJS.ErrnoException) => fail(e.code ?? e.message));
    socket.on('end', () => fail('EOF'));
    socket.on('data', function onData(d: Buffer) {
      buf += d.toString();
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      socket.off('data', onData);
      socket.removeAllListeners('timeout').removeAllListeners('error').removeAllListeners('end');
      socket.setTimeout(0);
      resolve({ socket, answer: buf.slice(0, nl) });
    });
  });
}

function track(id: string, socket: Socket): void {
  const c = { socket, lines: [] as string[], waiters: [] as ((l: string | Error) => void)[] };
  const push = (l: string | Error) => (c.waiters.length ? c.waiters.shift()!(l) : typeof l === 'string' && c.lines.push(l));
  createInterface({ input: socket })
    .on('line', push)
    .on('error', () => {}); // the socket's own 'error' handler reports it
  socket.on('error', (e: NodeJS.ErrnoException) => push(new Error(e.code ?? e.message)));
  socket.on('close', () => push(new Error('EOF')));
  conns.set(id, c);
}

function talk(id: string, text: string, timeoutMs: number): Promise<string> {
  const c = conns.get(id);
  if (!c) return Promise.reject(new Error('no such connection'));
  if (c.lines.length) return Promise.resolve(c.lines.shift()!);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timeout')), timeoutMs);
    c.waiters.push((l) => {
      clearTimeout(timer);
      if (l instanceof Error) reject(l);
      else resolve(l);
    });
    if (c.socket.writable) c.socket.write(text + '\n');
    else c.waiters.shift()!(new Error('EOF'));
  });
}

function httpGet(url: string, timeoutMs: number, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  const request = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(u, { timeout: timeoutMs, rejectUnauthorized: false, agent: false, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e: NodeJS.ErrnoException) => reject(new Error(e.code ?? e.message)));
    req.end();
  });
}

async function handle(c: Cmd): Promise<Record<string, unknown>> {
  const timeoutMs = Number(c.timeoutMs ?? 2000);
  switch (c.op) {
    case 'serve':
      return { port: await serve(String(c.name), String(c.host), Number(c.port)) };
    case 'unserve': {
      const s = servers.get(String(c.name));
      servers.delete(String(c.name));
      for (const sock of s?.sockets ?? []) sock.destroy();
      await new Promise<void>((r) => (s ? s.server.close(() => r()) : r()));
      return {};
    }
    case 'connect': {
      const { socket, answer } = await openConn(String(c.host), Number(c.port), timeoutMs, c.localPort === undefined ? undefined : Number(c.localPort));
      socket.destroy();
      return { answer };
    }
    case 'open': {
      const { socket, answer } = await openConn(String(c.host), Number(c.port), timeoutMs);
      track(String(c.conn), socket);
      return { answer };
    }
    case 'talk':
      return { reply: await talk(String(c.conn), String(c.text), timeoutMs) };
    case 'close':
      conns.get(String(c.conn))?.socket.destroy();
      conns.delete(String(c.conn));
      return {};
    case 'http':
      return await httpGet(String(c.url), timeoutMs, (c.headers ?? {}) as Record<string, string>);
    default:
      throw new Error(`unknown op ${c.op}`);
  }
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const c = JSON.parse(line) as Cmd;
  handle(c).then(
    (body) => reply(c.id, body),
    (err: Error) => reply(c.id, { error: err.message }),
  );
});
process.stdin.on('end', () => process.exit(0));
process.stdout.write(JSON.stringify({ id: 0, ready: true }) + '\n');
