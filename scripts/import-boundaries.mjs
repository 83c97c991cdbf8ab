// Which files are decision code, shared by .dependency-cruiser.mjs (what they may import) and
// eslint.config.js (which names of node:net they may use). docs/architecture.md "Rules" lists the
// same; change them together.

/** Decision files: pure functions from an observation to a verdict. */
export const DECISION = [
  '^src/.+/decide-[^/]+[.]ts$',
  '^src/proxy/(plan-[^/]+|pick-upstream|slow-start|recovery-pace|version-skew)[.]ts$',
  '^src/plan/plan-endpoints[.]ts$',
  '^src/routes/desired-ruleset[.]ts$',
  '^src/watch/hysteresis[.]ts$',
  '^src/clients/kube/lease-decision[.]ts$',
  '^src/controllers/.+-rules[.]ts$',
  '^src/controllers/managed-cluster/(view-doubt|cidr-scope|blast-budget|cluster-identity)[.]ts$',
];

/**
 * Pure helpers decision files may import for values (not only types): vocabularies with constants,
 * parsers and small functions that do no I/O. Each is held to the same rule as a decision file.
 */
export const PURE_HELPERS = [
  '^src/controllers/managed-cluster/(cidr|cluster-view)[.]ts$',
  '^src/controllers/flight/(flight-types|instance-state)[.]ts$',
  '^src/controllers/deorbit/(deorbit-types|deorbit-events)[.]ts$',
  '^src/plan/(inventory|kubespray-defaults)[.]ts$',
];

export const TESTS = '[.]test[.]ts$|[.]test-helpers[.]ts$';
