#!/usr/bin/env bash
# Builds hashicorp/vault:<v> without a registry: Vault v1.14.8, the last MPL-2.0 tag of the 1.14 line the Go
# module proxy serves (v1.14.9 is refused; v1.14.10 is BUSL-1.1). Vault's go.mod replaces api, sdk and the
# api/auth modules with local dirs that its module zip lacks, so a wrapper module repeats upstream's require
# list (keeps every dependency at upstream's version) and takes the published api v1.10.0 (v1.9.2 lacks the
# Raft*WithDRToken calls) and the published sdk v0.9.2 copied to $cache with the few symbols the
# release/1.14.x sdk added (FencingHABackend, CtxKeyRequestRole, the original-body context helpers)
# backported and 1.15's CreateOperation/ExistenceCheck panic removed; sdk v0.10.x does not fit (its EventSender is 1.15's). Static (CGO_ENABLED=0), no web UI.
# Vault's own source (and go-discover's) is copied and cut down by slim.sh to the parts the suites use (raft
# storage, Shamir seal, kv/pki/transit, token/userpass/approle/cert auth; no cloud plugins, seals, storage
# backends, agent or proxy): 846 packages instead of 2198, most of the cold build time saved. The cached binary
# records that cut ($bin/.build) and is rebuilt when it changes.
# Laid out like upstream's image: /bin/vault, /vault/{config,file,logs}, user vault (uid 100), ENTRYPOINT
# vault (upstream runs docker-entrypoint.sh under dumb-init; there is no shell here), CMD server -dev.
# pack.sh writes all owners as root, so the /vault dirs are world-writable. Skips a tarball newer than this
# script. Prints the tarball.
#   e2e/images/vault/build.sh OUT_DIR
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: $0 OUT_DIR}"
version="${VAULT_VERSION:-v1.14.8}"
ref="${VAULT_IMAGE:-hashicorp/vault:${version#v}}"
cache="${CAPSTAN_CACHE:-$HOME/.cache/capstan}"
tarball="$out/vault_${version#v}.tar"
log() { printf '[vault] %s\n' "$*" >&2; }
fresh() { [ -f "$tarball" ] && [ "$tarball" -nt "$here/build.sh" ] && [ "$tarball" -nt "$here/slim.sh" ] && [ "$tarball" -nt "$here/prune/main.go" ]; }
if fresh; then echo "$tarball"; exit 0; fi
# One build of a version at a time: CI starts one in the background and the e2e run's waits for it here.
mkdir -p "$cache" && exec 9>"$cache/vault-$version.lock"
if ! flock -n 9; then log "waiting for another build of Vault $version" && flock 9; fi
if fresh; then echo "$tarball"; exit 0; fi
export GOFLAGS="${GOFLAGS:-} -mod=mod" CGO_ENABLED=0 GOTOOLCHAIN=local
mod=github.com/hashicorp/vault
work="$cache/vault-$version/src" sdk="$cache/vault-$version/sdk" bin="$cache/vault-$version/bin"
vsrc="$cache/vault-$version/vault-src" dsrc="$cache/vault-$version/discover-src"
mkdir -p "$bin"
# What the cached binary was built from: this cut (slim.sh, the pruner) and the sdk backport (this script).
build_id="$(cat "$here/slim.sh" "$here/prune/main.go" "$here/build.sh" | sha256sum | cut -c1-16)"
if [ ! -x "$bin/vault" ] || [ "$(cat "$bin/.build" 2>/dev/null)" != "$build_id" ]; then
  log "building Vault $version"
  info="$(cd /tmp && go mod download -json "$mod@$version")"
  gomod="$(printf '%s\n' "$info" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  built="$(cd /tmp && go list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' "$mod@$version")"
  sdkdir="$(cd /tmp && go mod download -json "$mod/sdk@v0.9.2" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  rm -rf "$sdk" && cp -r "$sdkdir" "$sdk" && chmod -R u+w "$sdk"
  # sdk v0.9.2 (cut from main) panics on paths with a CreateOperation and no ExistenceCheck (vault#18492,
  # 1.15); the 1.14 sdk lacks that check and 1.14's enterprise-only stub paths (managed-keys/...) trip it.
  sed -i '/Detect the coding error of attempting to define a CreateOperation/,+8d' "$sdk/framework/backend.go"
  cat >"$sdk/logical/capstan_backport.go" <<'EOF'
package logical

import (
	"context"
	"io"
)

// Backported from the vault/sdk of Vault's release/1.14.x branch (not in the published sdk v0.9.2).

type CtxKeyRequestRole struct{}

func (c CtxKeyRequestRole) String() string {
	return "request-role"
}

type ctxKeyOriginalBody struct{}

func ContextOriginalBodyValue(ctx context.Context) (io.ReadCloser, bool) {
	value, ok := ctx.Value(ctxKeyOriginalBody{}).(io.ReadCloser)
	return value, ok
}

func CreateContextOriginalBody(parent context.Context, body io.ReadCloser) context.Context {
	return context.WithValue(parent, ctxKeyOriginalBody{}, body)
}
EOF
  cat >"$sdk/physical/capstan_backport.go" <<'EOF'
package physical

import "context"

// Backported from vault/sdk v0.10.1 (on Vault's release/1.14.x branch, not in the published sdk v0.9.2).

// FencingHABackend is an HABackend whose locks carry a fencing token that writes include.
type FencingHABackend interface {
	HABackend

	RegisterActiveNodeLock(l Lock) error
}

type unfencedWriteContextKeyType string

const unfencedWriteContextKey unfencedWriteContextKeyType = "vault-disable-fencing"

// UnfencedWriteCtx marks ctx so that writes on a FencingHABackend skip the fencing token.
func UnfencedWriteCtx(ctx context.Context) context.Context {
	return context.WithValue(ctx, unfencedWriteContextKey, true)
}

// IsUnfencedWrite reports whether ctx carries the unfenced flag.
func IsUnfencedWrite(ctx context.Context) bool {
	isUnfenced, ok := ctx.Value(unfencedWriteContextKey).(bool)
	return ok && isUnfenced
}
EOF
  # The cut-down copies of Vault's and go-discover's source (module cache dirs are read-only).
  discover="$(awk '$1 == "github.com/hashicorp/go-discover" { print $2 }' "$gomod")"
  vdir="$(printf '%s\n' "$info" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  ddir="$(cd /tmp && go mod download -json "github.com/hashicorp/go-discover@$discover" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')"
  rm -rf "$vsrc" "$dsrc" && cp -r "$vdir" "$vsrc" && cp -r "$ddir" "$dsrc" && chmod -R u+w "$vsrc" "$dsrc"
  (cd /tmp && go build -o "$cache/vault-$version/prune" "$here/prune/main.go")
  "$here/slim.sh" "$cache/vault-$version/prune" "$vsrc" "$dsrc"
  rm -rf "$work" && mkdir -p "$work"
  (
    cd "$work"
    { printf 'module capstan.local/vault-build\n\ngo 1.21\n\nrequire %s %s\n\n' "$mod" "$version"
      sed -n '/^require/,$p' "$gomod" | grep -v -e '^replace' -e '=>'; } >go.mod
    go mod edit -require="$mod/api@v1.10.0" -replace="$mod/sdk=$sdk" -replace="$mod=$vsrc" \
      -replace="github.com/hashicorp/go-discover=$dsrc"
    printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$mod" >tools.go
    # No `go mod tidy`: it fetches the modules of every platform, build tag and test (2.6 GB); go build with
    # -mod=mod (GOFLAGS) fetches only what this cut-down build imports (0.7 GB) and records their sums.
    nice go build -p "${GO_BUILD_P:-2}" -trimpath -ldflags "-s -w -X $mod/version.BuildDate=$built" -o "$bin/vault.tmp" "$mod"
    mv "$bin/vault.tmp" "$bin/vault" && echo "$build_id" >"$bin/.build"
  )
fi
rootfs="$(mktemp -d)" && chmod 0755 "$rootfs"
trap 'rm -rf "$rootfs"' EXIT
mkdir -p "$rootfs"/{bin,etc,tmp,home/vault} "$rootfs"/vault/{config,file,logs}
chmod 1777 "$rootfs/tmp"; chmod 0777 "$rootfs"/vault/{config,file,logs} "$rootfs/home/vault"
cp "$bin/vault" "$rootfs/bin/vault" && chmod 0755 "$rootfs/bin/vault"
[ -f /etc/ssl/certs/ca-certificates.crt ] && mkdir -p "$rootfs/etc/ssl/certs" && cp -L /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/:/sbin/nologin\nvault:x:100:1000:vault:/home/vault:/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnobody:x:65534:\nvault:x:1000:vault\n' >"$rootfs/etc/group"
"$here/../pack.sh" "$rootfs" "$ref" "$tarball.tmp" \
  '{"User":"vault","Entrypoint":["vault"],"Cmd":["server","-dev"],"ExposedPorts":{"8200/tcp":{}},"Volumes":{"/vault/logs":{},"/vault/file":{}},"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin","HOME=/home/vault"]}'
mv "$tarball.tmp" "$tarball"
echo "$tarball"
