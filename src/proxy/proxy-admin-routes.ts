// The proxy's admin routes: POST /upstreams/<frontend>/<host:port>/drain and /undrain, loopback peers with the admin token only.
import type { AdminRoute } from '../admin/admin-server.ts';

export type SetDrained = (frontend: string, upstream: string, drained: boolean) => { closing: number } | 'no-frontend' | 'no-upstream';

export function proxyAdminRoutes(setDrained: SetDrained): AdminRoute[] {
  return [
    {
      method: 'POST',
      path: /^\/upstreams\/([^/]+)\/([^/]+)\/(drain|undrain)$/,
      control: true,
      handle: async (m) => {
        const [frontend, upstream] = [decodeURIComponent(m[1]!), decodeURIComponent(m[2]!)];
        const drained = m[3] === 'drain';
        const r = setDrained(frontend, upstream, drained);
        if (r === 'no-frontend') return { status: 404, body: { error: `no frontend "${frontend}"; see /status for the names` } };
        if (r === 'no-upstream')
          return { status: 404, body: { error: `frontend "${frontend}" has no upstream ${upstream}; write it as in /status (IPv6 in brackets)` } };
        return { status: 200, body: { frontend, upstream, drained, closingConnections: r.closing } };
      },
    },
  ];
}
