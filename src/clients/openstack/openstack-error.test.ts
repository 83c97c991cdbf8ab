import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenStackError, codeForStatus, parseFault } from './openstack-error.ts';

const SHAPES: [string, string, { type?: string; message?: string }][] = [
  ['Neutron', '{"NeutronError":{"type":"RoutesExhausted","message":"too many","detail":""}}', { type: 'RoutesExhausted', message: 'too many' }],
  ['Nova', '{"itemNotFound":{"code":404,"message":"Instance x could not be found."}}', { type: 'itemNotFound', message: 'Instance x could not be found.' }],
  [
    'Keystone',
    '{"error":{"code":401,"message":"requires authentication","title":"Unauthorized"}}',
    { type: 'Unauthorized', message: 'requires authentication' },
  ],
  ['Octavia', '{"faultcode":"Client","faultstring":"Load Balancer x not found.","debuginfo":null}', { type: 'Client', message: 'Load Balancer x not found.' }],
  ['an HTML page', '<html><body><h1>502 Bad Gateway</h1></body></html>', { message: '502 Bad Gateway' }],
  ['an empty body', '', {}],
];
for (const [name, body, want] of SHAPES) test(`the fault in a ${name} body is read`, () => assert.deepEqual(parseFault(body), want));

test('status codes map to stable error codes', () => {
  assert.deepEqual([404, 409, 412, 400, 500].map(codeForStatus), ['E_NOT_FOUND', 'E_CONFLICT', 'E_CONFLICT', 'E_HTTP', 'E_HTTP']);
});

test('the message names service, call, status, fault type, request ID and attempts', () => {
  const err = new OpenStackError('E_HTTP', {
    service: 'neutron',
    method: 'PUT',
    path: '/v2.0/routers/r1',
    status: 400,
    faultType: 'RoutesExhausted',
    faultMessage: 'max 30',
    requestId: 'req-1',
    attempts: 1,
  });
  assert.equal(err.message, 'neutron PUT /v2.0/routers/r1: 400 RoutesExhausted: max 30 (request req-1)');
  const timeout = new OpenStackError('E_TIMEOUT', { service: 'nova', method: 'GET', path: '/servers', faultMessage: 'no answer within 100 ms', attempts: 4 });
  assert.equal(timeout.message, 'nova GET /servers: no answer: no answer within 100 ms (4 attempts)');
});
