// Runs the OpenStack emulator as a process, for people (point the openstack CLI at it) and for tests
// that want it out of process. Prints the auth URL and a clouds.yaml; stops on SIGINT/SIGTERM.
import { parseArgs } from 'node:util';
import { ManualClock, systemClock } from '../../src/base/clock.ts';
import { OpenStackEmulator } from './openstack-emulator.ts';

const HELP = `Usage: npm run openstack-emulator -- [--host 127.0.0.1] [--port 8890] [--max-routes 30]
       [--page-size 1000] [--manual-clock]

Serves Keystone v3, Nova 2.69, Neutron, Cinder v3, Octavia and a little Glance on one port.
Users: admin/admin (project admin, role admin) and demo/demo (project demo, role member).
Admin API (no token): GET /_admin/state, POST /_admin/faults {"service":"network","path":"^/routers",
"status":503,"times":2}, POST /_admin/delays {"kind":"volume-delete","delayMs":30000} or
{"kind":"volume-delete","stuck":true}, POST /_admin/tokens/revoke, POST /_admin/clock/advance {"ms":1000},
POST /_admin/bulk/projects {"count":100,"prefix":"c","servers":3} (N tenants with user, network, router,
group and servers in one call; the answer lists each tenant's password and ids).`;

function main(): void {
  const { values } = parseArgs({
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '8890' },
      'max-routes': { type: 'string', default: '30' },
      'page-size': { type: 'string', default: '1000' },
      'manual-clock': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP + '\n');
    return;
  }
  const numbers = { port: Number(values.port), maxRoutes: Number(values['max-routes']), pageSize: Number(values['page-size']) };
  for (const [k, v] of Object.entries(numbers)) {
    if (!Number.isInteger(v) || v < 0) {
      process.stderr.write(`openstack-emulator: --${k.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())} must be a whole number\n`);
      process.exit(2);
    }
  }
  const emu = new OpenStackEmulator({
    host: values.host,
    port: numbers.port,
    maxRoutes: numbers.maxRoutes,
    maxPageSize: numbers.pageSize,
    clock: values['manual-clock'] ? new ManualClock(Date.now()) : systemClock,
  });
  emu.start().then(
    () => {
      process.stdout.write(
        `openstack-emulator listening on ${emu.url}\n\n# openrc\nexport OS_AUTH_URL=${emu.authUrl} OS_USERNAME=admin OS_PASSWORD=admin ` +
          `OS_PROJECT_NAME=admin OS_USER_DOMAIN_NAME=Default OS_PROJECT_DOMAIN_NAME=Default OS_REGION_NAME=RegionOne OS_IDENTITY_API_VERSION=3\n\n` +
          `# clouds.yaml\n${emu.cloudsYaml()}`,
      );
    },
    (err: Error) => {
      process.stderr.write(`openstack-emulator: cannot listen on ${values.host}:${values.port}: ${err.message}\n`);
      process.exit(1);
    },
  );
  const stop = () => void emu.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

main();
