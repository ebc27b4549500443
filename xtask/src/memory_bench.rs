//! `memory-bench`: product pages of a subset-pattern database against plain documents, each
//! database opened by `spillway run` with a cold page cache inside a cgroup memory limit
//! (issue 14's table, as a task anyone can rerun).
//!
//! The data: `--products` products (default 10,000) with `--reviews` reviews each (default
//! 150, about 460 MB of NDJSON at the defaults), generated deterministically. Two databases
//! are loaded from the same file with `spillway import`: plain documents, and the same under
//! the subset seed's policy (the 10 newest reviews embedded, every review in `reviews`).
//! Then `--pages` random product pages (default 2,000; the same ids for both) run as one
//! `spillway run` script of `findOne`s: the plain product whole, the subset product as
//! stored (its 10 newest reviews). Before each run the page cache is dropped
//! (`/proc/sys/vm/drop_caches`) and the process is put in a fresh memory cgroup with the
//! limit (cgroup v1 `memory.limit_in_bytes`, or v2 `memory.max`), so the key directory and
//! the mapped files compete for that memory. A run that exceeds `--timeout` (default 600 s)
//! is reported as not finished.
//!
//! When the machine gives no writable memory cgroup or no cache drop, the task says so and
//! runs the rows it can (the unlimited row with a warm cache, at least). Tables go to stdout
//! and `target/memory-bench/report.md`.

use std::fmt::Write as _;
use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use wait_timeout::ChildExt;

use crate::servers::build_spillway;
use crate::shared::target_dir;

/// The memory limits of the table, in MiB (`None`: no limit).
const LIMITS_MIB: &[Option<u64>] = &[None, Some(1024), Some(512), Some(256), Some(128)];

/// `cargo xtask memory-bench [--products N] [--reviews N] [--pages N] [--timeout SECS]`.
#[derive(clap::Args)]
pub(crate) struct Options {
    /// Products in the data set
    #[arg(long, value_name = "N", default_value_t = 10_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) products: u64,
    /// Reviews of each product
    #[arg(long, value_name = "N", default_value_t = 150)]
    pub(crate) reviews: u64,
    /// Random product pages each run reads (the same ids for both databases)
    #[arg(long, value_name = "N", default_value_t = 2_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) pages: u64,
    /// Seconds after which a run is reported as not finished
    #[arg(long = "timeout", value_name = "SECS", default_value_t = 600)]
    pub(crate) timeout_seconds: u64,
}

/// A small deterministic generator (SplitMix64), so that every run reads the same data.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound.max(1)
    }
}

/// Writes the products as NDJSON (Extended JSON dates), one per line.
fn write_products(path: &Path, options: &Options) -> Result<()> {
    let mut out = BufWriter::new(fs::File::create(path)?);
    let mut random = Random(14);
    let words = [
        "sturdy", "light", "broke", "great", "value", "again", "slow", "quiet", "bright", "fits",
    ];
    for product in 0..options.products {
        let mut reviews = Vec::with_capacity(options.reviews as usize);
        for review in 0..options.reviews {
            let day = 1_600_000_000_000_u64 + random.below(1_000) * 86_400_000;
            let text: Vec<&str> = (0..24)
                .map(|_| words[random.below(words.len() as u64) as usize])
                .collect();
            reviews.push(format!(
                r#"{{"review_id":{},"reviewer":"user{}","stars":{},"published_date":{{"$date":{{"$numberLong":"{day}"}}}},"text":"{}"}}"#,
                product * options.reviews + review,
                random.below(100_000),
                1 + random.below(5),
                text.join(" ")
            ));
        }
        writeln!(
            out,
            r#"{{"_id":{product},"name":"product {product}","price":{},"reviews":[{}]}}"#,
            random.below(10_000),
            reviews.join(",")
        )?;
    }
    out.flush()?;
    Ok(())
}

/// The page script: `findOne`s of random products, the same for both databases.
fn write_pages(path: &Path, options: &Options) -> Result<()> {
    let mut random = Random(2_000);
    let mut script = String::new();
    for _ in 0..options.pages {
        let _ = writeln!(
            script,
            "db.products.findOne({{ _id: {} }})",
            random.below(options.products)
        );
    }
    fs::write(path, script)?;
    Ok(())
}

fn run_spillway(spillway: &Path, args: &[&str]) -> Result<()> {
    let status = Command::new(spillway)
        .args(args)
        .stdout(Stdio::null())
        .status()
        .with_context(|| format!("running {} {}", spillway.display(), args.join(" ")))?;
    if !status.success() {
        bail!("spillway {} failed: {status}", args.join(" "));
    }
    Ok(())
}

/// A fresh memory cgroup limited to `mib`, or why there is none.
struct Cgroup {
    path: PathBuf,
}

impl Cgroup {
    fn create(name: &str, mib: u64) -> std::result::Result<Cgroup, String> {
        let own = fs::read_to_string("/proc/self/cgroup").map_err(|error| error.to_string())?;
        let mut candidates = Vec::new();
        for line in own.lines() {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next(), parts.next(), parts.next());
            let path = path.unwrap_or("/").trim_start_matches('/');
            match controllers {
                Some(list) if list.split(',').any(|c| c == "memory") => candidates.push((
                    Path::new("/sys/fs/cgroup/memory").join(path),
                    "memory.limit_in_bytes",
                )),
                Some("") => candidates.push((Path::new("/sys/fs/cgroup").join(path), "memory.max")),
                _ => {}
            }
        }
        let mut reasons = Vec::new();
        for (parent, limit_file) in candidates {
            let path = parent.join(name);
            let _ = fs::remove_dir(&path);
            match fs::create_dir(&path)
                .and_then(|()| fs::write(path.join(limit_file), (mib << 20).to_string()))
            {
                Ok(()) => return Ok(Cgroup { path }),
                Err(error) => {
                    let _ = fs::remove_dir(&path);
                    reasons.push(format!("{}: {error}", parent.display()));
                }
            }
        }
        Err(if reasons.is_empty() {
            "no memory cgroup controller in /proc/self/cgroup".to_string()
        } else {
            reasons.join("; ")
        })
    }

    fn procs(&self) -> PathBuf {
        self.path.join("cgroup.procs")
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = fs::remove_dir(&self.path);
    }
}

fn drop_page_cache() -> std::result::Result<(), String> {
    Command::new("sync")
        .status()
        .map_err(|error| error.to_string())?;
    fs::write("/proc/sys/vm/drop_caches", "3").map_err(|error| error.to_string())
}

/// One timed `spillway run` of the pages, in `cgroup` if given: the table's cell (seconds,
/// or what stopped it: the timeout, or the kernel's out-of-memory killer).
fn timed_pages(
    spillway: &Path,
    database: &Path,
    pages: &Path,
    cgroup: Option<&Cgroup>,
    timeout: Duration,
) -> Result<String> {
    // With a cgroup, the shell joins it, then becomes spillway: the whole run is limited.
    let mut command = if let Some(cgroup) = cgroup {
        let mut command = Command::new("sh");
        command.arg("-c").arg(format!(
            "echo $$ > '{}' && exec '{}' run '{}' '{}'",
            cgroup.procs().display(),
            spillway.display(),
            database.display(),
            pages.display()
        ));
        command
    } else {
        let mut command = Command::new(spillway);
        command.arg("run").arg(database).arg(pages);
        command
    };
    let started = Instant::now();
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    match child.wait_timeout(timeout)? {
        Some(status) if status.success() => Ok(format!("{:.2} s", started.elapsed().as_secs_f64())),
        Some(status) => Ok(format!("failed ({status}; killed for memory?)")),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            Ok(format!("did not finish in {} s", timeout.as_secs()))
        }
    }
}

pub(crate) fn run(options: &Options) -> Result<()> {
    let dir = target_dir().join("memory-bench");
    fs::create_dir_all(&dir)?;
    let spillway = build_spillway()?.executable;

    let data = dir.join(format!(
        "products-{}x{}.ndjson",
        options.products, options.reviews
    ));
    if !data.is_file() {
        println!("== writing {}", data.display());
        write_products(&data, options)?;
    }
    let pages = dir.join(format!(
        "pages-{}-of-{}.js",
        options.pages, options.products
    ));
    write_pages(&pages, options)?;
    let plain = dir.join(format!("plain-{}x{}", options.products, options.reviews));
    let subset = dir.join(format!("subset-{}x{}", options.products, options.reviews));
    for database in [&plain, &subset] {
        if database.exists() {
            continue;
        }
        println!("== loading {}", database.display());
        let loading = database.with_extension("loading");
        let _ = fs::remove_dir_all(&loading);
        let loading_text = loading.to_string_lossy().to_string();
        if database == &subset {
            let setup = dir.join("subset-policy.js");
            fs::write(
                &setup,
                "db.products.setPattern({ subset: \"reviews\", keep: 10, sortBy: { published_date: -1 }, archiveCollection: \"reviews\", linkField: \"product_id\" })\n",
            )?;
            run_spillway(&spillway, &["run", &loading_text, &setup.to_string_lossy()])?;
        }
        run_spillway(
            &spillway,
            &["import", &loading_text, "products", &data.to_string_lossy()],
        )?;
        fs::rename(&loading, database)?;
    }

    let cold = match drop_page_cache() {
        Ok(()) => true,
        Err(reason) => {
            println!("memory-bench: cannot drop the page cache ({reason}): every run is warm");
            false
        }
    };
    let mut report = format!(
        "# memory-bench: {} products x {} reviews, {} pages, {} page cache\n\n| memory limit | plain documents | subset policy |\n|---|---:|---:|\n",
        options.products,
        options.reviews,
        options.pages,
        if cold { "cold" } else { "warm" }
    );
    for limit in LIMITS_MIB {
        let mut cells = Vec::new();
        for (label, database) in [("plain", &plain), ("subset", &subset)] {
            let cgroup = match limit {
                None => None,
                Some(mib) => {
                    match Cgroup::create(&format!("spillway-memory-bench-{label}"), *mib) {
                        Ok(cgroup) => Some(cgroup),
                        Err(reason) => {
                            println!("memory-bench: no memory cgroup of {mib} MiB ({reason})");
                            cells.push("no cgroup".to_string());
                            continue;
                        }
                    }
                }
            };
            if cold {
                let _ = drop_page_cache();
            }
            let cell = timed_pages(
                &spillway,
                database,
                &pages,
                cgroup.as_ref(),
                Duration::from_secs(options.timeout_seconds),
            )?;
            println!(
                "{:>8} {:>7}: {cell}",
                limit.map_or_else(|| "none".to_string(), |mib| format!("{mib} MiB")),
                label
            );
            cells.push(cell);
        }
        let _ = writeln!(
            report,
            "| {} | {} | {} |",
            limit.map_or_else(|| "none".to_string(), |mib| format!("{mib} MiB")),
            cells[0],
            cells[1]
        );
    }
    println!("\n{report}");
    fs::write(dir.join("report.md"), &report)?;
    println!("report written to {}", dir.join("report.md").display());
    Ok(())
}
