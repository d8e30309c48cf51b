//! `firewall-check series`: its command line, and the run that ties the
//! capture, the samples ([`crate::analysis::series`]) and their CSV and SVG
//! ([`crate::output::series`]) together.
//!
//! The run, step by step: `validate` the arguments; open the CSV
//! (`CsvSink`) and `learn` what `analyze` infers for connections without
//! their handshake (a capture file only); `pass1` writes the CSV and
//! gathers what the SVG needs; unless `--connection` named it,
//! `choose_connection` picks the one with the most data and `pass2` reads
//! the capture again for it; `write_svg` writes the picture. A capture
//! that cannot be read to its end still gets the rows and the
//! picture of what was read.
//!
//! Choosing the connection with the most data reads the capture twice (the
//! first pass keeps one pair of numbers per connection), so it needs a
//! file; from standard input, `--svg` needs `--connection`. The chosen
//! connection's number is said on standard error.

use std::cell::Cell;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustc_hash::FxHashMap;

use crate::analysis::analyze::{self, AnalyzeError, Learned, Settings};
use crate::analysis::series::{series_learned, DataTotals, SeriesSample};
use crate::conn::tracker::DEFAULT_CAPACITY;
use crate::output::series::csv::{write_row, CSV_HEADER};
use crate::output::series::svg::{self, PlotData};
use crate::{Failure, Outcome};

/// What a step of the run gives.
type Step<T> = Result<T, SeriesFailure>;

/// The CSV columns, for `--help`.
pub const CSV_HELP: &str = "\
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
    #[arg(long, value_parser = super::parse_rtt)]
    pub rtt: Option<Duration>,
    /// For connections whose handshake is not in the capture, read window fields with this shift (0-14). Without it, a capture file is read twice and each such connection's windows are read with the shift `analyze` infers for it, when it infers one.
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=14))]
    pub assume_wscale: Option<u8>,
    /// Most connections held open at once (closed ones are evicted first).
    #[arg(long, default_value_t = DEFAULT_CAPACITY)]
    pub max_connections: usize,
}

/// Why `series` failed, by stage.
#[derive(Debug, thiserror::Error)]
pub enum SeriesFailure {
    /// The arguments: `--max-connections 0` (a usage error).
    #[error(transparent)]
    NoConnections(#[from] super::NoConnections),
    /// The arguments: `--svg` without `--connection` from standard input
    /// (a usage error).
    #[error("--svg without --connection reads the capture twice (to find the connection with the most data): give a file, not -, or --connection N")]
    SvgNeedsFile,
    /// The arguments: `--csv -` and `--svg -` (a usage error).
    #[error("--csv - and --svg - cannot both write to standard output")]
    BothToStdout,
    /// The capture cannot be opened.
    #[error(transparent)]
    Open(#[from] crate::OpenError),
    /// The CSV file cannot be created.
    #[error(transparent)]
    Create(#[from] crate::CreateError),
    /// The capture could not be read to its end (the rows and the picture
    /// of what was read are written).
    #[error("{}: {source}", path.display())]
    Capture {
        /// The capture.
        path: PathBuf,
        /// Why.
        #[source]
        source: AnalyzeError,
    },
    /// Writing the CSV failed.
    #[error("writing the CSV: {0}")]
    Csv(#[source] io::Error),
    /// `--connection N` gave no sample.
    #[error("{}: connection {connection} has no samples (no such connection, or no data and no ACKs)", path.display())]
    NoSamples {
        /// The capture.
        path: PathBuf,
        /// The connection asked for.
        connection: u64,
    },
    /// `--svg` without `--connection`, and no connection carried data.
    #[error("{}: no connection to plot", path.display())]
    NothingToPlot {
        /// The capture.
        path: PathBuf,
    },
    /// The plot could not be drawn.
    #[error("drawing the SVG: {0}")]
    Draw(#[source] svg::SvgError),
    /// The SVG could not be written.
    #[error("cannot write {}: {source}", path.display())]
    WriteSvg {
        /// Where it was going (`-`: standard output).
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

impl SeriesFailure {
    /// True for a command line that asks for something impossible.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            SeriesFailure::NoConnections(_)
                | SeriesFailure::SvgNeedsFile
                | SeriesFailure::BothToStdout
        )
    }
}

fn is_stdout(p: &Path) -> bool {
    p.as_os_str() == "-"
}

/// Runs `series` for the command line.
pub fn run(args: &SeriesArgs) -> Result<Outcome, Failure> {
    Ok(series_run(args)?)
}

/// [`run`] with its typed error.
fn series_run(args: &SeriesArgs) -> Step<Outcome> {
    validate(args)?;
    let settings = Settings {
        rtt: args.rtt,
        assume_wscale: args.assume_wscale,
        capacity: args.max_connections,
        ..Settings::default()
    };
    let mut csv = CsvSink::open(args)?;
    let learned = learn(args, &settings)?;
    let pass1 = pass1(args, &settings, &learned, csv.as_mut())?;
    if let Some(csv) = csv {
        if csv.finish()? == CsvEnd::PipeClosed {
            return Ok(Outcome::Clean);
        }
    }
    let samples = match pass1.read {
        Ok(n) => n,
        Err(e) => {
            // Draw what was read before reporting the error.
            if let (Some(path), Some(plot)) = (&args.svg, &pass1.plot) {
                if !plot.is_empty() {
                    write_svg(path, plot)?;
                }
            }
            return Err(capture_error(args, e));
        }
    };
    if let Some(c) = args.connection {
        if samples == 0 {
            return Err(SeriesFailure::NoSamples {
                path: args.capture.clone(),
                connection: c,
            });
        }
    }
    let Some(path) = &args.svg else {
        return Ok(Outcome::Clean);
    };
    let plot = match pass1.plot {
        Some(p) => p,
        None => {
            let id = choose_connection(args, &pass1.totals.unwrap_or_default())?;
            pass2(args, &settings, &learned, id)?
        }
    };
    write_svg(path, &plot)?;
    Ok(Outcome::Clean)
}

/// Refuses what the arguments cannot do together.
fn validate(args: &SeriesArgs) -> Step<()> {
    if args.max_connections == 0 {
        return Err(super::NoConnections.into());
    }
    if args.svg.is_some() && args.connection.is_none() && is_stdout(&args.capture) {
        return Err(SeriesFailure::SvgNeedsFile);
    }
    if args.csv.as_deref().is_some_and(is_stdout) && args.svg.as_deref().is_some_and(is_stdout) {
        return Err(SeriesFailure::BothToStdout);
    }
    Ok(())
}

fn capture_error(args: &SeriesArgs, source: AnalyzeError) -> SeriesFailure {
    SeriesFailure::Capture {
        path: args.capture.clone(),
        source,
    }
}

/// Where the CSV goes, and the last error writing it.
struct CsvSink {
    out: Box<dyn Write>,
    to_stdout: bool,
    error: Option<io::Error>,
}

/// How the CSV ended.
#[derive(Debug, PartialEq, Eq)]
enum CsvEnd {
    /// Written whole.
    Written,
    /// Standard output was closed (`| head`): the run ends quietly.
    PipeClosed,
}

impl CsvSink {
    /// The CSV's file or standard output, its header written, unless the
    /// arguments ask for no CSV (`--svg` without `--csv`).
    fn open(args: &SeriesArgs) -> Step<Option<Self>> {
        let to_stdout = args.csv.as_deref().map_or(args.svg.is_none(), is_stdout);
        let out: Box<dyn Write> = match &args.csv {
            _ if to_stdout => Box::new(BufWriter::new(io::stdout().lock())),
            Some(p) => Box::new(BufWriter::new(crate::create_output(p)?)),
            None => return Ok(None),
        };
        let mut sink = CsvSink {
            out,
            to_stdout,
            error: None,
        };
        if let Err(e) = writeln!(sink.out, "{CSV_HEADER}") {
            sink.error = Some(e);
        }
        Ok(Some(sink))
    }

    /// True once a write failed: the rest of the capture gives no rows.
    fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Writes one row; false if that failed.
    fn row(&mut self, s: &SeriesSample) -> bool {
        match write_row(&mut self.out, s) {
            Ok(()) => true,
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }

    /// Flushes the CSV; the error is the first write's that failed.
    fn finish(mut self) -> Step<CsvEnd> {
        if self.error.is_none() {
            if let Err(e) = self.out.flush() {
                self.error = Some(e);
            }
        }
        match self.error {
            None => Ok(CsvEnd::Written),
            Some(e) if self.to_stdout && crate::is_broken_pipe(&e) => Ok(CsvEnd::PipeClosed),
            Some(e) => Err(SeriesFailure::Csv(e)),
        }
    }
}

/// A capture file's connections without their handshake: what `analyze`
/// infers for them (the shifts, the RTT), read in a first pass, so that the
/// rows read windows and time limits as `analyze` does. Standard input is
/// read once, and so is a pipe given by name (`<(tcpdump ...)`); with both
/// `--assume-wscale` and `--rtt` there is nothing to learn.
fn learn(args: &SeriesArgs, settings: &Settings) -> Step<FxHashMap<u64, Learned>> {
    let regular = std::fs::metadata(&args.capture).is_ok_and(|m| m.is_file());
    if is_stdout(&args.capture) || !regular || (args.assume_wscale.is_some() && args.rtt.is_some())
    {
        return Ok(FxHashMap::default());
    }
    let want = args.connection;
    let input = crate::open_capture(&args.capture)?;
    Ok(analyze::learn(input, settings, |id| {
        want.is_none_or(|c| c == id)
    }))
}

/// What the first pass gathered besides the CSV.
struct Pass1 {
    /// How many samples there were, or why the capture could not be read
    /// to its end.
    read: Result<usize, AnalyzeError>,
    /// The plot of the connection `--connection` named, with `--svg`.
    plot: Option<PlotData>,
    /// The data each connection carried, with `--svg` and no
    /// `--connection`.
    totals: Option<DataTotals>,
}

/// Pass 1: the samples of the connections asked for, each a CSV row, and
/// what the SVG needs. A failed CSV write stops the rows.
fn pass1(
    args: &SeriesArgs,
    settings: &Settings,
    learned: &FxHashMap<u64, Learned>,
    mut csv: Option<&mut CsvSink>,
) -> Step<Pass1> {
    let want_svg = args.svg.is_some();
    let want = args.connection;
    let mut plot = want.filter(|_| want_svg).map(PlotData::new);
    let mut totals = (want_svg && want.is_none()).then(DataTotals::default);
    let stop = Cell::new(csv.as_deref().is_some_and(CsvSink::failed));
    let input = crate::open_capture(&args.capture)?;
    let read = series_learned(
        input,
        settings,
        learned,
        |id| !stop.get() && want.is_none_or(|c| c == id),
        |s| {
            if let Some(w) = csv.as_deref_mut() {
                if !w.row(s) {
                    stop.set(true);
                    return;
                }
            }
            if let Some(p) = plot.as_mut() {
                p.push(s);
            }
            if let Some(t) = totals.as_mut() {
                t.push(s);
            }
        },
    );
    Ok(Pass1 { read, plot, totals })
}

/// The connection to plot when none was named: the one with the most data,
/// said on standard error.
fn choose_connection(args: &SeriesArgs, totals: &DataTotals) -> Step<u64> {
    let Some(busiest) = totals.busiest() else {
        return Err(SeriesFailure::NothingToPlot {
            path: args.capture.clone(),
        });
    };
    eprintln!(
        "firewall-check series: plotting connection {} of {}, the one with the most data ({} bytes client to server, {} server to client); choose another with --connection N",
        busiest.connection,
        totals.len(),
        busiest.bytes[0],
        busiest.bytes[1]
    );
    Ok(busiest.connection)
}

/// Pass 2: connection `id`'s samples for the plot. A capture that cannot
/// be read to its end still gets the picture of what was read.
fn pass2(
    args: &SeriesArgs,
    settings: &Settings,
    learned: &FxHashMap<u64, Learned>,
    id: u64,
) -> Step<PlotData> {
    let mut plot = PlotData::new(id);
    let input = crate::open_capture(&args.capture)?;
    let read = series_learned(input, settings, learned, |c| c == id, |s| plot.push(s));
    if let Err(e) = read {
        if let Some(path) = &args.svg {
            if !plot.is_empty() {
                write_svg(path, &plot)?;
            }
        }
        return Err(capture_error(args, e));
    }
    Ok(plot)
}

/// Draws the plot and writes it to `path` (`-`: standard output, where a
/// closed pipe is no error).
fn write_svg(path: &Path, plot: &PlotData) -> Step<()> {
    let text = svg::render(plot).map_err(SeriesFailure::Draw)?;
    let res = if is_stdout(path) {
        let mut out = io::stdout().lock();
        out.write_all(text.as_bytes()).and_then(|()| out.flush())
    } else {
        std::fs::write(path, text.as_bytes())
    };
    match res {
        Ok(()) => Ok(()),
        Err(e) if is_stdout(path) && crate::is_broken_pipe(&e) => Ok(()),
        Err(source) => Err(SeriesFailure::WriteSvg {
            path: path.to_path_buf(),
            source,
        }),
    }
}
