// The kube-apiserver stand-in lives in src/demo/apiserver-standin.ts (kubeward demo runs three);
// tests keep importing it from here.
export * from '../src/demo/apiserver-standin.ts';
