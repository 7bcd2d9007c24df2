//! A run in steps (`Simulator::advance` / `drain` / `finish`) gives the output of a run in one
//! go, byte for byte: the same summary (but for the wall time) and, with the drained chunks
//! joined, the same tables. Steps of simulated time, steps cut short by a wall-clock budget of
//! zero (a pause every `CLOCK_EVERY` events) or by pending rows, and drains at any of them.

mod common;

use polycc::Registry;
use polycc_sim::engine::{PauseAt, Progress, Simulator};
use polycc_sim::{Column, RunOutput, Table};
use std::path::Path;
use std::sync::Arc;

/// Equal tables, NaN (null) equal to NaN: the values' bits are compared.
fn assert_same_table(what: &str, a: &Table, b: &Table) {
    assert_eq!(a.rows, b.rows, "{what}: rows");
    let names = |t: &Table| t.columns.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(a), names(b), "{what}: columns");
    for ((name, x), (_, y)) in a.columns.iter().zip(&b.columns) {
        match (x, y) {
            (Column::F64(x), Column::F64(y)) => {
                let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert!(bits(x) == bits(y), "{what}: column {name} differs");
            }
            (Column::Str(x), Column::Str(y)) => {
                assert!(x.iter().eq(y.iter()), "{what}: column {name} differs");
            }
            _ => panic!("{what}: column {name} changed type"),
        }
    }
}

fn assert_same_output(a: &RunOutput, b: &RunOutput) {
    let mut sa = a.summary.clone();
    sa.wall_s = b.summary.wall_s;
    assert_eq!(sa, b.summary, "summary");
    assert_eq!(a.resolved_toml, b.resolved_toml);
    assert_same_table("flows", &a.flows, &b.flows);
    assert_same_table("links", &a.links, &b.links);
    assert_same_table("frames", &a.frames, &b.frames);
    assert_same_table("transfers", &a.transfers, &b.transfers);
}

/// How a stepped run pauses.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Every this many simulated seconds.
    Sim(f64),
    /// Every `CLOCK_EVERY` events (a wall-clock budget of zero).
    Wall,
    /// Once this many flow rows are pending.
    Rows(usize),
}

/// Runs `model` in `step`s, draining after every `drain_every`-th step, and joins the chunks.
fn stepped(model: &polycc_sim::Model, step: Step, drain_every: usize) -> RunOutput {
    let mut sim = Simulator::new(Arc::new(model.clone()), Arc::new(Registry::standard()))
        .unwrap_or_else(|e| panic!("{e}"));
    let end = sim.end();
    let (mut flows, mut links) = (Table::default(), Table::default());
    let mut steps = 0usize;
    let mut until = sim.now();
    loop {
        let progress = match step {
            Step::Sim(s) => {
                until += polycc::units::Duration::from_secs_f64(s);
                sim.advance(until.min(end), PauseAt::default())
            }
            Step::Wall => sim.advance(
                end,
                PauseAt {
                    wall: Some(std::time::Duration::ZERO),
                    pending_rows: None,
                },
            ),
            Step::Rows(rows) => sim.advance(
                end,
                PauseAt {
                    wall: None,
                    pending_rows: Some(rows),
                },
            ),
        }
        .unwrap_or_else(|e| panic!("{e}"));
        steps += 1;
        if let (Step::Rows(rows), Progress::Paused) = (step, progress) {
            assert!(sim.pending_rows().0 >= rows);
        }
        if steps % drain_every == 0 {
            let (f, l) = sim.drain();
            flows.append(&f);
            links.append(&l);
        }
        if progress == Progress::Done {
            break;
        }
    }
    assert!(
        steps > 3,
        "the run took {steps} steps ({step:?}); make them smaller"
    );
    let mut out = sim.finish().unwrap_or_else(|e| panic!("{e}"));
    flows.append(&out.flows);
    links.append(&out.links);
    out.flows = flows;
    out.links = links;
    out
}

fn paper(path: &str, duration: &str) -> polycc_sim::Model {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/papers")
        .join(path);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let d = lines
        .iter()
        .position(|l| l.starts_with("duration ="))
        .expect("a duration line");
    lines[d] = format!("duration = {duration:?}");
    let origin = polycc_sim::Origin {
        name: path.into(),
        base_dir: file.parent().expect("a directory").to_path_buf(),
    };
    polycc_sim::load_toml(&lines.join("\n"), &origin, &Registry::standard())
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn steps_and_drains_change_nothing() {
    // A video flow with frames and two late CUBIC flows; Janus flows with a stop and
    // intents; a PolyCC pool on a link whose rate changes.
    for (path, duration) in [
        ("pibes/competing-tcp.toml", "22.3s"),
        ("janus/switching.toml", "9s"),
        ("polycc/bandwidth-halving.toml", "6s"),
    ] {
        let model = paper(path, duration);
        let whole =
            polycc_sim::run(&model, &Registry::standard()).unwrap_or_else(|e| panic!("{e}"));
        for (step, drain_every) in [
            (Step::Sim(0.37), 1),
            (Step::Sim(1.3), 2),
            (Step::Wall, 7),
            (Step::Rows(50), 1),
        ] {
            let parts = stepped(&model, step, drain_every);
            assert_same_output(&parts, &whole);
        }
    }
}

#[test]
fn an_inactive_flows_controller_state_is_null() {
    let out =
        common::run(&common::GOOD.replace("rtt = \"30ms\"", "rtt = \"30ms\"\nstart = \"2s\""));
    let t = out.flows.f64s("t_s").expect("t_s");
    let Some(Column::Str(state)) = out.flows.column("cc_state") else {
        panic!("no cc_state column");
    };
    let states: Vec<Option<&str>> = state.iter().collect();
    // The bin ending at 2 s is sampled after the flow started, at the same instant.
    for (t, s) in t.iter().zip(&states) {
        assert_eq!(s.is_none(), *t < 1.85, "t = {t}: {s:?}");
    }
    assert!(states.contains(&Some("slow_start")), "{states:?}");
}
