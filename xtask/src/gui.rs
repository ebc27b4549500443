//! `cargo xtask gui`: issue 30's GUI check. mongo-express, built from its npm package, browses
//! and edits a plain collection, a collection with an outlier policy and one with a subset
//! policy on a fresh `spillway serve`, driven by headless Chromium; screenshots of every page
//! are kept in `target/gui/screenshots/`.
//!
//! The steps, each reused while its inputs are unchanged:
//! 1. mongo-express [`MONGO_EXPRESS_VERSION`] from npm (`npm pack`), into
//!    `target/gui/mongo-express/`. Its tarball has no built assets (`prepublish` runs webpack)
//!    and its manifest names dependencies npm cannot install: a GitHub branch
//!    (`bootstrap-paginator`) and yarn `patch:` versions (`mongodb-query-parser`, `renderjson`).
//!    [`rewrite_manifest`] puts registry versions in their place, keeps of the development
//!    dependencies only those the webpack build needs (no cypress, no mongodb-memory-server,
//!    which downloads a mongod), and `npm ci` installs it from the lock pinned in
//!    `xtask/gui/mongo-express/package-lock.json` (`--ignore-scripts`). Of the yarn patches
//!    only renderjson's matters to the pages (an `export default` line the collection page's
//!    script imports); it is applied as upstream wrote it. Then the production webpack build.
//! 2. The browser driver `playwright-core` and the Node.js driver, `npm ci` of
//!    `xtask/gui/package.json` into `target/gui/driver/`.
//! 3. Debian's Chromium (`/usr/bin/chromium`); missing, the task says how to install it, or
//!    installs it with `--install-chromium` (`apt-get install -y chromium`).
//! 4. `spillway serve` (release build, a temporary directory, port 0), then mongo-express
//!    (`node app.js`: admin on, basic authentication off, a free loopback port), then
//!    `xtask/gui/gui_checks.js`, which seeds the database through the Node.js driver, visits
//!    the pages in Chromium (a fresh profile), saves edits through the document editor and
//!    checks through the driver what the saves wrote.
//!
//! The task fails on any failed check (the script's `FAIL` lines: an HTTP error, an error
//! banner, a console or page error of mongo-express's pages, a wrong write-back) or an error
//! mongo-express logged. It is not part of `cargo xtask ci`: it needs Chromium and minutes.
//!
//! To move to another mongo-express version: change [`MONGO_EXPRESS_VERSION`], run the task
//! once with `--relock`, which resolves the rewritten manifest afresh with `npm install` and
//! writes its lock back to `xtask/gui/mongo-express/package-lock.json`.
//!
//! This task reaches only the npm registry (and Debian's, with `--install-chromium`) and the
//! servers it starts on 127.0.0.1.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Map, Value, json};

use crate::clients::{check_node, ensure_node_packages, read_outcome, run_script};
use crate::servers::{RunningServer, build_spillway};
use crate::shared::{repo_root, target_dir};
use crate::step::step;

/// The pinned mongo-express (npm package `mongo-express`).
pub(crate) const MONGO_EXPRESS_VERSION: &str = "1.0.2";

/// Where the script, the driver's manifest and mongo-express's lock live, relative to the
/// repository.
const SCRIPT_DIR: &str = "xtask/gui";

/// The Chromium the pages are driven in (Debian's package `chromium`).
const CHROMIUM: &str = "/usr/bin/chromium";

/// How long mongo-express has to start listening.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the script may take, unless `--timeout` says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);

/// The dependencies of mongo-express's manifest that npm cannot install, and the registry
/// versions that replace them. `html-entities` is pinned below its newest 2.x, whose ES module
/// build has no default export, which the collection page's script imports.
const REPLACED_DEPENDENCIES: &[(&str, &str)] = &[
    // github:rtritto/bootstrap-paginator#develop
    ("bootstrap-paginator", "1.0.2"),
    // patch:mongodb-query-parser@npm:2.4.6 (the patch only changes how UUIDs print)
    ("mongodb-query-parser", "2.4.6"),
    ("html-entities", "2.3.3"),
];

/// Runtime dependencies left out: `nyc` is a coverage tool, which no page uses.
const DROPPED_DEPENDENCIES: &[&str] = &["nyc"];

/// The development dependencies the webpack build needs (the rest are tests, linters,
/// cypress and mongodb-memory-server); `renderjson`'s yarn `patch:` version becomes the
/// registry's.
const BUILD_DEPENDENCIES: &[&str] = &[
    "@babel/core",
    "@babel/preset-env",
    "assets-webpack-plugin",
    "babel-loader",
    "bootstrap",
    "clean-webpack-plugin",
    "codemirror",
    "copy-webpack-plugin",
    "jquery",
    "renderjson",
    "webpack",
    "webpack-cli",
];

/// renderjson 1.4.0 declares `module` and `define` as its own variables, so a bundler gets no
/// export from it; mongo-express's yarn patch (`.yarn/patches/renderjson-npm-1.4.0-*.patch`)
/// appends this line.
const RENDERJSON_EXPORT: &str = "\nexport default renderjson;\n";

/// `cargo xtask gui [--install-chromium] [--relock] [--timeout SECS]`.
#[derive(clap::Args, Default)]
pub(crate) struct Options {
    /// Install Debian's chromium with apt-get when /usr/bin/chromium is missing
    #[arg(long)]
    pub(crate) install_chromium: bool,
    /// Resolve mongo-express's rewritten manifest afresh and write its lock back to
    /// xtask/gui/mongo-express/package-lock.json
    #[arg(long)]
    pub(crate) relock: bool,
    /// Seconds the browser script may take [default: 600]
    #[arg(long, value_name = "SECS")]
    pub(crate) timeout: Option<u64>,
}

/// Runs the task; see the module documentation.
pub(crate) fn run(options: &Options) -> Result<()> {
    check_node()?;
    let work = target_dir().join("gui");
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let mongo_express = ensure_mongo_express(&work, options.relock)?;
    let driver = ensure_node_packages(
        &repo_root().join(SCRIPT_DIR),
        &work.join("driver"),
        &["playwright-core", "mongodb"],
    )?;
    ensure_chromium(options.install_chromium)?;

    let program = build_spillway()?;
    let logs = work.join("logs");
    let server = RunningServer::start(&program, &logs.join("spillway.server.log"))?;
    let uri = format!("mongodb://127.0.0.1:{}/", server.port());
    let app_log = logs.join("mongo-express.log");
    let app = MongoExpress::start(&mongo_express, &uri, &app_log)?;

    let screenshots = work.join("screenshots");
    if screenshots.exists() {
        std::fs::remove_dir_all(&screenshots)
            .with_context(|| format!("removing {}", screenshots.display()))?;
    }
    let profile = tempfile::Builder::new()
        .prefix("spillway-gui-chromium-")
        .tempdir()
        .context("creating Chromium's profile directory")?;
    let mut command = Command::new("node");
    command
        .arg(repo_root().join(SCRIPT_DIR).join("gui_checks.js"))
        .env("NODE_PATH", &driver)
        .arg("--uri")
        .arg(&uri)
        .arg("--app")
        .arg(format!("http://127.0.0.1:{}", app.port))
        .args(["--chromium", CHROMIUM])
        .arg("--profile")
        .arg(profile.path())
        .arg("--screenshots")
        .arg(&screenshots);
    println!(
        "\n== mongo-express {MONGO_EXPRESS_VERSION} in headless Chromium against spillway serve (port {}), mongo-express on port {}",
        server.port(),
        app.port
    );
    let timeout = options.timeout.map_or(DEFAULT_TIMEOUT, Duration::from_secs);
    let started = Instant::now();
    let output = run_script(&mut command, &work.join("gui_checks.out"), timeout);
    let seconds = started.elapsed().as_secs_f64();
    drop(app);
    drop(server);
    let (text, success) = output?;
    print!("{text}");

    let mut outcome = read_outcome(&text);
    if outcome.problem.is_none() && success != (outcome.failed == 0) {
        outcome.problem = Some("the script's exit status disagrees with its summary".into());
    }
    let logged = std::fs::read_to_string(&app_log).unwrap_or_default();
    let errors = logged_errors(&logged);
    let mut shots: Vec<String> = std::fs::read_dir(&screenshots)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    shots.sort();
    println!(
        "\n{} screenshots in {}:\n  {}",
        shots.len(),
        screenshots.display(),
        shots.join("\n  ")
    );
    println!(
        "gui: {} passed, {} failed in {seconds:.0} s; mongo-express's log: {}",
        outcome.passed,
        outcome.failed,
        app_log.display()
    );
    ensure!(
        errors.is_empty(),
        "mongo-express logged errors:\n  {}",
        errors.join("\n  ")
    );
    if let Some(problem) = outcome.problem {
        bail!("the GUI script: {problem}");
    }
    ensure!(
        outcome.failed == 0,
        "{} GUI checks failed:\n  {}",
        outcome.failed,
        outcome.failures.join("\n  ")
    );
    Ok(())
}

/// The lines of mongo-express's log that report an error: what its routes print with
/// `console.error` (a `MongoServerError`, an `Error:`), and a 5xx of its request log
/// (morgan's `dev` format, `METHOD URL STATUS ...`, its status coloured).
fn logged_errors(log: &str) -> Vec<String> {
    log.lines()
        .map(without_colours)
        .filter(|line| {
            line.contains("Error:")
                || line.contains("MongoServerError")
                || line
                    .split_whitespace()
                    .nth(2)
                    .and_then(|status| status.parse::<u16>().ok())
                    .is_some_and(|status| (500..600).contains(&status))
        })
        .collect()
}

/// `line` without its ANSI colour sequences (`ESC [ ... m`).
fn without_colours(line: &str) -> String {
    let mut plain = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for end in chars.by_ref() {
                if end.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            plain.push(c);
        }
    }
    plain
}

/// mongo-express built and installed in `work/mongo-express/` (skipped while its stamp says
/// the same version, manifest and lock were built there); returns that directory.
fn ensure_mongo_express(work: &Path, relock: bool) -> Result<PathBuf> {
    let dir = work.join("mongo-express");
    let lock_path = repo_root()
        .join(SCRIPT_DIR)
        .join("mongo-express")
        .join("package-lock.json");
    let lock = if relock {
        None
    } else {
        Some(std::fs::read_to_string(&lock_path).with_context(|| {
            format!(
                "reading {} (--relock writes it afresh)",
                lock_path.display()
            )
        })?)
    };
    let stamp = dir.join("spillway-build.txt");
    let wanted_stamp = lock
        .as_ref()
        .map(|lock| format!("mongo-express {MONGO_EXPRESS_VERSION}\n{lock}"));
    if let Some(wanted) = &wanted_stamp
        && dir.join("build-assets.json").is_file()
        && std::fs::read_to_string(&stamp).is_ok_and(|built| &built == wanted)
    {
        return Ok(dir);
    }

    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    let unpack = work.join("pack");
    if unpack.exists() {
        std::fs::remove_dir_all(&unpack)
            .with_context(|| format!("removing {}", unpack.display()))?;
    }
    std::fs::create_dir_all(&unpack).with_context(|| format!("creating {}", unpack.display()))?;
    let mut pack = Command::new("npm");
    pack.args(["pack", &format!("mongo-express@{MONGO_EXPRESS_VERSION}")])
        .args(["--loglevel=error"])
        .current_dir(&unpack)
        .stdout(Stdio::null());
    step(
        &format!("npm pack mongo-express@{MONGO_EXPRESS_VERSION}"),
        pack,
    )?;
    let tarball = unpack.join(format!("mongo-express-{MONGO_EXPRESS_VERSION}.tgz"));
    let mut untar = Command::new("tar");
    untar.arg("xzf").arg(&tarball).current_dir(&unpack);
    step("unpack mongo-express", untar)?;
    std::fs::rename(unpack.join("package"), &dir)
        .with_context(|| format!("moving the unpacked package to {}", dir.display()))?;
    std::fs::remove_dir_all(&unpack).with_context(|| format!("removing {}", unpack.display()))?;

    let manifest_path = dir.join("package.json");
    let original: Value = serde_json::from_str(
        &std::fs::read_to_string(&manifest_path)
            .with_context(|| format!("reading {}", manifest_path.display()))?,
    )
    .with_context(|| format!("parsing {}", manifest_path.display()))?;
    let rewritten = rewrite_manifest(&original)?;
    std::fs::write(
        &manifest_path,
        serde_json::to_string_pretty(&rewritten).expect("a JSON value prints") + "\n",
    )
    .with_context(|| format!("writing {}", manifest_path.display()))?;

    let mut install = Command::new("npm");
    install.current_dir(&dir);
    match &lock {
        Some(lock) => {
            std::fs::write(dir.join("package-lock.json"), lock)
                .context("copying mongo-express's lock")?;
            install.arg("ci");
        }
        None => {
            install.arg("install");
        }
    }
    install.args([
        "--ignore-scripts",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
    ]);
    step(
        "install mongo-express's runtime and build dependencies",
        install,
    )?;
    if lock.is_none() {
        std::fs::copy(dir.join("package-lock.json"), &lock_path)
            .with_context(|| format!("writing {}", lock_path.display()))?;
        println!("wrote {}", lock_path.display());
    }

    let renderjson = dir.join("node_modules/renderjson/renderjson.js");
    let mut source = std::fs::read_to_string(&renderjson)
        .with_context(|| format!("reading {}", renderjson.display()))?;
    if !source.contains(RENDERJSON_EXPORT.trim()) {
        source.push_str(RENDERJSON_EXPORT);
        std::fs::write(&renderjson, source)
            .with_context(|| format!("writing {}", renderjson.display()))?;
    }

    let mut build = Command::new("node");
    build
        .arg("node_modules/webpack-cli/bin/cli.js")
        .env("NODE_ENV", "production")
        .current_dir(&dir);
    step("build mongo-express's pages (webpack, production)", build)?;
    ensure!(
        dir.join("build-assets.json").is_file(),
        "webpack left no build-assets.json in {}",
        dir.display()
    );
    let built = format!(
        "mongo-express {MONGO_EXPRESS_VERSION}\n{}",
        std::fs::read_to_string(&lock_path)
            .with_context(|| format!("reading {}", lock_path.display()))?
    );
    std::fs::write(&stamp, built).with_context(|| format!("writing {}", stamp.display()))?;
    Ok(dir)
}

/// mongo-express's manifest made installable by npm: registry versions for the GitHub and
/// yarn `patch:` dependencies, only the development dependencies the webpack build needs, no
/// scripts (`prepublish` would run the build with yarn), no yarn settings. Fails, naming it,
/// when a dependency it replaces or keeps is not in the manifest (another version's).
pub(crate) fn rewrite_manifest(original: &Value) -> Result<Value> {
    let mut manifest = original
        .as_object()
        .context("mongo-express's package.json is not an object")?
        .clone();
    let mut dependencies = manifest
        .get("dependencies")
        .and_then(Value::as_object)
        .context("mongo-express's package.json has no dependencies")?
        .clone();
    for (name, version) in REPLACED_DEPENDENCIES {
        ensure!(
            dependencies.contains_key(*name),
            "mongo-express's package.json has no dependency '{name}' to replace"
        );
        dependencies.insert((*name).to_string(), json!(version));
    }
    for name in DROPPED_DEPENDENCIES {
        dependencies.remove(*name);
    }
    let development = manifest
        .get("devDependencies")
        .and_then(Value::as_object)
        .context("mongo-express's package.json has no devDependencies")?;
    let mut build = Map::new();
    for name in BUILD_DEPENDENCIES {
        let version = development
            .get(*name)
            .and_then(Value::as_str)
            .with_context(|| {
                format!("mongo-express's package.json has no development dependency '{name}'")
            })?;
        let version = match version.strip_prefix("patch:") {
            // `patch:renderjson@npm%3A1.4.0#~/.yarn/patches/...`: the version patched.
            Some(patch) => patch
                .split_once("npm%3A")
                .and_then(|(_, rest)| rest.split('#').next())
                .with_context(|| format!("unreadable yarn patch version of '{name}': {version}"))?
                .to_string(),
            None => version.to_string(),
        };
        build.insert((*name).to_string(), json!(version));
    }
    for (name, version) in &dependencies {
        let version = version.as_str().unwrap_or_default();
        ensure!(
            !version.contains(':'),
            "mongo-express's dependency '{name}' is not a registry version: {version}"
        );
    }
    manifest.insert("dependencies".into(), Value::Object(dependencies));
    manifest.insert("devDependencies".into(), Value::Object(build));
    for key in ["scripts", "resolutions", "packageManager", "pre-commit"] {
        manifest.remove(key);
    }
    Ok(Value::Object(manifest))
}

/// `/usr/bin/chromium` is there, or installed when `install` is set.
fn ensure_chromium(install: bool) -> Result<()> {
    if Path::new(CHROMIUM).is_file() {
        return Ok(());
    }
    ensure!(
        install,
        "{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium), or run \
         `cargo xtask gui --install-chromium` as root"
    );
    let mut command = Command::new("apt-get");
    command
        .args(["install", "-y", "chromium"])
        .env("DEBIAN_FRONTEND", "noninteractive");
    step("apt-get install -y chromium", command)?;
    ensure!(
        Path::new(CHROMIUM).is_file(),
        "apt-get installed chromium, but {CHROMIUM} is still missing"
    );
    Ok(())
}

/// A running mongo-express (`node app.js`), killed when dropped; its output goes to a log.
struct MongoExpress {
    child: Child,
    port: u16,
}

impl MongoExpress {
    /// Starts mongo-express from `dir` against `uri` on a free loopback port and waits until
    /// it accepts connections (it listens once it has connected to the server).
    fn start(dir: &Path, uri: &str, log: &Path) -> Result<MongoExpress> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .context("finding a free port for mongo-express")?
            .port();
        if let Some(parent) = log.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        let output =
            std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
        let child = Command::new("node")
            .arg("app.js")
            .current_dir(dir)
            .env("ME_CONFIG_MONGODB_URL", uri)
            .env("ME_CONFIG_MONGODB_ENABLE_ADMIN", "true")
            .env("ME_CONFIG_BASICAUTH", "false")
            .env("ME_CONFIG_SITE_SESSIONSECRET", "spillway-gui-session")
            .env("ME_CONFIG_SITE_COOKIESECRET", "spillway-gui-cookie")
            .env("ME_CONFIG_OPTIONS_EDITORTHEME", "default")
            .env("VCAP_APP_HOST", "127.0.0.1")
            .env("PORT", port.to_string())
            .env("NODE_ENV", "production")
            .stdin(Stdio::null())
            .stdout(output.try_clone().context("sharing the log file")?)
            .stderr(output)
            .spawn()
            .context("starting mongo-express (node app.js)")?;
        let mut running = MongoExpress { child, port };
        let started = Instant::now();
        loop {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                println!("mongo-express listening on 127.0.0.1:{port}");
                return Ok(running);
            }
            if let Some(status) = running
                .child
                .try_wait()
                .context("waiting for mongo-express")?
            {
                bail!(
                    "mongo-express exited ({status}) before it listened; its log:\n{}",
                    std::fs::read_to_string(log).unwrap_or_default()
                );
            }
            if started.elapsed() > STARTUP_TIMEOUT {
                bail!(
                    "mongo-express did not listen within {STARTUP_TIMEOUT:?}; its log: {}",
                    log.display()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for MongoExpress {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parts of mongo-express 1.0.2's package.json the rewrite reads.
    fn manifest() -> Value {
        json!({
            "name": "mongo-express",
            "version": "1.0.2",
            "dependencies": {
                "bootstrap-paginator": "github:rtritto/bootstrap-paginator#develop",
                "express": "^4.18.2",
                "html-entities": "^2.3.3",
                "mongodb-query-parser": "patch:mongodb-query-parser@npm%3A2.4.6#~/.yarn/patches/mongodb-query-parser-npm-2.4.6-234abad2fc.patch",
                "nyc": "^15.1.0"
            },
            "devDependencies": {
                "@babel/core": "^7.20.12",
                "@babel/preset-env": "^7.20.2",
                "assets-webpack-plugin": "^7.1.1",
                "babel-loader": "^9.1.2",
                "bootstrap": "^3.3.7",
                "clean-webpack-plugin": "^4.0.0",
                "codemirror": "^5.58.2",
                "copy-webpack-plugin": "^11.0.0",
                "cypress": "^12.5.1",
                "jquery": "^3.6.3",
                "mongodb-memory-server": "^8.11.4",
                "renderjson": "patch:renderjson@npm%3A1.4.0#~/.yarn/patches/renderjson-npm-1.4.0-b198ae5f7e.patch",
                "webpack": "^5.75.0",
                "webpack-cli": "^5.0.1"
            },
            "scripts": { "prepublish": "yarn build" },
            "packageManager": "yarn@4.0.0-rc.26",
            "resolutions": { "ejson-shell-parser@npm:^1.1.3": "patch:..." }
        })
    }

    #[test]
    fn the_rewrite_gives_npm_registry_versions_and_only_the_build_tools() {
        let rewritten = rewrite_manifest(&manifest()).unwrap();
        assert_eq!(
            rewritten["dependencies"],
            json!({
                "bootstrap-paginator": "1.0.2",
                "express": "^4.18.2",
                "html-entities": "2.3.3",
                "mongodb-query-parser": "2.4.6"
            })
        );
        let development = rewritten["devDependencies"].as_object().unwrap();
        assert_eq!(development["renderjson"], "1.4.0");
        assert_eq!(development["webpack"], "^5.75.0");
        assert!(!development.contains_key("cypress"));
        assert!(!development.contains_key("mongodb-memory-server"));
        assert_eq!(development.len(), BUILD_DEPENDENCIES.len());
        for key in ["scripts", "packageManager", "resolutions"] {
            assert!(rewritten.get(key).is_none(), "{key} was kept");
        }
        assert_eq!(rewritten["version"], "1.0.2");
    }

    #[test]
    fn the_rewrite_names_what_another_version_lacks() {
        let mut other = manifest();
        other["dependencies"]
            .as_object_mut()
            .unwrap()
            .remove("bootstrap-paginator");
        let error = rewrite_manifest(&other).unwrap_err().to_string();
        assert!(error.contains("bootstrap-paginator"), "{error}");
        let mut other = manifest();
        other["devDependencies"]
            .as_object_mut()
            .unwrap()
            .remove("webpack");
        let error = rewrite_manifest(&other).unwrap_err().to_string();
        assert!(error.contains("webpack"), "{error}");
        let mut other = manifest();
        other["dependencies"]["flat"] = json!("github:someone/flat");
        let error = rewrite_manifest(&other).unwrap_err().to_string();
        assert!(error.contains("'flat'"), "{error}");
    }

    #[test]
    fn the_committed_lock_is_of_the_rewritten_manifest() {
        let path = repo_root()
            .join(SCRIPT_DIR)
            .join("mongo-express/package-lock.json");
        let lock: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let root = &lock["packages"][""];
        assert_eq!(root["version"], MONGO_EXPRESS_VERSION);
        let rewritten = rewrite_manifest(&manifest()).unwrap();
        for (name, version) in REPLACED_DEPENDENCIES {
            assert_eq!(root["dependencies"][*name], *version, "{name}");
        }
        assert_eq!(
            root["devDependencies"]["renderjson"],
            rewritten["devDependencies"]["renderjson"]
        );
        assert!(root["devDependencies"].get("cypress").is_none());
    }

    #[test]
    fn errors_are_read_from_mongo_expresss_log() {
        let log = "Mongo Express server listening at http://127.0.0.1:8081\n\
                   GET /db/gui/plain 200 12.3 ms - 4000\n\
                   GET /db/gui/patterned \u{1b}[31m500\u{1b}[0m 3.1 ms - 20\n\
                   MongoServerError: no such command: 'collStats'\n\
                   basic auth is disabled\n";
        assert_eq!(
            logged_errors(log),
            [
                "GET /db/gui/patterned 500 3.1 ms - 20",
                "MongoServerError: no such command: 'collStats'"
            ]
        );
    }

    /// `cargo xtask gui ARGS`'s options, parsed as the binary parses them.
    fn parsed(args: &[&str]) -> Result<Options, clap::Error> {
        match crate::tests::parse(&[&["gui"], args].concat())? {
            crate::Command::Gui(options) => Ok(options),
            _ => unreachable!("gui parses as gui"),
        }
    }

    #[test]
    fn options_parse() {
        let options = parsed(&["--install-chromium", "--timeout", "30"]).unwrap();
        assert!(options.install_chromium && !options.relock);
        assert_eq!(options.timeout, Some(30));
        assert!(parsed(&["--relock"]).unwrap().relock);
        assert!(parsed(&["--bogus"]).is_err());
    }
}
