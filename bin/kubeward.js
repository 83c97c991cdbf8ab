#!/usr/bin/env node
// The installed entry point. kubeward's sources are TypeScript that Node 24 runs directly; an older
// Node cannot, so say so plainly instead of failing on the first type annotation.
const major = Number(process.versions.node.split('.')[0]);
if (major < 24) {
  process.stderr.write(
    `kubeward needs Node.js 24 or newer; this is ${process.version}.\n` +
      'From a checkout, "npm ci" installs Node 24 into node_modules and "npm run kubeward -- <mode> ..." uses it.\n',
  );
  process.exit(2);
}
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});
const { main } = await import('../src/cli/main.ts');
await main(process.argv.slice(2));
