#!/usr/bin/env bash
# Installs what polycc-tcp's BPF program (the kernel-TCP shim, feature `bpf`) needs to build
# from Debian: clang, bpftool, libbpf's headers, libelf and zlib. Idempotent. Exits 0 without
# installing when it cannot (no apt-get, not root): the crate then builds without its BPF
# program and its tests skip unless POLYCC_REQUIRE_EMU=1.
#   scripts/install-bpf-deps.sh           install if missing
#   scripts/install-bpf-deps.sh --check   exit 0 only if everything is there (installs nothing)
set -euo pipefail
# shellcheck source=scripts/apt-install.sh
source "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh"

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
apt_install "install-bpf-deps.sh (polycc-tcp's BPF program)" \
    clang bpftool libbpf-dev libelf-dev zlib1g-dev pkg-config make || true
