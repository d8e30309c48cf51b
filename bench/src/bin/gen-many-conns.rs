//! `gen-many-conns`: the many-connections capture of the performance
//! harness (see `tcp_perf_bench::many_conns` for the traffic model).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tcp_perf_bench::files::{self, Formats, Output};
use tcp_perf_bench::many_conns::{self, Params};

/// What the sidecar's `shape` says.
const SHAPE: &str = "many connections (SYN scan: refused, half-open, unanswered 2:1:1)";

/// Write a many-connections capture, the shape a port scan gives: about
/// one connection per two segments, each refused (SYN, RST-ACK), half-open
/// (SYN, SYN-ACK, RST) or unanswered (SYN) in the proportions 2:1:1,
/// interleaved, IPv4 and IPv6 over Ethernet, SYN options in Linux's or
/// Windows' layout, valid checksums; and a JSON sidecar of counts.
#[derive(Debug, Parser)]
#[command(name = "gen-many-conns", version)]
struct Args {
    /// Number of TCP segments.
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..))]
    segments: u64,
    /// File format.
    #[arg(long, value_enum, default_value_t = Formats::Pcap)]
    format: Formats,
    /// Bytes of each frame kept in the capture.
    #[arg(long, default_value_t = 128)]
    snaplen: usize,
    /// Output directory.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/out"))]
    out: PathBuf,
    /// File stem (default: many-N for N segments).
    #[arg(long)]
    name: Option<String>,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Connections in flight at the same time.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    open: u64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let name = args
        .name
        .clone()
        .unwrap_or_else(|| format!("many-{}", args.segments));
    let open = usize::try_from(args.open).unwrap_or(usize::MAX);
    let params = Params {
        segments: args.segments,
        open,
        seed: args.seed,
    };
    let out = Output {
        dir: args.out,
        name,
        formats: args.format.formats(),
        snaplen: args.snaplen,
        shape: Some(SHAPE.to_owned()),
        max_open: open,
        seed: args.seed,
    };
    files::main("gen-many-conns", &out, |sinks| {
        many_conns::generate(&params, sinks)
    })
}
