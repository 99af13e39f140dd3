#!/usr/bin/env bash
# Install PostgreSQL's server binaries when missing (as root, from Debian's packages). The tests start
# and stop their own throwaway cluster on loopback (tests/postgres.py); nothing here starts a server.
set -euo pipefail
if command -v initdb >/dev/null || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
    exit 0
fi
echo "installing postgresql (server binaries for the shared-study tests)" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends postgresql >/dev/null
