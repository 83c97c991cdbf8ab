// Preloaded into a kubeward child (NODE_OPTIONS=--import) by tests that check which modules a mode
// loads: appends the URL of every module Node loads, sources or built chunks, to the file named by
// KUBEWARD_LOADED_MODULES_FILE. The built chunks map back to their inputs through dist/meta.json.
import { appendFileSync } from 'node:fs';
import { registerHooks } from 'node:module';

const out = process.env.KUBEWARD_LOADED_MODULES_FILE;
if (out) {
  registerHooks({
    load(url, context, nextLoad) {
      appendFileSync(out, `${url}\n`);
      return nextLoad(url, context);
    },
  });
}
