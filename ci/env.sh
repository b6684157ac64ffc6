# Sourced by .ci/run: checks and sets up what the CI machine needs that the
# project's own make targets do not install (Go on PATH, root), builds the
# CLI, and removes any cluster (local or kind) and private Docker daemon an
# earlier, interrupted run left behind.
# Debian packages, Kubernetes and etcd are installed or built by kubeproof on
# first use and cached in ~/.cache/kubeproof.

if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
  export PATH="$PATH:/usr/local/go/bin"
fi
if ! command -v go >/dev/null 2>&1; then
  echo "ci: no Go toolchain found (install Go 1.26 or newer)" >&2
  exit 5
fi
if [ "$(id -u)" != 0 ]; then
  echo "ci: the local provider needs root; run CI as root" >&2
  exit 3
fi
go version
make build
make down
