//! `qbss-router` as the labs run it: the tool's own `main`, built with the lab
//! crate so that `cargo test -p lab` runs exactly the tool's code.

fn main() {
    qbss::router::cli::main()
}
