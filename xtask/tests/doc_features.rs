//! `spillway-doc` with its default features builds without a C compiler: none of the
//! dependencies its `js`, `collation`, `geo` and `text` features bring (QuickJS through `cc`,
//! ICU4X, `geo`, `rust-stemmers`) is in its dependency tree unless a feature asks for it.
//!
//! Read from `cargo tree` (normal and build dependencies, since `cc` is a build dependency),
//! with the cargo that runs the tests.

use std::path::Path;
use std::process::Command;

/// A dependency that only one of the optional features may bring.
fn is_optional_dependency(name: &str) -> bool {
    name == "cc"
        || name.starts_with("rquickjs")
        || name.starts_with("icu_")
        || name == "geo"
        || name.starts_with("geo-")
        || name == "rust-stemmers"
}

/// The names of the packages in `spillway-doc`'s tree with `features` (cargo's options).
fn dependency_names(features: &[&str]) -> Vec<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let output = Command::new(cargo)
        .current_dir(workspace)
        .args([
            "tree",
            "--locked",
            "-p",
            "spillway-doc",
            "-e",
            "normal,build",
        ])
        .args(["--prefix", "none"])
        .args(features)
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut names: Vec<String> = String::from_utf8(output.stdout)
        .expect("cargo tree prints UTF-8")
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_default_build_has_no_c_and_none_of_the_optional_dependencies() {
    let names = dependency_names(&["--no-default-features"]);
    assert!(
        names.iter().any(|name| name == "bson"),
        "cargo tree's output is not what this test reads: {names:?}"
    );
    let optional: Vec<&String> = names
        .iter()
        .filter(|name| is_optional_dependency(name))
        .collect();
    assert!(
        optional.is_empty(),
        "spillway-doc without features depends on {optional:?}"
    );
}

#[test]
fn each_feature_brings_its_dependencies() {
    for (feature, dependency) in [
        ("js", "rquickjs"),
        ("js", "cc"),
        ("collation", "icu_collator"),
        ("geo", "geo"),
        ("text", "rust-stemmers"),
    ] {
        let names = dependency_names(&["--no-default-features", "--features", feature]);
        assert!(
            names.iter().any(|name| name == dependency),
            "feature {feature} should bring {dependency}: {names:?}"
        );
    }
}
