#!/usr/bin/env bash
# Installs what the emulated testbed (crates/polycc-emu, `--backend emu`) needs from Debian:
# iproute2 (`ip netns`, `ip link`). Idempotent. Exits 0 without installing when it cannot
# (no apt-get, not root): the emulator then refuses to run with a message, and its tests skip
# unless POLYCC_REQUIRE_EMU=1.
set -euo pipefail
say() { printf 'install-emu-deps.sh: %s\n' "$*" >&2; }

command -v ip >/dev/null && exit 0
if ! command -v apt-get >/dev/null; then
    say "apt-get not available: install iproute2 yourself to use --backend emu"
    exit 0
fi
SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        SUDO=(sudo -n)
    else
        say "not root and no password-less sudo: cannot install iproute2; --backend emu needs it"
        exit 0
    fi
fi
say "installing iproute2"
"${SUDO[@]}" apt-get install -y -q iproute2 >/dev/null || {
    "${SUDO[@]}" apt-get update -q >/dev/null && "${SUDO[@]}" apt-get install -y -q iproute2 >/dev/null
}
