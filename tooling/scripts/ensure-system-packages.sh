#!/usr/bin/env bash
# Installs the Debian programs the test suite drives for real, when they are missing: PostgreSQL (the
# session-store's second backend and its multi-process tests start their own server from initdb/postgres),
# Chromium (the web chat page is tested in a real headless browser) and bubblewrap (the sandbox engine). Owns: detecting and installing them.
# Does not own: starting them (each test starts its own instance in a temporary folder). Fast when present:
# two file checks. Called by `tooling/pnpm test`.
set -euo pipefail

say() { echo "ensure-system-packages: $*" >&2; }

missing=()
have_postgres=false
for dir in $(command -v initdb >/dev/null 2>&1 && dirname "$(command -v initdb)") /usr/lib/postgresql/*/bin; do
  if [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ]; then have_postgres=true; break; fi
done
$have_postgres || missing+=(postgresql)
[ -x /usr/bin/chromium ] || missing+=(chromium)
# The sandbox engine: its escape suite runs the real thing.
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  run_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  run_root=(sudo -n)
else
  say "missing ${missing[*]} and cannot install them (not root, no passwordless sudo);"
  say "install the Debian packages '${missing[*]}' and run again — the tests that need them will fail until then."
  exit 0
fi

say "installing ${missing[*]} from Debian's packages (first run only)"
export DEBIAN_FRONTEND=noninteractive
apt_install() {
  "${run_root[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
}
if ! apt_install; then
  "${run_root[@]}" apt-get update -qq >/dev/null
  apt_install
fi
