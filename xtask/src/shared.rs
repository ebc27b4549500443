//! Where the repository and the shared material (`../shared`) are.

use std::path::{Path, PathBuf};

/// The repository root (the parent of `xtask/`).
pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the repository root")
        .to_path_buf()
}

/// The shared material: `$SPILLWAY_SHARED`, else `../shared` beside the repository. `None`
/// when it is not there, so that callers can say so and skip.
pub(crate) fn shared_dir() -> Option<PathBuf> {
    let candidate = match std::env::var_os("SPILLWAY_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => repo_root().join("..").join("shared"),
    };
    candidate.is_dir().then_some(candidate)
}

/// Cargo's target directory: `$CARGO_TARGET_DIR` (relative to the repository when relative),
/// else `target/` in the repository. The client tasks keep their throwaway environments here.
pub(crate) fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => repo_root().join(dir),
        None => repo_root().join("target"),
    }
}
