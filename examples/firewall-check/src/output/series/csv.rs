//! `series`' CSV: one row per [`SeriesSample`], in the order the samples
//! come, under the header [`CSV_HEADER`]. An unknown value is an empty cell.
//!
//! | column | field ([`SeriesSample`]) | written as |
//! |---|---|---|
//! | `time_s` | `time_s` | seconds, microseconds shown |
//! | `connection` | `connection` | from 1 |
//! | `direction` | `direction` | `client_to_server` or `server_to_client` |
//! | `seq_end` | `seq_end` | bytes |
//! | `ack` | `ack` | bytes |
//! | `window_bytes` | `window_bytes` | bytes, as the receiver means it |
//! | `window_read_bytes` | `window_read_bytes` | bytes, as the sender reads it |
//! | `in_flight_bytes` | `in_flight_bytes` | bytes |
//! | `throughput_bps` | `throughput_bps` | bit/s |
//! | `rtt_s` | `rtt_s` | seconds, microseconds shown |
//! | `limit` | `limit` | `receive_window`, `network`, `sender`, `idle`, `busy` |
//!
//! What each value means is said at [`crate::analysis::series`].

use std::io::{self, Write};

use crate::analysis::limits::SenderPhase;
use crate::analysis::series::SeriesSample;

/// The CSV header, one column per [`SeriesSample`] field.
pub const CSV_HEADER: &str = "time_s,connection,direction,seq_end,ack,window_bytes,window_read_bytes,in_flight_bytes,throughput_bps,rtt_s,limit";

/// Writes one sample as a CSV row (columns of [`CSV_HEADER`]).
pub fn write_row<W: Write>(w: &mut W, s: &SeriesSample) -> io::Result<()> {
    fn opt<W: Write>(w: &mut W, v: Option<u64>) -> io::Result<()> {
        match v {
            Some(v) => write!(w, "{v},"),
            None => w.write_all(b","),
        }
    }
    write!(
        w,
        "{:.6},{},{},{},{},",
        s.time_s,
        s.connection,
        s.direction.as_str(),
        s.seq_end,
        s.ack
    )?;
    opt(w, s.window_bytes)?;
    opt(w, s.window_read_bytes)?;
    write!(w, "{},", s.in_flight_bytes)?;
    opt(w, s.throughput_bps)?;
    if let Some(r) = s.rtt_s {
        write!(w, "{r:.6}")?;
    }
    writeln!(w, ",{}", s.limit.map_or("", SenderPhase::as_str))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conn::Direction;

    #[test]
    fn csv_row_leaves_unknowns_empty() {
        let s = SeriesSample {
            connection: 1,
            direction: Direction::ServerToClient,
            time_s: 2e-3,
            seq_end: 2 * 1448,
            ack: 2 * 1000,
            window_bytes: None,
            window_read_bytes: Some(65_535),
            in_flight_bytes: 2 * 448,
            throughput_bps: None,
            rtt_s: None,
            rtt_estimate_s: Some(0.01),
            round: 0,
            limit: None,
        };
        let mut out = Vec::new();
        write_row(&mut out, &s).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "0.002000,1,server_to_client,2896,2000,,65535,896,,,\n"
        );
        assert_eq!(CSV_HEADER.split(',').count(), 11);
    }
}
