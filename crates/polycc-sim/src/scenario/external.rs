//! A flow carried by an outside program (`stack = "external"`): its two command templates and
//! the placeholders they may name. The emulator fills them in and runs them; the simulator
//! cannot run a program and refuses such a flow.

/// The names a command template may use, each written `{name}`.
pub const PLACEHOLDERS: [&str; 5] = ["receiver_ip", "sender_ip", "port", "duration_s", "flow"];

/// A flow's two commands, as the scenario writes them (templates, not yet filled in).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalCommands {
    /// Starts the data sender, in the sending namespace, at the flow's start.
    pub sender: String,
    /// Starts the receiver, in the receiving namespace, when the run starts.
    pub receiver: String,
}

/// What the placeholders stand for in one run.
#[derive(Clone, Debug)]
pub struct Values {
    pub receiver_ip: String,
    pub sender_ip: String,
    pub port: u16,
    pub duration_s: f64,
    pub flow: String,
}

impl Values {
    fn get(&self, name: &str) -> Option<String> {
        Some(match name {
            "receiver_ip" => self.receiver_ip.clone(),
            "sender_ip" => self.sender_ip.clone(),
            "port" => self.port.to_string(),
            // Whole seconds where it is whole: programs often take an integer (`-t 30`).
            "duration_s" if self.duration_s.fract() == 0.0 => format!("{}", self.duration_s),
            "duration_s" => format!("{:.3}", self.duration_s),
            "flow" => self.flow.clone(),
            _ => return None,
        })
    }
}

/// `template` with its placeholders replaced by `values`; the error names an unknown or
/// unclosed placeholder.
pub fn expand(template: &str, values: &Values) -> Result<String, String> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(k) = rest.find(['{', '}']) {
        out.push_str(&rest[..k]);
        let tail = &rest[k..];
        if let Some(t) = tail.strip_prefix("{{") {
            out.push('{');
            rest = t;
        } else if let Some(t) = tail.strip_prefix("}}") {
            out.push('}');
            rest = t;
        } else if tail.starts_with('}') {
            return Err("a lone '}' (write '}}' for a literal brace)".into());
        } else {
            let Some(end) = tail.find('}') else {
                return Err(format!(
                    "{:?} is not closed (write '{{{{' for a literal brace)",
                    truncate(tail)
                ));
            };
            let name = &tail[1..end];
            let v = values.get(name).ok_or_else(|| {
                format!(
                    "unknown placeholder {{{name}}}; allowed: {}",
                    PLACEHOLDERS.map(|p| format!("{{{p}}}")).join(", ")
                )
            })?;
            out.push_str(&v);
            rest = &tail[end + 1..];
        }
    }
    out.push_str(rest);
    Ok(out)
}

fn truncate(s: &str) -> &str {
    s.char_indices().nth(20).map_or(s, |(i, _)| &s[..i])
}

/// Checks a template without a run: its placeholders are known and its braces balanced.
pub fn check(template: &str) -> Result<(), String> {
    if template.trim().is_empty() {
        return Err("an empty command".into());
    }
    expand(
        template,
        &Values {
            receiver_ip: String::new(),
            sender_ip: String::new(),
            port: 0,
            duration_s: 0.0,
            flow: String::new(),
        },
    )
    .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values() -> Values {
        Values {
            receiver_ip: "10.0.0.2".into(),
            sender_ip: "10.0.0.1".into(),
            port: 20001,
            duration_s: 30.0,
            flow: "theirs".into(),
        }
    }

    #[test]
    fn placeholders_are_filled_in_and_double_braces_are_literal() {
        let s = expand(
            "app {receiver_ip} {port} -t {duration_s} --id {flow} {sender_ip} '{{x}}'",
            &values(),
        )
        .unwrap();
        assert_eq!(s, "app 10.0.0.2 20001 -t 30 --id theirs 10.0.0.1 '{x}'");
        let half = Values {
            duration_s: 2.5,
            ..values()
        };
        assert_eq!(expand("{duration_s}", &half).unwrap(), "2.500");
    }

    #[test]
    fn unknown_or_unclosed_placeholders_are_refused_by_name() {
        let e = expand("app {host}", &values()).unwrap_err();
        assert!(e.contains("unknown placeholder {host}"), "{e}");
        assert!(e.contains("{receiver_ip}"), "{e}");
        assert!(expand("app {port", &values())
            .unwrap_err()
            .contains("not closed"));
        assert!(expand("app }", &values()).unwrap_err().contains("lone"));
        assert!(check("  ").is_err());
    }
}
