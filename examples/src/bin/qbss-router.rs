//! `qbss-router`: a QBSS scenario's router forwarding real packets between two TUN
//! devices (see `examples::qbss::router`).

use clap::Parser;

fn main() {
    let args = examples::qbss::router::cli::Args::parse();
    let status = examples::qbss::router::cli::main_with(
        args,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    std::process::exit(status);
}
