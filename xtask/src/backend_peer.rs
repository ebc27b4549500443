//! `cargo xtask backend-peer`: spillway-mongodb's integration tests (spillway-pattern's
//! backend suite, the concurrency and retryable-write tests, the API's) against SecantusDB, an
//! independent MongoDB implementation on WiredTiger, pinned from PyPI. `cargo test` runs the
//! same tests against `spillway serve`; this task is their second upstream, as issue 32 asks
//! (no `mongod` installs on these machines). The kill tests (`faults`) need a server they can
//! kill, so they stay with `spillway serve`.

use anyhow::Result;

use crate::servers::RunningServer;
use crate::shared::{repo_root, target_dir};
use crate::step::{cargo, step};

/// The variable that points spillway-mongodb's tests at a running server
/// (`crates/spillway-mongodb/tests/common`).
const SERVER_ENV: &str = "SPILLWAY_MONGODB_TEST_SERVER";

/// `cargo xtask backend-peer [FILTER]`.
#[derive(clap::Args, Default)]
pub(crate) struct Options {
    /// Only the tests whose names contain FILTER (as `cargo test FILTER`)
    pub(crate) filter: Option<String>,
}

/// Runs the task; see the module documentation.
pub(crate) fn run(options: &Options) -> Result<()> {
    let work = target_dir().join("backend-peer");
    std::fs::create_dir_all(&work)?;
    let peer = crate::pymongo::secantus_for_other_task()?;
    let server = RunningServer::start(&peer, &work.join("secantusdb.log"))?;
    let mut args = vec![
        "test",
        "--package",
        "spillway-mongodb",
        "--test",
        "integration",
    ];
    if let Some(filter) = &options.filter {
        args.extend(["--", filter.as_str()]);
    }
    let mut command = cargo(&repo_root(), &args);
    command.env(SERVER_ENV, format!("127.0.0.1:{}", server.port()));
    step(
        "spillway-mongodb's integration tests against SecantusDB",
        command,
    )
}
