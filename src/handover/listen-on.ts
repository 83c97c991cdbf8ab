// Opens a TCP listener, on the predecessor's socket when the hand-over brought one for this
// address, else by binding. An inherited socket is used only if it listens where the config says
// (server.address()): a descriptor that is something else is closed and the address bound.
import { closeSync } from 'node:fs';
import { isIP, type AddressInfo, type ListenOptions, type Server } from 'node:net';
import { formatHostPort, type HostPort } from '../config/fields.ts';
import type { ListenerHandover } from './handover-session.ts';

/** How the server came to listen. */
export type Listened = 'adopted' | 'bound';

export async function listenOn(
  server: Server,
  addr: HostPort,
  opts: Pick<ListenOptions, 'reusePort' | 'ipv6Only'>,
  handover?: ListenerHandover,
): Promise<Listened> {
  const fd = addr.port === 0 ? undefined : handover?.take(formatHostPort(addr));
  let how: Listened = 'bound';
  if (fd !== undefined) {
    const ok = await listenAsync(server, { fd }).then(
      () => listensAt(server.address(), addr),
      () => false,
    );
    if (ok) how = 'adopted';
    else if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    // Not a socket Node could listen on (a file, a UDP socket): no handle took it, close it here.
    else closeQuietly(fd);
  }
  if (how === 'bound') await listenAsync(server, { host: addr.host, port: addr.port, ...opts });
  // Offered under the bound address, so that a successor configured with the port this one got
  // for port 0 finds it.
  const key = formatHostPort({ host: addr.host, port: (server.address() as AddressInfo).port });
  if (how === 'adopted') handover?.adopted(key);
  handover?.offer(key, server);
  server.once('close', () => handover?.withdraw(key, server));
  return how;
}

/** net's ListenOptions, or a listening descriptor (server.listen({ fd }), which the typings leave out). */
function listenAsync(server: Server, opts: ListenOptions | { fd: number }): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The socket listens on the configured address (a name matches by port alone). */
export function listensAt(a: string | AddressInfo | null, addr: HostPort): boolean {
  if (a === null || typeof a === 'string' || a.port !== addr.port) return false;
  if (isIP(addr.host) === 0) return true;
  return canonical(a.address) === canonical(addr.host);
}

function canonical(host: string): string {
  if (isIP(host) !== 6) return host;
  // ::ffff:127.0.0.1 style and zero runs: compare through URL's normal form.
  try {
    return new URL(`http://[${host}]/`).hostname;
  } catch {
    return host;
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Closed already (the failed listen took it): nothing to release.
  }
}
