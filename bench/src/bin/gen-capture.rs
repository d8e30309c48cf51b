//! `gen-capture`: the long-flow capture of the performance harness (see
//! `tcp_perf_bench::long_flow` for the traffic model).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use tcp_perf_bench::files::{self, parse_size, Formats, Output};
use tcp_perf_bench::long_flow::{self, Limit, Params};

/// Write a large, deterministic capture of many interleaved TCP
/// connections (IPv4 and IPv6 over Ethernet; handshakes with options in
/// Linux's and Windows' layouts, data, SACK after losses, retransmissions,
/// FIN) as pcap and/or pcapng, and a JSON sidecar of counts beside each
/// file. Packets are built by tcp-options and written by the capture crate;
/// IP and TCP checksums are valid.
#[derive(Debug, Parser)]
#[command(name = "gen-capture", version)]
struct Args {
    /// Number of TCP segments.
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..))]
    segments: u64,
    /// Stop at this file size instead (e.g. 1G, 500M, 2GiB).
    #[arg(long, value_parser = parse_size)]
    size: Option<u64>,
    /// File format.
    #[arg(long, value_enum, default_value_t = Formats::Both)]
    format: Formats,
    /// Output directory.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/out"))]
    out: PathBuf,
    /// File stem (default: capture-N for N segments; capture-BYTESB with --size).
    #[arg(long)]
    name: Option<String>,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Connections open at the same time.
    #[arg(long, default_value_t = 256, value_parser = clap::value_parser!(u64).range(1..))]
    open: u64,
    /// Bytes of each frame kept in the capture.
    #[arg(long, default_value_t = 65535)]
    snaplen: usize,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let name = args.name.clone().unwrap_or_else(|| match args.size {
        None => format!("capture-{}", args.segments),
        Some(bytes) => format!("capture-{bytes}B"),
    });
    let open = usize::try_from(args.open).unwrap_or(usize::MAX);
    let params = Params {
        limit: args
            .size
            .map_or(Limit::Segments(args.segments), Limit::Bytes),
        open,
        seed: args.seed,
    };
    let out = Output {
        dir: args.out,
        name,
        formats: args.format.formats(),
        snaplen: args.snaplen,
        shape: None,
        max_open: open,
        seed: args.seed,
    };
    files::main("gen-capture", &out, |sinks| {
        long_flow::generate(&params, sinks)
    })
}
