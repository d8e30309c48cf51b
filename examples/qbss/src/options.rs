//! The command line `qbss-model` and `qbss-router` share: which scenario (a file
//! or a built-in preset) and by how much to scale it, defined once as clap
//! argument groups that both tools flatten into theirs, and the loading of the
//! scenario from them, one step at a time, each step written once:
//!
//! 1. [`ScenarioArgs::read`]: the preset's or the file's text ([`ScenarioText`]);
//! 2. [`ScenarioText::parse`]: the validated [`Scenario`];
//! 3. [`ScaleArgs::apply`]: the scenario with its rates divided by `--scale`.
//!
//! A tool runs them in its own order (`qbss-model --show` prints the text before
//! it is parsed; `qbss-router` refuses what it cannot forward before it scales).
//! Every step fails with a [`LoadError`] that the tool prints after its name and
//! that gives the exit status ([`LoadError::exit_status`]).
//!
//! The two tools word some help lines their own way and `qbss-router` takes the
//! file as `--scenario FILE`, not as an argument: it overrides those in its
//! `Command` (see `router::cli`); the arguments' names, types and conflicts stay
//! the ones defined here.
//!
//! ```
//! use clap::Parser;
//! use qbss::options::{ScaleArgs, ScenarioArgs};
//!
//! #[derive(Parser)]
//! struct Cli {
//!     #[command(flatten)]
//!     source: ScenarioArgs,
//!     #[command(flatten)]
//!     scale: ScaleArgs,
//! }
//!
//! let cli = Cli::parse_from(["tool", "--preset", "vc-10mbit", "--scale", "10"]);
//! let text = cli.source.read("give a scenario").unwrap();
//! assert_eq!(text.origin, "preset vc-10mbit");
//! let scenario = cli.scale.apply(text.parse().unwrap()).unwrap();
//! assert_eq!(scenario.vc.unwrap().rate_bps, 1_000_000);
//! ```

use std::io::{self, Write};
use std::path::PathBuf;

use crate::presets::{self, PRESETS};
use crate::scenario::{ScaleError, Scenario, ScenarioError};

/// Which scenario to use: a file, or a built-in preset (not both).
#[derive(Clone, Debug, Default, PartialEq, clap::Args)]
pub struct ScenarioArgs {
    /// Scenario file (TOML; see examples/scenarios/).
    #[arg(conflicts_with = "preset")]
    pub scenario: Option<PathBuf>,
    /// Run a built-in scenario (see --list-presets).
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
}

/// By how much to slow a scenario down.
#[derive(Clone, Debug, Default, PartialEq, clap::Args)]
pub struct ScaleArgs {
    /// Divide every rate (link, VC, streams) by F, as the lab does to fit a small
    /// machine; the JSON report records "scale".
    #[arg(long, value_name = "F")]
    pub scale: Option<f64>,
}

/// A scenario's TOML text and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioText {
    /// What messages about the text name: `preset NAME`, or the file's path.
    pub origin: String,
    /// The TOML text.
    pub text: String,
}

/// Why the scenario a command line names could not be used.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Neither a file nor a preset was given (a usage error); the message is
    /// the tool's own hint.
    #[error("{hint}")]
    NoScenario {
        /// What the tool says to do instead (its way of naming a file).
        hint: &'static str,
    },
    /// No preset of that name (a usage error); the message lists the presets.
    #[error("no preset {name:?}; presets: {}", preset_names())]
    UnknownPreset {
        /// The name given.
        name: String,
    },
    /// The scenario file could not be read (a runtime error).
    #[error("{}: {source}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The text is not a valid scenario (a runtime error).
    #[error("{origin}: {error}")]
    Invalid {
        /// Where the text came from ([`ScenarioText::origin`]).
        origin: String,
        /// Where in it, and what is wrong.
        error: ScenarioError,
    },
    /// `--scale` cannot scale this scenario (a usage error).
    #[error("--scale: {0}")]
    Scale(#[from] ScaleError),
}

impl LoadError {
    /// The exit status the tools give for it: 2 usage error, 1 runtime error.
    pub fn exit_status(&self) -> i32 {
        match self {
            LoadError::NoScenario { .. }
            | LoadError::UnknownPreset { .. }
            | LoadError::Scale(_) => 2,
            LoadError::Unreadable { .. } | LoadError::Invalid { .. } => 1,
        }
    }

    /// Prints the error to `stderr` after the tool's name (`qbss-model: ...`) and
    /// returns its exit status.
    pub fn report(&self, tool: &str, stderr: &mut dyn Write) -> i32 {
        let _ = writeln!(stderr, "{tool}: {self}");
        self.exit_status()
    }
}

/// A tool's whole `main`: parses the process's arguments as `A`, runs
/// `main_with` on them with the standard streams, and exits with its status.
pub fn run_main<A: clap::Parser>(main_with: fn(A, &mut dyn Write, &mut dyn Write) -> i32) -> ! {
    let args = A::parse();
    let status = main_with(args, &mut io::stdout().lock(), &mut io::stderr().lock());
    std::process::exit(status)
}

/// The presets' names, as an unknown preset's message lists them.
fn preset_names() -> String {
    PRESETS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

impl ScenarioArgs {
    /// The text of the scenario named: the preset if one is given, else the file;
    /// [`LoadError::NoScenario`] with the tool's `hint` when neither is.
    pub fn read(&self, hint: &'static str) -> Result<ScenarioText, LoadError> {
        match (&self.preset, &self.scenario) {
            (Some(name), _) => match presets::find(name) {
                Some(p) => Ok(ScenarioText {
                    origin: format!("preset {name}"),
                    text: p.toml.to_string(),
                }),
                None => Err(LoadError::UnknownPreset { name: name.clone() }),
            },
            (None, Some(path)) => match std::fs::read_to_string(path) {
                Ok(text) => Ok(ScenarioText {
                    origin: path.display().to_string(),
                    text,
                }),
                Err(source) => Err(LoadError::Unreadable {
                    path: path.clone(),
                    source,
                }),
            },
            (None, None) => Err(LoadError::NoScenario { hint }),
        }
    }
}

impl ScenarioText {
    /// The validated scenario ([`Scenario::from_toml`]).
    pub fn parse(&self) -> Result<Scenario, LoadError> {
        Scenario::from_toml(&self.text).map_err(|error| LoadError::Invalid {
            origin: self.origin.clone(),
            error,
        })
    }
}

impl ScaleArgs {
    /// `scenario` with its rates divided by `--scale` ([`Scenario::scaled`]);
    /// unchanged without `--scale`.
    pub fn apply(&self, scenario: Scenario) -> Result<Scenario, LoadError> {
        match self.scale {
            Some(factor) => Ok(scenario.scaled(factor)?),
            None => Ok(scenario),
        }
    }

    /// The factor the rates are divided by: `--scale`, or 1.
    pub fn factor(&self) -> f64 {
        self.scale.unwrap_or(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(preset: Option<&str>, file: Option<&str>) -> ScenarioArgs {
        ScenarioArgs {
            scenario: file.map(PathBuf::from),
            preset: preset.map(str::to_string),
        }
    }

    #[test]
    fn the_preset_is_read_before_the_file_and_named_as_the_origin() {
        let text = args(Some("tengig"), Some("/nonexistent.toml"))
            .read("hint")
            .unwrap();
        assert_eq!(text.origin, "preset tengig");
        assert_eq!(text.text, presets::find("tengig").unwrap().toml);
        assert_eq!(text.parse().unwrap().name, "tengig");
    }

    #[test]
    fn every_refusal_says_what_and_carries_its_exit_status() {
        let e = args(None, None).read("give one").unwrap_err();
        assert_eq!((e.to_string(), e.exit_status()), ("give one".into(), 2));
        let e = args(Some("nope"), None).read("hint").unwrap_err();
        assert_eq!(e.exit_status(), 2);
        assert!(
            e.to_string()
                .starts_with("no preset \"nope\"; presets: transpac, "),
            "{e}"
        );
        let e = args(None, Some("/nonexistent/scenario.toml"))
            .read("hint")
            .unwrap_err();
        assert_eq!(e.exit_status(), 1);
        assert!(
            e.to_string().starts_with("/nonexistent/scenario.toml: "),
            "{e}"
        );
        let bad = ScenarioText {
            origin: "here".into(),
            text: "name = 1".into(),
        };
        let e = bad.parse().unwrap_err();
        assert_eq!(e.exit_status(), 1);
        assert!(e.to_string().starts_with("here: line 1: name: "), "{e}");
        let sc = args(Some("transpac"), None)
            .read("hint")
            .and_then(|t| t.parse())
            .unwrap();
        let e = ScaleArgs { scale: Some(0.5) }
            .apply(sc.clone())
            .unwrap_err();
        assert_eq!(e.exit_status(), 2);
        assert_eq!(
            e.to_string(),
            "--scale: scale 0.5: give a number of at least 1"
        );
        let mut err = Vec::new();
        assert_eq!(e.report("tool", &mut err), 2);
        assert_eq!(
            String::from_utf8(err).unwrap(),
            "tool: --scale: scale 0.5: give a number of at least 1\n"
        );
        assert_eq!(ScaleArgs::default().apply(sc.clone()).unwrap(), sc);
        assert_eq!(ScaleArgs::default().factor(), 1.0);
    }
}
