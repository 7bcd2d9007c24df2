#!/usr/bin/env bash
# Developer and CI entry point.
#   ./dev.sh demo    set up .venv (once) and run the demo scenarios; prints the report path last
#   ./dev.sh test    set up .venv, then Rust fmt/clippy/doc/tests, ruff and pytest; non-zero on failure
#   ./dev.sh setup   only create/refresh .venv (the Rust extension is built in release mode)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

VENV=.venv
PY=$VENV/bin/python
STAMP=$VENV/.polycc-build-stamp

log() { printf '\n==> %s\n' "$*" >&2; }
die() { printf 'dev.sh: %s\n' "$*" >&2; exit 1; }

# A Python >= 3.11 with the venv module.
find_python() {
    local py
    for py in "${PYTHON:-}" python3 python3.13 python3.12 python3.11; do
        [[ -n $py ]] && command -v "$py" >/dev/null 2>&1 || continue
        if "$py" -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
            echo "$py"
            return
        fi
    done
    die "need Python >= 3.11 with the venv module (set PYTHON=/path/to/python3.11)"
}

if ! command -v cargo >/dev/null 2>&1 && [[ -f $HOME/.cargo/env ]]; then
    # shellcheck disable=SC1091
    source "$HOME/.cargo/env"
fi
command -v cargo >/dev/null 2>&1 || die "need a Rust toolchain (cargo) on PATH"

# Hash of everything the installed package is built from; the editable install exposes python/
# directly, so only the Rust side and the packaging metadata need a rebuild when they change.
source_hash() {
    {
        printf '%s\n' pyproject.toml Cargo.toml Cargo.lock
        find crates -type f \( -name '*.rs' -o -name Cargo.toml \) -not -path '*/target/*'
    } | LC_ALL=C sort | { xargs -d '\n' sha256sum 2>/dev/null || true; } | sha256sum | cut -d' ' -f1
}

setup() {
    # The extension carries the kernel-TCP shim (`stack = "tcp"` in the testbed) where its BPF
    # toolchain is installed (scripts/install-bpf-deps.sh); the build then differs, so the
    # choice is part of the stamp.
    local ext_features=""
    if scripts/install-bpf-deps.sh --check; then
        ext_features="--features bpf"
    fi
    if [[ ! -x $PY ]]; then
        local base
        base=$(find_python)
        log "creating $VENV with $base"
        "$base" -m venv "$VENV"
    fi
    if [[ ! -x $VENV/bin/uv ]]; then
        log "installing uv into $VENV"
        "$PY" -m pip install --quiet --disable-pip-version-check uv
    fi
    local want have=""
    want="$(source_hash) $ext_features"
    [[ -f $STAMP ]] && have=$(<"$STAMP")
    if [[ $want != "$have" || ! -x $VENV/bin/polycc ]]; then
        log "building the Rust extension (release) and installing polycc into $VENV"
        rm -f "$STAMP"
        MATURIN_PEP517_ARGS="$ext_features" \
            "$VENV/bin/uv" pip install --python "$PY" --reinstall-package polycc -e '.[dev]'
        echo "$want" >"$STAMP"
    fi
}

cmd_demo() {
    setup
    log "running the demo"
    "$VENV/bin/polycc" demo "$@"
}

# Runs one check and records a failure instead of stopping, so that one run reports every
# failing check (a formatting slip does not hide a failing test).
FAILED=()
step() {
    local name=$1
    shift
    log "$name"
    if ! "$@"; then
        FAILED+=("$name")
    fi
}

cmd_test() {
    # The kernel-TCP shim's BPF program builds where its toolchain is (installed here when
    # apt-get and root are); elsewhere polycc-tcp builds without it and its tests skip.
    scripts/install-bpf-deps.sh
    setup
    local features=()
    if scripts/install-bpf-deps.sh --check; then
        features=(--features polycc-tcp/bpf)
    fi
    step "cargo fmt --check" cargo fmt --all --check
    step "cargo clippy" cargo clippy --workspace --all-targets "${features[@]}" -- -D warnings
    step "cargo doc" env RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps --quiet "${features[@]}"
    scripts/install-emu-deps.sh  # iproute2 for the emulator's tests; exits 0 (tests skip) without apt
    step "cargo test (release)" cargo test --workspace --release --exclude polycc-py --no-fail-fast "${features[@]}"
    step "ruff" "$VENV/bin/ruff" check python
    step "mypy" "$VENV/bin/mypy"
    validation/ns3/install.sh  # ns-3 for python/tests/test_ns3.py; exits 0 (tests skip) without apt
    step "pytest" "$VENV/bin/pytest" -q python/tests
    if ((${#FAILED[@]})); then
        log "FAILED: ${FAILED[*]}"
        exit 1
    fi
    log "all checks passed"
}

case "${1:-}" in
    demo) shift; cmd_demo "$@" ;;
    test) shift; cmd_test "$@" ;;
    setup) setup ;;
    *)
        echo "usage: ./dev.sh demo [--out DIR] | test | setup" >&2
        exit 2
        ;;
esac
