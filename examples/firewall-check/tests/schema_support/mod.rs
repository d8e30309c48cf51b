//! Test helpers shared by the JSON schema tests: the repository root, the
//! schemas of `docs/json-schema`, validation against one, and the fields a
//! schema allows that `docs/json.md` does not describe.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `docs/json-schema/NAME`.
pub fn schema(name: &str) -> Value {
    let text = std::fs::read_to_string(root().join("docs/json-schema").join(name))
        .unwrap_or_else(|e| panic!("docs/json-schema/{name}: {e}"));
    serde_json::from_str(&text).expect("the schema is JSON")
}

/// `doc` validates against `schema`; `what` names it in the failure.
pub fn assert_valid(schema: &Value, doc: &Value, what: &str) {
    let validator = jsonschema::validator_for(schema).expect("a valid JSON Schema");
    let errors: Vec<String> = validator
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

/// Every property name a schema defines, at any depth.
pub fn property_names(v: &Value, out: &mut BTreeSet<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Object(props)) = m.get("properties") {
                out.extend(props.keys().cloned());
            }
            for x in m.values() {
                property_names(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| property_names(x, out)),
        _ => {}
    }
}

/// The section of `doc` (`docs/json.md`) under `heading`, up to the next
/// `## ` heading; `None` when there is no such heading.
pub fn section<'a>(doc: &'a str, heading: &str) -> Option<&'a str> {
    let section = doc.split(heading).nth(1)?;
    Some(section.split("\n## ").next().unwrap_or(section))
}

/// The property names of `schema` that `section` does not mention: as
/// `name`, or a dotted path that starts or ends with it, or (with
/// `quoted`) as "name".
pub fn undocumented(schema: &Value, section: &str, quoted: bool) -> Vec<String> {
    let mut names = BTreeSet::new();
    property_names(schema, &mut names);
    names
        .into_iter()
        .filter(|n| {
            let forms = [format!("`{n}`"), format!(".{n}`"), format!("`{n}.")];
            let quoted_form = quoted.then(|| format!("\"{n}\""));
            !forms
                .iter()
                .chain(&quoted_form)
                .any(|f| section.contains(f.as_str()))
        })
        .collect()
}
