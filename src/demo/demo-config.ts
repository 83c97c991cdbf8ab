// kubeward demo's settings: the fields, flags and help text. The command (src/cli/demo.ts),
// --help and docs/demo.md come from here.
import { prefault } from 'zod/mini';
import { boolean, duration } from '../config/fields.ts';
import type { ModeDeclaration } from '../config/mode-declaration.ts';

export const DEFAULTS = { duration: '40s' } as const;

export const demoFields = {
  duration: prefault(duration({ min: 10_000 }), DEFAULTS.duration),
  color: prefault(boolean, true),
};

/** The demo's settings: flags, help and fields. */
export const demoDeclaration: ModeDeclaration<typeof demoFields> = {
  name: 'demo',
  summary: 'watch kubeward ride out apiserver failures on local stand-ins (no root, ends by itself)',
  helpAfter: `
Starts three apiserver stand-ins on 127.0.0.1, "kubeward proxy" in front of them and "kubeward
watch" on the first, drives requests and watch streams through the proxy, then kills one
apiserver, puts another into graceful shutdown, hangs a third and brings them back. The table shows
what the proxy believes next to what is really happening; the summary counts client errors and
how long each failure took to be taken out. Component logs go to a file named at the end.
`,
  adminPort: null,
  fields: demoFields,
  flags: [
    { key: 'duration', value: '<duration>', help: 'how long the whole run takes (at least 10s)', defaultText: DEFAULTS.duration },
    { key: 'color', help: 'colours and a redrawn table on a terminal', defaultText: 'on', negatable: true },
  ],
};
