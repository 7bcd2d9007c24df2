//! `stack = "tcp"` in a build without polycc-tcp's BPF program: refused before anything is
//! made, naming the key and what is missing (the runs themselves are polycc-tcp's tests).

mod common;

#[test]
fn without_the_bpf_shim_stack_tcp_is_refused_naming_the_key() {
    if polycc_tcp::BUILT {
        eprintln!("SKIPPED: this build has the BPF shim (polycc-tcp's tests run stack = \"tcp\")");
        return;
    }
    let m = common::model(
        r#"
name = "tcp"
duration = "1s"
[[links]]
id = "b"
rate = "20Mbps"
[[flows]]
id = "f"
cca = "cubic"
stack = "tcp"
rtt = "40ms"
"#,
    );
    let e = polycc_emu::run(&m, &polycc::Registry::standard(), &Default::default())
        .expect_err("refused");
    assert!(e.is_user_error(), "exit 2: {e}");
    let text = e.to_string();
    for want in [
        "flows (f).stack",
        "--features polycc-tcp/bpf",
        "install-bpf-deps.sh",
    ] {
        assert!(text.contains(want), "{want:?} in {text}");
    }
}
