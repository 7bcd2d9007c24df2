//! Scenario files for the emulator's tests, built key by key as a user writes them: each test
//! still names every link and flow setting it relies on, without repeating the TOML around
//! them. [`Scenario::toml`] is the file; [`Scenario::model`] loads it.

use polycc_sim::Model;

/// A scenario: its top-level keys, links and flows.
#[derive(Clone, Debug)]
pub struct Scenario {
    top: Vec<(String, String)>,
    links: Vec<Vec<(String, String)>>,
    flows: Vec<Flow>,
}

/// One `[[flows]]` table.
#[derive(Clone, Debug)]
pub struct Flow(Vec<(String, String)>);

/// A TOML string value.
fn quoted(s: &str) -> String {
    format!("{s:?}")
}

impl Scenario {
    /// A scenario called `name`, running for `duration` (e.g. `"4s"`).
    pub fn new(name: &str, duration: &str) -> Scenario {
        Scenario {
            top: vec![
                ("name".into(), quoted(name)),
                ("duration".into(), quoted(duration)),
            ],
            links: Vec::new(),
            flows: Vec::new(),
        }
    }

    /// A scenario called `name` with the default duration.
    pub fn named(name: &str) -> Scenario {
        Scenario {
            top: vec![("name".into(), quoted(name))],
            links: Vec::new(),
            flows: Vec::new(),
        }
    }

    /// The run's seed.
    pub fn seed(mut self, seed: u64) -> Scenario {
        self.top.push(("seed".into(), seed.to_string()));
        self
    }

    /// A link `id` of `rate` (e.g. `"20Mbps"`) with the default queue.
    pub fn link(mut self, id: &str, rate: &str) -> Scenario {
        self.links.push(vec![
            ("id".into(), quoted(id)),
            ("rate".into(), quoted(rate)),
        ]);
        self
    }

    /// A link `id` of `rate` with a drop-tail buffer of `size` (e.g. `"1bdp"`).
    pub fn droptail_link(self, id: &str, rate: &str, size: &str) -> Scenario {
        self.link(id, rate).link_key(
            "queue",
            &format!(r#"{{ kind = "droptail", size = "{size}" }}"#),
        )
    }

    /// Sets `key` of the last link to the TOML value `value` (e.g. `loss`, `0.3`).
    pub fn link_key(mut self, key: &str, value: &str) -> Scenario {
        self.links
            .last_mut()
            .expect("a link first")
            .push((key.into(), value.into()));
        self
    }

    /// Adds a flow.
    pub fn flow(mut self, f: Flow) -> Scenario {
        self.flows.push(f);
        self
    }

    /// The scenario file.
    pub fn toml(&self) -> String {
        let keys = |t: &[(String, String)]| -> String {
            t.iter().map(|(k, v)| format!("{k} = {v}\n")).collect()
        };
        let mut s = keys(&self.top);
        for l in &self.links {
            s += "[[links]]\n";
            s += &keys(l);
        }
        for f in &self.flows {
            s += "[[flows]]\n";
            s += &keys(&f.0);
        }
        s
    }

    /// The scenario loaded (a test scenario that does not load fails the test).
    pub fn model(&self) -> Model {
        super::model(&self.toml())
    }
}

impl Flow {
    /// A flow `id` of the registered controller `cca` on a path of round trip `rtt`.
    pub fn new(id: &str, cca: &str, rtt: &str) -> Flow {
        Flow::with_spec(id, &quoted(cca), rtt)
    }

    /// A flow `id` whose controller is the TOML value `spec` (e.g. `{ name = "ledbat" }`).
    pub fn with_spec(id: &str, spec: &str, rtt: &str) -> Flow {
        Flow(vec![
            ("id".into(), quoted(id)),
            ("cca".into(), spec.into()),
            ("rtt".into(), quoted(rtt)),
        ])
    }

    /// Its `stack` (`"quic"`, `"udp"`, `"linux"`).
    pub fn stack(self, stack: &str) -> Flow {
        self.key("stack", &quoted(stack))
    }

    /// When it starts (e.g. `"500ms"`).
    pub fn start(self, at: &str) -> Flow {
        self.key("start", &quoted(at))
    }

    /// Its `traffic`, a TOML inline table (e.g. `{ kind = "sized", size = "1MB" }`).
    pub fn traffic(self, table: &str) -> Flow {
        self.key("traffic", table)
    }

    /// Sets `key` to the TOML value `value`.
    pub fn key(mut self, key: &str, value: &str) -> Flow {
        self.0.push((key.into(), value.into()));
        self
    }
}
