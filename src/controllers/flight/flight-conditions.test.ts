import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flightConditions, type FlightRoundSummary } from './flight-conditions.ts';

test("flight's summary: failures first, then what it found and cannot repair, then what it repaired", () => {
  const round = (x: Partial<FlightRoundSummary>): FlightRoundSummary => ({ done: [], failed: [], findings: [], nodeConditions: [], ...x });
  const one = (s: FlightRoundSummary) => flightConditions({ round: s })[0]!;
  assert.deepEqual([one(round({})).status, one(round({})).reason], ['True', 'NothingToRepair']);
  assert.match(one(round({ done: [{ kind: 'add-tags' }, { kind: 'add-tags' }] })).message, /add-tags ×2/);
  const found = one(
    round({
      nodeConditions: [
        { type: 'kubeward.io/RouteConflict', status: 'True' },
        { type: 'kubeward.io/RouteMissing', status: 'False' },
      ],
      findings: [{ reason: 'NodeGone' }],
    }),
  );
  assert.deepEqual([found.status, found.reason, found.message], ['False', 'ProblemsFound', 'found and not repaired: NodeGone, RouteConflict']);
  assert.equal(one(round({ failed: [{ action: { kind: 'create-rule' }, error: '500' }], findings: [{ reason: 'NodeGone' }] })).reason, 'RepairsFailed');
  assert.equal(flightConditions({ error: new Error('down') })[0]!.reason, 'RoundFailed');
});

test('a refused round is FlightHealthy=False/Refused naming the reason, before anything else', () => {
  const wish = flightConditions({
    round: {
      done: [],
      failed: [{ action: { kind: 'x' }, error: 'e' }],
      findings: [],
      nodeConditions: [],
      refusal: { code: 'NodeListEmpty', message: "the cluster's Node list is empty" },
    },
  })[0]!;
  assert.deepEqual([wish.status, wish.reason], ['False', 'Refused']);
  assert.match(wish.message, /\(NodeListEmpty\): the cluster's Node list is empty/);
});

test('an owner change is its own reason, OwnerChanged, with the message naming the earlier owner and the count', () => {
  const message = '3 server(s) carry owner id uid-old, an earlier ManagedCluster of this name';
  const wish = flightConditions({ round: { done: [], failed: [], findings: [], nodeConditions: [], refusal: { code: 'OwnerChanged', message } } })[0]!;
  assert.deepEqual([wish.status, wish.reason, wish.message], ['False', 'OwnerChanged', message]);
});
