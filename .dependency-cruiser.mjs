// Import boundaries, checked by `npm run lint` (depcruise). The rules are the ones written in
// docs/architecture.md ("Rules"); change both together.
//
// Type-only imports (`import type`) are free everywhere except in cycles: they vanish at run time,
// and decision code is expected to name the types of the world it decides about.

import { DECISION, PURE_HELPERS, TESTS } from './scripts/import-boundaries.mjs';

/** base/ is what every folder may import, decision code too, except its few I/O parts. */
const PURE_BASE = '^src/base/(?!(logger|lifecycle|lazy-builtins)[.]ts$)[^/]+[.]ts$';

/** Factories that open real connections: only composition roots (and the listed wiring) call them. */
const CLIENT_FACTORIES = '^src/clients/(kube/(load-kube-config|kube-api)|openstack/create-openstack-client)[.]ts$';

/**
 * Where clients are wired outside src/cli/: the operator builds one cluster's clients from that
 * cluster's Secrets at run time (cluster-clients.ts, cluster-connector.ts); the proxy's discovery
 * builds its kube client from --kubeconfig when discovery (re)starts.
 */
const RUNTIME_WIRING = '^src/controllers/managed-cluster/(cluster-clients|cluster-connector)[.]ts$|^src/proxy/kubernetes-discovery[.]ts$';

export default {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles, type-only ones included: move the shared part to the file both sides already import.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'decision-imports-pure-only',
      comment:
        'A decision file imports values only from src/base/ (not its logger, lifecycle or lazy-builtins), other decision files and the pure ' +
        'helpers in scripts/import-boundaries.mjs; anything else as `import type`. See docs/architecture.md "Rules".',
      severity: 'error',
      from: { path: [...DECISION, ...PURE_HELPERS], pathNot: TESTS },
      to: {
        dependencyTypesNot: ['type-only'],
        // node:net for its address checks alone (isIP, isIPv4, isIPv6; eslint.config.js holds
        // these files to those names).
        pathNot: [...DECISION, ...PURE_HELPERS, PURE_BASE, '^(node:)?net$'],
      },
    },
    {
      name: 'src-not-to-testkit',
      comment: 'Product code never imports test code (testkit/, test/, bench/); tests next to the code may.',
      severity: 'error',
      from: { path: '^src/', pathNot: TESTS },
      to: { path: '^(testkit|test|bench)/' },
    },
    {
      name: 'cli-is-the-top',
      comment: 'src/cli/ holds the composition roots: nothing below it imports it.',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/cli/|${TESTS}` },
      to: { path: '^src/cli/' },
    },
    {
      name: 'only-cli-wires-clients',
      comment: 'Real API clients are made in the composition roots (src/cli/) and handed down as ports; RUNTIME_WIRING lists the exceptions and why.',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/cli/|^src/clients/|${RUNTIME_WIRING}|${TESTS}` },
      to: { path: CLIENT_FACTORIES, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'kube-library-in-clients-only',
      comment: '@kubernetes/client-node is used only under src/clients/kube/ (others may import its types).',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/clients/kube/|${TESTS}` },
      to: { path: '@kubernetes/client-node', dependencyTypesNot: ['type-only'] },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Keep type-only imports in the graph (cycles through types count; the rules above exempt them).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(node_modules|dist|bench/results|coverage)/' },
  },
};
