//! `bdp-calc` prints its golden outputs (`examples/golden/`): behaviour
//! unchanged since they were taken, byte for byte.

#[path = "../../golden/harness.rs"]
mod harness;

#[test]
fn bdp_calc_prints_its_golden_outputs() {
    harness::check_tool(
        "bdp-calc",
        std::path::Path::new(env!("CARGO_BIN_EXE_bdp-calc")),
    );
}
