//! The seed examples in `examples/` run by the real binary (`spillway run <db> <script>`)
//! in a fresh directory, their output compared with reviewed snapshots. ObjectIds the
//! database generates are redacted; the ones the scripts write are kept.

use std::path::Path;
use std::process::Command;

fn run_example(name: &str) -> String {
    let repository = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let script = repository.join("examples").join(name);
    let source = std::fs::read_to_string(&script).unwrap();
    let directory = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_spillway"))
        .arg("run")
        .arg(directory.path().join("db"))
        .arg(&script)
        .output()
        .unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(output.status.success(), "{name} failed: {stderr}");
    assert_eq!(stderr, "", "{name} wrote to standard error");
    redact_generated_object_ids(&String::from_utf8(output.stdout).unwrap(), &source)
}

/// Replaces every `ObjectId('<24 hex digits>')` whose digits the script does not contain.
fn redact_generated_object_ids(text: &str, script: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("ObjectId('") {
        let after = &rest[start + "ObjectId('".len()..];
        out.push_str(&rest[..start]);
        let hex = after.get(..24).filter(|hex| {
            hex.chars().all(|c| c.is_ascii_hexdigit()) && after[24..].starts_with("')")
        });
        match hex {
            Some(hex) if !script.contains(hex) => {
                out.push_str("ObjectId('[oid]')");
                rest = &after[26..];
            }
            _ => {
                out.push_str("ObjectId('");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn outlier_seed_example() {
    insta::assert_snapshot!(run_example("outlier.js"));
}

#[test]
fn subset_seed_example() {
    insta::assert_snapshot!(run_example("subset.js"));
}
