//! `spillway advise DB [COLL]`: the pattern advisor's report on stored collections, its
//! plot, and applying what it proposes.
//!
//! The report is `spillway_pattern`'s [`AdviceReport`] as text: per collection the document
//! sizes, a table of array fields with their length percentiles and proposals, and a
//! terminal histogram of array lengths per field. `--svg FILE` writes the same charts as SVG;
//! `--apply` declares the proposed policies (after a confirmation on standard input unless
//! `--yes`), then runs `verify_patterns`. The advisor reads documents as they are stored:
//! a collection whose policies already keep its arrays short gets no proposal, and the side
//! collections of policies are not advised. This module only reads documents and declares
//! policies through the facade; it never writes documents itself.

use std::fmt;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::Args;
use spillway::bson::{Document, doc};
use spillway::{Collection, Database, Pattern};
use spillway_advisor::{AdviceError, AdviceReport, Advisor, ProposalKind};

use crate::database::open_existing;
use crate::patterns;

/// The arguments of `spillway advise`.
#[derive(Debug, Args)]
pub struct AdviseArgs {
    /// Database directory.
    pub db: PathBuf,
    /// The collection to advise on (default: every collection that is not a policy's side
    /// collection).
    pub collection: Option<String>,
    /// Write the charts (document sizes, array lengths per field) as SVG to FILE; with
    /// several collections, one file per collection named FILE's stem, '-', the collection.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Declare the proposed policies (asks for confirmation unless --yes), then verify them.
    #[arg(long)]
    pub apply: bool,
    /// With --apply: do not ask.
    #[arg(long, requires = "apply")]
    pub yes: bool,
    /// The threshold of every proposed Outlier policy (the most elements a main document
    /// keeps), instead of the one the advisor derives from the lengths; Subset proposals are
    /// unchanged.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub threshold: Option<u64>,
}

/// Why a report could not be made.
#[derive(Debug)]
#[non_exhaustive]
pub enum AdviseError {
    /// Reading the collection failed.
    Database(spillway::Error),
    /// The advisor refused a document.
    Document(Box<AdviceError>),
}

impl fmt::Display for AdviseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdviseError::Database(error) => write!(f, "cannot read the collection: {error}"),
            AdviseError::Document(error) => write!(f, "the advisor refused a document: {error}"),
        }
    }
}

impl std::error::Error for AdviseError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            // The message already says `error`; give what it does not say.
            AdviseError::Database(error) => error.source(),
            AdviseError::Document(error) => error.source(),
        }
    }
}

/// The advisor's report on the stored documents of `collection`.
///
/// # Errors
/// A read error, or a document the advisor cannot read.
pub fn report(collection: &Collection<Document>) -> Result<AdviceReport, AdviseError> {
    let mut advisor = Advisor::new(collection.name());
    // The stored layout: the advisor measures what is stored, so a collection whose policy
    // already keeps its arrays short has nothing left to propose.
    for document in collection
        .find(doc! {})
        .stored(true)
        .run()
        .map_err(AdviseError::Database)?
    {
        let document = document.map_err(AdviseError::Database)?;
        advisor
            .observe(&document)
            .map_err(|error| AdviseError::Document(Box::new(error)))?;
    }
    Ok(advisor.finish())
}

/// `spillway advise`: prints to `out`, reads the confirmation from `input`.
///
/// # Errors
/// A database that cannot be opened or read, an unknown collection, an SVG file that cannot
/// be written.
pub fn run(args: &AdviseArgs, input: &mut dyn BufRead, out: &mut dyn Write) -> Result<ExitCode> {
    let database = open_existing(&args.db, false)?;
    let names = database.list_collection_names().run()?;
    let policies = database.patterns();
    let side_of = |name: &str| {
        policies
            .iter()
            .find(|pattern| pattern.side_collection() == name)
    };
    let chosen: Vec<String> = if let Some(name) = &args.collection {
        if !names.contains(name) {
            bail!(
                "no collection '{name}' in {} (collections: {})",
                args.db.display(),
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    names.join(", ")
                }
            );
        }
        vec![name.clone()]
    } else {
        let mut chosen = Vec::new();
        for name in &names {
            if let Some(pattern) = side_of(name) {
                writeln!(
                    out,
                    "skipping {name}: the side collection of {}",
                    patterns::describe(pattern)
                )?;
            } else {
                chosen.push(name.clone());
            }
        }
        chosen
    };
    if chosen.is_empty() {
        writeln!(out, "no collections to advise on in {}", args.db.display())?;
        return Ok(ExitCode::SUCCESS);
    }
    let mut reports = Vec::new();
    for name in &chosen {
        let report = report(&database.collection::<Document>(name))
            .with_context(|| format!("cannot advise on collection '{name}'"))?;
        writeln!(out, "== {name} ==")?;
        write!(out, "{report}")?;
        writeln!(out)?;
        reports.push(report);
    }
    if let Some(svg) = &args.svg {
        write_svgs(svg, &reports, out)?;
    }
    let mut proposed: Vec<Pattern> = Vec::new();
    let mut outlier_proposals = 0;
    for proposal in reports.iter().flat_map(AdviceReport::proposals) {
        let mut proposal = proposal.clone();
        if let (Some(chosen), ProposalKind::Outlier { threshold }) =
            (args.threshold, &mut proposal.kind)
        {
            outlier_proposals += 1;
            if *threshold != chosen {
                writeln!(
                    out,
                    "{}.{}: threshold {chosen} (--threshold) instead of the advisor's {threshold}",
                    proposal.collection, proposal.field
                )?;
                *threshold = chosen;
            }
        }
        let pattern = proposal.to_pattern();
        let declared = policies.iter().any(|known| {
            known.collection() == pattern.collection() && known.field() == pattern.field()
        });
        if declared {
            writeln!(
                out,
                "{}.{} already has a policy: its proposal is not applied",
                pattern.collection(),
                pattern.field()
            )?;
        } else {
            proposed.push(pattern);
        }
    }
    if args.threshold.is_some() && outlier_proposals == 0 {
        writeln!(out, "--threshold: no Outlier proposal to apply it to")?;
    }
    if proposed.is_empty() {
        writeln!(out, "no proposals")?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(out, "proposals:")?;
    for pattern in &proposed {
        writeln!(out, "  {}", patterns::set_pattern_statement(pattern))?;
    }
    if !args.apply {
        writeln!(out, "(run again with --apply to declare them)")?;
        return Ok(ExitCode::SUCCESS);
    }
    if !args.yes && !confirm(proposed.len(), input, out)? {
        writeln!(out, "nothing applied")?;
        return Ok(ExitCode::SUCCESS);
    }
    apply(&database, &proposed, out)
}

/// Asks on `out`, reads one line of `input`: only `y` or `yes` agrees.
fn confirm(count: usize, input: &mut dyn BufRead, out: &mut dyn Write) -> Result<bool> {
    write!(
        out,
        "apply {count} {}? [y/N] ",
        if count == 1 { "policy" } else { "policies" }
    )?;
    out.flush()?;
    let mut answer = String::new();
    input
        .read_line(&mut answer)
        .context("cannot read the answer from standard input")?;
    if !answer.ends_with('\n') {
        // Keep the transcript readable when the answer did not end its line (or none came).
        writeln!(out)?;
    }
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Declares `proposed` one after another, then verifies every policy: exit code 1 on a
/// violation.
fn apply(database: &Database, proposed: &[Pattern], out: &mut dyn Write) -> Result<ExitCode> {
    for pattern in proposed {
        database
            .set_pattern(pattern.clone())
            .with_context(|| format!("cannot apply {}", patterns::describe(pattern)))?;
        writeln!(out, "applied: {}", patterns::describe(pattern))?;
    }
    let violations = database.verify_patterns()?;
    if violations.is_empty() {
        writeln!(
            out,
            "verify: no violations ({} {} checked)",
            database.patterns().len(),
            if database.patterns().len() == 1 {
                "policy"
            } else {
                "policies"
            }
        )?;
        return Ok(ExitCode::SUCCESS);
    }
    for violation in &violations {
        writeln!(out, "violation: {violation}")?;
    }
    writeln!(out, "verify: {} violation(s)", violations.len())?;
    Ok(ExitCode::FAILURE)
}

/// Writes each report's SVG: to `path` for one report, else to `<stem>-<collection>.<ext>`
/// beside it.
fn write_svgs(path: &Path, reports: &[AdviceReport], out: &mut dyn Write) -> Result<()> {
    for report in reports {
        let target = if reports.len() == 1 {
            path.to_path_buf()
        } else {
            let stem = path
                .file_stem()
                .map_or_else(|| "advice".into(), |stem| stem.to_string_lossy());
            let extension = path
                .extension()
                .map_or_else(|| "svg".into(), |extension| extension.to_string_lossy());
            path.with_file_name(format!("{stem}-{}.{extension}", report.collection))
        };
        std::fs::write(&target, report.to_svg())
            .with_context(|| format!("cannot write the plot to {}", target.display()))?;
        writeln!(
            out,
            "wrote the plot of {} to {}",
            report.collection,
            target.display()
        )?;
    }
    Ok(())
}
