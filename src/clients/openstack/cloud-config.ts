// Which cloud to talk to and how to authenticate: a clouds.yaml entry overlaid with OS_* variables,
// as the openstack CLI does (its --os-* options default to the variables and win over the file).
import { UsageError } from '../../base/errors.ts';
import { configFileCandidates, readFirstConfigFile, type FoundFile, type LookupEnvironment, type ReadText } from './clouds-file-lookup.ts';

export type EndpointInterface = 'public' | 'internal' | 'admin';

interface ScopeFields {
  projectId?: string;
  projectName?: string;
  projectDomainId?: string;
  projectDomainName?: string;
  /** Domain scope, used only when no project is named. */
  domainId?: string;
  domainName?: string;
}

export interface PasswordAuth extends ScopeFields {
  type: 'password';
  username?: string;
  userId?: string;
  userDomainName?: string;
  userDomainId?: string;
  password: string;
}

/** Application credentials carry their own scope; Keystone rejects an explicit one. */
export interface ApplicationCredentialAuth {
  type: 'applicationCredential';
  id?: string;
  name?: string;
  /** With `name`, the owner must be named too. */
  username?: string;
  userId?: string;
  userDomainName?: string;
  userDomainId?: string;
  secret: string;
}

export type CloudAuth = PasswordAuth | ApplicationCredentialAuth;

export interface CloudConfig {
  /** The clouds.yaml entry, or "envvars" when only OS_* variables were used. */
  cloudName: string;
  /** Where the settings came from (a file path or "environment"), for messages. */
  source: string;
  authUrl: string;
  auth: CloudAuth;
  regionName?: string;
  interface: EndpointInterface;
  /** compute_api_version / OS_COMPUTE_API_VERSION; the client's default is used when absent. */
  computeApiVersion?: string;
}

type Flat = Record<string, string | undefined>;

/** clouds.yaml auth keys and the OS_* variables that override them. */
const AUTH_ENV: Record<string, string[]> = {
  auth_url: ['OS_AUTH_URL'],
  username: ['OS_USERNAME'],
  user_id: ['OS_USER_ID'],
  password: ['OS_PASSWORD'],
  project_name: ['OS_PROJECT_NAME', 'OS_TENANT_NAME'],
  project_id: ['OS_PROJECT_ID', 'OS_TENANT_ID'],
  user_domain_name: ['OS_USER_DOMAIN_NAME'],
  user_domain_id: ['OS_USER_DOMAIN_ID'],
  project_domain_name: ['OS_PROJECT_DOMAIN_NAME'],
  project_domain_id: ['OS_PROJECT_DOMAIN_ID'],
  domain_name: ['OS_DOMAIN_NAME'],
  domain_id: ['OS_DOMAIN_ID'],
  application_credential_id: ['OS_APPLICATION_CREDENTIAL_ID'],
  application_credential_name: ['OS_APPLICATION_CREDENTIAL_NAME'],
  application_credential_secret: ['OS_APPLICATION_CREDENTIAL_SECRET'],
};
const TOP_ENV: Record<string, string[]> = {
  auth_type: ['OS_AUTH_TYPE'],
  region_name: ['OS_REGION_NAME'],
  interface: ['OS_INTERFACE', 'OS_ENDPOINT_TYPE'],
  compute_api_version: ['OS_COMPUTE_API_VERSION'],
  cacert: ['OS_CACERT'],
};

function fromEnv(env: LookupEnvironment['env'], table: Record<string, string[]>): Flat {
  const out: Flat = {};
  for (const [key, names] of Object.entries(table)) {
    const value = names.map((n) => env[n]).find((v) => v !== undefined && v !== '');
    if (value !== undefined) out[key] = value;
  }
  return out;
}

function flat(obj: unknown): Flat {
  const out: Flat = {};
  if (obj && typeof obj === 'object') {
    for (const [k, v] of Object.entries(obj)) if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
  }
  return out;
}

function cloudEntry(found: FoundFile | undefined, name: string): Record<string, unknown> | undefined {
  const clouds = found?.doc.clouds;
  if (!clouds || typeof clouds !== 'object') return undefined;
  const entry = (clouds as Record<string, unknown>)[name];
  return entry && typeof entry === 'object' ? (entry as Record<string, unknown>) : undefined;
}

export interface ResolveInput {
  /** From --os-cloud; OS_CLOUD is used when absent. */
  cloudName?: string;
  env: LookupEnvironment['env'];
  clouds?: FoundFile;
  secure?: FoundFile;
}

/** Pure: merges the chosen cloud (clouds.yaml, then secure.yaml, then OS_*) into a CloudConfig. */
export function resolveCloudConfig(input: ResolveInput): CloudConfig {
  const name = input.cloudName || input.env.OS_CLOUD || undefined;
  let top: Flat = {};
  let auth: Flat = {};
  let source = 'environment';
  if (name !== undefined) {
    const entry = cloudEntry(input.clouds, name);
    if (!entry) {
      const where = input.clouds
        ? `in ${input.clouds.path}`
        : 'because no clouds.yaml was found (looked in OS_CLIENT_CONFIG_FILE, ./, ~/.config/openstack/, /etc/openstack/)';
      throw new UsageError(`--os-cloud: cloud "${name}" is not defined ${where}`);
    }
    const secret = cloudEntry(input.secure, name) ?? {};
    top = { ...flat(entry), ...flat(secret) };
    auth = { ...flat(entry.auth), ...flat(secret.auth) };
    source = input.clouds!.path;
  } else if (!input.env.OS_AUTH_URL) {
    throw new UsageError('no OpenStack cloud chosen: pass --os-cloud NAME (or set OS_CLOUD), or set OS_AUTH_URL and credentials');
  }
  top = { ...top, ...fromEnv(input.env, TOP_ENV) };
  auth = { ...auth, ...fromEnv(input.env, AUTH_ENV) };
  return buildConfig(name ?? 'envvars', source, top, auth);
}

function buildConfig(cloudName: string, source: string, top: Flat, a: Flat): CloudConfig {
  const where = `cloud "${cloudName}" (${source})`;
  if (!a.auth_url) throw new UsageError(`${where}: auth.auth_url is missing; add it or set OS_AUTH_URL`);
  if (top.cacert) throw new UsageError(`${where}: cacert is not supported by kubeward's client; remove it and set NODE_EXTRA_CA_CERTS=${top.cacert}`);
  const iface = (top.interface ?? 'public').replace(/URL$/, '');
  if (iface !== 'public' && iface !== 'internal' && iface !== 'admin') {
    throw new UsageError(`${where}: interface "${top.interface}" is not one of public, internal, admin`);
  }
  const type = top.auth_type ?? (a.application_credential_secret ? 'v3applicationcredential' : 'password');
  return {
    cloudName,
    source,
    authUrl: a.auth_url.replace(/\/+$/, ''),
    auth: buildAuth(where, type, a),
    regionName: top.region_name,
    interface: iface,
    computeApiVersion: top.compute_api_version,
  };
}

function buildAuth(where: string, type: string, a: Flat): CloudAuth {
  const user = { username: a.username, userId: a.user_id, userDomainName: a.user_domain_name, userDomainId: a.user_domain_id };
  if (type === 'v3applicationcredential' || type === 'applicationcredential') {
    if (!a.application_credential_secret)
      throw new UsageError(`${where}: auth.application_credential_secret is missing; add it or set OS_APPLICATION_CREDENTIAL_SECRET`);
    if (!a.application_credential_id && !a.application_credential_name) {
      throw new UsageError(`${where}: name the application credential with auth.application_credential_id (or OS_APPLICATION_CREDENTIAL_ID)`);
    }
    if (!a.application_credential_id && !a.username && !a.user_id) {
      throw new UsageError(`${where}: an application credential given by name needs auth.username or auth.user_id`);
    }
    return {
      type: 'applicationCredential',
      id: a.application_credential_id,
      name: a.application_credential_name,
      secret: a.application_credential_secret,
      ...user,
    };
  }
  if (type !== 'password' && type !== 'v3password') {
    throw new UsageError(`${where}: auth_type "${type}" is not supported; use password or v3applicationcredential`);
  }
  if (!a.password) throw new UsageError(`${where}: auth.password is missing; add it (or secure.yaml) or set OS_PASSWORD`);
  if (!a.username && !a.user_id) throw new UsageError(`${where}: auth.username or auth.user_id is missing; add one or set OS_USERNAME`);
  if (a.username && !a.user_id && !a.user_domain_name && !a.user_domain_id) {
    throw new UsageError(`${where}: auth.user_domain_name is needed with a user name; add it or set OS_USER_DOMAIN_NAME (often "Default")`);
  }
  return {
    type: 'password',
    ...user,
    password: a.password,
    projectId: a.project_id,
    projectName: a.project_name,
    // A project name without its own domain is looked up in the user's domain, as openrc files assume.
    projectDomainId: a.project_domain_id ?? (a.project_domain_name ? undefined : a.user_domain_id),
    projectDomainName: a.project_domain_name ?? (a.project_domain_id ? undefined : a.user_domain_name),
    domainId: a.domain_id,
    domainName: a.domain_name,
  };
}

export interface LoadCloudInput {
  cloudName?: string;
  where: LookupEnvironment;
  read?: ReadText;
}

/** Finds clouds.yaml/secure.yaml (only when a cloud is named) and resolves the cloud. */
export async function loadCloudConfig(input: LoadCloudInput): Promise<CloudConfig> {
  const named = input.cloudName || input.where.env.OS_CLOUD;
  const clouds = named ? await readFirstConfigFile(configFileCandidates('clouds', input.where), input.read) : undefined;
  const secure = named ? await readFirstConfigFile(configFileCandidates('secure', input.where), input.read) : undefined;
  return resolveCloudConfig({ cloudName: input.cloudName, env: input.where.env, clouds, secure });
}
