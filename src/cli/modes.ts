// The list of modes. Adding a mode: write src/cli/<mode>.ts exporting its command, add it here.
import type { Command } from 'commander';
import { watchCommand } from './watch.ts';

export function modeCommands(): Command[] {
  return [
    watchCommand(),
  ];
}
