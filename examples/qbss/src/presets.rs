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

/// Why the scenario a command line names could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceError {
    /// No preset of that name (a usage error); the message lists the presets.
    UnknownPreset(String),
    /// The scenario file could not be read (a runtime error).
    Unreadable(String),
}

impl SourceError {
    /// The exit status the tools give for it: 2 usage error, 1 runtime error.
    pub fn exit_status(&self) -> i32 {
        match self {
            SourceError::UnknownPreset(_) => 2,
            SourceError::Unreadable(_) => 1,
        }
    }
}

impl core::fmt::Display for SourceError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SourceError::UnknownPreset(m) | SourceError::Unreadable(m) => f.write_str(m),
        }
    }
}

/// The scenario a command line names, as `(origin, TOML text)`: the preset if one
/// is given, else the file; `Ok(None)` when neither is. `origin` is what error
/// messages about the text name ("preset NAME" or the file's path).
pub fn scenario_source(
    preset: Option<&str>,
    file: Option<&std::path::Path>,
) -> Result<Option<(String, String)>, SourceError> {
    match (preset, file) {
        (Some(name), _) => match find(name) {
            Some(p) => Ok(Some((format!("preset {name}"), p.toml.to_string()))),
            None => {
                let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
                Err(SourceError::UnknownPreset(format!(
                    "no preset {name:?}; presets: {}",
                    names.join(", ")
                )))
            }
        },
        (None, Some(path)) => match std::fs::read_to_string(path) {
            Ok(t) => Ok(Some((path.display().to_string(), t))),
            Err(e) => Err(SourceError::Unreadable(format!("{}: {e}", path.display()))),
        },
        (None, None) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_source_prefers_the_preset_and_names_its_origin() {
        let (origin, text) = scenario_source(Some("tengig"), None).unwrap().unwrap();
        assert_eq!(origin, "preset tengig");
        assert_eq!(text, find("tengig").unwrap().toml);
        assert_eq!(scenario_source(None, None), Ok(None));
    }

    #[test]
    fn scenario_source_errors_carry_their_exit_status() {
        let e = scenario_source(Some("nope"), None).unwrap_err();
        assert_eq!(e.exit_status(), 2);
        assert!(e.to_string().contains("presets: transpac,"), "{e}");
        let missing = std::path::Path::new("/nonexistent/scenario.toml");
        let e = scenario_source(None, Some(missing)).unwrap_err();
        assert_eq!(e.exit_status(), 1);
        assert!(
            e.to_string().starts_with("/nonexistent/scenario.toml: "),
            "{e}"
        );
    }
}
