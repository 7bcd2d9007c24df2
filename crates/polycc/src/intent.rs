//! Application intents: what a flow's application wants from the network, handed to its
//! controller at start and whenever it changes.
//!
//! The classes are Janus' (Zhou et al., IEEE TMC 2018, §3 Table 2: bandwidth guarantee, delay
//! sensitive, bulk transfer) plus two used by later policies: scavenger (yield to everything
//! else, as LEDBAT or Proteus-S) and real-time video with a bitrate range (as PIBES and GCC).
//! Controllers that know no intent ignore it (the trait's default).

use crate::units::Rate;
use serde::{Deserialize, Serialize};

/// What the application asks for. Rates are bit/s ([`Rate`] serialises as an integer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "class", rename_all = "snake_case", deny_unknown_fields)]
pub enum Intent {
    /// Satisfy `target_rate` (e.g. a video's bitrate); never settle below `min_rate` when
    /// competing (Janus §5, R_min; zero when the application gives none).
    BandwidthGuarantee {
        /// The rate the application needs; must be positive.
        target_rate: Rate,
        /// The floor under competition; optional in scenarios, zero meaning none.
        #[serde(default)]
        min_rate: Rate,
    },
    /// Minimise delay (web browsing, RPCs).
    DelaySensitive,
    /// Maximise throughput (file transfer): work-conserving, no target.
    Bulk,
    /// Use only capacity nobody else wants.
    Scavenger,
    /// Real-time media that can encode anywhere in `[min_rate, max_rate]`.
    RealtimeVideo {
        /// The lowest bitrate the encoder can produce.
        min_rate: Rate,
        /// The highest bitrate worth sending; must be positive and not below `min_rate`.
        max_rate: Rate,
    },
}

/// An invalid intent: the field at fault and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct IntentError {
    /// Name of the offending field (`target_rate`, `min_rate`, `max_rate`).
    pub field: &'static str,
    /// What is wrong with the value, for a person to read.
    pub message: String,
}

impl Intent {
    /// Scenario name of the class.
    pub fn class(&self) -> &'static str {
        match self {
            Intent::BandwidthGuarantee { .. } => "bandwidth_guarantee",
            Intent::DelaySensitive => "delay_sensitive",
            Intent::Bulk => "bulk",
            Intent::Scavenger => "scavenger",
            Intent::RealtimeVideo { .. } => "realtime_video",
        }
    }

    /// The rate the application needs, when it states one. Satisfaction (goodput / target) is
    /// reported for these flows. Real-time video states a range, not a target.
    pub fn target_rate(&self) -> Option<Rate> {
        match self {
            Intent::BandwidthGuarantee { target_rate, .. } => Some(*target_rate),
            _ => None,
        }
    }

    /// The rate below which the application should not be pushed, if any.
    pub fn min_rate(&self) -> Option<Rate> {
        match self {
            Intent::BandwidthGuarantee { min_rate, .. } if min_rate.as_bps() > 0 => Some(*min_rate),
            Intent::RealtimeVideo { min_rate, .. } => Some(*min_rate),
            _ => None,
        }
    }

    /// Checks the rates: targets positive, minimums not above targets or maximums.
    pub fn validate(&self) -> Result<(), IntentError> {
        let err = |field, message: String| Err(IntentError { field, message });
        match *self {
            Intent::BandwidthGuarantee {
                target_rate,
                min_rate,
            } => {
                if target_rate.as_bps() == 0 {
                    return err("target_rate", "must be positive".into());
                }
                if min_rate > target_rate {
                    return err(
                        "min_rate",
                        format!("{min_rate} must not exceed target_rate {target_rate}"),
                    );
                }
            }
            Intent::RealtimeVideo { min_rate, max_rate } => {
                if max_rate.as_bps() == 0 {
                    return err("max_rate", "must be positive".into());
                }
                if min_rate > max_rate {
                    return err(
                        "min_rate",
                        format!("{min_rate} must not exceed max_rate {max_rate}"),
                    );
                }
            }
            Intent::DelaySensitive | Intent::Bulk | Intent::Scavenger => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_round_trip_with_class_tag() {
        let i = Intent::BandwidthGuarantee {
            target_rate: Rate::from_mbps(10),
            min_rate: Rate::from_mbps(2),
        };
        let v = serde_json::to_value(i).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"class": "bandwidth_guarantee", "target_rate": 10_000_000, "min_rate": 2_000_000})
        );
        assert_eq!(serde_json::from_value::<Intent>(v).unwrap(), i);
        let bulk: Intent = serde_json::from_value(serde_json::json!({"class": "bulk"})).unwrap();
        assert_eq!(bulk, Intent::Bulk);
        // min_rate is optional.
        let j: Intent = serde_json::from_value(
            serde_json::json!({"class": "bandwidth_guarantee", "target_rate": 5}),
        )
        .unwrap();
        assert_eq!(j.min_rate(), None);
        assert_eq!(j.target_rate(), Some(Rate(5)));
    }

    #[test]
    fn unknown_class_and_keys_are_rejected() {
        for bad in [
            serde_json::json!({"class": "video"}),
            serde_json::json!({"class": "bandwidth_guarantee", "target_rate": 5, "rate": 1}),
            serde_json::json!({"class": "realtime_video", "min_rate": 1}),
        ] {
            assert!(
                serde_json::from_value::<Intent>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn validation_names_the_field() {
        let zero = Intent::BandwidthGuarantee {
            target_rate: Rate(0),
            min_rate: Rate(0),
        };
        assert_eq!(zero.validate().unwrap_err().field, "target_rate");
        let above = Intent::BandwidthGuarantee {
            target_rate: Rate::from_mbps(1),
            min_rate: Rate::from_mbps(2),
        };
        assert_eq!(above.validate().unwrap_err().field, "min_rate");
        let video = Intent::RealtimeVideo {
            min_rate: Rate::from_mbps(3),
            max_rate: Rate::from_mbps(2),
        };
        assert_eq!(video.validate().unwrap_err().field, "min_rate");
        assert!(Intent::Bulk.validate().is_ok());
        assert_eq!(video.min_rate(), Some(Rate::from_mbps(3)));
        assert_eq!(video.target_rate(), None);
    }
}
