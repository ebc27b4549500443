//! What the advisor found: the report, the proposals, and how they are shown.
//!
//! Everything here is plain data with public fields, so that the policy engine can turn a
//! [`Proposal`] into its own pattern declaration and the CLI can print or plot a report
//! without going back to the documents. `Display` of [`AdviceReport`] is the readable text
//! the CLI prints; [`AdviceReport::to_svg`] is the plot.

use std::fmt::{self, Write as _};

use spillway_doc::bson::{Bson, Document, doc};
use spillway_doc::shell::to_shell_string;

use super::distribution::{Distribution, ValueCounts};
use super::histogram::{CHART_HEIGHT, CHART_WIDTH, Histogram, group_digits, svg_open};
use super::rule::{format_share, share};
use super::sort_key::SortKeyEvidence;

/// Everything the advisor learnt about one collection.
#[derive(Debug, Clone, PartialEq)]
pub struct AdviceReport {
    /// The collection's name.
    pub collection: String,
    /// How many documents were observed.
    pub documents: u64,
    /// The documents' sizes in BSON bytes.
    pub document_sizes: ValueCounts,
    /// The largest documents by size, largest first (at most `top_k`).
    pub largest_documents: Vec<DocumentRef>,
    /// One entry per array field, ordered by path.
    pub fields: Vec<FieldReport>,
    /// Arrays found at paths beyond `max_fields` distinct paths, not analysed.
    pub untracked_arrays: u64,
}

impl AdviceReport {
    /// The summary of document sizes, `None` for an empty collection.
    pub fn size_distribution(&self) -> Option<Distribution> {
        self.document_sizes.distribution()
    }

    /// The proposals, in field order.
    pub fn proposals(&self) -> impl Iterator<Item = &Proposal> {
        self.fields
            .iter()
            .filter_map(|field| field.proposal.as_ref())
    }

    /// The report of the array at dotted path `path`.
    pub fn field(&self, path: &str) -> Option<&FieldReport> {
        self.fields.iter().find(|field| field.path == path)
    }

    /// An SVG document with one chart of document sizes, then one chart of array lengths per
    /// field, each with its proposal's threshold (or subset size) marked.
    pub fn to_svg(&self) -> String {
        let n_charts = 1 + self.fields.len();
        let mut out = String::new();
        svg_open(&mut out, CHART_WIDTH, CHART_HEIGHT * n_charts as u32);
        Histogram::log2(&self.document_sizes)
            .without_leading_empty()
            .write_svg_chart(
                &mut out,
                0.0,
                &format!(
                    "{}: document sizes ({} documents)",
                    self.collection,
                    group_digits(self.documents)
                ),
                "size in bytes",
                None,
            );
        for (field_idx, field) in self.fields.iter().enumerate() {
            let marker = field.proposal.as_ref().map(|proposal| {
                let text = match &proposal.kind {
                    ProposalKind::Outlier { threshold } => format!("threshold {threshold}"),
                    ProposalKind::Subset { keep, .. } => format!("subset keeps {keep}"),
                };
                (proposal.kind.kept_in_main(), text)
            });
            field.histogram().write_svg_chart(
                &mut out,
                f64::from(CHART_HEIGHT) * (field_idx + 1) as f64,
                &format!("{}.{}: array lengths", self.collection, field.path),
                "array length",
                marker.as_ref().map(|(value, text)| (*value, text.as_str())),
            );
        }
        out.push_str("</svg>\n");
        out
    }
}

/// What the advisor learnt about the array at one path.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldReport {
    /// The dotted path of the array (`reviews`, `stats.history`); arrays nested inside arrays
    /// are not paths of their own.
    pub path: String,
    /// The array lengths, one sample per document that holds an array at `path` (documents
    /// without it, or with a non-array there, are not counted).
    pub lengths: ValueCounts,
    /// The summary of `lengths`.
    pub distribution: Distribution,
    /// How many of the elements are sub-documents.
    pub document_elements: u64,
    /// A field of the elements that orders them in time, when one was recognised.
    pub time_field: Option<TimeField>,
    /// The documents with the longest arrays here, longest first (at most `top_k`).
    pub largest: Vec<ArrayOutlier>,
    /// The proposed policy, if any.
    pub proposal: Option<Proposal>,
    /// Why no policy is proposed (set exactly when `proposal` is `None`).
    pub no_proposal: Option<String>,
}

impl FieldReport {
    /// The number of documents that hold an array at this path.
    pub fn documents(&self) -> u64 {
        self.lengths.len()
    }

    /// All elements of this array, across documents.
    pub fn total_elements(&self) -> u64 {
        self.lengths.sum()
    }

    /// The lengths in log-scale buckets.
    pub fn histogram(&self) -> Histogram {
        Histogram::log2(&self.lengths)
    }

    /// What keeping only `kept_in_main` elements per main document would move: useful to
    /// weigh another threshold than the proposed one.
    pub fn moved_by(&self, kept_in_main: u64) -> Moved {
        let elements = self.lengths.excess_above(kept_in_main);
        Moved {
            elements,
            documents: self.lengths.count_above(kept_in_main),
            share: share(elements, self.total_elements()),
        }
    }

    /// The outlier documents: of [`FieldReport::largest`], those whose array exceeds what the
    /// proposal keeps in the main document. Empty without a proposal. The exact number of
    /// such documents is the proposal's `documents_affected`; this list stops at `top_k`.
    pub fn outliers(&self) -> impl Iterator<Item = &ArrayOutlier> {
        let cut = self
            .proposal
            .as_ref()
            .map_or(u64::MAX, |proposal| proposal.kind.kept_in_main());
        self.largest
            .iter()
            .filter(move |outlier| outlier.length > cut)
    }
}

/// The effect of one cut-off on one field.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moved {
    /// Elements that would leave the main documents.
    pub elements: u64,
    /// Documents that would lose elements.
    pub documents: u64,
    /// `elements` as a fraction of all elements of the field (0.0 to 1.0).
    pub share: f64,
}

/// A field of the array elements that orders them in time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeField {
    /// The field's name inside each element.
    pub field: String,
    /// What kind of values made it look like a time.
    pub evidence: SortKeyEvidence,
    /// How many elements hold such a value there.
    pub elements: u64,
}

/// One document, as the advisor remembers it.
#[derive(Debug, Clone, PartialEq)]
pub struct DocumentRef {
    /// Its `_id`, `None` when it has none.
    pub id: Option<Bson>,
    /// Its 0-based position in the order documents were observed.
    pub position: u64,
    /// Its size in BSON bytes.
    pub size: u64,
}

impl DocumentRef {
    /// The `_id` in mongosh syntax, or `#position` when the document has no `_id`.
    pub fn label(&self) -> String {
        match &self.id {
            Some(id) => to_shell_string(id),
            None => format!("#{}", self.position),
        }
    }
}

/// A document with a long array.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayOutlier {
    /// The document.
    pub document: DocumentRef,
    /// The length of its array at the field.
    pub length: u64,
}

/// A proposed policy for one array field, as plain data for the policy engine to turn into
/// its own pattern declaration.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// The collection.
    pub collection: String,
    /// The dotted path of the array.
    pub field: String,
    /// Which pattern, with its parameters.
    pub kind: ProposalKind,
    /// Elements that would leave the main documents (beyond the threshold, or beyond the
    /// subset).
    pub elements_moved: u64,
    /// All elements of the field, across documents.
    pub total_elements: u64,
    /// `elements_moved / total_elements` (0.0 to 1.0).
    pub share_moved: f64,
    /// Documents that would lose elements from their main document.
    pub documents_affected: u64,
    /// Documents that hold the array.
    pub documents_with_field: u64,
    /// Why this pattern and these parameters, in plain English.
    pub reason: String,
}

impl Proposal {
    /// The policy this proposal describes, with the defaults for everything it does not
    /// decide (side collection and link field names). Apply it with `Database::set_pattern`.
    pub fn to_pattern(&self) -> spillway_pattern::Pattern {
        let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        match &self.kind {
            ProposalKind::Outlier { threshold } => {
                spillway_pattern::Pattern::outlier(&self.collection, &self.field)
                    .threshold(to_usize(*threshold))
                    .into()
            }
            ProposalKind::Subset { keep, sort_by } => {
                spillway_pattern::Pattern::subset(&self.collection, &self.field)
                    .keep(to_usize(*keep))
                    .sort_by(sort_by.to_document())
                    .into()
            }
        }
    }

    /// `"outlier, threshold 300"`, `"subset of 10 newest by published_date"`.
    pub fn summary(&self) -> String {
        match &self.kind {
            ProposalKind::Outlier { threshold } => format!("outlier, threshold {threshold}"),
            ProposalKind::Subset { keep, sort_by } => {
                let order = match sort_by.direction {
                    SortDirection::Descending => "newest",
                    SortDirection::Ascending => "oldest",
                };
                format!("subset of {keep} {order} by {}", sort_by.field)
            }
        }
    }
}

/// Which pattern a proposal applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProposalKind {
    /// Keep the first `threshold` elements in the main document, spill the rest.
    Outlier {
        /// The most elements a main document keeps.
        threshold: u64,
    },
    /// Keep the top `keep` elements by `sort_by` in the main document, every element in the
    /// archive collection.
    Subset {
        /// How many elements the main document keeps.
        keep: u64,
        /// The order that picks them.
        sort_by: SortKey,
    },
}

impl ProposalKind {
    /// How many elements a main document keeps at most.
    pub fn kept_in_main(&self) -> u64 {
        match self {
            ProposalKind::Outlier { threshold } => *threshold,
            ProposalKind::Subset { keep, .. } => *keep,
        }
    }
}

/// A sort order over one field of the array elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortKey {
    /// The field inside each element (a top-level field of the element sub-document).
    pub field: String,
    /// Which end of the order the subset keeps first.
    pub direction: SortDirection,
}

impl SortKey {
    /// The MongoDB sort specification, e.g. `{ published_date: -1 }`.
    pub fn to_document(&self) -> Document {
        doc! { self.field.clone(): self.direction.as_i32() }
    }
}

/// A sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortDirection {
    /// Smallest (oldest) first: `1`.
    Ascending,
    /// Largest (newest) first: `-1`.
    Descending,
}

impl SortDirection {
    /// `1` or `-1`, as in a MongoDB sort specification.
    pub fn as_i32(self) -> i32 {
        match self {
            SortDirection::Ascending => 1,
            SortDirection::Descending => -1,
        }
    }
}

impl fmt::Display for AdviceReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "collection {}: {} {}, {} array {}",
            self.collection,
            group_digits(self.documents),
            plural(self.documents, "document", "documents"),
            self.fields.len(),
            plural(self.fields.len() as u64, "field", "fields"),
        )?;
        if let Some(sizes) = self.size_distribution() {
            writeln!(f)?;
            writeln!(
                f,
                "document sizes (BSON bytes): min {}  median {}  p90 {}  p99 {}  max {}  total {}",
                group_digits(sizes.min),
                group_digits(sizes.median),
                group_digits(sizes.p90),
                group_digits(sizes.p99),
                group_digits(sizes.max),
                group_digits(sizes.sum)
            )?;
            let mut table = Table::new(&["largest documents", "bytes"], false);
            for document in &self.largest_documents {
                table.row(vec![document.label(), group_digits(document.size)]);
            }
            write!(f, "{}", table.render("  "))?;
        }
        if self.fields.is_empty() {
            return Ok(());
        }
        writeln!(f)?;
        writeln!(f, "array lengths (nearest-rank percentiles):")?;
        let mut table = Table::new(
            &[
                "field",
                "documents",
                "elements",
                "min",
                "median",
                "p90",
                "p99",
                "max",
                "proposal",
            ],
            true,
        );
        for field in &self.fields {
            let lengths = &field.distribution;
            let proposal = field.proposal.as_ref().map_or("-".to_owned(), |proposal| {
                format!(
                    "{} ({} moved)",
                    proposal.summary(),
                    format_share(proposal.share_moved)
                )
            });
            table.row(vec![
                field.path.clone(),
                group_digits(field.documents()),
                group_digits(field.total_elements()),
                group_digits(lengths.min),
                group_digits(lengths.median),
                group_digits(lengths.p90),
                group_digits(lengths.p99),
                group_digits(lengths.max),
                proposal,
            ]);
        }
        write!(f, "{}", table.render("  "))?;
        for field in &self.fields {
            writeln!(f)?;
            write_field(f, field)?;
        }
        if self.untracked_arrays > 0 {
            writeln!(f)?;
            writeln!(
                f,
                "{} arrays at further paths were not analysed (too many distinct paths)",
                group_digits(self.untracked_arrays)
            )?;
        }
        Ok(())
    }
}

fn write_field(f: &mut fmt::Formatter<'_>, field: &FieldReport) -> fmt::Result {
    writeln!(f, "{}: documents per array length", field.path)?;
    for line in field.histogram().render(40).lines() {
        writeln!(f, "  {line}")?;
    }
    if let Some(time_field) = &field.time_field {
        writeln!(
            f,
            "  time field: {} ({} in {} of {} elements)",
            time_field.field,
            time_field.evidence.describe(),
            group_digits(time_field.elements),
            group_digits(field.total_elements())
        )?;
    }
    let Some(proposal) = &field.proposal else {
        let why = field.no_proposal.as_deref().unwrap_or("no reason recorded");
        return writeln!(f, "  no proposal: {why}");
    };
    let what = match &proposal.kind {
        ProposalKind::Outlier { threshold } => format!(
            "Outlier pattern, threshold {threshold}: main documents keep their first {threshold} elements"
        ),
        ProposalKind::Subset { keep, sort_by } => format!(
            "Subset pattern: main documents keep the {keep} top elements by {}",
            to_shell_string(&Bson::Document(sort_by.to_document()))
        ),
    };
    writeln!(f, "  proposal: {what}")?;
    writeln!(
        f,
        "  moves {} of {} elements ({}) out of {} of {} documents",
        group_digits(proposal.elements_moved),
        group_digits(proposal.total_elements),
        format_share(proposal.share_moved),
        group_digits(proposal.documents_affected),
        group_digits(proposal.documents_with_field)
    )?;
    writeln!(f, "  why: {}", proposal.reason)?;
    let mut table = Table::new(&["outlier documents", "length", "bytes"], false);
    for outlier in field.outliers() {
        table.row(vec![
            outlier.document.label(),
            group_digits(outlier.length),
            group_digits(outlier.document.size),
        ]);
    }
    if !table.rows.is_empty() {
        write!(f, "{}", table.render("  "))?;
        let listed = table.rows.len() as u64;
        if proposal.documents_affected > listed {
            writeln!(
                f,
                "  ... and {} more",
                group_digits(proposal.documents_affected - listed)
            )?;
        }
    }
    Ok(())
}

fn plural<'a>(count: u64, one: &'a str, many: &'a str) -> &'a str {
    if count == 1 { one } else { many }
}

/// A text table: the first column left-aligned, numbers right-aligned, a last text column
/// left-aligned.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
    last_is_text: bool,
}

impl Table {
    fn new(header: &[&str], last_is_text: bool) -> Table {
        Table {
            header: header.iter().map(|&title| title.to_owned()).collect(),
            rows: Vec::new(),
            last_is_text,
        }
    }

    fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    fn render(&self, indent: &str) -> String {
        let n_columns = self.header.len();
        let widths: Vec<usize> = (0..n_columns)
            .map(|column_idx| {
                std::iter::once(&self.header)
                    .chain(&self.rows)
                    .map(|row| row.get(column_idx).map_or(0, |cell| cell.chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for row in std::iter::once(&self.header).chain(&self.rows) {
            let mut line = String::from(indent);
            for (column_idx, cell) in row.iter().enumerate() {
                let width = widths[column_idx];
                let left_aligned =
                    column_idx == 0 || (self.last_is_text && column_idx == n_columns - 1);
                if column_idx > 0 {
                    line.push_str("  ");
                }
                if left_aligned {
                    let _ = write!(line, "{cell:<width$}");
                } else {
                    let _ = write!(line, "{cell:>width$}");
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        out
    }
}
