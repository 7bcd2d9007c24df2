//! With the `bpf` feature: the kernel's types as `vmlinux.h` (from its BTF, by bpftool), the BPF
//! program compiled by clang, and its Rust skeleton (libbpf-cargo), all into OUT_DIR.

fn main() {
    println!("cargo:rerun-if-changed=src/bpf/polycc.bpf.c");
    #[cfg(feature = "bpf")]
    bpf::build();
}

#[cfg(feature = "bpf")]
mod bpf {
    use std::path::PathBuf;
    use std::process::Command;

    /// The running kernel's BTF, which `vmlinux.h` is generated from.
    const BTF: &str = "/sys/kernel/btf/vmlinux";

    fn fail(what: String) -> ! {
        panic!(
            "polycc-tcp (feature bpf): {what}; scripts/install-bpf-deps.sh installs the toolchain"
        );
    }

    pub fn build() {
        let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
        let header = out.join("vmlinux.h");
        let dump = Command::new("bpftool")
            .args(["btf", "dump", "file", BTF, "format", "c"])
            .output()
            .unwrap_or_else(|e| fail(format!("cannot run bpftool: {e}")));
        if !dump.status.success() {
            fail(format!(
                "bpftool could not read {BTF}: {}",
                String::from_utf8_lossy(&dump.stderr)
            ));
        }
        std::fs::write(&header, dump.stdout)
            .unwrap_or_else(|e| fail(format!("cannot write {}: {e}", header.display())));
        libbpf_cargo::SkeletonBuilder::new()
            .source("src/bpf/polycc.bpf.c")
            // v3: atomic fetch-and-add, which gives each socket its id.
            .clang_args([
                std::ffi::OsString::from("-mcpu=v3"),
                std::ffi::OsString::from("-I"),
                out.clone().into_os_string(),
            ])
            .build_and_generate(out.join("polycc.skel.rs"))
            .unwrap_or_else(|e| fail(format!("the BPF program did not build: {e:#}")));
    }
}
