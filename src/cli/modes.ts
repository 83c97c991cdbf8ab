// The list of modes. Adding a mode: write src/cli/<mode>.ts exporting its command, add it here.
import type { Command } from 'commander';
import { proxyCommand } from './proxy.ts';
import { watchCommand } from './watch.ts';
import { demoCommand } from './demo.ts';
import { routesCommand } from './routes.ts';
import { planCommand } from './plan.ts';
import { checkCertCommand } from './check-cert.ts';
import { operatorCommand } from './operator.ts';
import { deorbitCommand } from './deorbit.ts';
import { routegcCommand } from './routegc.ts';
import { flightCommand } from './flight.ts';

export function modeCommands(): Command[] {
  return [
    proxyCommand(),
    watchCommand(),
    demoCommand(),
    routesCommand(),
    planCommand(),
    checkCertCommand(),
    operatorCommand(),
    deorbitCommand(),
    routegcCommand(),
    flightCommand(),
  ];
}
