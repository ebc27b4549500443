//! `cargo xtask conformance` (being written).

use anyhow::Result;

pub(crate) fn run(_args: &[String]) -> Result<()> {
    Ok(())
}
