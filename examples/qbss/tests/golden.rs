//! `qbss-model` and `qbss-router` print their golden outputs (`examples/golden/`): behaviour
//! unchanged since they were taken, byte for byte.

#[path = "../../golden/harness.rs"]
mod harness;

#[test]
fn qbss_model_prints_its_golden_outputs() {
    harness::check_tool(
        "qbss-model",
        std::path::Path::new(env!("CARGO_BIN_EXE_qbss-model")),
    );
}

#[test]
fn qbss_router_prints_its_golden_outputs() {
    harness::check_tool(
        "qbss-router",
        std::path::Path::new(env!("CARGO_BIN_EXE_qbss-router")),
    );
}
