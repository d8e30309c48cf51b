//! `qbss-model`: simulate the TransPAC QBSS test bench (see the `qbss` crate).

fn main() {
    qbss::cli::main()
}
