// Every node manifest kubeward ships, as the files `npm run manifests` (scripts/write-manifests.ts)
// writes under deploy/, and the docs' snippets of them; test/deploy/manifest-source.test.ts fails
// when a file or a snippet differs from what is rendered here.
import { agentStaticPod } from './agent-static-pod.ts';
import { manifestYaml } from './manifest-yaml.ts';
import { nodeAgentsDaemonSet, nodeAgentStaticPod } from './node-agent-pods.ts';
import { HANDOVER_WAIT_S } from './handover-parts.ts';
import { DEPLOY_PROXY_OPTIONS, proxyStaticPod, SHUTDOWN_GRACE_S } from './proxy-static-pod.ts';

export interface ShippedManifest {
  /** Path under the repository. */
  path: string;
  comment: string[];
  object: Record<string, unknown>;
}

const SOURCE = 'Written by `npm run manifests` from src/manifests/; edit there, not here.';

export function shippedManifests(): ShippedManifest[] {
  return [
    {
      path: 'deploy/proxy/static-pod.yaml',
      comment: [
        "kubeward proxy as a static pod: the drop-in for kubespray's nginx-proxy. Copy to",
        '/etc/kubernetes/manifests/kubeward-proxy.yaml and remove nginx-proxy.yaml in the same step (both',
        'bind 127.0.0.1:6443). The config is /etc/kubeward/proxy.yaml (kubeward plan render writes it; see',
        'proxy.yaml next to this file). kubelet reaches the API through this pod, so it must start with',
        'no API: it needs the image (on the node or in a registry) and files on the host.',
        '',
        'Upgrades without a gap: kubelet starts a changed static pod while the old one is still',
        "terminating. The new pod takes the old one's listening sockets (127.0.0.1:6443 and the admin",
        'address) over the unix socket --handover-socket names, tells it that it accepts, and only then',
        'does the old one stop accepting; the preStop hook holds the old pod until then (at most',
        `${HANDOVER_WAIT_S}s), and it finishes its connections within --shutdown-grace=${SHUTDOWN_GRACE_S}s. The sockets are`,
        'the same kernel sockets throughout: no connection queued on them is lost, and no other process',
        'can bind the address (no SO_REUSEPORT). See docs/design/listener-handover.md.',
        '',
        "User 65532, no capabilities. discovery's cache (cacheFile) is written to /var/lib/kubeward,",
        'which must belong to 65532: install -d -o 65532 -g 65532 /var/lib/kubeward (the proxy creates',
        'its hand-over directory there, 0700).',
        SOURCE,
      ],
      object: proxyStaticPod(DEPLOY_PROXY_OPTIONS),
    },
    {
      path: 'deploy/watch/static-pod.yaml',
      comment: [
        'kubeward watch as a static pod on each control-plane node: copy to /etc/kubernetes/manifests/.',
        "kubeward is the container's first process, so kubelet's SIGTERM reaches it and every VIP is",
        "published down before the pod goes. Root without capabilities: it writes the host's",
        '/run/cloud-routes, which kubelet creates owned by root; the root filesystem is read-only.',
        '',
        'Upgrades without publishing down: the new pod takes the admin listener (127.0.0.1:9450) over',
        '--handover-socket and tells the old one it accepts; the old watcher then stops, leaves its VIP',
        'files as they are and lets go of the lock, and the new one publishes at its first verdict,',
        "inside the heartbeat's --stale-after. The preStop hook holds the old pod until then (at most",
        `${HANDOVER_WAIT_S}s). See docs/design/listener-handover.md.`,
        SOURCE,
      ],
      object: nodeAgentStaticPod('watch'),
    },
    {
      path: 'deploy/routes/static-pod.yaml',
      comment: [
        'kubeward routes as a static pod on each control-plane node, next to kubeward watch (same',
        "/run/cloud-routes). Copy to /etc/kubernetes/manifests/kubeward-routes.yaml. It programs the node's",
        'nftables, so it runs as root with NET_ADMIN alone (add NET_RAW only with --backend iptables on a',
        'node whose iptables is the legacy one). On GCP prefer kubeward-routes.service: a static pod only',
        'runs once kubelet does.',
        '',
        'Upgrades keep the rules: the new pod takes the admin listener (127.0.0.1:9451) over',
        '--handover-socket, programs the same rules in one transaction and tells the old one it accepts;',
        `the old one then stops without touching them. The preStop hook holds the old pod until then (at most ${HANDOVER_WAIT_S}s).`,
        SOURCE,
      ],
      object: nodeAgentStaticPod('routes'),
    },
    {
      path: 'deploy/node-agents/daemonset.yaml',
      comment: [
        'kubeward watch and routes as one DaemonSet on the control-plane nodes (the alternative to the two',
        'static pods in deploy/watch and deploy/routes, for clusters that manage node agents through the',
        'API). Both containers share /run/cloud-routes on the host; each has the privileges of its static',
        'pod. Not for the proxy: a node that reaches the API only through kubeward proxy cannot get a',
        "DaemonSet's pod without it.",
        '',
        'Updates surge (maxSurge 1, maxUnavailable 0; Kubernetes 1.22 or later): the new pod starts beside',
        "the old one, each container takes its predecessor's admin listener as the static pods do, and the",
        'old containers wait, holding nothing, until the controller deletes their pod. The VIP is never',
        'published down and the rules never withdrawn for an update.',
        SOURCE,
      ],
      object: nodeAgentsDaemonSet(),
    },
    {
      path: 'deploy/agent/static-pod.yaml',
      comment: [
        'kubeward agent as a static pod on each control-plane node: copy to /etc/kubernetes/manifests/ and',
        'the config to /etc/kubeward/agent.yaml (deploy/agent/agent.yaml). One process runs proxy, watch and',
        "routes; it is the container's first process, so kubelet's SIGTERM reaches it and the shutdown runs",
        "in order: every VIP published down, the rules settled, the proxy's connections drained.",
        'Root (watch writes the root-owned /run/cloud-routes) with NET_ADMIN alone (routes programs',
        'nftables). Upgrades hand over as the proxy pod does: the new agent takes the listening sockets',
        "(its proxy's and 127.0.0.1:9456) over --handover-socket, and the old one, once it hears the new",
        'one accepts, stops without publishing its VIPs down or removing rules: the new watcher and',
        'routes take the files and the rules over as they are. The preStop hook waits for that.',
        SOURCE,
      ],
      object: agentStaticPod(),
    },
  ];
}

export function renderShipped(m: ShippedManifest): string {
  return manifestYaml(m.comment, m.object);
}

/** The snippet of a manifest in the docs: the document without its comment block. */
export function renderSnippet(m: ShippedManifest): string {
  return manifestYaml([], m.object);
}
