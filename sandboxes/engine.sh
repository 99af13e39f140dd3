#!/usr/bin/env bash
# A private Docker engine for the sandboxes: its own socket, data root, exec root and pidfile under
# one state dir, no bridge network, no iptables, no IP forwarding. It never touches a system dockerd.
#
#   sandboxes/engine.sh start          install docker.io/debootstrap/bubblewrap/docker-compose if missing, start,
#                                      print the host
#   sandboxes/engine.sh stop           stop the daemon this script started (from its pidfile)
#   sandboxes/engine.sh status         exit 0 and print the host when it answers
#   sandboxes/engine.sh with CMD...    start unless running, run CMD with AGENTJET_DOCKER_HOST set,
#                                      then stop it again if this call started it (also on failure or Ctrl-C);
#                                      an AGENTJET_DOCKER_HOST already set that answers is used as is
#
# State dir: $AGENTJET_ENGINE_DIR (default /var/lib/agentjet-engine). Needs root.
set -euo pipefail

STATE_DIR="${AGENTJET_ENGINE_DIR:-/var/lib/agentjet-engine}"
SOCKET="$STATE_DIR/docker.sock"
PIDFILE="$STATE_DIR/docker.pid"
LOG="$STATE_DIR/dockerd.log"
HOST="unix://$SOCKET"
export PATH="$PATH:/usr/sbin:/sbin"

say() { echo "engine: $*" >&2; }

need_root() {
    if [ "$(id -u)" != 0 ]; then
        say "needs root (it installs packages and starts dockerd); run: sudo $0 $1"
        exit 1
    fi
}

install_missing() {
    local missing=()
    { command -v dockerd && command -v docker; } >/dev/null || missing+=(docker.io)
    command -v debootstrap >/dev/null || missing+=(debootstrap)
    command -v bwrap >/dev/null || missing+=(bubblewrap)
    command -v docker-compose >/dev/null || missing+=(docker-compose)  # the deploy example's test (docs/deploy.md)
    [ ${#missing[@]} -eq 0 ] && return 0
    say "installing ${missing[*]}"
    # Keep apt from starting the system docker service (it would create docker0 and iptables rules).
    local policy=""
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod 755 "$policy"
    fi
    local rc=0
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >&2; } || rc=$?
    [ -n "$policy" ] && rm -f "$policy"
    return $rc
}

daemon_pid() {  # the pid from our pidfile when that process is a live dockerd, else nothing
    [ -f "$PIDFILE" ] || return 1
    local pid
    pid="$(cat "$PIDFILE")"
    [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ] && echo "$pid"
}

answers() {  # answers [HOST]: the engine at HOST (default ours) replies
    local host="${1:-$HOST}"
    [ "$host" != "$HOST" ] || [ -S "$SOCKET" ] || return 1
    timeout 10 docker --host "$host" version --format '{{.Server.Version}}' >/dev/null 2>&1
}

cmd_status() {
    if answers; then
        say "running (pid $(daemon_pid || echo '?'), state $STATE_DIR)"
        echo "AGENTJET_DOCKER_HOST=$HOST"
        return 0
    fi
    say "not running (state $STATE_DIR)"
    return 1
}

cmd_start() {
    need_root start
    install_missing
    if answers; then
        say "already running"
        echo "AGENTJET_DOCKER_HOST=$HOST"
        return 0
    fi
    if pid="$(daemon_pid)"; then
        say "dockerd $pid is up but does not answer on $SOCKET; see $LOG or run: $0 stop"
        return 1
    fi
    mkdir -p "$STATE_DIR/data" "$STATE_DIR/exec"
    chmod 700 "$STATE_DIR"
    say "starting dockerd (log $LOG)"
    setsid dockerd --host "$HOST" --data-root "$STATE_DIR/data" --exec-root "$STATE_DIR/exec" \
        --pidfile "$PIDFILE" --bridge=none --iptables=false --ip6tables=false --ip-forward=false \
        --ip-masq=false </dev/null >>"$LOG" 2>&1 &
    local launched=$!
    for _ in $(seq 1 120); do
        if answers; then
            say "ready: docker $(docker --host "$HOST" version --format '{{.Server.Version}}')"
            echo "AGENTJET_DOCKER_HOST=$HOST"
            return 0
        fi
        if ! kill -0 "$launched" 2>/dev/null; then
            say "dockerd exited; last lines of $LOG:"
            tail -n 20 "$LOG" >&2
            return 1
        fi
        sleep 0.5
    done
    say "dockerd did not answer within 60 s; see $LOG"
    return 1
}

cmd_stop() {
    need_root stop
    local pid
    if ! pid="$(daemon_pid)"; then
        say "not running (no live dockerd in $PIDFILE)"
        return 0
    fi
    kill -TERM "$pid"
    for _ in $(seq 1 60); do
        if ! kill -0 "$pid" 2>/dev/null; then
            say "stopped dockerd $pid"
            return 0
        fi
        sleep 0.5
    done
    say "dockerd $pid ignored SIGTERM for 30 s; killing it"
    kill -KILL "$pid" 2>/dev/null || true
}

cmd_with() {
    [ $# -gt 0 ] || { say "usage: $0 with COMMAND..."; exit 2; }
    local started=0
    if [ -n "${AGENTJET_DOCKER_HOST:-}" ] && [ "$AGENTJET_DOCKER_HOST" != "$HOST" ] && answers "$AGENTJET_DOCKER_HOST"; then
        say "using the engine at $AGENTJET_DOCKER_HOST"
        "$@"
        return
    fi
    if ! answers; then
        cmd_start >/dev/null
        started=1
    fi
    export AGENTJET_DOCKER_HOST="$HOST"
    if [ $started = 1 ]; then
        trap 'cmd_stop' EXIT
        trap 'exit 130' INT
        trap 'exit 143' TERM
    fi
    "$@"
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    with) shift; cmd_with "$@" ;;
    *) echo "usage: $0 start|stop|status|with COMMAND..." >&2; exit 2 ;;
esac
