//! What an emulated run can end with.

/// Errors of an emulated run. `Unsupported` and `Scenario` are the user's to fix (exit 2);
/// `Privilege` says what is missing (exit 2); `System` is the host refusing something we asked
/// (a namespace, a device, a socket) and `Internal` a bug (exit 1).
#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    /// A scenario key the emulator cannot honour; the message names the key.
    #[error("{origin}: {path}: {message}")]
    Unsupported {
        origin: String,
        path: String,
        message: String,
    },
    #[error("{0}")]
    Scenario(#[from] polycc_sim::ScenarioError),
    #[error("the emulator needs {0}")]
    Privilege(String),
    /// An outside program (`stack = "external"`) that could not run as the scenario asks:
    /// `flow X: ...` says which and why.
    #[error("{0}")]
    Program(String),
    #[error("{what}: {detail}")]
    System { what: String, detail: String },
    #[error("internal error: {0}")]
    Internal(String),
}

impl EmuError {
    pub(crate) fn system(what: impl Into<String>, detail: impl std::fmt::Display) -> Self {
        EmuError::System {
            what: what.into(),
            detail: detail.to_string(),
        }
    }

    /// Whether the user can fix it by changing the scenario or how polycc is run (exit 2).
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            EmuError::Unsupported { .. }
                | EmuError::Scenario(_)
                | EmuError::Privilege(_)
                | EmuError::Program(_)
        )
    }
}
