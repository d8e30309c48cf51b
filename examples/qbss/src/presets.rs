//! The scenarios built into the binary: the files of `examples/scenarios/`, compiled in.

/// A built-in scenario: its name and its TOML text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    /// Name for `--preset`.
    pub name: &'static str,
    /// The scenario file's text (the same bytes as `examples/scenarios/<name>.toml`).
    pub toml: &'static str,
}

macro_rules! preset {
    ($name:literal) => {
        Preset {
            name: $name,
            toml: include_str!(concat!("../../scenarios/", $name, ".toml")),
        }
    };
}

/// Every built-in scenario, in the order `--list-presets` shows them.
pub const PRESETS: &[Preset] = &[
    preset!("transpac"),
    preset!("transpac-10mbit-be"),
    preset!("vc-10mbit"),
    preset!("vc-10mbit-forced"),
    preset!("vc-10mbit-policed"),
    preset!("premium-weight-0"),
    preset!("queue0-swap"),
    preset!("transpac-tcp"),
    preset!("transpac-tcp-cubic"),
    preset!("tengig"),
];

/// The preset called `name`.
pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}
