//! `firewall-check`: find what a middlebox does to TCP, from packet captures
//! and by probing. The command line is [`firewall_check::cli`].

fn main() -> std::process::ExitCode {
    firewall_check::cli::main()
}
