// The one image reference every shipped manifest names: what `npm run image`
// (deploy/image/build-image.sh) tags besides its content-addressed tag, and what
// `npm run image -- --push REGISTRY` pushes as REGISTRY/kubeward:<version>.
import pkg from '../../package.json' with { type: 'json' };

/** The repository the build tags locally; a push replaces "localhost" with the registry. */
export const KUBEWARD_IMAGE_REPO = 'localhost/kubeward';

/** localhost/kubeward:<package.json version>. */
export const KUBEWARD_IMAGE = `${KUBEWARD_IMAGE_REPO}:${pkg.version}`;
