//! `spillway verify | stats | compact | repair DB`: the facade's maintenance reports as
//! text.
//!
//! Each command refuses a directory that does not exist rather than creating an empty
//! database in it. This module only formats what `Database::verify`, `stats`, `compact` and
//! `repair` return; it never reads database files itself.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use spillway::{Database, DatabaseOptions, LostWriteEffect};
use spillway_doc::shell::to_shell_string;

use crate::database::{existing, open_existing};

/// `spillway verify DB`: exit code 1 when anything is wrong, in the store, the indexes or
/// the pattern policies' layouts.
pub fn verify(db: &Path, read_only: bool) -> Result<ExitCode> {
    let database = open_existing(db, read_only)?;
    let report = database.verify()?;
    let n_policies = database.patterns().len();
    let violations = database.verify_patterns()?;
    crate::outln!(
        "checked {} frames, {} stored values, {} collections, {} documents, {} index entries",
        report.frames_checked,
        report.values_checked,
        report.collections_checked,
        report.documents_checked,
        report.index_entries_checked
    );
    for damage in &report.storage_damage {
        crate::outln!(
            "damaged: {} at offset {}: {}",
            damage.path.display(),
            damage.offset,
            damage.reason
        );
    }
    for problem in &report.problems {
        crate::outln!("problem: {problem}");
    }
    for violation in &violations {
        crate::outln!("pattern violation: {violation}");
    }
    crate::outln!(
        "patterns: {n_policies} {} checked, {} violation(s)",
        if n_policies == 1 {
            "policy"
        } else {
            "policies"
        },
        violations.len()
    );
    if let Some(torn) = &report.torn_tail {
        // Not damage (those commits were never acknowledged), but never silent either.
        crate::outln!("recovery: the open {torn}");
    }
    if let Some(fell_back) = &report.checkpoint_fallback {
        // Nothing lost either, and healed unless read-only; reported all the same.
        crate::outln!("recovery: the open found {fell_back}");
    }
    if report.is_clean() && violations.is_empty() {
        if report.torn_tail.is_some() || report.checkpoint_fallback.is_some() {
            crate::outln!(
                "ok: no damage left after recovery, documents and indexes agree, every policy's layout holds"
            );
        } else {
            crate::outln!(
                "ok: no damage, documents and indexes agree, every policy's layout holds"
            );
        }
        Ok(ExitCode::SUCCESS)
    } else if report.is_clean() {
        crate::outln!(
            "{} pattern violation(s): the store is intact; removing and declaring the policy again rebuilds its layout",
            violations.len()
        );
        Ok(ExitCode::FAILURE)
    } else {
        crate::outln!(
            "{} damaged region(s), {} problem(s): run `spillway repair {}` to salvage",
            report.storage_damage.len(),
            report.problems.len(),
            db.display()
        );
        Ok(ExitCode::FAILURE)
    }
}

/// `spillway stats DB`.
pub fn stats(db: &Path, read_only: bool) -> Result<ExitCode> {
    let database = open_existing(db, read_only)?;
    let stats = database.stats()?;
    let mut out = String::new();
    writeln!(out, "collections: {}", stats.collections.len())?;
    for collection in &stats.collections {
        writeln!(
            out,
            "  {}: {} document(s), {} bytes stored{}",
            collection.name,
            collection.documents,
            collection.document_bytes,
            collection
                .document_bytes
                .checked_div(collection.documents)
                .map(|average| format!(", average {average} bytes"))
                .unwrap_or_default()
        )?;
        if !collection.largest_documents.is_empty() {
            let largest: Vec<String> = collection
                .largest_documents
                .iter()
                .map(|document| {
                    format!(
                        "{} ({} bytes)",
                        to_shell_string(&document.id),
                        document.bytes
                    )
                })
                .collect();
            writeln!(out, "    largest: {}", largest.join(", "))?;
        }
        for index in &collection.indexes {
            writeln!(out, "    index {}: {} entries", index.name, index.entries)?;
        }
    }
    writeln!(
        out,
        "storage: {} segment(s), {} bytes written, {} live, {} dead ({:.0}% dead), {} bytes of files",
        stats.segments,
        stats.written_bytes,
        stats.live_bytes,
        stats.dead_bytes,
        if stats.written_bytes == 0 {
            0.0
        } else {
            100.0 * stats.dead_bytes as f64 / stats.written_bytes as f64
        },
        stats.file_bytes
    )?;
    let policies = database.patterns();
    writeln!(out, "patterns: {}", policies.len())?;
    for pattern in &policies {
        writeln!(out, "  {}", crate::patterns::describe(pattern))?;
    }
    crate::out!("{out}");
    Ok(ExitCode::SUCCESS)
}

/// `spillway compact DB`.
pub fn compact(db: &Path) -> Result<ExitCode> {
    let database = open_existing(db, false)?;
    let report = database.compact()?;
    if report.segments_compacted.is_empty() {
        crate::outln!("nothing to compact: no segment is mostly dead");
    } else {
        crate::outln!(
            "compacted {} segment(s) into {}: {} live record(s) moved, {} bytes -> {} bytes",
            report.segments_compacted.len(),
            report.segments_written.len(),
            report.records_moved,
            report.bytes_before,
            report.bytes_after
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `spillway repair DB [--report FILE]`.
pub fn repair(db: &Path, report_file: Option<&Path>) -> Result<ExitCode> {
    let db = existing(db)?;
    let report = Database::repair(&db, &DatabaseOptions::default())
        .with_context(|| format!("cannot repair the database in {}", db.display()))?;
    let text = repair_text(&db, &report)?;
    crate::out!("{text}");
    if let Some(path) = report_file {
        std::fs::write(path, &text)
            .with_context(|| format!("cannot write the report to {}", path.display()))?;
    }
    if report.pattern_violations_left.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        Ok(ExitCode::FAILURE)
    }
}

/// How the report names a document: its `_id`, or its key when no version of it reads.
fn document_name(document: &spillway::RolledBackDocument) -> String {
    if let Some(id) = &document.id {
        return format!("{} _id {}", document.collection, to_shell_string(id));
    }
    let mut key = String::with_capacity(document.key.len() * 2);
    for byte in &document.key {
        write!(key, "{byte:02x}").expect("writing to a String cannot fail");
    }
    format!(
        "{} document with key {key} (its _id cannot be read)",
        document.collection
    )
}

/// The report `spillway repair` prints: what was found damaged, moved aside, lost and rebuilt,
/// one line each.
fn repair_text(db: &Path, report: &spillway::RepairReport) -> Result<String> {
    let mut text = String::new();
    writeln!(text, "repair of {}", db.display())?;
    if report.is_clean() {
        writeln!(
            text,
            "nothing to repair: every file is intact, and the catalog, documents and indexes agree; nothing was changed"
        )?;
        return Ok(text);
    }
    write_salvage_summary(&mut text, report)?;
    write_losses(&mut text, report)?;
    write_rebuilds(&mut text, report)?;
    write_pattern_repairs(&mut text, report)?;
    match &report.backup_dir {
        Some(backup) => writeln!(
            text,
            "moved aside: {} to {}",
            report.files_moved.join(", "),
            backup.display()
        )?,
        None => writeln!(text, "no file was moved: the files were intact")?,
    }
    Ok(text)
}

/// Where the salvage started, what it kept and dropped, and the damage it found.
fn write_salvage_summary(text: &mut String, report: &spillway::RepairReport) -> Result<()> {
    writeln!(
        text,
        "started from {}; {} intact frame(s) applied",
        if report.checkpoint_used {
            "the checkpoint"
        } else {
            "a full scan of every segment (documents deleted long ago may reappear)"
        },
        report.frames_salvaged
    )?;
    writeln!(
        text,
        "kept {} stored value(s); lost {} value(s): {} whose bytes were damaged or gone, {} written by dropped commits",
        report.values_recovered,
        report.values_dropped + report.lost_writes,
        report.values_dropped,
        report.lost_writes
    )?;
    if report.commits_dropped > 0 || report.lost_writes > 0 {
        let count = |effect| {
            report
                .documents_rolled_back
                .iter()
                .filter(|document| document.effect == effect)
                .count()
        };
        writeln!(
            text,
            "dropped {} commit(s): {} document(s) rolled back to an older version, {} vanished, {} deleted one(s) back",
            report.commits_dropped,
            count(LostWriteEffect::RolledBack),
            count(LostWriteEffect::Vanished),
            count(LostWriteEffect::Undeleted)
        )?;
    }
    if !report.lost_writes_complete {
        writeln!(
            text,
            "unknown: log bytes are gone or unreadable, so commits may have been dropped that cannot be named: documents they changed may show an older version, or be missing, without being listed here"
        )?;
    }
    for damage in &report.damage {
        writeln!(
            text,
            "damaged: {} at offset {}: {}",
            damage.path.display(),
            damage.offset,
            damage.reason
        )?;
    }
    if report.active_segment_missing {
        writeln!(
            text,
            "rebuilt: a fresh active log segment (the old one was missing)"
        )?;
    }
    Ok(())
}

/// The documents, catalog records, keyspaces and indexes lost or rolled back, one line each.
fn write_losses(text: &mut String, report: &spillway::RepairReport) -> Result<()> {
    for (collection, documents) in &report.documents_lost {
        writeln!(
            text,
            "lost: {documents} document(s) of collection {collection}: their bytes were damaged or gone"
        )?;
    }
    for document in &report.documents_rolled_back {
        let name = document_name(document);
        match document.effect {
            LostWriteEffect::RolledBack => writeln!(
                text,
                "rolled back: {name}: its newest version was lost; an older version is visible"
            )?,
            LostWriteEffect::Vanished => writeln!(
                text,
                "vanished: {name}: its newest version was lost and no older version exists"
            )?,
            LostWriteEffect::Undeleted => writeln!(
                text,
                "undeleted: {name}: its delete was lost; it is visible again"
            )?,
            _ => writeln!(text, "rolled back: {name}: its newest write was lost")?,
        }
    }
    for (record, effect) in &report.catalog_records_rolled_back {
        let what = match effect {
            LostWriteEffect::Vanished => "it is gone",
            LostWriteEffect::Undeleted => "its delete was lost; it is back",
            _ => "an older version is visible",
        };
        writeln!(
            text,
            "rolled back: catalog record {record}: its newest write was lost; {what}"
        )?;
    }
    for collection in &report.collections_emptied {
        writeln!(
            text,
            "lost: every document of collection {collection}: its documents keyspace was gone; the collection is kept, empty"
        )?;
    }
    for record in &report.catalog_records_lost {
        writeln!(text, "lost: catalog record {record}: it was damaged")?;
    }
    for (keyspace, values) in &report.orphaned_keyspaces {
        writeln!(
            text,
            "lost: keyspace {keyspace} ({values} value(s)): nothing names it and it holds no documents"
        )?;
    }
    for (index, reason) in &report.indexes_lost {
        writeln!(text, "lost: index {index}: {reason}")?;
    }
    Ok(())
}

/// The collections and indexes rebuilt, and the indexes dropped, one line each.
fn write_rebuilds(text: &mut String, report: &spillway::RepairReport) -> Result<()> {
    for collection in &report.collections_rebuilt {
        writeln!(
            text,
            "rebuilt: collection {} ({} document(s)) from keyspace {}: its catalog record was lost",
            collection.name, collection.documents, collection.keyspace
        )?;
    }
    for index in &report.indexes_rebuilt {
        writeln!(text, "rebuilt: index {index} from the surviving documents")?;
    }
    for (index, reason) in &report.indexes_dropped {
        writeln!(
            text,
            "dropped: index {index}: it could not be rebuilt: {reason}"
        )?;
    }
    Ok(())
}

/// What the pattern layer's repair resynced and removed, and the violations it left.
fn write_pattern_repairs(text: &mut String, report: &spillway::RepairReport) -> Result<()> {
    for (collection, id) in &report.pattern_documents_resynced {
        writeln!(
            text,
            "resynced: {collection} _id {}: its pattern layout was rebuilt from the side documents that survive",
            to_shell_string(id)
        )?;
    }
    for (collection, id) in &report.pattern_orphans_removed {
        writeln!(
            text,
            "removed: {collection} _id {}: a side document whose main document is gone",
            to_shell_string(id)
        )?;
    }
    for violation in &report.pattern_violations_left {
        writeln!(text, "not repaired: pattern violation: {violation}")?;
    }
    if !report.pattern_violations_left.is_empty() {
        writeln!(
            text,
            "{} pattern violation(s) left: `spillway verify` fails; removing and declaring the policy again rebuilds its layout",
            report.pattern_violations_left.len()
        )?;
    }
    Ok(())
}
