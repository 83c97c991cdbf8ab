// Prometheus's Kubernetes pod discovery (kubernetes_sd_configs, role pod) for a Prometheus built
// without it, as Debian's is: an HTTP service discovery endpoint (http_sd_configs) that lists pods
// from the apiserver with the bearer token Prometheus sends and answers the target groups
// kubernetes_sd would make, with its __meta_kubernetes_pod_* labels: one target per declared
// container port, at the pod's IP. An apiserver refusal is passed on as the answer's status, so a
// token without the RBAC fails discovery as it would with kubernetes_sd. Prints {"port":N} once
// listening (127.0.0.1, port 0); runs until SIGTERM or --max-seconds. Run it inside the node's namespace.
//   node pod-sd.ts --server https://127.0.0.1:6443 --ca ca.crt [--max-seconds 300]
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { request } from 'node:https';

const args = new Map<string, string>();
for (let i = 2; i < process.argv.length; i += 2) args.set(process.argv[i]!, process.argv[i + 1] ?? '');
const server = args.get('--server') ?? 'https://127.0.0.1:6443';
const ca = readFileSync(args.get('--ca') ?? '/dev/null');
const maxMs = Number(args.get('--max-seconds') ?? 300) * 1000;

interface Pod {
  metadata: { name: string; namespace: string; uid: string; labels?: Record<string, string> };
  spec: { nodeName?: string; containers: { name: string; ports?: { name?: string; containerPort: number; protocol?: string }[] }[] };
  status: { podIP?: string; hostIP?: string; phase?: string; conditions?: { type: string; status: string }[] };
}

const sanitize = (name: string) => name.replace(/[^a-zA-Z0-9_]/g, '_');

function targetGroups(pods: Pod[]): { targets: string[]; labels: Record<string, string> }[] {
  const groups = [];
  for (const pod of pods) {
    if (!pod.status.podIP) continue; // kubernetes_sd leaves a pod without an IP out too
    const podLabels: Record<string, string> = {
      __meta_kubernetes_namespace: pod.metadata.namespace,
      __meta_kubernetes_pod_name: pod.metadata.name,
      __meta_kubernetes_pod_ip: pod.status.podIP,
      __meta_kubernetes_pod_uid: pod.metadata.uid,
      __meta_kubernetes_pod_node_name: pod.spec.nodeName ?? '',
      __meta_kubernetes_pod_host_ip: pod.status.hostIP ?? '',
      __meta_kubernetes_pod_phase: pod.status.phase ?? '',
      __meta_kubernetes_pod_ready: pod.status.conditions?.find((c) => c.type === 'Ready')?.status.toLowerCase() ?? 'unknown',
    };
    for (const [k, v] of Object.entries(pod.metadata.labels ?? {})) {
      podLabels[`__meta_kubernetes_pod_label_${sanitize(k)}`] = v;
      podLabels[`__meta_kubernetes_pod_labelpresent_${sanitize(k)}`] = 'true';
    }
    for (const c of pod.spec.containers) {
      for (const p of c.ports ?? []) {
        groups.push({
          targets: [`${pod.status.podIP}:${p.containerPort}`],
          labels: {
            ...podLabels,
            __meta_kubernetes_pod_container_name: c.name,
            __meta_kubernetes_pod_container_port_name: p.name ?? '',
            __meta_kubernetes_pod_container_port_number: String(p.containerPort),
            __meta_kubernetes_pod_container_port_protocol: p.protocol ?? 'TCP',
          },
        });
      }
    }
  }
  return groups;
}

function listPods(headers: IncomingHttpHeaders): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const auth = headers.authorization ? { authorization: headers.authorization } : {};
    const req = request(new URL('/api/v1/pods', server), { ca, agent: false, timeout: 5000, headers: auth }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 502, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout after 5s')));
    req.on('error', (err) => resolve({ status: 502, body: String(err) }));
    req.end();
  });
}

const http = createServer((req, res) => {
  void listPods(req.headers).then(({ status, body }) => {
    if (status !== 200) {
      res.writeHead(status, { 'content-type': 'text/plain' }).end(body.slice(0, 500));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(targetGroups((JSON.parse(body) as { items: Pod[] }).items)));
  });
});
http.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: (http.address() as { port: number }).port }) + '\n'));
process.on('SIGTERM', () => process.exit(0));
setTimeout(() => process.exit(0), maxMs).unref();
