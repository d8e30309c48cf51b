//! A real run's figures as a run of the model: the `measured.json` that
//! `examples/lab/qbss-lab.sh` writes (in the shape of [`crate::report::to_json`]),
//! read as a [`RunResult`], so that the text report, the CSV table and the plot
//! show the lab's run beside the model's (`qbss-model --measured FILE`).

use std::io;
use std::path::Path;

use serde_json::Value;

use crate::scenario::Scenario;
use crate::sim::{RunResult, StreamTotals};
use crate::stats::Intervals;

/// Why a `measured.json` could not be read as a run of the scenario.
#[derive(Debug, thiserror::Error)]
pub enum MeasuredError {
    /// The file could not be read.
    #[error("{0}")]
    Read(#[from] io::Error),
    /// The file is not JSON.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// The object has no `streams` array.
    #[error("no \"streams\" array")]
    NoStreams,
    /// The object has no `intervals` array.
    #[error("no \"intervals\" array")]
    NoIntervals,
    /// Not as many streams as the scenario has.
    #[error("{found} streams, the scenario has {expected}")]
    StreamCount {
        /// Streams in the file.
        found: usize,
        /// Streams in the scenario.
        expected: usize,
    },
    /// Not one interval per second of the scenario.
    #[error("{found} intervals, the scenario lasts {duration_s} s")]
    IntervalCount {
        /// Intervals in the file.
        found: usize,
        /// The scenario's duration.
        duration_s: u32,
    },
    /// A stream of the file is not the scenario's stream at its position.
    #[error("stream {stream}: {found} is not {expected:?}")]
    StreamName {
        /// The stream, counted from 1.
        stream: usize,
        /// Its `name` in the file (`null` when it has none).
        found: Value,
        /// The scenario's name for it.
        expected: String,
    },
    /// An interval has no `streams` array.
    #[error("an interval without streams")]
    IntervalWithoutStreams {
        /// The interval, counted from 0 (its start second).
        interval: usize,
    },
}

/// Reads the file at `path` ([`from_value`]).
pub fn read(sc: &Scenario, path: &Path) -> Result<RunResult, MeasuredError> {
    let text = std::fs::read_to_string(path)?;
    from_value(sc, &serde_json::from_str(&text)?)
}

/// The figures of a `measured.json` object as a run of `sc`. Streams are matched
/// by position and must carry the scenario's names; the interval count must be
/// the scenario's duration. A figure the object lacks counts as 0.
pub fn from_value(sc: &Scenario, v: &Value) -> Result<RunResult, MeasuredError> {
    let streams = v["streams"].as_array().ok_or(MeasuredError::NoStreams)?;
    let intervals = v["intervals"]
        .as_array()
        .ok_or(MeasuredError::NoIntervals)?;
    if streams.len() != sc.streams.len() {
        return Err(MeasuredError::StreamCount {
            found: streams.len(),
            expected: sc.streams.len(),
        });
    }
    if intervals.len() != sc.duration_s as usize {
        return Err(MeasuredError::IntervalCount {
            found: intervals.len(),
            duration_s: sc.duration_s,
        });
    }
    let totals = streams
        .iter()
        .zip(&sc.streams)
        .enumerate()
        .map(|(k, (j, s))| {
            if j["name"].as_str() != Some(s.name.as_str()) {
                return Err(MeasuredError::StreamName {
                    stream: k + 1,
                    found: j["name"].clone(),
                    expected: s.name.clone(),
                });
            }
            Ok(StreamTotals {
                sent: count(&j["sent_packets"]),
                policed: 0,
                refused: count(&j["dropped_packets"]),
                retransmits: count(&j["retransmits"]),
                timeouts: count(&j["timeouts"]),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut iv = Intervals::new(intervals.len(), streams.len(), sc.scheduler.queues.len());
    for (i, row) in intervals.iter().enumerate() {
        let cells = row["streams"]
            .as_array()
            .ok_or(MeasuredError::IntervalWithoutStreams { interval: i })?;
        for (k, c) in cells.iter().enumerate().take(streams.len()) {
            let cell = iv.cell_mut(i, k);
            cell.bytes = count(&c["bits_per_second"]) / 8;
            cell.packets = count(&c["packets"]);
            cell.drops = count(&c["drops"]);
        }
    }
    let packets = totals.iter().map(|t| t.sent).sum();
    Ok(RunResult {
        intervals: iv,
        totals,
        queue_stats: vec![wrr::QueueStats::default(); sc.scheduler.queues.len()],
        events: 0,
        packets,
    })
}

/// A count of the object: 0 when absent or not a whole number.
fn count(x: &Value) -> u64 {
    x.as_u64().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn scenario() -> Scenario {
        let p = crate::presets::find("vc-10mbit").unwrap();
        Scenario::from_toml(p.toml).unwrap()
    }

    fn interval(streams: Value) -> Value {
        json!({ "streams": streams })
    }

    #[test]
    fn a_report_of_the_model_reads_back_as_its_run() {
        let sc = scenario();
        let run = crate::sim::run(&sc).unwrap();
        let back = from_value(
            &sc,
            &serde_json::to_value(crate::report::to_json(&sc, &run)).unwrap(),
        )
        .unwrap();
        for k in 0..sc.streams.len() {
            assert_eq!(back.totals[k].sent, run.totals[k].sent);
            for i in 0..run.intervals.len() {
                assert_eq!(back.intervals.cell(i, k), run.intervals.cell(i, k));
            }
        }
    }

    #[test]
    fn every_refusal_says_what_is_wrong_and_where() {
        let sc = scenario();
        let ok_streams = json!([{ "name": "qbss" }, { "name": "be" }]);
        let rows = |n: usize| Value::Array(vec![interval(json!([])); n]);
        let cases = [
            (json!({}), "no \"streams\" array"),
            (json!({ "streams": [] }), "no \"intervals\" array"),
            (
                json!({ "streams": [], "intervals": [] }),
                "0 streams, the scenario has 2",
            ),
            (
                json!({ "streams": ok_streams, "intervals": rows(3) }),
                "3 intervals, the scenario lasts 30 s",
            ),
            (
                json!({ "streams": [{ "name": "qbss" }, {}], "intervals": rows(30) }),
                "stream 2: null is not \"be\"",
            ),
            (
                json!({ "streams": [{ "name": "be" }, { "name": "be" }], "intervals": rows(30) }),
                "stream 1: \"be\" is not \"qbss\"",
            ),
        ];
        for (v, want) in cases {
            assert_eq!(from_value(&sc, &v).unwrap_err().to_string(), want, "{v}");
        }
        let mut bad_rows = rows(30);
        bad_rows[4] = json!({});
        let e = from_value(
            &sc,
            &json!({ "streams": ok_streams, "intervals": bad_rows }),
        );
        assert!(matches!(
            e,
            Err(MeasuredError::IntervalWithoutStreams { interval: 4 })
        ));
    }
}
