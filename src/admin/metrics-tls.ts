// The metrics listener's certificate and key, read and checked at start: a missing file or a pair
// OpenSSL refuses is bad usage (exit 2, one line naming the flag), never a crash at the first scrape.
import { readFile } from 'node:fs/promises';
import { UsageError, describeError } from '../base/errors.ts';
import { clientPairProblem } from '../probe/tls-material.ts';

export async function loadMetricsTls(certFile: string, keyFile: string): Promise<{ cert: string; key: string }> {
  const read = (path: string, flag: string) =>
    readFile(path, 'utf8').catch((err: unknown) => {
      throw new UsageError(`${flag} ${path}: cannot read it (${describeError(err)})`, { cause: err });
    });
  const [cert, key] = [await read(certFile, '--metrics-tls-cert-file'), await read(keyFile, '--metrics-tls-key-file')];
  const problem = clientPairProblem(cert, key);
  if (problem) {
    const [flag, path] = problem.key === 'cert' ? ['--metrics-tls-cert-file', certFile] : ['--metrics-tls-key-file', keyFile];
    throw new UsageError(`${flag} ${path} ${problem.problem}`);
  }
  return { cert, key };
}
