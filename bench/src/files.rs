//! The files a generator writes: `<out>/<name>.pcap` and/or
//! `<out>/<name>.pcapng`, each first as `<file>.tmp` and renamed when
//! complete (a stopped run leaves no capture that looks whole), and beside
//! each a JSON sidecar `<file>.json` with the counts `bench/run` and
//! `bench/render.py` read.
//!
//! The sidecar's fields, in this order: `shape` (the many-connections
//! capture only), `segments`, `ipv4_segments`, `ipv6_segments`,
//! `connections`, `max_open_connections`, `seed`, `format`, `bytes` (the
//! file's size) and `file` (its path as given).

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::Serialize;

use crate::error::GenError;
use crate::sink::{CaptureSink, Format};
use crate::Counts;

/// Buffer of each output file.
const BUFFER: usize = 1 << 20;

/// A binary's `--format`: one file or both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Formats {
    /// Classic pcap.
    Pcap,
    /// pcapng.
    Pcapng,
    /// One of each, the same records.
    Both,
}

impl Formats {
    /// The files' formats, in the order they are written.
    pub fn formats(self) -> Vec<Format> {
        match self {
            Formats::Pcap => vec![Format::Pcap],
            Formats::Pcapng => vec![Format::Pcapng],
            Formats::Both => vec![Format::Pcap, Format::Pcapng],
        }
    }
}

/// A capture's JSON sidecar (module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sidecar {
    /// What the traffic is, for the many-connections capture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    /// Segments (records).
    pub segments: u64,
    /// Segments over IPv4.
    pub ipv4_segments: u64,
    /// Segments over IPv6.
    pub ipv6_segments: u64,
    /// Connections with at least one segment in the capture.
    pub connections: u64,
    /// The bound on connections open at once (`--open`).
    pub max_open_connections: usize,
    /// The seed.
    pub seed: u64,
    /// `pcap` or `pcapng`.
    pub format: Format,
    /// The file's size.
    pub bytes: u64,
    /// The file's path.
    pub file: String,
}

/// What to write, apart from the traffic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Directory (created if missing).
    pub dir: PathBuf,
    /// File stem.
    pub name: String,
    /// One file per format.
    pub formats: Vec<Format>,
    /// Snap length of the records.
    pub snaplen: usize,
    /// The sidecar's `shape`.
    pub shape: Option<String>,
    /// The sidecar's `max_open_connections`.
    pub max_open: usize,
    /// The sidecar's `seed`.
    pub seed: u64,
}

fn file_error(path: &Path) -> impl FnOnce(io::Error) -> GenError + '_ {
    move |source| GenError::File {
        path: path.to_path_buf(),
        source,
    }
}

/// Write the captures of `out`, their traffic made by `generate` (given
/// one sink per format, in order), then the sidecars; prints one line per
/// file on standard error and returns the sidecars.
pub fn write(
    out: &Output,
    generate: impl FnOnce(&mut [CaptureSink<BufWriter<File>>]) -> Result<Counts, GenError>,
) -> Result<Vec<Sidecar>, GenError> {
    fs::create_dir_all(&out.dir).map_err(file_error(&out.dir))?;
    let paths: Vec<PathBuf> = out
        .formats
        .iter()
        .map(|f| out.dir.join(format!("{}.{}", out.name, f.name())))
        .collect();
    let tmp = |p: &Path| {
        let mut t = p.as_os_str().to_owned();
        t.push(".tmp");
        PathBuf::from(t)
    };
    let mut sinks = Vec::with_capacity(paths.len());
    for (path, &format) in paths.iter().zip(&out.formats) {
        let t = tmp(path);
        let file = File::create(&t).map_err(file_error(&t))?;
        let sink = CaptureSink::new(BufWriter::with_capacity(BUFFER, file), format, out.snaplen)
            .map_err(file_error(&t))?;
        sinks.push(sink);
    }
    let counts = generate(&mut sinks)?;
    let mut sidecars = Vec::with_capacity(paths.len());
    for (sink, path) in sinks.into_iter().zip(&paths) {
        let format = sink.format();
        let t = tmp(path);
        let (file, bytes) = sink.finish().map_err(file_error(&t))?;
        // Flush the buffer before the rename.
        file.into_inner()
            .map_err(|e| e.into_error())
            .map_err(file_error(&t))?;
        fs::rename(&t, path).map_err(file_error(path))?;
        let sidecar = Sidecar {
            shape: out.shape.clone(),
            segments: counts.segments,
            ipv4_segments: counts.ipv4_segments,
            ipv6_segments: counts.ipv6_segments,
            connections: counts.connections,
            max_open_connections: out.max_open,
            seed: out.seed,
            format,
            bytes,
            file: path.display().to_string(),
        };
        let mut json_path = path.as_os_str().to_owned();
        json_path.push(".json");
        let json_path = PathBuf::from(json_path);
        write_json(&json_path, &sidecar).map_err(file_error(&json_path))?;
        eprintln!(
            "{}: {} segments, {} connections, {} bytes",
            path.display(),
            counts.segments,
            counts.connections,
            bytes
        );
        sidecars.push(sidecar);
    }
    Ok(sidecars)
}

/// A binary's end: [`write()`], and on an error `TOOL: error` on standard
/// error and a failure status.
pub fn main(
    tool: &str,
    out: &Output,
    generate: impl FnOnce(&mut [CaptureSink<BufWriter<File>>]) -> Result<Counts, GenError>,
) -> ExitCode {
    match write(out, generate) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{tool}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The sidecar as JSON, one-space indent.
fn write_json(path: &Path, sidecar: &Sidecar) -> io::Result<()> {
    let mut f = BufWriter::new(File::create(path)?);
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b" ");
    let mut ser = serde_json::Serializer::with_formatter(&mut f, fmt);
    sidecar.serialize(&mut ser).map_err(io::Error::other)?;
    f.flush()
}

/// A size such as `1G`, `500M`, `1.5GiB` or `4096`: a number, then
/// optionally K, M, G (powers of 1000) or KiB, MiB, GiB (powers of 1024),
/// any case.
///
/// ```
/// use tcp_perf_bench::files::parse_size;
/// assert_eq!(parse_size("1G"), Ok(1_000_000_000));
/// assert_eq!(parse_size("1.5kib"), Ok(1536));
/// assert!(parse_size("big").is_err());
/// ```
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim().to_ascii_uppercase();
    const UNITS: [(&str, u64); 6] = [
        ("GIB", 1 << 30),
        ("MIB", 1 << 20),
        ("KIB", 1 << 10),
        ("G", 1_000_000_000),
        ("M", 1_000_000),
        ("K", 1_000),
    ];
    let (number, mult) = UNITS
        .iter()
        .find_map(|(suffix, m)| t.strip_suffix(suffix).map(|n| (n, *m)))
        .unwrap_or((t.as_str(), 1));
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a size (a number, then K, M, G, KiB, MiB or GiB)"))?;
    let bytes = value * mult as f64;
    if !(bytes.is_finite() && bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(format!("{text:?}: a size is at least one byte"));
    }
    Ok(bytes as u64)
}
