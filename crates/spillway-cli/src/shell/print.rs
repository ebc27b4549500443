//! Formats an [`Outcome`] the way mongosh shows it.
//!
//! Values are printed with `spillway_doc`'s mongosh printer (`{ _id: 1, title: 'Dune' }`,
//! broken over lines past 80 columns, relaxed types such as `ObjectId('...')`,
//! `ISODate('...')`, `Long('...')`); a top-level string is printed bare, as mongosh prints
//! the name `createIndex` returns; an empty `find` prints nothing. This module must never
//! run anything: it only formats.

use spillway::bson::Bson;
use spillway_doc::shell::to_shell_string_pretty;

use super::execute::{Outcome, Reply};

/// What mongosh prints after a batch when the cursor has more documents.
pub const MORE_PROMPT: &str = "Type \"it\" for more";

/// The text to show for `outcome` (possibly empty), without a final newline.
pub fn render_outcome(outcome: &Outcome) -> String {
    let mut parts: Vec<String> = outcome
        .notes
        .iter()
        .map(|note| format!("Note: {note}"))
        .collect();
    match &outcome.reply {
        Reply::Value(Bson::String(text)) => parts.push(text.clone()),
        Reply::Value(value) => parts.push(to_shell_string_pretty(value)),
        Reply::Lines(lines) => parts.extend(lines.iter().cloned()),
        Reply::Batch { documents, more } => {
            if !documents.is_empty() {
                let array = Bson::Array(documents.iter().cloned().map(Bson::Document).collect());
                parts.push(to_shell_string_pretty(&array));
            }
            if *more {
                parts.push(MORE_PROMPT.to_owned());
            }
        }
        Reply::Exit => {}
    }
    parts.join("\n")
}
