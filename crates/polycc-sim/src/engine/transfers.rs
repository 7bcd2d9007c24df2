//! The per-transfer table of sized and web flows (`transfers.parquet`): one row per transfer the
//! application requested, so that completion times can be pooled over many sources (a flow's
//! `fct_dist_s` holds only its own percentiles, and short-flow studies such as Allegro's Fig. 15
//! need the percentiles of all transfers together).

use crate::output::{Column, Table};
use polycc::units::Time;

/// One transfer, as a backend recorded it.
#[derive(Clone, Copy, Debug)]
pub struct TransferRow {
    /// Payload bytes the application asked for.
    pub bytes: u64,
    pub requested: Time,
    /// When the sender began it (`None`: not yet, or the backend does not see it).
    pub started: Option<Time>,
    /// When its connection could carry its data: `started`, or later by a handshake on a new
    /// connection (`None`: not yet, or the backend does not see it).
    pub connected: Option<Time>,
    /// When the receiver held all of it (`None`: not by the end of the run).
    pub completed: Option<Time>,
}

/// The table's columns after `flow`, in order.
const COLUMNS: [&str; 7] = [
    "transfer",
    "bytes",
    "requested_s",
    "started_s",
    "connected_s",
    "completed_s",
    "fct_s",
];

/// The per-transfer table of the given flows' transfers, in flow order and, within a flow, in
/// request order. Columns: flow, transfer (index within the flow), bytes, requested_s,
/// started_s, connected_s, completed_s and fct_s (completion less request, the definition of
/// the summaries' `fct_s`); a time not reached is null. Completion less `connected_s` is the
/// transfer's time on an open connection, comparable across stacks with and without a
/// handshake.
pub fn transfers_table_of<'a>(
    flows: impl IntoIterator<Item = (&'a str, impl IntoIterator<Item = TransferRow>)>,
) -> Table {
    let mut ids = Vec::new();
    let mut cols: Vec<Vec<f64>> = vec![Vec::new(); COLUMNS.len()];
    for (id, transfers) in flows {
        for (k, t) in transfers.into_iter().enumerate() {
            ids.push(Some(id.to_string()));
            let secs = |t: Option<Time>| t.map_or(f64::NAN, Time::as_secs_f64);
            let fct = t.completed.map(|c| (c - t.requested).as_secs_f64());
            let row = [
                k as f64,
                t.bytes as f64,
                t.requested.as_secs_f64(),
                secs(t.started),
                secs(t.connected),
                secs(t.completed),
                fct.unwrap_or(f64::NAN),
            ];
            for (c, v) in cols.iter_mut().zip(row) {
                c.push(v);
            }
        }
    }
    let rows = ids.len();
    let mut columns = vec![("flow".to_string(), Column::Str(ids.into_iter().collect()))];
    columns.extend(
        COLUMNS
            .iter()
            .zip(cols)
            .map(|(n, c)| (n.to_string(), Column::F64(c))),
    );
    Table { rows, columns }
}

#[cfg(test)]
mod tests {
    use super::*;
    use polycc::units::Duration;

    fn at(ms: u64) -> Time {
        Time::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn one_row_per_transfer_with_nulls_for_times_not_reached() {
        let a = [
            TransferRow {
                bytes: 100_000,
                requested: at(100),
                started: Some(at(150)),
                connected: Some(at(210)),
                completed: Some(at(400)),
            },
            TransferRow {
                bytes: 100_000,
                requested: at(900),
                started: None,
                connected: None,
                completed: None,
            },
        ];
        let b = [TransferRow {
            bytes: 5,
            requested: at(0),
            started: Some(at(0)),
            connected: Some(at(0)),
            completed: Some(at(70)),
        }];
        let t = transfers_table_of([("a", a.to_vec()), ("b", b.to_vec())]);
        assert_eq!(t.rows, 3);
        assert_eq!(t.f64s("transfer").unwrap(), vec![0.0, 1.0, 0.0]);
        let fct = t.f64s("fct_s").unwrap();
        assert!((fct[0] - 0.3).abs() < 1e-12 && (fct[2] - 0.07).abs() < 1e-12);
        assert!(fct[1].is_nan());
        assert!(t.f64s("started_s").unwrap()[1].is_nan());
        assert!((t.f64s("connected_s").unwrap()[0] - 0.21).abs() < 1e-12);
        assert_eq!(t.f64s("bytes").unwrap(), vec![1e5, 1e5, 5.0]);
    }

    #[test]
    fn no_transfers_no_rows_but_the_columns() {
        let t = transfers_table_of(std::iter::empty::<(&str, Vec<TransferRow>)>());
        assert_eq!(t.rows, 0);
        assert_eq!(t.columns.len(), 1 + COLUMNS.len());
    }
}
