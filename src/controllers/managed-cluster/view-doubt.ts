// Whether one round's observation of a cluster can be trusted enough to destroy anything (pure).
// An empty or sharply shrunk Node or instance list, or a Nova list that may leave servers out (a
// down cell shows them as UNKNOWN), looks exactly like "everything is orphaned": kubeward refuses
// that round instead, and says why.

export type DoubtCode = 'InstanceListPartial' | 'NodeListEmpty' | 'NodeListShrunk' | 'InstanceListEmpty' | 'InstanceListShrunk';

export interface Doubt {
  code: DoubtCode;
  message: string;
}

export interface ViewCounts {
  nodes: number;
  /** The cluster's instances (proven or named by a Node). */
  instances: number;
  /** Servers Nova reported with status UNKNOWN (down cell, microversion >= 2.69): present, but their details are not. */
  unknownServers: number;
  /** Counts of the last trusted round, when there was one. */
  lastNodes?: number;
  lastInstances?: number;
}

/** What routegc and flight both observe, reduced to the counts a doubt is judged on. */
export function viewCounts(v: {
  nodes: readonly unknown[];
  instances: readonly unknown[];
  unknownServers?: number;
  memory: { lastNodeCount?: number; lastInstanceCount?: number };
}): ViewCounts {
  return {
    nodes: v.nodes.length,
    instances: v.instances.length,
    unknownServers: v.unknownServers ?? 0,
    lastNodes: v.memory.lastNodeCount,
    lastInstances: v.memory.lastInstanceCount,
  };
}

export interface DoubtOptions {
  /** Refuse when a list lost more than this fraction since the last trusted round (default 0.5). */
  maxShrinkFraction?: number;
  /** Whether an empty Node list is doubt even with no instance (routegc without instance prefixes). */
  emptyNodesAlwaysDoubt?: boolean;
}

export const DEFAULT_MAX_SHRINK = 0.5;

const partial = (unknownServers: number): Doubt => ({
  code: 'InstanceListPartial',
  message: `Nova reports ${unknownServers} server(s) as UNKNOWN (a cell is down): their names and addresses are not known, so the instance list may be incomplete`,
});

const shrunkBy = (o: DoubtOptions) => (now: number, last: number | undefined) =>
  last !== undefined && now < last * (1 - (o.maxShrinkFraction ?? DEFAULT_MAX_SHRINK));

/**
 * The doubts the instance list alone raises, for a round whose Node list could not be read: a
 * partial Nova list or one that shrank. Such a round destroys nothing anyway; this holds back its
 * writes (tags, metadata, groups, rules) too.
 */
export function instanceListDoubt(c: Omit<ViewCounts, 'nodes' | 'lastNodes'>, o: DoubtOptions = {}): Doubt | undefined {
  if (c.unknownServers > 0) return partial(c.unknownServers);
  if (shrunkBy(o)(c.instances, c.lastInstances))
    return {
      code: 'InstanceListShrunk',
      message: `the instance list shrank from ${c.lastInstances} to ${c.instances} since the last round (the Node list could not be read)`,
    };
  return undefined;
}

/** The first reason not to trust this view, or undefined. */
export function doubtAboutView(c: ViewCounts, o: DoubtOptions = {}): Doubt | undefined {
  const shrunk = shrunkBy(o);
  if (c.unknownServers > 0) return partial(c.unknownServers);
  if (c.nodes === 0 && (c.instances > 0 || o.emptyNodesAlwaysDoubt)) {
    return {
      code: 'NodeListEmpty',
      message: `the cluster's Node list is empty${c.instances ? ` while ${c.instances} of its instance(s) exist` : ''}: a wrong kubeconfig, a restore or an RBAC change looks the same as "nothing is registered"`,
    };
  }
  if (shrunk(c.nodes, c.lastNodes)) return { code: 'NodeListShrunk', message: `the Node list shrank from ${c.lastNodes} to ${c.nodes} since the last round` };
  if (c.instances === 0 && c.nodes > 0) return { code: 'InstanceListEmpty', message: `the instance list is empty while ${c.nodes} Node(s) exist` };
  if (shrunk(c.instances, c.lastInstances))
    return {
      code: 'InstanceListShrunk',
      message: `the instance list shrank from ${c.lastInstances} to ${c.instances} since the last round while ${c.nodes} Node(s) exist`,
    };
  return undefined;
}
