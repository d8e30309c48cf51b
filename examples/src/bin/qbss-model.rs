//! `qbss-model`: simulate the TransPAC QBSS test bench (see `examples::qbss`).

use clap::Parser;

fn main() {
    let args = examples::qbss::cli::Args::parse();
    let status = examples::qbss::cli::main_with(
        args,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    std::process::exit(status);
}
