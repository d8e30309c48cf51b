//! `qbss-router`: a QBSS scenario's router forwarding real packets between
//! two TUN devices (see `qbss::router`).

fn main() {
    qbss::router::cli::main()
}
