//! `firewall-check` prints its golden outputs (`examples/golden/`): behaviour
//! unchanged since they were taken, byte for byte.

#[path = "../../golden/harness.rs"]
mod harness;

#[test]
fn firewall_check_prints_its_golden_outputs() {
    harness::check_tool(
        "firewall-check",
        std::path::Path::new(env!("CARGO_BIN_EXE_firewall-check")),
    );
}
