//! How much data each connection carried: what chooses the connection a
//! plot shows when none is named.

use rustc_hash::FxHashMap;

use super::SeriesSample;

/// Per connection, the data each direction carried as its samples show it
/// (the highest [`SeriesSample::seq_end`]): one pair of numbers per
/// connection, whatever the capture's length.
#[derive(Debug, Clone, Default)]
pub struct DataTotals {
    by_connection: FxHashMap<u64, [u64; 2]>,
}

/// The connection that carried the most data ([`DataTotals::busiest`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Busiest {
    /// Its number (from 1, as `analyze` numbers them).
    pub connection: u64,
    /// The bytes it carried, per direction (client to server, server to
    /// client).
    pub bytes: [u64; 2],
}

impl DataTotals {
    /// Counts one sample.
    pub fn push(&mut self, s: &SeriesSample) {
        let t = self.by_connection.entry(s.connection).or_default();
        let i = s.direction.index();
        t[i] = t[i].max(s.seq_end);
    }

    /// How many connections had samples.
    pub fn len(&self) -> usize {
        self.by_connection.len()
    }

    /// True when no connection had samples.
    pub fn is_empty(&self) -> bool {
        self.by_connection.is_empty()
    }

    /// The connection that carried the most data, both directions
    /// together; of equals, the first. `None` without samples.
    pub fn busiest(&self) -> Option<Busiest> {
        self.by_connection
            .iter()
            .max_by_key(|(id, t)| (t[0].saturating_add(t[1]), std::cmp::Reverse(**id)))
            .map(|(&connection, &bytes)| Busiest { connection, bytes })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conn::Direction;

    fn sample(connection: u64, direction: Direction, seq_end: u64) -> SeriesSample {
        SeriesSample {
            connection,
            direction,
            time_s: 0.0,
            seq_end,
            ack: 0,
            window_bytes: None,
            window_read_bytes: None,
            in_flight_bytes: 0,
            throughput_bps: None,
            rtt_s: None,
            rtt_estimate_s: None,
            limit: None,
            round: 0,
        }
    }

    #[test]
    fn the_busiest_carried_most_in_both_directions_the_first_of_equals() {
        let mut t = DataTotals::default();
        assert_eq!(t.busiest(), None);
        t.push(&sample(3, Direction::ClientToServer, 500));
        t.push(&sample(2, Direction::ServerToClient, 400));
        t.push(&sample(2, Direction::ClientToServer, 100));
        t.push(&sample(2, Direction::ServerToClient, 300));
        assert_eq!(t.len(), 2);
        assert_eq!(
            t.busiest(),
            Some(Busiest {
                connection: 2,
                bytes: [100, 400]
            })
        );
        t.push(&sample(1, Direction::ServerToClient, 500));
        assert_eq!(t.busiest().map(|b| b.connection), Some(1));
    }
}
