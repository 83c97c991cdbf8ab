// `kubeward demo`: three apiserver stand-ins, the proxy in front of them and the watcher on the
// first, a steady client load, then an outage script, with a live table and a summary. Runs on
// loopback only, needs no root and no flags, and ends by itself. Settings: src/demo/demo-config.ts;
// the run: src/demo/run-demo.ts.
import { demoDeclaration, type demoFields } from '../demo/demo-config.ts';
import { runDemo } from '../demo/run-demo.ts';
import { NativeRelayLoader } from '../proxy/relay/native-relay.ts';
import { buildModeCommand, type ModeSpec } from './mode-command.ts';

const spec: ModeSpec<typeof demoFields> = {
  ...demoDeclaration,
  // A mode runs once per process: the process's one native relay loader.
  run: async (c, { shutdown }) => runDemo(c.duration, c.color && process.stdout.isTTY === true, shutdown, new NativeRelayLoader()),
};

export const demoCommand = () => buildModeCommand(spec);
