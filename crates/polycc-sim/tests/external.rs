//! `stack = "external"` (an outside program, emulator only): its commands are checked when the
//! scenario loads, and the simulator refuses such a flow by name rather than run something else.

mod common;
use common::{assert_mentions, error_of, load, origin};
use polycc::Registry;
use polycc_sim::SimError;

fn flow(keys: &str) -> String {
    format!(
        r#"
        name = "ext"
        duration = "2s"
        [[links]]
        id = "b"
        rate = "10Mbps"
        [[flows]]
        id = "theirs"
        rtt = "20ms"
        {keys}
    "#
    )
}

const BOTH: &str = r#"stack = "external"
        sender = "app {receiver_ip} {port} -t {duration_s}"
        receiver = "app -s -p {port}""#;

#[test]
fn an_external_flow_loads_with_its_commands() {
    let m = load(&flow(BOTH)).unwrap();
    let c = m.flows[0].external.as_ref().unwrap();
    assert_eq!(c.sender, "app {receiver_ip} {port} -t {duration_s}");
    assert_eq!(c.receiver, "app -s -p {port}");
}

#[test]
fn the_simulator_refuses_an_external_flow_by_name() {
    let registry = Registry::standard();
    let m = polycc_sim::load_toml(&flow(BOTH), &origin(), &registry).unwrap();
    match polycc_sim::run(&m, &registry) {
        Err(SimError::Scenario(e)) => {
            assert_mentions(&e.to_string(), &["flows (theirs).stack", "--backend emu"])
        }
        other => panic!(
            "expected a refusal, got {:?}",
            other.map(|o| o.summary.flows)
        ),
    }
}

#[test]
fn missing_or_misplaced_commands_and_unknown_placeholders_are_refused() {
    let e = error_of(&flow("stack = \"external\"\nsender = \"app\""));
    assert_mentions(&e, &["flows[0].receiver", "needs the command"]);
    let e = error_of(&flow("stack = \"external\"\nreceiver = \"app\""));
    assert_mentions(&e, &["flows[0].sender", "{receiver_ip}"]);
    let e = error_of(&flow(&BOTH.replace("{port} -t", "{prot} -t")));
    assert_mentions(
        &e,
        &["flows[0].sender", "unknown placeholder {prot}", "{port}"],
    );
    let e = error_of(&flow("sender = \"app\""));
    assert_mentions(&e, &["flows[0].sender", "stack = \"external\"", "\"quic\""]);
    let e = error_of(&flow(&format!("{BOTH}\nrwnd = \"64KB\"")));
    assert_mentions(&e, &["flows[0].rwnd", "outside program"]);
    let e = error_of(&flow(&format!(
        "{BOTH}\n[flows.traffic]\nkind = \"sized\"\nbytes = \"1MB\""
    )));
    assert_mentions(&e, &["flows[0].traffic", "bulk"]);
}
