//! Random scenarios (seeded, so failures reproduce): whatever the network and the controllers do,
//! the simulator must not panic, must conserve bytes, and must not deliver more than the links
//! carried.

mod common;
use polycc::{CcContext, CcSpec, Registry};
use rand::{Rng, SeedableRng};

/// `frames`: the controllers that need a video source's frames, which get video traffic.
fn random_scenario(rng: &mut impl Rng, ccas: &[&str], frames: &[&str]) -> String {
    let mut s = String::from("name = \"random\"\nduration = \"3s\"\nbin = \"250ms\"\n");
    s += &format!("seed = {}\n", rng.gen_range(0..1000));
    let links = rng.gen_range(1..=2);
    // Whether link i's reverse direction has a capacity (reverse bulk flows need one).
    let mut reverse_rate = [false; 2];
    for (i, has_reverse_rate) in reverse_rate.iter_mut().enumerate().take(links) {
        s += &format!("[[links]]\nid = \"l{i}\"\n");
        match rng.gen_range(0..3) {
            0 => s += &format!("rate = \"{}Mbps\"\n", rng.gen_range(1..200)),
            1 => {
                s += &format!(
                    "schedule = [{{ at = \"0s\", rate = \"{}Mbps\" }}, {{ at = \"1s\", rate = \"0Mbps\" }}, {{ at = \"1500ms\", rate = \"{}Mbps\", ramp = {} }}]\n",
                    rng.gen_range(1..100),
                    rng.gen_range(1..100),
                    rng.gen_bool(0.5)
                )
            }
            _ => {
                s += &format!(
                    "trace = {{ synth = \"random_walk\", start = \"{}Mbps\", min = \"0Mbps\", max = \"50Mbps\", step = \"5Mbps\", interval = \"50ms\" }}\n",
                    rng.gen_range(1..50)
                )
            }
        }
        let kind = ["droptail", "codel", "fq_codel"][rng.gen_range(0..3)];
        let size = if i == 1 || rng.gen_bool(0.5) {
            format!("{}pkt", rng.gen_range(1..500))
        } else {
            format!("{:.2}bdp", rng.gen_range(0.05..4.0))
        };
        s += &format!("queue = {{ kind = \"{kind}\", size = \"{size}\" }}\n");
        s += &format!(
            "loss = {}\nack_loss = {}\n",
            rng.gen_range(0.0..0.2),
            rng.gen_range(0.0..0.1)
        );
        if rng.gen_bool(0.3) {
            s += &format!(
                "jitter = {{ max = \"{}ms\", direction = \"both\" }}\n",
                rng.gen_range(0..50)
            );
        }
        if rng.gen_bool(0.3) {
            s += &format!(
                "ack_aggregation = {{ interval = \"{}ms\" }}\n",
                rng.gen_range(1..40)
            );
        }
        if rng.gen_bool(0.3) {
            s += &format!("reverse_rate = \"{}Mbps\"\n", rng.gen_range(1..20));
            *has_reverse_rate = true;
        }
        if rng.gen_bool(0.2) {
            s += &format!("delay = \"{}ms\"\n", rng.gen_range(0..30));
        }
    }
    for f in 0..rng.gen_range(1..=4) {
        let cca = ccas[rng.gen_range(0..ccas.len())];
        s += &format!("[[flows]]\nid = \"f{f}\"\ncca = \"{cca}\"\n");
        s += &format!(
            "rtt = \"{}ms\"\nstart = \"{}ms\"\n",
            rng.gen_range(1..400),
            rng.gen_range(0..1500)
        );
        if rng.gen_bool(0.3) {
            s += &format!("stop = \"{}ms\"\n", rng.gen_range(1600..3000));
        }
        let both = links == 2 && rng.gen_bool(0.5);
        let path = if both { "[\"l0\", \"l1\"]" } else { "[\"l0\"]" };
        s += &format!("path = {path}\n");
        let limited = reverse_rate[0] || (both && reverse_rate[1]);
        let reverse = rng.gen_bool(0.15);
        s += &format!("reverse = {reverse}\n");
        if reverse && !limited {
            // Reverse directions are unlimited here: the receive window bounds the flow.
            s += &format!("rwnd = \"{}pkt\"\n", rng.gen_range(2..200));
        }
        s += &format!("pacing = {}\n", rng.gen_bool(0.7));
        if rng.gen_bool(0.3) {
            s += "ack = { every = 2, max_delay = \"25ms\" }\n";
        }
        let traffic = match rng.gen_range(0..6) {
            0 => "traffic = \"bulk\"\n".to_string(),
            1 => format!(
                "traffic = {{ kind = \"sized\", size = \"{}KB\" }}\n",
                rng.gen_range(1..2000)
            ),
            2 => format!(
                "traffic = {{ kind = \"web\", size = \"{}KB\", interval = \"{}ms\" }}\n",
                rng.gen_range(1..300),
                rng.gen_range(50..1000)
            ),
            3 => format!(
                "traffic = {{ kind = \"cbr\", rate = \"{}Mbps\" }}\n",
                rng.gen_range(1..20)
            ),
            4 => format!(
                "traffic = {{ kind = \"on_off\", on = \"{}ms\", off = \"{}ms\" }}\n",
                rng.gen_range(10..2000),
                rng.gen_range(10..2000)
            ),
            _ => format!(
                "traffic = {{ kind = \"poisson\", rate = \"{}Mbps\" }}\n",
                rng.gen_range(1..20)
            ),
        };
        // Drawn either way, so that the other flows' draws do not depend on this one's cca.
        s += if frames.contains(&cca) {
            "traffic = { kind = \"video\" }\n"
        } else {
            traffic.as_str()
        };
    }
    s
}

#[test]
fn random_scenarios_conserve_bytes_and_never_panic() {
    let registry = Registry::standard();
    let ccas = registry.names();
    let frames: Vec<&str> = ccas
        .iter()
        .copied()
        .filter(|n| {
            registry
                .build(&CcSpec::named(n), &CcContext::new(1500))
                .is_ok_and(|cc| cc.needs_media_frames())
        })
        .collect();
    let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(0x5eed);
    let cases: usize = std::env::var("POLYCC_RANDOM_SCENARIOS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    for case in 0..cases {
        let text = random_scenario(&mut rng, &ccas, &frames);
        let model = polycc_sim::load_toml(&text, &common::origin(), &registry)
            .unwrap_or_else(|e| panic!("case {case}: generated scenario rejected: {e}\n{text}"));
        let out = polycc_sim::run(&model, &registry)
            .unwrap_or_else(|e| panic!("case {case}: {e}\n{text}"));
        let a = &out.summary.accounting;
        assert_eq!(
            a.sent_bytes,
            a.delivered_bytes + a.dropped_bytes + a.in_network_bytes,
            "case {case}\n{text}"
        );
        for l in &out.summary.links {
            assert!(
                l.utilization <= 1.0 + 1e-9,
                "case {case}: utilisation {} > 1\n{text}",
                l.utilization
            );
        }
        for f in &out.summary.flows {
            assert!(
                f.goodput_mbps.is_finite() && f.goodput_mbps >= 0.0,
                "case {case}\n{text}"
            );
            assert!(f.loss_rate <= 1.0, "case {case}\n{text}");
        }
        assert_eq!(
            out.flows.rows,
            out.flows.strs("flow").map_or(0, |v| v.len())
        );
    }
}
