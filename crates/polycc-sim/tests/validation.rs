//! Validation of the simulator against analytic results. Each test can fail: the tolerances are
//! those the literature uses for these models.

mod common;
use common::run;

#[test]
fn newreno_fills_a_one_bdp_buffer_link() {
    let out = run(r#"
        name = "newreno-1bdp"
        duration = "30s"
        [[links]]
        id = "b"
        rate = "100Mbps"
        queue = { size = "1bdp" }
        [[flows]]
        id = "a"
        cca = "newreno"
        rtt = "30ms"
    "#);
    let u = out.summary.links[0].utilization;
    eprintln!("{:#?}", out.summary);
    assert!(u >= 0.95, "utilisation {u}");
}

#[test]
#[ignore]
fn debug_dump() {
    let out = run(r#"
        name = "newreno-1bdp"
        duration = "30s"
        bin = "500ms"
        [[links]]
        id = "b"
        rate = "100Mbps"
        queue = { size = "1bdp" }
        [[flows]]
        id = "a"
        cca = "newreno"
        rtt = "30ms"
    "#);
    let t = out.flows.f64s("t_s").unwrap();
    let g = out.flows.f64s("goodput_mbps").unwrap();
    let c = out.flows.f64s("cwnd_bytes").unwrap();
    let r = out.flows.f64s("rtt_ms").unwrap();
    let q = out.links.f64s("queue_bytes").unwrap();
    let st = out.flows.strs("cc_state").unwrap();
    for i in 0..t.len() {
        eprintln!(
            "{:5.1} gp {:6.1} cwnd {:8.0} rtt {:5.1} q {:8.0} {}",
            t[i], g[i], c[i], r[i], q[i], st[i]
        );
    }
}
