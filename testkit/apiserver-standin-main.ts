// Runs an ApiserverStandin as its own process (inside a network namespace, for example), controlled
// by lines on stdin: "readyz ok|fail|hang", "close", "open", "exit", "shutdown DELAY_MS" (a graceful
// shutdown as kube-apiserver's, then exit). Prints "listening HOST PORT".
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { ApiserverStandin, type ReadyzMode } from './apiserver-standin.ts';

const { values } = parseArgs({
  options: {
    cert: { type: 'string' },
    key: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string', default: '0' },
    name: { type: 'string', default: 'apiserver' },
    readyz: { type: 'string', default: 'ok' },
  },
});
if (!values.cert || !values.key) {
  process.stderr.write('usage: apiserver-standin-main.ts --cert FILE --key FILE [--host H] [--port P] [--readyz ok|fail|hang]\n');
  process.exit(2);
}
const standin = new ApiserverStandin({
  cert: await readFile(values.cert, 'utf8'),
  key: await readFile(values.key, 'utf8'),
  host: values.host,
  port: Number(values.port),
  name: values.name,
});
standin.setReadyz(values.readyz as ReadyzMode);
await standin.open();
process.stdout.write(`listening ${standin.host} ${standin.port}\n`);

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const [cmd, arg] = line.trim().split(/\s+/);
  const done = (): void => void process.stdout.write(`ok ${line.trim()}\n`);
  if (cmd === 'readyz' && (arg === 'ok' || arg === 'fail' || arg === 'hang')) {
    standin.setReadyz(arg);
    done();
  } else if (cmd === 'close') void standin.close().then(done);
  else if (cmd === 'open') void standin.open().then(done);
  else if (cmd === 'shutdown' && Number.isInteger(Number(arg))) void standin.shutdown(Number(arg)).then(() => process.exit(0));
  else if (cmd === 'exit') void standin.close().then(() => process.exit(0));
  else process.stdout.write(`error unknown command ${line.trim()}\n`);
});
lines.on('close', () => void standin.close().then(() => process.exit(0)));
process.on('SIGTERM', () => void standin.close().then(() => process.exit(0)));
