#!/usr/bin/env bash
# Installs what polycc-tcp's BPF program (the kernel-TCP shim, feature `bpf`) needs to build
# from Debian: clang, bpftool, libbpf's headers, libelf and zlib. Idempotent. Exits 0 without
# installing when it cannot (no apt-get, not root): the crate then builds without its BPF
# program and its tests skip unless POLYCC_REQUIRE_EMU=1.
#   scripts/install-bpf-deps.sh           install if missing
#   scripts/install-bpf-deps.sh --check   exit 0 only if everything is there (installs nothing)
set -euo pipefail
say() { printf 'install-bpf-deps.sh: %s\n' "$*" >&2; }

PACKAGES=(clang bpftool libbpf-dev libelf-dev zlib1g-dev pkg-config make)

present() {
    command -v clang >/dev/null && command -v bpftool >/dev/null \
        && [[ -f /usr/include/bpf/bpf_helpers.h && -f /usr/include/libelf.h && -f /usr/include/zlib.h ]] \
        && command -v pkg-config >/dev/null && command -v make >/dev/null
}

if [[ ${1:-} == --check ]]; then
    present
    exit
fi
present && exit 0
if ! command -v apt-get >/dev/null; then
    say "apt-get not available: install ${PACKAGES[*]} yourself to build polycc-tcp's BPF program"
    exit 0
fi
SUDO=()
if [[ $(id -u) -ne 0 ]]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
        SUDO=(sudo -n)
    else
        say "not root and no password-less sudo: cannot install ${PACKAGES[*]}"
        exit 0
    fi
fi
say "installing ${PACKAGES[*]}"
"${SUDO[@]}" apt-get install -y -q "${PACKAGES[@]}" >/dev/null || {
    "${SUDO[@]}" apt-get update -q >/dev/null && "${SUDO[@]}" apt-get install -y -q "${PACKAGES[@]}" >/dev/null
}
