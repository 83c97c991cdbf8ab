import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { freePorts } from './wait-for.ts';

test('freePorts gives n different ports, each free again once it returns', async () => {
  const ports = await freePorts(8);
  assert.equal(new Set(ports).size, 8, `distinct: ${ports.join(', ')}`);
  for (const port of ports) {
    const srv = createServer();
    await new Promise<void>((resolve, reject) => srv.once('error', reject).listen(port, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => srv.close(() => resolve()));
  }
});
