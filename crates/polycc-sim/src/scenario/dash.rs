//! A validated DASH source (`traffic = { kind = "dash", ... }`): the bitrate ladder and the
//! player's settings, read by the engine's player (`engine::player`).

use polycc::units::{Duration, Rate};

/// How the player picks each chunk's bitrate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Abr {
    /// dash.js's BOLA rule (`engine::bola_rule`): BOLA with its start-up phase, placeholder
    /// buffer, BOLA-O cap and stall safety.
    Bola,
    /// BOLA's buffer-based choice alone (Spiteri et al., INFOCOM'16, BOLA-BASIC), set up as
    /// dash.js sets it up (`engine::bola`).
    BolaBasic,
    /// Always the highest bitrate (Proteus §6.3's Fig. 13 forces its agent so).
    Highest,
    /// Always the lowest bitrate.
    Lowest,
}

impl Abr {
    /// The scenario's names, for messages.
    pub const NAMES: &'static str = "\"bola\", \"bola-basic\", \"highest\" or \"lowest\"";

    pub fn from_name(name: &str) -> Option<Abr> {
        match name {
            "bola" => Some(Abr::Bola),
            "bola-basic" => Some(Abr::BolaBasic),
            "highest" => Some(Abr::Highest),
            "lowest" => Some(Abr::Lowest),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct DashModel {
    /// The ladder, lowest first, each above the one before.
    pub bitrates: Vec<Rate>,
    /// Seconds of video in a chunk.
    pub chunk: Duration,
    /// Most video the player holds ahead of playback: it asks for the next chunk only when
    /// that chunk fits.
    pub buffer: Duration,
    /// Video buffered before playback starts, and before it resumes after a stall.
    pub startup: Duration,
    pub abr: Abr,
    /// Chunks the video has (`None`: as many as the flow's life allows).
    pub chunks: Option<u64>,
}

impl DashModel {
    /// Bytes of a chunk at ladder level `level`.
    pub fn chunk_bytes(&self, level: usize) -> u64 {
        self.bitrates[level].bytes_in(self.chunk).max(1)
    }
}
