// Test certificates: the CA lives in src/demo/openssl-ca.ts (kubeward demo makes one too); tests keep
// importing it from here.
export * from '../src/demo/openssl-ca.ts';
