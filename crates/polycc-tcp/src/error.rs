//! What can go wrong with the shim.

#[derive(Debug, thiserror::Error)]
pub enum ShimError {
    /// The crate was built without the `bpf` feature.
    #[error(
        "polycc-tcp was built without its BPF program: build with `--features polycc-tcp/bpf` \
         after scripts/install-bpf-deps.sh (clang, bpftool, libelf, zlib)"
    )]
    NotBuilt,
    /// Loading or registering the BPF program failed (no root, no BTF, no struct_ops, or a
    /// controller named `polycc` already registered).
    #[error("cannot {what}: {why}")]
    Kernel { what: &'static str, why: String },
}
