//! Which labs run: skips asked for by name (`LAB_SKIP`), and the test
//! filters of the command line (to start the selected rows together).
//!
//! A lab's name is its test's name as libtest prints it, `SUITE::CASE`
//! (`firewall::campus`, `qbss::tengig`); the probe lab's tests are in suite
//! `probe`. `LAB_SKIP` is a comma-separated list: an entry skips the labs it
//! names, as a suite (`qbss`), a full name (`qbss::tengig`, or
//! `qbss/tengig`), or `all`.

/// The suite of a lab name: its first `::` segment.
pub fn suite(name: &str) -> &str {
    name.split("::").next().unwrap_or(name)
}

/// A row's name without its crate: `module_path!()`'s first segment is the
/// test crate, which libtest's names leave out.
pub fn test_name(module_path_and_fn: &str) -> &str {
    module_path_and_fn
        .split_once("::")
        .map_or(module_path_and_fn, |(_, rest)| rest)
}

/// The skips asked for by name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Skips {
    entries: Vec<String>,
}

impl Skips {
    /// `LAB_SKIP` of the environment.
    pub fn from_env() -> Skips {
        Skips::parse(&std::env::var("LAB_SKIP").unwrap_or_default())
    }

    /// A comma-separated list (spaces allowed; `/` may stand for `::`).
    pub fn parse(list: &str) -> Skips {
        Skips {
            entries: list
                .split([',', ' '])
                .map(str::trim)
                .filter(|e| !e.is_empty())
                .map(|e| e.replace('/', "::"))
                .collect(),
        }
    }

    /// The entry that skips the lab `name` of suite `suite`, if any.
    pub fn skips(&self, suite: &str, name: &str) -> Option<&str> {
        self.entries
            .iter()
            .find(|e| {
                *e == "all"
                    || *e == suite
                    || *e == name
                    || name
                        .strip_prefix(e.as_str())
                        .is_some_and(|r| r.starts_with("::"))
            })
            .map(String::as_str)
    }
}

/// The test filters of a libtest command line, as far as they decide which
/// tests run: positional filters, `--exact`, `--skip`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestFilter {
    filters: Vec<String>,
    skips: Vec<String>,
    exact: bool,
}

/// libtest's options that take a value.
const WITH_VALUE: &[&str] = &[
    "--skip",
    "--test-threads",
    "--logfile",
    "--format",
    "--color",
    "-Z",
    "--shuffle-seed",
];
/// libtest's flags that do not change which tests run.
const FLAGS: &[&str] = &[
    "--ignored",
    "--include-ignored",
    "--exact",
    "--nocapture",
    "--no-capture",
    "--show-output",
    "--quiet",
    "-q",
    "--test",
    "--report-time",
    "--ensure-time",
    "--force-run-in-process",
    "--exclude-should-panic",
    "--shuffle",
    "--fail-fast",
    "--list",
    "--bench",
];

impl TestFilter {
    /// From a test binary's arguments (without the program name); `None`
    /// when they hold something not understood here (then nothing is
    /// started ahead: each lab starts when its test asks for it).
    pub fn from_args<I: IntoIterator<Item = String>>(args: I) -> Option<TestFilter> {
        let mut f = TestFilter::default();
        let mut args = args.into_iter();
        while let Some(a) = args.next() {
            let (opt, inline) = match a.split_once('=') {
                Some((o, v)) if o.starts_with('-') => (o.to_string(), Some(v.to_string())),
                _ => (a.clone(), None),
            };
            if WITH_VALUE.contains(&opt.as_str()) {
                let v = match inline {
                    Some(v) => v,
                    None => args.next()?,
                };
                if opt == "--skip" {
                    f.skips.push(v);
                }
            } else if FLAGS.contains(&opt.as_str()) {
                f.exact |= opt == "--exact";
            } else if a.starts_with('-') {
                return None;
            } else {
                f.filters.push(a);
            }
        }
        Some(f)
    }

    /// Whether libtest runs the test `name` under these filters.
    pub fn selects(&self, name: &str) -> bool {
        let matches = |p: &String| {
            if self.exact {
                name == p
            } else {
                name.contains(p.as_str())
            }
        };
        (self.filters.is_empty() || self.filters.iter().any(matches))
            && !self.skips.iter().any(matches)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn skips_by_suite_name_or_prefix() {
        let s = Skips::parse("qbss, firewall/campus,probe");
        assert_eq!(s.skips("qbss", "qbss::tengig"), Some("qbss"));
        assert_eq!(
            s.skips("firewall", "firewall::campus"),
            Some("firewall::campus")
        );
        assert_eq!(s.skips("firewall", "firewall::campus_ipv6"), None);
        assert_eq!(s.skips("firewall", "firewall::clean4"), None);
        assert_eq!(s.skips("probe", "probe_lab_cases"), Some("probe"));
        assert_eq!(Skips::parse("").skips("qbss", "qbss::x"), None);
        assert_eq!(Skips::parse("all").skips("x", "x::y"), Some("all"));
        assert_eq!(
            Skips::parse("transfer").skips("transfer", "transfer::x"),
            Some("transfer")
        );
        assert_eq!(Skips::parse("trans").skips("transfer", "transfer::x"), None);
    }

    #[test]
    fn names() {
        assert_eq!(test_name("labs::qbss::tengig"), "qbss::tengig");
        assert_eq!(suite("qbss::tengig"), "qbss");
    }

    #[test]
    fn libtest_filters() {
        let f = TestFilter::from_args(args("--ignored qbss --test-threads 2")).unwrap();
        assert!(f.selects("qbss::tengig") && !f.selects("firewall::clean4"));
        let f = TestFilter::from_args(args("--ignored")).unwrap();
        assert!(f.selects("qbss::tengig") && f.selects("firewall::clean4"));
        let f = TestFilter::from_args(args("--include-ignored --skip qbss --nocapture")).unwrap();
        assert!(!f.selects("qbss::tengig") && f.selects("firewall::clean4"));
        let f = TestFilter::from_args(args("--exact firewall::clean4 --ignored")).unwrap();
        assert!(f.selects("firewall::clean4") && !f.selects("firewall::clean4x"));
        let f = TestFilter::from_args(args("--skip=qbss --format=terse campus")).unwrap();
        assert!(f.selects("firewall::campus") && !f.selects("qbss::campus"));
        assert_eq!(TestFilter::from_args(args("--some-new-flag")), None);
        assert_eq!(TestFilter::from_args(args("--skip")), None);
    }
}
