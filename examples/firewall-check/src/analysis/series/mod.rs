//! `firewall-check series`: each connection's state over time, as CSV, and
//! the picture a network engineer draws by hand, as SVG.
//!
//! # The CSV
//!
//! One row per [`SeriesSample`] of [`sample::series`]: the sending direction
//! after each data segment and the receiving direction after each ACK, in
//! capture order, under the header [`CSV_HEADER`]. An unknown value is an
//! empty cell. The columns:
//!
//! | column | meaning |
//! |---|---|
//! | `time_s` | seconds since the connection's first segment (microseconds shown) |
//! | `connection` | the connection's number, from 1 in order of first appearance, as `analyze` numbers them |
//! | `direction` | `client_to_server` or `server_to_client`: the direction whose sender the row describes |
//! | `seq_end` | one past the highest byte sent, relative to the direction's first sequence number seen |
//! | `ack` | the highest acknowledgment the receiver sent, same origin |
//! | `window_bytes` | the receiver's last window in bytes as the receiver means it (its field shifted by its own scale); empty when that shift is unknown |
//! | `window_read_bytes` | the same window as the sender reads it (the field shifted by the scale the sender believes in); empty when unknown |
//! | `in_flight_bytes` | bytes sent and not yet acknowledged, as seen at the capture point |
//! | `throughput_bps` | bytes acknowledged over the last RTT, in bit/s; empty without an RTT |
//! | `rtt_s` | an RTT sample, seconds, on a row where the receiver's ACK covers new data: from the newest data segment it covers to the ACK as the capture point saw them, plus the sender's side of the loop (capture point to sender and back: from the handshake, else from the sender's echoes of the receiver's TSvals); never from a retransmitted segment (Karn's rule); empty on other rows |
//! | `limit` | the sender's phase from this row to the next of its direction, as `analyze`'s limit (section 1) books it: `receive_window` (including rounds a plateau of the flight moved there), `network`, `sender` (decided per round trip: rows wait for their round, at most [`SERIES_HELD`] of them), `idle`, `busy` (network or sender, where a row could not wait), or empty before the first data segment and wherever the window scale or the RTT is unknown (see "Captures without the handshake" below) (see [`crate::analysis::limits`]) |
//!
//! Besides one row per segment, a direction gets a row (with the previous
//! row's figures and no RTT sample) where its sender learned of an ACK
//! between two segments (the ACK's time here plus the loop to the sender
//! and back): its phase changes there. So the time between rows, summed by
//! `limit`, is `analyze`'s split of the sender's time.
//!
//! The window's right edge as the sender reads it is `ack + window_read_bytes`;
//! where `window_bytes` differs, the receiver meant another edge (a window
//! scale the sender never learned, or a field rewritten on the way).
//!
//! The CSV is streamed: memory is that of `analyze`, plus the rows waiting
//! for their round trip to be decided (at most 65,536), whatever the
//! capture's length.
//!
//! # Captures without the handshake
//!
//! A connection whose handshake is not in the capture has no known window
//! scale or RTT when its rows are written. From a capture file, a first
//! pass learns what `analyze` infers for it ([`analyze::learn`]: each
//! direction's `limit.inferred_shift` and the RTT, from the timestamps'
//! echoes, at most [`analyze::LEARN_MAX`] connections), and the rows read
//! windows and book limits with those, as `analyze`'s report does (its
//! fractions and the rows' time by label agree). `--assume-wscale` and
//! `--rtt` replace what was learned. Where nothing was inferred (a shift
//! the capture leaves as an interval), and from standard input or a
//! pipe (read once) without both flags, the window columns and `limit` stay empty rather
//! than guess.
//!
//! # The SVG
//!
//! One connection (`--connection N`, else the one that carried the most data;
//! its number is said on standard error): for each direction that carried
//! data, a sequence panel in the style of Stevens and tcptrace, the sequence
//! edge, the ACK and the window's right edge (as the sender reads it, and as
//! the receiver means it where that differs) against time; below, for the
//! direction with the most data, bytes in flight beside the window the sender
//! read, and the throughput over one RTT. The background shows what limited
//! the sender, as `analyze`'s `limit` splits its time: the receive window
//! red, the network blue, the sender itself yellow; idle time grey.
//!
//! Memory: only the chosen connection's samples are kept, thinned to at most
//! [`MAX_PLOT_POINTS`] (half per direction): when a direction's buffer is
//! full, every other point is dropped and from then on only every second
//! (fourth, ...) sample is kept. A kept point carries how long the sender
//! spent in each phase since the previous kept point, so the shading keeps
//! the phase that covered most of each thinned interval. Each line is then
//! reduced to what the picture can show (per half-pixel column of time: the
//! first, lowest, highest and last point), so the SVG stays small. Choosing the
//! connection with the most data reads the capture twice (the first pass
//! keeps one pair of numbers per connection), so it needs a file; from
//! standard input, `--svg` needs `--connection`.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use plotters::prelude::*;
use rustc_hash::FxHashMap;

use crate::analysis::analyze::{self, AnalyzeError, Settings};
use crate::analysis::limits::SenderPhase;
use crate::conn::tracker::{Direction, DEFAULT_CAPACITY};

pub mod sample;

use crate::{Failure, Outcome};
pub use sample::{series, series_learned, SeriesSample, SERIES_HELD};

/// The CSV header, one column per [`SeriesSample`] field.
pub const CSV_HEADER: &str = "time_s,connection,direction,seq_end,ack,window_bytes,window_read_bytes,in_flight_bytes,throughput_bps,rtt_s,limit";

/// Most points the SVG keeps for its connection (half per direction).
pub const MAX_PLOT_POINTS: usize = 20_000;

/// SVG size in pixels.
pub const SIZE: (u32, u32) = (1200, 960);

/// The CSV columns, for `--help`.
const CSV_HELP: &str = "\
Write the CSV to FILE (`-`: standard output). Without --csv and --svg it goes to standard output.
One row per sample: the sending direction after each data segment, the receiving direction after each ACK. Columns (empty cell: unknown):
  time_s             seconds since the connection's first segment
  connection         number from 1, in order of first appearance (as analyze numbers them)
  direction          client_to_server or server_to_client: whose sending the row describes
  seq_end            one past the highest byte sent, relative to the direction's first sequence number
  ack                the highest acknowledgment the receiver sent, same origin
  window_bytes       the receiver's window in bytes as the receiver means it
  window_read_bytes  the same window as the sender reads it (right edge: ack + window_read_bytes)
  in_flight_bytes    bytes sent and not yet acknowledged, as seen at the capture point
  throughput_bps     bytes acknowledged over the last RTT, bit/s
  rtt_s              an RTT sample where the receiver's ACK covers new data (Karn's rule), seconds
  limit              the sender's phase until the next row: receive_window, network, sender, idle, busy (undecided) or empty";

/// Command-line arguments of `firewall-check series`.
#[derive(Debug, Clone, clap::Args)]
pub struct SeriesArgs {
    /// The capture file (pcap or pcapng); `-` reads standard input.
    pub capture: PathBuf,
    /// Only this connection (numbered from 1 as `analyze` numbers them).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub connection: Option<u64>,
    /// Write the CSV to FILE (`-`: standard output). Without --csv and --svg it goes to standard output.
    #[arg(long, value_name = "FILE", long_help = CSV_HELP)]
    pub csv: Option<PathBuf>,
    /// Draw one connection (--connection, else the one with the most data) as SVG to FILE (`-`: standard output): sequence, ACK and window edges against time, bytes in flight and throughput, what limited the sender shaded.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Use this RTT (e.g. `10ms`) instead of the handshake's.
    #[arg(long, value_parser = parse_rtt)]
    pub rtt: Option<Duration>,
    /// For connections whose handshake is not in the capture, read window fields with this shift (0-14). Without it, a capture file is read twice and each such connection's windows are read with the shift `analyze` infers for it, when it infers one.
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=14))]
    pub assume_wscale: Option<u8>,
    /// Most connections held open at once (closed ones are evicted first).
    #[arg(long, default_value_t = DEFAULT_CAPACITY)]
    pub max_connections: usize,
}

fn parse_rtt(s: &str) -> Result<Duration, String> {
    let d = bdp::parse_duration(s).map_err(|e| e.to_string())?;
    if d.is_zero() {
        return Err("the RTT must be above zero".to_string());
    }
    Ok(d)
}

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

fn is_stdout(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// Runs `series` for the command line.
pub fn run(args: &SeriesArgs) -> Result<Outcome, Failure> {
    if args.max_connections == 0 {
        return Err(Failure::Usage(
            "--max-connections must be at least 1".to_string(),
        ));
    }
    let from_stdin = is_stdout(&args.capture);
    if args.svg.is_some() && args.connection.is_none() && from_stdin {
        return Err(Failure::Usage(
            "--svg without --connection reads the capture twice (to find the connection with the most data): give a file, not -, or --connection N".to_string(),
        ));
    }
    if args.csv.as_deref().is_some_and(is_stdout) && args.svg.as_deref().is_some_and(is_stdout) {
        return Err(Failure::Usage(
            "--csv - and --svg - cannot both write to standard output".to_string(),
        ));
    }
    let settings = Settings {
        rtt: args.rtt,
        assume_wscale: args.assume_wscale,
        capacity: args.max_connections,
        ..Settings::default()
    };
    let csv_to_stdout = args.csv.as_deref().map_or(args.svg.is_none(), is_stdout);
    let mut csv: Option<Box<dyn Write>> = match &args.csv {
        _ if csv_to_stdout => Some(Box::new(BufWriter::new(io::stdout().lock()))),
        Some(p) => Some(Box::new(BufWriter::new(
            std::fs::File::create(p).map_err(|e| format!("cannot create {}: {e}", p.display()))?,
        ))),
        None => None,
    };

    // Pass 1: the CSV, and what the SVG needs.
    let want_svg = args.svg.is_some();
    let mut plot = args.connection.filter(|_| want_svg).map(PlotData::new);
    let mut totals: FxHashMap<u64, [u64; 2]> = FxHashMap::default();
    let track_totals = want_svg && args.connection.is_none();
    let mut write_err: Option<io::Error> = None;
    if let Some(w) = csv.as_mut() {
        if let Err(e) = writeln!(w, "{CSV_HEADER}") {
            write_err = Some(e);
        }
    }
    let stop = std::cell::Cell::new(write_err.is_some());
    let want = args.connection;
    // A capture file without its handshake: what analyze infers (the
    // shifts, the RTT) read in a first pass, so that the rows read windows
    // and time limits as analyze does. Standard input is read once.
    // (A pipe given by name, `<(tcpdump ...)`, is read once too.)
    let regular = std::fs::metadata(&args.capture).is_ok_and(|m| m.is_file());
    let learned = if from_stdin || !regular || (args.assume_wscale.is_some() && args.rtt.is_some())
    {
        FxHashMap::default()
    } else {
        analyze::learn(crate::open_capture(&args.capture)?, &settings, |id| {
            want.is_none_or(|c| c == id)
        })
    };
    let input = crate::open_capture(&args.capture)?;
    let pass1 = sample::series_learned(
        input,
        &settings,
        &learned,
        |id| !stop.get() && want.is_none_or(|c| c == id),
        |s| {
            if let Some(w) = csv.as_mut() {
                if let Err(e) = write_row(w, s) {
                    write_err = Some(e);
                    stop.set(true);
                    return;
                }
            }
            if let Some(p) = plot.as_mut() {
                p.push(s);
            }
            if track_totals {
                let t = totals.entry(s.connection).or_default();
                let i = dir_index(s.direction);
                t[i] = t[i].max(s.seq_end);
            }
        },
    );
    if let Some(mut w) = csv.take() {
        if write_err.is_none() {
            if let Err(e) = w.flush() {
                write_err = Some(e);
            }
        }
    }
    if let Some(e) = write_err {
        if csv_to_stdout && crate::is_broken_pipe(&e) {
            return Ok(Outcome::Clean);
        }
        return Err(Failure::Runtime(format!("writing the CSV: {e}")));
    }
    let capture_err =
        |e: AnalyzeError| Failure::Runtime(format!("{}: {e}", args.capture.display()));
    let samples = match pass1 {
        Ok(n) => n,
        // Draw what was read before reporting the error.
        Err(e) if want_svg => {
            let f = capture_err(e);
            if let Some(p) = &plot {
                if !p.is_empty() {
                    write_svg(args, p)?;
                }
            }
            return Err(f);
        }
        Err(e) => return Err(capture_err(e)),
    };
    if let Some(c) = want {
        if samples == 0 {
            return Err(Failure::Runtime(format!(
                "{}: connection {c} has no samples (no such connection, or no data and no ACKs)",
                args.capture.display()
            )));
        }
    }
    if !want_svg {
        return Ok(Outcome::Clean);
    }

    // Pass 2, when the SVG's connection was not given: the one with the most data.
    let plot = match plot {
        Some(p) => p,
        None => {
            let Some((&id, t)) = totals
                .iter()
                .max_by_key(|(id, t)| (t[0] + t[1], std::cmp::Reverse(**id)))
            else {
                return Err(Failure::Runtime(format!(
                    "{}: no connection to plot",
                    args.capture.display()
                )));
            };
            eprintln!(
                "firewall-check series: plotting connection {id} of {}, the one with the most data ({} bytes client to server, {} server to client); choose another with --connection N",
                totals.len(),
                t[0],
                t[1]
            );
            let mut p = PlotData::new(id);
            let input = crate::open_capture(&args.capture)?;
            let r = sample::series_learned(input, &settings, &learned, |c| c == id, |s| p.push(s));
            if let Err(e) = r {
                if !p.is_empty() {
                    write_svg(args, &p)?;
                }
                return Err(capture_err(e));
            }
            p
        }
    };
    write_svg(args, &plot)?;
    Ok(Outcome::Clean)
}

fn write_svg(args: &SeriesArgs, plot: &PlotData) -> Result<(), Failure> {
    let Some(path) = &args.svg else {
        return Ok(());
    };
    let text = svg(plot).map_err(|e| Failure::Runtime(format!("drawing the SVG: {e}")))?;
    let res = if is_stdout(path) {
        let mut out = io::stdout().lock();
        out.write_all(text.as_bytes()).and_then(|()| out.flush())
    } else {
        std::fs::write(path, text.as_bytes())
    };
    match res {
        Ok(()) => Ok(()),
        Err(e) if is_stdout(path) && crate::is_broken_pipe(&e) => Ok(()),
        Err(e) => Err(Failure::Runtime(format!(
            "cannot write {}: {e}",
            path.display()
        ))),
    }
}

fn dir_index(d: Direction) -> usize {
    usize::from(d == Direction::ServerToClient)
}

/// Phases the plot tells apart, as indices of [`Point::phase_s`].
const RWND: usize = 0;
const IDLE: usize = 1;
const NETWORK: usize = 2;
const SENDER: usize = 3;
const BUSY: usize = 4;
/// How many phases the plot tells apart.
const PHASES: usize = 5;

fn phase_index(limit: Option<SenderPhase>) -> Option<usize> {
    Some(match limit? {
        SenderPhase::ReceiveWindow => RWND,
        SenderPhase::Idle => IDLE,
        SenderPhase::Network => NETWORK,
        SenderPhase::Sender => SENDER,
        SenderPhase::Busy => BUSY,
    })
}

/// One kept point of a direction.
#[derive(Debug, Clone, Copy)]
struct Point {
    t: f64,
    seq_end: u64,
    ack: u64,
    window: Option<u64>,
    window_read: Option<u64>,
    in_flight: u64,
    throughput_bps: Option<u64>,
    /// Seconds spent in each phase since the previous kept point.
    phase_s: [f64; PHASES],
}

impl Point {
    /// The phase that covered most of the interval before this point.
    fn phase(&self) -> Option<usize> {
        let (i, v) =
            self.phase_s
                .iter()
                .enumerate()
                .fold((0, 0.0), |b, (i, v)| if *v > b.1 { (i, *v) } else { b });
        (v > 0.0).then_some(i)
    }
}

/// A direction's points, thinned to a fixed budget as they arrive.
#[derive(Debug, Default)]
struct Thinned {
    points: Vec<Point>,
    /// Keep one sample in `stride`.
    stride: u64,
    /// Samples seen.
    seen: u64,
    /// Phase time since the last kept point.
    pending: [f64; PHASES],
    last_t: Option<f64>,
    /// The previous sample's phase: the one from it to this sample.
    last_limit: Option<SenderPhase>,
    /// The latest sample, kept at the end if thinning skipped it.
    last: Option<Point>,
}

impl Thinned {
    const CAP: usize = MAX_PLOT_POINTS / 2;

    fn push(&mut self, s: &SeriesSample) {
        let dt = self.last_t.map_or(0.0, |t| (s.time_s - t).max(0.0));
        self.last_t = Some(s.time_s);
        // A sample's phase runs from it to the next one.
        let before = std::mem::replace(&mut self.last_limit, s.limit);
        if let Some(i) = phase_index(before) {
            self.pending[i] += dt;
        }
        let p = Point {
            t: s.time_s,
            seq_end: s.seq_end,
            ack: s.ack,
            window: s.window_bytes,
            window_read: s.window_read_bytes,
            in_flight: s.in_flight_bytes,
            throughput_bps: s.throughput_bps,
            phase_s: self.pending,
        };
        self.stride = self.stride.max(1);
        if self.seen.is_multiple_of(self.stride) {
            self.points.push(p);
            self.pending = [0.0; PHASES];
            self.last = None;
        } else {
            self.last = Some(p);
        }
        self.seen += 1;
        if self.points.len() >= Self::CAP {
            // Keep every second point, the first included; a dropped point's
            // phase time goes to the next kept one (or the pending time).
            let old = std::mem::take(&mut self.points);
            let mut carry = [0.0; PHASES];
            let mut dropped_last = None;
            for (i, mut p) in old.into_iter().enumerate() {
                for (a, b) in p.phase_s.iter_mut().zip(carry) {
                    *a += b;
                }
                if i % 2 == 0 {
                    carry = [0.0; PHASES];
                    self.points.push(p);
                } else {
                    carry = p.phase_s;
                    dropped_last = Some(p);
                }
            }
            for (a, b) in self.pending.iter_mut().zip(carry) {
                *a += b;
            }
            // The latest sample stays the plot's end.
            if self.last.is_none() {
                if let Some(mut p) = dropped_last.filter(|p| Some(p.t) == self.last_t) {
                    p.phase_s = self.pending;
                    self.last = Some(p);
                }
            }
            self.stride *= 2;
        }
    }

    /// The kept points, the latest sample included.
    fn finish(&self) -> Vec<Point> {
        let mut v = self.points.clone();
        if let Some(p) = self.last {
            v.push(p);
        }
        v
    }
}

/// The chosen connection's samples, per direction.
#[derive(Debug)]
struct PlotData {
    connection: u64,
    dirs: [Thinned; 2],
    rtt_s: Option<f64>,
}

impl PlotData {
    fn new(connection: u64) -> Self {
        PlotData {
            connection,
            dirs: Default::default(),
            rtt_s: None,
        }
    }

    fn push(&mut self, s: &SeriesSample) {
        self.dirs[dir_index(s.direction)].push(s);
        if s.rtt_estimate_s.is_some() {
            self.rtt_s = s.rtt_estimate_s;
        }
    }

    fn is_empty(&self) -> bool {
        self.dirs.iter().all(|d| d.seen == 0)
    }
}

const BLUE: RGBColor = RGBColor(0x1f, 0x5f, 0xb4);
const GREEN: RGBColor = RGBColor(0x2c, 0x8c, 0x2c);
const ORANGE: RGBColor = RGBColor(0xe0, 0x6c, 0x00);
const PURPLE: RGBColor = RGBColor(0x8e, 0x3f, 0xb0);
const RWND_SHADE: RGBColor = RGBColor(0xf6, 0xc6, 0xc6);
const GREY: RGBColor = RGBColor(0x66, 0x66, 0x66);
/// The largest window a 16-bit field gives without scaling, bytes.
const UNSCALED_MAX: f64 = 65_535.0;
const IDLE_SHADE: RGBColor = RGBColor(0xdd, 0xdd, 0xdd);
const NETWORK_SHADE: RGBColor = RGBColor(0xd6, 0xe4, 0xf5);
const SENDER_SHADE: RGBColor = RGBColor(0xfa, 0xe8, 0xb8);

/// Legend text of the shaded phases.
const RWND_LABEL: &str = "sender limited by the receive window (as it reads it)";
const IDLE_LABEL: &str = "sender idle: nothing outstanding";
const NETWORK_LABEL: &str = "sender limited by the network (congestion window)";
const SENDER_LABEL: &str = "sender limited by itself (send buffer, application)";

/// The shaded phases, their colours and legend texts.
const SHADES: [(usize, RGBColor, &str); 4] = [
    (RWND, RWND_SHADE, RWND_LABEL),
    (NETWORK, NETWORK_SHADE, NETWORK_LABEL),
    (SENDER, SENDER_SHADE, SENDER_LABEL),
    (IDLE, IDLE_SHADE, IDLE_LABEL),
];

/// A byte unit for an axis whose values reach `max`.
fn byte_unit(max: f64) -> (f64, &'static str) {
    if max >= 5e6 {
        (1e6, "MB")
    } else if max >= 5e3 {
        (1e3, "kB")
    } else {
        (1.0, "bytes")
    }
}

/// A byte count for a legend: `67.1 MB`, `75,296 bytes`.
fn human_bytes(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.1} MB", v / 1e6)
    } else if v >= 1e4 {
        format!("{:.1} kB", v / 1e3)
    } else {
        format!("{v:.0} bytes")
    }
}

/// Axis labels with as many decimals as the range needs.
fn tick(v: &f64, range: f64) -> String {
    if range >= 20.0 {
        format!("{v:.0}")
    } else if range >= 2.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `f` of every point as a step line (a value holds until the next point),
/// split where `f` is unknown, reduced to what `col`-wide columns show.
fn steps(
    points: &[Point],
    tx: f64,
    col: f64,
    f: impl Fn(&Point) -> Option<f64>,
) -> Vec<Vec<(f64, f64)>> {
    let mut runs = Vec::new();
    let mut run: Vec<(f64, f64)> = Vec::new();
    for p in points {
        match f(p) {
            Some(v) => {
                if let Some(&(_, prev)) = run.last() {
                    run.push((p.t * tx, prev));
                }
                run.push((p.t * tx, v));
            }
            None => {
                if run.len() > 1 {
                    runs.push(simplify(&run, col));
                }
                run.clear();
            }
        }
    }
    if run.len() > 1 {
        runs.push(simplify(&run, col));
    }
    runs
}

/// Keeps, of the points falling in each `col`-wide column of x, the first,
/// the lowest, the highest and the last (in order), and of a level run only
/// its ends: the same picture at a column's resolution, with far fewer
/// points (the SVG stays small however many samples there are).
fn simplify(run: &[(f64, f64)], col: f64) -> Vec<(f64, f64)> {
    let column = |x: f64| if col > 0.0 { (x / col).floor() } else { x };
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(run.len().min(4096));
    let push = |p: (f64, f64), out: &mut Vec<(f64, f64)>| {
        let n = out.len();
        if n >= 1 && out[n - 1] == p {
            return;
        }
        if n >= 2 && out[n - 1].1 == p.1 && out[n - 2].1 == p.1 {
            out[n - 1] = p;
        } else {
            out.push(p);
        }
    };
    let mut i = 0;
    while i < run.len() {
        let c = column(run[i].0);
        let j = i + run[i..].iter().take_while(|p| column(p.0) == c).count();
        let g = &run[i..j];
        let (mut lo, mut hi) = (0, 0);
        for (k, p) in g.iter().enumerate() {
            if p.1 < g[lo].1 {
                lo = k;
            }
            if p.1 > g[hi].1 {
                hi = k;
            }
        }
        let mut keep = [0, lo, hi, g.len() - 1];
        keep.sort_unstable();
        for (n, &k) in keep.iter().enumerate() {
            if n == 0 || keep[n - 1] != k {
                push(g[k], &mut out);
            }
        }
        i = j;
    }
    out
}

/// Time intervals (scaled by `tx`) in phase `phase`, neighbours merged.
fn phase_runs(points: &[Point], tx: f64, phase: usize) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    for w in points.windows(2) {
        if w[1].phase() == Some(phase) {
            let (a, b) = (w[0].t * tx, w[1].t * tx);
            match out.last_mut() {
                Some(last) if last.1 >= a => last.1 = b,
                _ => out.push((a, b)),
            }
        }
    }
    out
}

type Area<'b> = DrawingArea<SVGBackend<'b>, plotters::coord::Shift>;
type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// What a legend entry shows.
#[derive(Clone, Copy)]
enum Key {
    Line(RGBColor),
    Dashed(RGBColor),
    Shade(RGBColor),
}

const TITLE_PX: u32 = 18;
const LEGEND_PX: u32 = 14;
const ROW_PX: u32 = 20;

/// Estimated width of `text` at `px` (sans-serif averages about 0.53 em).
fn text_width(text: &str, px: u32) -> i32 {
    (text.chars().count() as f64 * f64::from(px) * 0.53).ceil() as i32 + 1
}

/// Places legend entries in rows across `width`: (row, x) per entry.
fn layout(entries: &[(Key, String)], width: i32) -> Vec<(u32, i32)> {
    let (mut row, mut x) = (0u32, 0i32);
    entries
        .iter()
        .map(|(_, label)| {
            let w = 28 + text_width(label, LEGEND_PX) + 22;
            if x > 0 && x + w > width {
                row += 1;
                x = 0;
            }
            let at = (row, x);
            x += w;
            at
        })
        .collect()
}

/// Height of a panel header: its title and the legend rows.
fn header_height(entries: &[(Key, String)], width: i32) -> u32 {
    let rows = layout(entries, width).last().map_or(0, |(r, _)| r + 1);
    TITLE_PX + 12 + rows * ROW_PX + 6
}

/// Draws a panel's title and its legend (outside the plot, hiding nothing).
fn draw_header(
    area: &Area<'_>,
    title: &str,
    entries: &[(Key, String)],
) -> Result<(), Box<dyn std::error::Error>> {
    let (w, _) = area.dim_in_pixel();
    let left = 90i32;
    let title_w = text_width(title, TITLE_PX);
    area.draw(&Text::new(
        title.to_string(),
        ((w as i32 - title_w) / 2, 4),
        ("sans-serif", TITLE_PX).into_font(),
    ))?;
    let width = w as i32 - left - 20;
    for ((key, label), (row, x)) in entries.iter().zip(layout(entries, width)) {
        let x = left + x;
        let y = (TITLE_PX + 14 + row * ROW_PX) as i32 + (ROW_PX / 2) as i32;
        match *key {
            Key::Line(c) => {
                area.draw(&PathElement::new([(x, y), (x + 24, y)], c.stroke_width(3)))?;
            }
            Key::Dashed(c) => {
                for k in 0..3 {
                    let a = x + k * 9;
                    area.draw(&PathElement::new([(a, y), (a + 6, y)], c.stroke_width(3)))?;
                }
            }
            Key::Shade(c) => {
                area.draw(&Rectangle::new([(x, y - 7), (x + 24, y + 7)], c.filled()))?;
            }
        }
        area.draw(&Text::new(
            label.clone(),
            (x + 30, y - (LEGEND_PX as i32) / 2 - 1),
            ("sans-serif", LEGEND_PX).into_font(),
        ))?;
    }
    Ok(())
}

/// Shades what limited the sender (section 1 of `analyze`'s limit: the
/// receive window, the network, the sender) and its idle intervals over the
/// whole height.
fn shade(
    chart: &mut Chart<'_, '_>,
    points: &[Point],
    tx: f64,
    y_max: f64,
) -> Result<(), Box<dyn std::error::Error>> {
    for (phase, colour, _) in SHADES {
        chart.draw_series(
            phase_runs(points, tx, phase)
                .into_iter()
                .map(|(a, b)| Rectangle::new([(a, 0.0), (b, y_max)], colour.filled())),
        )?;
    }
    Ok(())
}

/// Legend entries of the phases [`shade`] draws (only those present).
fn shade_entries(points: &[Point]) -> Vec<(Key, String)> {
    let mut v = Vec::new();
    for (phase, colour, label) in SHADES {
        if !phase_runs(points, 1.0, phase).is_empty() {
            v.push((Key::Shade(colour), label.to_string()));
        }
    }
    v
}

/// Draws step-line runs.
fn lines(
    chart: &mut Chart<'_, '_>,
    runs: Vec<Vec<(f64, f64)>>,
    style: ShapeStyle,
    dashed: bool,
) -> Result<(), Box<dyn std::error::Error>> {
    for run in runs {
        if dashed {
            chart.draw_series(DashedLineSeries::new(run, 7, 5, style))?;
        } else {
            chart.draw_series(LineSeries::new(run, style))?;
        }
    }
    Ok(())
}

fn time_scale(t_max: f64) -> (f64, &'static str) {
    if t_max < 2.0 {
        (1e3, "ms")
    } else {
        (1.0, "s")
    }
}

/// Renders the plot to an SVG document.
fn svg(p: &PlotData) -> Result<String, String> {
    let mut out = String::new();
    draw(SVGBackend::with_string(&mut out, SIZE), p).map_err(|e| e.to_string())?;
    Ok(out)
}

fn dir_name(i: usize) -> &'static str {
    if i == 0 {
        "client to server"
    } else {
        "server to client"
    }
}

/// " (above the plot, up to N)" when `max` passes the axis top.
fn off_scale(max: f64, top: f64) -> String {
    if max > top {
        format!(" (above the plot: up to {})", human_bytes(max))
    } else {
        String::new()
    }
}

fn draw(backend: SVGBackend<'_>, p: &PlotData) -> Result<(), Box<dyn std::error::Error>> {
    let dirs: [Vec<Point>; 2] = [p.dirs[0].finish(), p.dirs[1].finish()];
    let carried = |i: usize| dirs[i].iter().map(|q| q.seq_end).max().unwrap_or(0);
    // Directions with data, the one with the most first.
    let mut order: Vec<usize> = (0..2).filter(|&i| carried(i) > 0).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(carried(i)));
    if order.is_empty() {
        // Nothing sent: still show the ACKs of the direction with samples.
        order.push(usize::from(dirs[1].len() > dirs[0].len()));
    }
    let main = order[0];
    let t_max = dirs
        .iter()
        .flat_map(|d| d.last())
        .map(|q| q.t)
        .fold(0.0, f64::max)
        .max(1e-6);
    let (tx, t_unit) = time_scale(t_max);
    let x_max = t_max * tx * 1.02;
    // Twice the plot's horizontal resolution.
    let col = x_max / (2.0 * f64::from(SIZE.0));
    let x_desc = format!("time since the connection's first segment ({t_unit})");

    let root = backend.into_drawing_area();
    root.fill(&WHITE)?;
    let rtt = p.rtt_s.map_or(String::from("RTT unknown"), |r| {
        format!("RTT {:.1} ms", r * 1e3)
    });
    let root = root.titled(
        &format!("firewall-check series: connection {} ({rtt})", p.connection),
        ("sans-serif", 24),
    )?;
    let h = SIZE.1 - 40;
    let breaks: Vec<u32> = if order.len() == 2 {
        vec![h * 47 / 100, h * 70 / 100]
    } else {
        vec![h * 60 / 100]
    };
    let areas = root.split_by_breakpoints::<u32, u32, _, _>([], breaks);
    let legend_width = SIZE.0 as i32 - 110;

    for (k, &d) in order.iter().enumerate() {
        let pts = &dirs[d];
        let seq_max = pts.iter().map(|q| q.seq_end.max(q.ack)).max().unwrap_or(0) as f64;
        let edge_max = |f: fn(&Point) -> Option<u64>| {
            pts.iter()
                .filter_map(|q| f(q).map(|w| q.ack + w))
                .max()
                .unwrap_or(0) as f64
        };
        let read_max = edge_max(|q| q.window_read);
        let meant_max = edge_max(|q| q.window);
        // Window edges far above the data would flatten it: beyond 3x the
        // sequence edge they leave the plot (the legend says how high).
        let cap = (3.0 * seq_max).max(1.0);
        let y_top = [seq_max, read_max, meant_max]
            .into_iter()
            .filter(|v| *v <= cap)
            .fold(seq_max, f64::max)
            .max(1.0)
            * 1.06;
        let (unit, unit_name) = byte_unit(y_top);
        let y_max = y_top / unit;
        let on_scale = move |v: u64| ((v as f64) <= y_top).then_some(v as f64 / unit);
        let differs = pts
            .iter()
            .any(|q| q.window.is_some() && q.window != q.window_read);
        let mut entries = vec![
            (
                Key::Line(BLUE),
                "sequence edge (highest byte sent)".to_string(),
            ),
            (Key::Line(GREEN), "ACK".to_string()),
            (
                Key::Line(ORANGE),
                format!(
                    "window edge as the sender reads it (ACK + window){}",
                    off_scale(read_max, y_top)
                ),
            ),
        ];
        if differs {
            entries.push((
                Key::Dashed(PURPLE),
                format!(
                    "window edge as the receiver means it{}",
                    off_scale(meant_max, y_top)
                ),
            ));
        }
        entries.extend(shade_entries(pts));
        let (header, body) = areas[k].split_vertically(header_height(&entries, legend_width));
        draw_header(
            &header,
            &format!("{}: sequence and window edges", dir_name(d)),
            &entries,
        )?;
        let mut chart = ChartBuilder::on(&body)
            .margin_left(10)
            .margin_right(90)
            .margin_bottom(6)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
        chart
            .configure_mesh()
            .x_desc(x_desc.as_str())
            .y_desc(format!("sequence offset ({unit_name})"))
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 15))
            .light_line_style(TRANSPARENT)
            .x_label_formatter(&|v| tick(v, x_max))
            .y_label_formatter(&|v| tick(v, y_max))
            .draw()?;
        shade(&mut chart, pts, tx, y_max)?;
        lines(
            &mut chart,
            steps(pts, tx, col, |q| on_scale(q.ack)),
            GREEN.stroke_width(2),
            false,
        )?;
        lines(
            &mut chart,
            steps(pts, tx, col, |q| on_scale(q.seq_end)),
            BLUE.stroke_width(2),
            false,
        )?;
        // The window edges last: where the sender is at the edge, the edge shows.
        if differs {
            lines(
                &mut chart,
                steps(pts, tx, col, |q| q.window.and_then(|w| on_scale(q.ack + w))),
                PURPLE.stroke_width(2),
                true,
            )?;
        }
        lines(
            &mut chart,
            steps(pts, tx, col, |q| {
                q.window_read.and_then(|w| on_scale(q.ack + w))
            }),
            ORANGE.stroke_width(2),
            false,
        )?;
    }

    // Bottom panel: in flight, the window the sender read, throughput.
    let pts = &dirs[main];
    let flight_max = pts.iter().map(|q| q.in_flight).max().unwrap_or(0) as f64;
    let win_max = pts.iter().filter_map(|q| q.window_read).max().unwrap_or(0) as f64;
    let cap = (3.0 * flight_max).max(1.0);
    let y_top = if win_max <= cap {
        flight_max.max(win_max)
    } else {
        flight_max
    }
    .max(1.0)
        * 1.1;
    let (unit, unit_name) = byte_unit(y_top);
    let y_max = y_top / unit;
    let on_scale = move |v: u64| ((v as f64) <= y_top).then_some(v as f64 / unit);
    let thr_max = pts
        .iter()
        .filter_map(|q| q.throughput_bps)
        .max()
        .unwrap_or(0) as f64
        / 1e6;
    let thr_top = (thr_max * 1.1).max(0.001);
    let mut entries = vec![
        (Key::Line(BLUE), "bytes in flight".to_string()),
        (
            Key::Dashed(ORANGE),
            format!(
                "receive window as the sender reads it{}",
                off_scale(win_max, y_top)
            ),
        ),
        (
            Key::Line(GREEN),
            "throughput over one RTT (right axis)".to_string(),
        ),
    ];
    // The largest window without window scaling (RFC 7323), where it fits.
    let unscaled = (UNSCALED_MAX <= y_top).then_some(UNSCALED_MAX / unit);
    if unscaled.is_some() {
        entries.push((
            Key::Dashed(GREY),
            "65,535 bytes: the largest window without window scaling".to_string(),
        ));
    }
    entries.extend(shade_entries(pts));
    let (header, body) = areas[order.len()].split_vertically(header_height(&entries, legend_width));
    draw_header(
        &header,
        &format!(
            "{}: bytes in flight and throughput over one RTT",
            dir_name(main)
        ),
        &entries,
    )?;
    let mut chart = ChartBuilder::on(&body)
        .margin_left(10)
        .margin_right(10)
        .margin_bottom(6)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .right_y_label_area_size(80)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)?
        .set_secondary_coord(0.0..x_max, 0.0..thr_top);
    chart
        .configure_mesh()
        .x_desc(x_desc.as_str())
        .y_desc(format!("bytes in flight ({unit_name})"))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|v| tick(v, x_max))
        .y_label_formatter(&|v| tick(v, y_max))
        .draw()?;
    chart
        .configure_secondary_axes()
        .y_desc("throughput (Mbit/s)")
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .y_label_formatter(&|v| tick(v, thr_top))
        .draw()?;
    shade(&mut chart, pts, tx, y_max)?;
    if let Some(y) = unscaled {
        chart.draw_series(DashedLineSeries::new(
            [(0.0, y), (x_max, y)],
            3,
            4,
            GREY.stroke_width(1),
        ))?;
    }
    lines(
        &mut chart,
        steps(pts, tx, col, |q| on_scale(q.in_flight)),
        BLUE.stroke_width(2),
        false,
    )?;
    lines(
        &mut chart,
        steps(pts, tx, col, |q| q.window_read.and_then(on_scale)),
        ORANGE.stroke_width(2),
        true,
    )?;
    for run in steps(pts, tx, col, |q| q.throughput_bps.map(|b| b as f64 / 1e6)) {
        chart.draw_secondary_series(LineSeries::new(run, GREEN.stroke_width(2)))?;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(i: u64) -> SeriesSample {
        SeriesSample {
            connection: 1,
            direction: Direction::ServerToClient,
            time_s: i as f64 * 1e-3,
            seq_end: i * 1448,
            ack: i * 1000,
            window_bytes: Some(65_535),
            window_read_bytes: Some(65_535),
            in_flight_bytes: i * 448,
            throughput_bps: Some(i),
            rtt_s: Some(0.01),
            rtt_estimate_s: Some(0.01),
            round: 0,
            // One millisecond in three limited by the window, the rest busy.
            limit: Some(if i.is_multiple_of(3) {
                SenderPhase::ReceiveWindow
            } else {
                SenderPhase::Busy
            }),
        }
    }

    #[test]
    fn thinning_keeps_the_budget_the_ends_and_the_phase_time() {
        for n in [
            1u64,
            5,
            Thinned::CAP as u64 - 1,
            3 * Thinned::CAP as u64 + 17,
            250_000,
        ] {
            let mut t = Thinned::default();
            for i in 0..n {
                t.push(&sample(i));
            }
            let pts = t.finish();
            assert!(pts.len() <= Thinned::CAP + 1, "{n}: {} points", pts.len());
            assert!(
                n < 2 || pts.len() >= (Thinned::CAP / 2).min(n as usize),
                "{n}: {}",
                pts.len()
            );
            assert_eq!(pts[0].t, 0.0, "{n}: first sample kept");
            let last = (n - 1) as f64 * 1e-3;
            assert_eq!(pts.last().unwrap().t, last, "{n}: last sample kept");
            assert!(pts.windows(2).all(|w| w[0].t < w[1].t), "{n}: in order");
            // Every interval's phase time is carried by exactly one kept point.
            let total: [f64; PHASES] = pts.iter().fold([0.0; PHASES], |mut a, p| {
                for (x, y) in a.iter_mut().zip(p.phase_s) {
                    *x += y;
                }
                a
            });
            // Sample i's phase covers the millisecond from it to sample i + 1.
            let rwnd = (0..n - 1).filter(|i| i % 3 == 0).count() as f64 * 1e-3;
            let busy = (0..n - 1).filter(|i| i % 3 != 0).count() as f64 * 1e-3;
            assert!((total[RWND] - rwnd).abs() < 1e-6, "{n}: {total:?}");
            assert!((total[BUSY] - busy).abs() < 1e-6, "{n}: {total:?}");
            assert_eq!(total[IDLE], 0.0);
        }
    }

    #[test]
    fn csv_row_leaves_unknowns_empty() {
        let mut s = sample(2);
        s.window_bytes = None;
        s.throughput_bps = None;
        s.rtt_s = None;
        s.limit = None;
        let mut out = Vec::new();
        write_row(&mut out, &s).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "0.002000,1,server_to_client,2896,2000,,65535,896,,,\n"
        );
        assert_eq!(CSV_HEADER.split(',').count(), 11);
    }

    #[test]
    fn simplify_keeps_each_columns_extremes_and_ends() {
        // 100,000 points over 10 columns: a saw with one spike in column 7.
        let run: Vec<(f64, f64)> = (0..100_000)
            .map(|i| {
                let y = if i == 73_456 { 1e6 } else { (i % 7) as f64 };
                (i as f64 / 10_000.0, y)
            })
            .collect();
        let out = simplify(&run, 1.0);
        assert!(out.len() <= 40, "{} points", out.len());
        assert_eq!(out.first(), run.first());
        assert_eq!(out.last(), run.last());
        assert!(out.contains(&run[73_456]), "the spike survives");
        for c in 0..10 {
            let col: Vec<&(f64, f64)> = out.iter().filter(|p| p.0.floor() == c as f64).collect();
            let lo = col.iter().map(|p| p.1).fold(f64::MAX, f64::min);
            let hi = col.iter().map(|p| p.1).fold(f64::MIN, f64::max);
            assert_eq!(lo, 0.0, "column {c}");
            assert!(hi >= 6.0, "column {c}");
        }
        assert!(out.windows(2).all(|w| w[0].0 <= w[1].0), "in order");
        // A level run keeps only its ends.
        let flat: Vec<(f64, f64)> = (0..1000).map(|i| (f64::from(i), 5.0)).collect();
        assert_eq!(simplify(&flat, 1.0), vec![(0.0, 5.0), (999.0, 5.0)]);
    }
}
