// Certificates made with the openssl command: a CA, server certificates with chosen SANs and
// validity, and client certificates, for kubeward demo's stand-ins and for tests (testkit/certs.ts).
// Everything goes into one directory: the caller's, or a new temporary one the CA's close() removes.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { once } from '../base/lifecycle.ts';

const run = promisify(execFile);

export interface CertPair {
  certFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

export interface TestCa extends CertPair {
  dir: string;
  /** A server certificate signed by this CA. SANs like "DNS:localhost", "IP:127.0.0.1". */
  issueServer(name: string, sans: string[], opts?: { days?: number; notAfterPast?: boolean }): Promise<CertPair>;
  /** A client certificate (CN = user, O = group) signed by this CA. */
  issueClient(name: string, cn: string, org?: string): Promise<CertPair>;
  /**
   * Removes the directory when the CA made it (a directory passed in is the caller's to remove);
   * later callers join the same removal.
   */
  close(): Promise<void>;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  await run('openssl', args, { cwd });
}

async function readPair(dir: string, name: string): Promise<CertPair> {
  const certFile = join(dir, `${name}.crt`);
  const keyFile = join(dir, `${name}.key`);
  return { certFile, keyFile, cert: await readFile(certFile, 'utf8'), key: await readFile(keyFile, 'utf8') };
}

/** Makes a CA in dir, or in a new temporary directory that its close() removes. */
export async function createTestCa(name = 'kubeward-test-ca', dir?: string): Promise<TestCa> {
  const where = dir ?? (await mkdtemp(join(tmpdir(), 'kw-ca-')));
  const close = once(() => (dir === undefined ? rm(where, { recursive: true, force: true }) : Promise.resolve()));
  try {
    await makeCa(name, where);
    return await caIn(where, close);
  } catch (err) {
    await close();
    throw err;
  }
}

async function makeCa(name: string, where: string): Promise<void> {
  await openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '30',
      '-subj',
      `/CN=${name}`,
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    where,
  );
}

async function caIn(where: string, close: () => Promise<void>): Promise<TestCa> {
  const ca = await readPair(where, 'ca');
  const issue = async (file: string, subj: string, ext: string, days: number, past: boolean): Promise<CertPair> => {
    await openssl(
      ['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', subj, '-keyout', `${file}.key`, '-out', `${file}.csr`],
      where,
    );
    await writeFile(join(where, `${file}.ext`), ext);
    const validity = past ? ['-days', '-1'] : ['-days', String(days)];
    await openssl(
      [
        'x509',
        '-req',
        '-in',
        `${file}.csr`,
        '-CA',
        'ca.crt',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        ...validity,
        '-extfile',
        `${file}.ext`,
        '-out',
        `${file}.crt`,
      ],
      where,
    );
    return readPair(where, file);
  };
  return {
    ...ca,
    dir: where,
    issueServer: (file, sans, opts = {}) =>
      issue(
        file,
        `/CN=${file}`,
        `subjectAltName=${sans.join(',')}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`,
        opts.days ?? 30,
        opts.notAfterPast ?? false,
      ),
    issueClient: (file, cn, org) => issue(file, `/CN=${cn}${org ? `/O=${org}` : ''}`, 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n', 30, false),
    close,
  };
}
