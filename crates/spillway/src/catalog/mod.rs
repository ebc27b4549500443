//! The catalog: which collections exist, their indexes, and where each lives in the store.
//!
//! The catalog is persisted in the store's `catalog` keyspace and changes only inside a write
//! transaction, in the same batch as the documents and index entries it describes, so that
//! the catalog and the data can never disagree after a crash. Layout (values are BSON):
//!
//! | key | value |
//! |---|---|
//! | `meta` | `{ version: 1, next_id: <i64> }`: the format version and the next keyspace number |
//! | `coll:<name>` | `{ name, id, keyspace, indexes: [{ name, key, unique, keyspace, multikey, sparse?, partialFilterExpression?, hidden?, expireAfterSeconds?, echoed?, text?: { weights, default_language, language_override }, geo?: { min?, max?, bits? }, collation? }], validator?, validationLevel?, validationAction?, capped?: { size, max? }, echoed?, view?: { viewOn, pipeline }, timeseries?: { timeField, metaField?, granularity?, bucketMaxSpanSeconds, bucketRoundingSeconds, buckets, expireAfterSeconds? }, collation? }` |
//! | `pattern:<collection>\0<field>` | a pattern policy: `Pattern::to_document()` plus `progress: { state: "active" \| "applying" \| "removing", through: <last _id done> }` and `created_side: <bool>` (whether declaring it created the side collection) |
//!
//! The fields marked `?` are written only when set (a sparse, partial, hidden or TTL index;
//! a collection with a validator; a collation other than `simple`, as its resolved
//! document), so a database that uses none of them is byte for byte
//! what earlier builds wrote, and a record without them reads as a plain index or
//! collection: the format version stays 1.
//!
//! Keyspace names carry a number that is never reused (`docs.<id>.<collection>`,
//! `index.<id>.<collection>.<index>`), so a collection dropped and recreated in one
//! transaction gets fresh keyspaces. This module must never read or write documents.

use std::collections::BTreeMap;
use std::sync::Arc;

use bson::{Bson, Document, doc};
use spillway_doc::DocError;
use spillway_doc::collation::Collation;
use spillway_doc::filter::Filter;
use spillway_doc::path::{FieldPath, array_index};
use spillway_doc::sort::Direction;
use spillway_doc::text::{FTS_FIELD, FTSX_FIELD, Language, TEXT_INDEX_VERSION, TextIndex};
use spillway_pattern::{Pattern, Policy, Progress};
use spillway_store::{KeyspaceId, Snapshot, Store};

use crate::error::{Error, ErrorKind, Result};
pub(crate) mod geo;
pub(crate) mod timeseries;
pub(crate) mod view;

use self::geo::GeoIndex;
use self::timeseries::Timeseries;
use self::view::ViewDefinition;

/// The store keyspace holding the catalog.
pub(crate) const CATALOG_KEYSPACE: &str = "catalog";
/// Prefix of documents keyspaces.
pub(crate) const DOCS_KEYSPACE_PREFIX: &str = "docs.";
/// Prefix of index keyspaces.
pub(crate) const INDEX_KEYSPACE_PREFIX: &str = "index.";
/// Catalog key of the metadata record.
pub(crate) const META_KEY: &[u8] = b"meta";
/// Catalog key prefix of collection records.
pub(crate) const COLLECTION_KEY_PREFIX: &str = "coll:";
/// Catalog key prefix of pattern policies.
pub(crate) const PATTERN_KEY_PREFIX: &str = "pattern:";
/// The catalog format this code writes and reads.
pub(crate) const CATALOG_VERSION: i32 = 1;
/// Longest accepted collection name, in bytes: MongoDB's limit on a namespace
/// (`database.collection`, which is what a server stores a collection as) since 4.4.
pub const MAX_COLLECTION_NAME_LEN: usize = 255;
/// Longest accepted index name, in bytes.
pub const MAX_INDEX_NAME_LEN: usize = 120;
/// The name of the implicit unique index on `_id`.
pub(crate) const ID_INDEX_NAME: &str = "_id_";

/// Every collection, by name, and every pattern policy.
#[derive(Debug, Clone, Default)]
pub(crate) struct Catalog {
    pub(crate) collections: BTreeMap<String, CollectionMeta>,
    pub(crate) next_id: u64,
    /// Pattern policies, in the order they were declared.
    pub(crate) policies: Vec<Policy>,
}

/// One collection: its documents keyspace and its secondary indexes.
#[derive(Debug, Clone)]
pub(crate) struct CollectionMeta {
    pub(crate) name: String,
    pub(crate) id: u64,
    pub(crate) keyspace_name: String,
    pub(crate) docs: KeyspaceId,
    pub(crate) indexes: Vec<IndexMeta>,
    /// The document validator and how it applies (none by default).
    pub(crate) validation: Validation,
    /// A capped collection's limits (`None`: not capped).
    pub(crate) capped: Option<CappedLimits>,
    /// Creation options that describe what every Spillway collection already is or that
    /// only matter to refused features, kept to be listed as given: `clusteredIndex`
    /// (documents are stored by `_id`), `changeStreamPreAndPostImages`.
    pub(crate) echoed: Document,
    /// A read-only view's definition (`None`: a collection); its documents keyspace stays
    /// empty.
    pub(crate) view: Option<ViewDefinition>,
    /// A time series collection's layout (`None`: not one); its documents keyspace stays
    /// empty, its measurements are in the buckets collection the layout names.
    pub(crate) timeseries: Option<Timeseries>,
    /// The default collation (`create`'s `collation`): what an operation that gives none,
    /// and an index created without one, compare strings by.
    pub(crate) collation: Collation,
}

/// The limits of a capped collection: past either, inserts remove the oldest documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CappedLimits {
    /// The most document bytes (BSON sizes summed).
    pub(crate) size: u64,
    /// The most documents.
    pub(crate) max: Option<u64>,
}

/// How strictly a collection's validator applies to writes (MongoDB's `validationLevel`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ValidationLevel {
    /// Every insert and update is checked (the default).
    #[default]
    Strict,
    /// Inserts are checked, and updates of documents that were valid before the update.
    Moderate,
    /// Nothing is checked.
    Off,
}

/// What happens to a write that fails validation (MongoDB's `validationAction`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ValidationAction {
    /// The write is refused with `DocumentValidationFailure` (code 121), the default.
    #[default]
    Error,
    /// The write goes through (MongoDB logs the failure; the embedded facade has no log).
    Warn,
}

impl ValidationLevel {
    /// MongoDB's spelling: `strict`, `moderate`, `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            ValidationLevel::Strict => "strict",
            ValidationLevel::Moderate => "moderate",
            ValidationLevel::Off => "off",
        }
    }

    /// Parses MongoDB's spelling.
    pub fn parse(text: &str) -> Option<ValidationLevel> {
        match text {
            "strict" => Some(ValidationLevel::Strict),
            "moderate" => Some(ValidationLevel::Moderate),
            "off" => Some(ValidationLevel::Off),
            _ => None,
        }
    }
}

impl ValidationAction {
    /// MongoDB's spelling: `error`, `warn`.
    pub fn as_str(self) -> &'static str {
        match self {
            ValidationAction::Error => "error",
            ValidationAction::Warn => "warn",
        }
    }

    /// Parses MongoDB's spelling.
    pub fn parse(text: &str) -> Option<ValidationAction> {
        match text {
            "error" => Some(ValidationAction::Error),
            "warn" => Some(ValidationAction::Warn),
            _ => None,
        }
    }
}

/// A collection's validator: a query-language filter every written document must match.
#[derive(Debug, Clone, Default)]
pub(crate) struct Validation {
    /// The validator as given and parsed; `None`: no validation.
    pub(crate) validator: Option<ParsedFilter>,
    pub(crate) level: ValidationLevel,
    pub(crate) action: ValidationAction,
    /// Whether the level and action were given (listCollections shows them then).
    pub(crate) explicit: bool,
}

/// What [`ParsedFilter::parse`] calls a partial index's filter.
pub(crate) const PARTIAL_FILTER: &str = "partialFilterExpression";

/// What [`ParsedFilter::parse`] calls a collection's validator.
pub(crate) const VALIDATOR: &str = "validator";

/// The first operator of `filter` that a validator may not use: `$where`, `$text`, and the
/// distance operators `$near`, `$nearSphere`, `$geoNear`, wherever the query language puts
/// them (top-level clauses, `$and`/`$or`/`$nor`, field operators, `$not`, `$elemMatch`).
/// `$expr` and `$jsonSchema` are allowed, as in MongoDB.
fn operator_refused_in_validator(filter: &Document) -> Option<&'static str> {
    const REFUSED: &[&str] = &["$where", "$text", "$near", "$nearSphere", "$geoNear"];
    fn in_value(value: &Bson) -> Option<&'static str> {
        match value {
            Bson::Document(document) => operator_refused_in_validator(document),
            Bson::Array(clauses) => clauses.iter().find_map(in_value),
            _ => None,
        }
    }
    filter.iter().find_map(|(key, value)| {
        if let Some(refused) = REFUSED.iter().find(|refused| **refused == key) {
            return Some(*refused);
        }
        match key.as_str() {
            "$expr" | "$jsonSchema" | "$eq" | "$ne" | "$in" | "$nin" | "$all" => None,
            _ => in_value(value),
        }
    })
}

/// A filter kept as given (for listings and the catalog record) and parsed (for matching).
#[derive(Debug, Clone)]
pub(crate) struct ParsedFilter {
    pub(crate) spec: Document,
    pub(crate) filter: Arc<Filter>,
}

impl PartialEq for ParsedFilter {
    fn eq(&self, other: &ParsedFilter) -> bool {
        self.spec == other.spec
    }
}

impl ParsedFilter {
    /// Parses a new validator (`create`, `collMod`): [`ParsedFilter::parse`], refusing the
    /// operators MongoDB parses a validator without (JavaScript, text search and distance
    /// need an engine or an index a write does not have), with its BadValue (2). A
    /// validator read back from the catalog is parsed as it was accepted.
    pub(crate) fn parse_validator(collection: &str, spec: &Document) -> Result<ParsedFilter> {
        if let Some(operator) = operator_refused_in_validator(spec) {
            return Err(Error::invalid_options(
                collection,
                format!("{VALIDATOR}: {operator} is not allowed in this context"),
            )
            .with_code(2));
        }
        ParsedFilter::parse(collection, VALIDATOR, spec)
    }

    /// Parses `spec`; `what` names it in the error (`partialFilterExpression`, `validator`).
    /// A validator may be a `$jsonSchema` (a schema that does not parse is refused with its
    /// own code, 9 or 14 or 2, as MongoDB does); a partial index's filter may not, as in
    /// MongoDB.
    pub(crate) fn parse(collection: &str, what: &str, spec: &Document) -> Result<ParsedFilter> {
        if what == PARTIAL_FILTER && spec.contains_key("$jsonSchema") {
            return Err(Error::invalid_options(
                collection,
                format!("{what}: $jsonSchema is not supported in a partial index"),
            ));
        }
        let filter = Filter::parse(spec).map_err(|error| {
            let code = match &error {
                DocError::InvalidSchema { code, .. } => Some(*code),
                _ => None,
            };
            let refused = Error::invalid_options(collection, format!("{what}: {error}"));
            if let Some(code) = code {
                refused.with_code(code)
            } else {
                refused
            }
        })?;
        Ok(ParsedFilter {
            spec: spec.clone(),
            filter: Arc::new(filter),
        })
    }
}

impl ParsedFilter {
    /// Why `document` fails this validator, as MongoDB 5+ words a
    /// `DocumentValidationFailure`'s `errInfo.details`: a `$jsonSchema` gives
    /// `{ operatorName: "$jsonSchema", schemaRulesNotSatisfied: [...] }`; a query-operator
    /// clause `{ operatorName, specifiedAs, reason, consideredValue }`; several top-level
    /// clauses (an implicit `$and`) or an `$and`/`$or`/`$nor` give
    /// `{ operatorName: "$and", clausesNotSatisfied: [{ index, details }] }`. `None` when
    /// the document matches.
    pub(crate) fn explain_failure(&self, document: &Document) -> Result<Option<Document>> {
        let raw = bson::RawDocumentBuf::try_from(document)
            .map_err(|error| Error::filter(error.into()))?;
        explain_clauses(&self.spec, document, &raw)
    }
}

/// The failing details of `filter`'s top-level clauses on `document`; one clause's details
/// alone, several under `$and`.
fn explain_clauses(
    filter: &Document,
    document: &Document,
    raw: &bson::RawDocument,
) -> Result<Option<Document>> {
    let mut failed = Vec::new();
    for (index, (key, value)) in filter.iter().enumerate() {
        if let Some(details) = explain_clause(key, value, document, raw)? {
            failed.push((index, details));
        }
    }
    Ok(match failed.len() {
        0 => None,
        1 if filter.len() == 1 => failed.pop().map(|(_, details)| details),
        _ => Some(not_satisfied("$and", failed)),
    })
}

/// `{ operatorName, clausesNotSatisfied: [{ index, details }] }`.
fn not_satisfied(operator: &str, failed: Vec<(usize, Document)>) -> Document {
    let clauses: Vec<Bson> = failed
        .into_iter()
        .map(|(index, details)| {
            Bson::Document(
                doc! { "index": i64::try_from(index).unwrap_or(i64::MAX), "details": details },
            )
        })
        .collect();
    doc! { "operatorName": operator, "clausesNotSatisfied": clauses }
}

/// Whether the one-clause filter `{ key: value }` matches `raw`.
fn clause_matches(key: &str, value: &Bson, raw: &bson::RawDocument) -> Result<bool> {
    let mut clause = Document::new();
    clause.insert(key, value.clone());
    Filter::parse(&clause)
        .and_then(|filter| filter.matches(raw))
        .map_err(Error::filter)
}

/// The details of one top-level (or `$and`/`$or`/`$nor`-nested) clause that fails, `None`
/// when it matches.
fn explain_clause(
    key: &str,
    value: &Bson,
    document: &Document,
    raw: &bson::RawDocument,
) -> Result<Option<Document>> {
    if clause_matches(key, value, raw)? {
        return Ok(None);
    }
    let specified_as = || {
        let mut specified = Document::new();
        specified.insert(key, value.clone());
        specified
    };
    let details = match (key, value) {
        ("$jsonSchema", _) => {
            let filter = Filter::parse(&specified_as()).map_err(Error::filter)?;
            filter.schema_failure(raw).map_err(Error::filter)?
        }
        ("$and" | "$or" | "$nor", Bson::Array(clauses)) => {
            let mut failed = Vec::new();
            for (index, clause) in clauses.iter().enumerate() {
                let Bson::Document(clause) = clause else {
                    continue;
                };
                // `$nor` fails on the clauses that match.
                let details = if key == "$nor" {
                    let filter = Filter::parse(clause).map_err(Error::filter)?;
                    if filter.matches(raw).map_err(Error::filter)? {
                        Some(
                            doc! { "operatorName": "$nor", "reason": "clause matched", "specifiedAs": clause.clone() },
                        )
                    } else {
                        None
                    }
                } else {
                    explain_clauses(clause, document, raw)?
                };
                if let Some(details) = details {
                    failed.push((index, details));
                }
            }
            Some(not_satisfied(key, failed))
        }
        ("$expr", _) => Some(doc! {
            "operatorName": "$expr",
            "specifiedAs": specified_as(),
            "reason": "expression did not match",
            "expressionResult": false,
        }),
        (field, Bson::Document(operators))
            if operators
                .keys()
                .next()
                .is_some_and(|first| first.starts_with('$')) =>
        {
            let mut failed = Vec::new();
            for (index, (operator, operand)) in operators.iter().enumerate() {
                let mut one = Document::new();
                one.insert(operator, operand.clone());
                let one = Bson::Document(one);
                if !clause_matches(field, &one, raw)? {
                    failed.push((index, field_failure(field, operator, &one, document)));
                }
            }
            match failed.len() {
                1 => failed.pop().map(|(_, details)| details),
                // Each operator of `{ a: { $gte: 0, $lt: 9 } }` is its own clause in MongoDB's
                // explanation; none failing alone means they fail together (`$elemMatch`-like
                // array cases), said of the whole clause.
                0 => Some(field_failure(field, "$and", value, document)),
                _ => Some(not_satisfied("$and", failed)),
            }
        }
        // An implicit equality is specified as written: `{ a: 1 }`.
        (field, _) => Some(field_failure(field, "$eq", value, document)),
    };
    Ok(Some(details.unwrap_or_else(|| {
        doc! { "operatorName": key, "specifiedAs": specified_as(), "reason": "did not match" }
    })))
}

/// The details of field operator `operator` failing on `field` of `document`; `operand` is
/// what the validator gives the field (`{ $op: value }`, or the value of an equality).
fn field_failure(field: &str, operator: &str, operand: &Bson, document: &Document) -> Document {
    let mut specified = Document::new();
    specified.insert(field, operand.clone());
    let considered = FieldPath::parse(field)
        .ok()
        .and_then(|path| spillway_doc::path::get(document, &path).cloned());
    let mut details = doc! { "operatorName": operator, "specifiedAs": specified };
    let reason = match (operator, &considered) {
        ("$exists", None) => "path does not exist",
        ("$exists", Some(_)) => "path does exist",
        (_, None) if operator != "$ne" && operator != "$nin" && operator != "$not" => {
            "field was missing"
        }
        ("$type", _) => "type did not match",
        ("$regex", _) => "regular expression did not match",
        ("$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte" | "$in" | "$nin", _) => {
            "comparison failed"
        }
        _ => "did not match",
    };
    details.insert("reason", reason);
    if let Some(value) = considered
        && operator != "$exists"
    {
        let type_name = spillway_doc::expr::type_name(Some(&value));
        details.insert("consideredValue", value);
        if operator == "$type" {
            details.insert("consideredType", type_name);
        }
    }
    details
}

/// The options of a secondary index beyond its keys and uniqueness.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct IndexSettings {
    /// Documents that have none of the indexed fields get no entry.
    pub(crate) sparse: bool,
    /// Only documents matching this filter get entries.
    pub(crate) partial: Option<ParsedFilter>,
    /// Kept up to date but never chosen by the planner.
    pub(crate) hidden: bool,
    /// TTL: documents whose indexed date is older than this many seconds are deleted.
    pub(crate) expire_after_seconds: Option<i64>,
    /// Options accepted for compatibility, without effect, echoed by `list_indexes` as given
    /// (`background`).
    pub(crate) echoed: Document,
    /// A text index: its weights and languages. Its key pattern is MongoDB's
    /// `{ _fts: "text", _ftsx: 1 }`, with no B-tree field: entries are terms
    /// (the `index_keys` module).
    pub(crate) text: Option<Arc<TextIndex>>,
    /// The geospatial field of a `2d` or `2dsphere` index, with its options.
    pub(crate) geo: Option<GeoIndex>,
    /// The collation the index orders strings by (its entries hold collation keys); `None`
    /// in a new index's settings: the collection's default collation.
    pub(crate) collation: Option<Collation>,
}

impl IndexSettings {
    /// The collation of an index's entries (simple unless one was given or inherited).
    pub(crate) fn collation(&self) -> &Collation {
        const SIMPLE: &Collation = &Collation::simple();
        self.collation.as_ref().unwrap_or(SIMPLE)
    }
}

/// One secondary index.
#[derive(Debug, Clone)]
pub(crate) struct IndexMeta {
    pub(crate) name: String,
    /// The key pattern as given (`{ a: 1, "b.c": -1 }`).
    pub(crate) spec: Document,
    pub(crate) fields: Vec<(FieldPath, Direction)>,
    pub(crate) unique: bool,
    pub(crate) keyspace_name: String,
    pub(crate) keyspace: KeyspaceId,
    /// Set once any document gave this index more than one entry or an array; never cleared
    /// (as in MongoDB). A multikey index cannot provide a sort order nor intersect ranges.
    pub(crate) multikey: bool,
    /// The position in `fields` of the hashed field (`{ a: "hashed" }`): its entries hold
    /// a hash of the value (the `index_keys` module), which answers equality only.
    pub(crate) hashed: Option<usize>,
    pub(crate) settings: IndexSettings,
}

/// The prefix of the collections holding time series buckets (`system.buckets.<name>`), the
/// one `system.` name a user's collection may have, as in MongoDB.
pub(crate) const BUCKETS_PREFIX: &str = "system.buckets.";

/// Checks a collection name against the rules MongoDB applies (and a length limit).
pub(crate) fn validate_collection_name(name: &str) -> Result<()> {
    let reason = if name.is_empty() {
        Some("a collection name cannot be empty")
    } else if name.len() > MAX_COLLECTION_NAME_LEN {
        Some("a collection name is at most 255 bytes")
    } else if name.contains('$') {
        Some("a collection name cannot contain '$'")
    } else if name.contains('\0') {
        Some("a collection name cannot contain the NUL character")
    } else if name.starts_with("system.") && !name.starts_with(BUCKETS_PREFIX) {
        Some("names starting with 'system.' are reserved")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(Error::new(ErrorKind::InvalidCollectionName {
            name: name.to_string(),
            reason,
        })),
        None => Ok(()),
    }
}

/// The key pattern value of a hashed field.
pub(crate) const HASHED: &str = "hashed";

/// The position of the hashed field of a key pattern (`{ a: "hashed" }`), if any.
pub(crate) fn hashed_field(keys: &Document) -> Option<usize> {
    keys.values()
        .position(|value| value.as_str() == Some(HASHED))
}

/// Parses an index key pattern into its fields; every value must be a number above zero
/// (ascending) or below it (descending), as MongoDB reads `{ x: 11 }` as `{ x: 1 }`, but for
/// one field at most that may be `"hashed"` (listed as ascending: [`hashed_field`] says which).
/// The pattern itself is kept as given, so `listIndexes` shows `{ x: 11 }` back.
pub(crate) fn parse_index_keys(
    collection: &str,
    keys: &Document,
) -> Result<Vec<(FieldPath, Direction)>> {
    if keys.is_empty() {
        return Err(Error::invalid_index(
            collection,
            "the key pattern has no field",
        ));
    }
    let mut fields: Vec<(FieldPath, Direction)> = Vec::with_capacity(keys.len());
    for (field, value) in keys {
        let path = FieldPath::parse(field).map_err(|error| {
            Error::invalid_index(collection, format!("field '{field}': {error}"))
        })?;
        if let Some(part) = path
            .parts()
            .iter()
            .find(|part| part.starts_with('$') || array_index(part).is_some())
        {
            return Err(Error::invalid_index(
                collection,
                format!(
                    "field '{field}': component '{part}' is not supported in an index key (no '$' names, no array positions)"
                ),
            ));
        }
        let direction = match value {
            // Checked as a whole by `GeoIndex::from_spec`.
            geo if geo::is_geo_kind(geo) => Direction::Ascending,
            Bson::String(kind) if kind == HASHED => {
                if keys
                    .values()
                    .filter(|value| value.as_str() == Some(HASHED))
                    .count()
                    > 1
                {
                    return Err(Error::invalid_index(
                        collection,
                        "a key pattern may have only one hashed field",
                    ));
                }
                Direction::Ascending
            }
            _ => index_direction(value).ok_or_else(|| {
                Error::invalid_index(
                    collection,
                    format!(
                        "field '{field}': the direction must be a number above zero (ascending) or below it (descending), \"hashed\", \"2d\" or \"2dsphere\", not {value} (text indexes are not supported)"
                    ),
                )
            })?,
        };
        if fields
            .iter()
            .any(|(known, _)| known.as_str() == path.as_str())
        {
            return Err(Error::invalid_index(
                collection,
                format!("field '{field}' appears twice in the key pattern"),
            ));
        }
        fields.push((path, direction));
    }
    Ok(fields)
}

/// The direction of an index key value: MongoDB takes any number above zero as ascending and
/// any below it as descending; zero, NaN and values of other types are none.
fn index_direction(value: &Bson) -> Option<Direction> {
    let sign = match value {
        Bson::Int32(number) => number.cmp(&0),
        Bson::Int64(number) => number.cmp(&0),
        Bson::Double(number) => number.partial_cmp(&0.0)?,
        Bson::Decimal128(number) => number.to_string().parse::<f64>().ok()?.partial_cmp(&0.0)?,
        _ => return None,
    };
    match sign {
        std::cmp::Ordering::Greater => Some(Direction::Ascending),
        std::cmp::Ordering::Less => Some(Direction::Descending),
        std::cmp::Ordering::Equal => None,
    }
}

/// The key pattern value of a text field.
pub(crate) const TEXT: &str = "text";

/// Whether a key pattern asks for a text index (`{ title: "text" }`).
pub(crate) fn is_text_keys(keys: &Document) -> bool {
    keys.values().any(|value| value.as_str() == Some(TEXT))
}

/// The key pattern MongoDB lists for every text index.
pub(crate) fn text_key_pattern() -> Document {
    doc! { FTS_FIELD: TEXT, FTSX_FIELD: 1 }
}

/// The text index that a key pattern of text fields and the options describe: every field
/// of `keys` weighs 1 unless `weights` says otherwise (`weights` may add fields, or `$**`).
pub(crate) fn text_index(
    collection: &str,
    keys: &Document,
    weights: Option<&Document>,
    default_language: Option<&str>,
    language_override: Option<&str>,
    version: Option<i32>,
) -> Result<TextIndex> {
    let bad = |message: String| Error::invalid_index(collection, message);
    if let Some((field, _)) = keys.iter().find(|(_, value)| value.as_str() != Some(TEXT)) {
        return Err(bad(format!(
            "field '{field}': compound text indexes are not supported by Spillway (every field of a text index must be \"text\")"
        )));
    }
    let mut listed: Vec<(String, i32)> = Vec::new();
    for field in keys.keys() {
        if field != "$**" {
            FieldPath::parse(field).map_err(|error| bad(format!("field '{field}': {error}")))?;
        }
        listed.push((field.clone(), 1));
    }
    for (field, weight) in weights.into_iter().flatten() {
        let weight = match weight {
            Bson::Int32(weight) => i64::from(*weight),
            Bson::Int64(weight) => *weight,
            Bson::Double(weight) if weight.fract() == 0.0 => *weight as i64,
            other => {
                return Err(bad(format!(
                    "weights: the weight of '{field}' must be a whole number, not {other}"
                )));
            }
        };
        if !(1..100_000).contains(&weight) {
            return Err(bad(format!(
                "weights: the weight of '{field}' must be in 1..99999, not {weight}"
            )));
        }
        match listed.iter_mut().find(|(known, _)| known == field) {
            Some(entry) => entry.1 = weight as i32,
            None => listed.push((field.clone(), weight as i32)),
        }
    }
    listed.sort_by(|a, b| a.0.cmp(&b.0));
    let default_language = match default_language {
        None => Language::English,
        Some(name) => Language::parse(name).ok_or_else(|| {
            bad(format!(
                "default_language: unsupported language \"{name}\" (Spillway's text indexes know \"english\" and \"none\")"
            ))
            .with_code(17262)
        })?,
    };
    if let Some(version) = version.filter(|version| *version != TEXT_INDEX_VERSION) {
        return Err(bad(format!(
            "textIndexVersion {version} is not supported (Spillway builds version {TEXT_INDEX_VERSION})"
        ))
        .with_code(17364));
    }
    Ok(TextIndex {
        weights: listed,
        default_language,
        language_override: language_override.unwrap_or("language").to_string(),
    })
}

/// MongoDB's default index name: `a_1_b_-1`, `a_hashed`, `title_text`.
pub(crate) fn default_index_name(keys: &Document) -> String {
    let mut name = String::new();
    for (field, value) in keys {
        if !name.is_empty() {
            name.push('_');
        }
        let direction = match Direction::from_bson(value) {
            Some(Direction::Descending) => "-1",
            _ if value.as_str() == Some(HASHED) => HASHED,
            _ if value.as_str() == Some(TEXT) => TEXT,
            _ if geo::is_geo_kind(value) => value.as_str().unwrap_or_default(),
            _ => "1",
        };
        name.push_str(field);
        name.push('_');
        name.push_str(direction);
    }
    name
}

impl Catalog {
    /// Reads the catalog from a snapshot, resolving keyspace names to ids.
    pub(crate) fn load(store: &Store, snapshot: &Snapshot) -> Result<Catalog> {
        let mut catalog = Catalog {
            collections: BTreeMap::new(),
            next_id: 1,
            policies: Vec::new(),
        };
        let Some(keyspace) = snapshot.keyspace(CATALOG_KEYSPACE) else {
            return Ok(catalog);
        };
        for entry in snapshot.iter(keyspace)? {
            let (key, value) = entry?;
            let record = decode_record(key, value)?;
            if key == META_KEY {
                let version = record.get_i32("version").unwrap_or(0);
                if version != CATALOG_VERSION {
                    return Err(Error::corruption(format!(
                        "catalog format version {version} is not supported (this build reads version {CATALOG_VERSION})"
                    )));
                }
                catalog.next_id = record
                    .get_i64("next_id")
                    .map_err(|_| Error::corruption("catalog meta record has no next_id"))?
                    as u64;
            } else if key.starts_with(COLLECTION_KEY_PREFIX.as_bytes()) {
                let meta = CollectionMeta::from_record(store, &record)?;
                catalog.collections.insert(meta.name.clone(), meta);
            } else if key.starts_with(PATTERN_KEY_PREFIX.as_bytes()) {
                catalog.policies.push(policy_from_record(&record)?);
            } else {
                return Err(Error::corruption(format!(
                    "unexpected catalog key {:?}",
                    String::from_utf8_lossy(key)
                )));
            }
        }
        Ok(catalog)
    }

    /// Every keyspace name the catalog refers to.
    pub(crate) fn referenced_keyspaces(&self) -> Vec<&str> {
        let mut names = Vec::new();
        for collection in self.collections.values() {
            names.push(collection.keyspace_name.as_str());
            for index in &collection.indexes {
                names.push(index.keyspace_name.as_str());
            }
        }
        names
    }

    /// Whether `collection` has pattern policies (it is their main collection).
    pub(crate) fn has_policies(&self, collection: &str) -> bool {
        self.policies
            .iter()
            .any(|policy| policy.pattern.collection() == collection)
    }

    pub(crate) fn meta_record(&self) -> Document {
        doc! { "version": CATALOG_VERSION, "next_id": self.next_id as i64 }
    }
}

impl CollectionMeta {
    pub(crate) fn catalog_key(name: &str) -> Vec<u8> {
        format!("{COLLECTION_KEY_PREFIX}{name}").into_bytes()
    }

    pub(crate) fn to_record(&self) -> Document {
        let indexes: Vec<Bson> = self
            .indexes
            .iter()
            .map(|index| {
                let mut record = doc! {
                    "name": &index.name,
                    "key": index.spec.clone(),
                    "unique": index.unique,
                    "keyspace": &index.keyspace_name,
                    "multikey": index.multikey,
                };
                let settings = &index.settings;
                if settings.sparse {
                    record.insert("sparse", true);
                }
                if let Some(partial) = &settings.partial {
                    record.insert("partialFilterExpression", partial.spec.clone());
                }
                if settings.hidden {
                    record.insert("hidden", true);
                }
                if let Some(seconds) = settings.expire_after_seconds {
                    record.insert("expireAfterSeconds", seconds);
                }
                if !settings.echoed.is_empty() {
                    record.insert("echoed", settings.echoed.clone());
                }
                if let Some(text) = &settings.text {
                    let mut weights = Document::new();
                    for (field, weight) in &text.weights {
                        weights.insert(field.clone(), *weight);
                    }
                    record.insert(
                        "text",
                        doc! {
                            "weights": weights,
                            "default_language": text.default_language.name(),
                            "language_override": &text.language_override,
                        },
                    );
                }
                if let Some(geo) = settings.geo.as_ref().and_then(GeoIndex::to_record) {
                    record.insert("geo", geo);
                }
                if !settings.collation().is_simple() {
                    record.insert("collation", settings.collation().to_document());
                }
                Bson::Document(record)
            })
            .collect();
        let mut record = doc! {
            "name": &self.name,
            "id": self.id as i64,
            "keyspace": &self.keyspace_name,
            "indexes": indexes,
        };
        if let Some(validator) = &self.validation.validator {
            record.insert("validator", validator.spec.clone());
        }
        if self.validation.explicit {
            record.insert("validationLevel", self.validation.level.as_str());
            record.insert("validationAction", self.validation.action.as_str());
        }
        if let Some(capped) = self.capped {
            let mut limits = doc! { "size": i64::try_from(capped.size).unwrap_or(i64::MAX) };
            if let Some(max) = capped.max {
                limits.insert("max", i64::try_from(max).unwrap_or(i64::MAX));
            }
            record.insert("capped", limits);
        }
        if !self.echoed.is_empty() {
            record.insert("echoed", self.echoed.clone());
        }
        if let Some(view) = &self.view {
            record.insert("view", view.to_record());
        }
        if let Some(timeseries) = &self.timeseries {
            record.insert("timeseries", timeseries.to_record());
        }
        if !self.collation.is_simple() {
            record.insert("collation", self.collation.to_document());
        }
        record
    }

    fn from_record(store: &Store, record: &Document) -> Result<CollectionMeta> {
        let bad = |what: &str| Error::corruption(format!("catalog record {record}: {what}"));
        let name = record
            .get_str("name")
            .map_err(|_| bad("no name"))?
            .to_string();
        let keyspace_name = record
            .get_str("keyspace")
            .map_err(|_| bad("no keyspace"))?
            .to_string();
        let docs = resolve_keyspace(store, &keyspace_name)?;
        let mut indexes = Vec::new();
        for index in record.get_array("indexes").map_err(|_| bad("no indexes"))? {
            let Bson::Document(index) = index else {
                return Err(bad("an index is not a document"));
            };
            let spec = index
                .get_document("key")
                .map_err(|_| bad("an index has no key"))?
                .clone();
            let keyspace_name = index
                .get_str("keyspace")
                .map_err(|_| bad("an index has no keyspace"))?
                .to_string();
            let partial = match index.get("partialFilterExpression") {
                Some(Bson::Document(spec)) => Some(
                    ParsedFilter::parse(&name, "partialFilterExpression", spec)
                        .map_err(|error| bad(&error.to_string()))?,
                ),
                Some(_) => return Err(bad("an index's partialFilterExpression is not a document")),
                None => None,
            };
            let text = match index.get_document("text") {
                Ok(text) => {
                    let mut keys = Document::new();
                    for field in text.get_document("weights").into_iter().flatten() {
                        keys.insert(field.0.clone(), TEXT);
                    }
                    Some(Arc::new(
                        text_index(
                            &name,
                            &keys,
                            text.get_document("weights").ok(),
                            text.get_str("default_language").ok(),
                            text.get_str("language_override").ok(),
                            None,
                        )
                        .map_err(|error| bad(&error.to_string()))?,
                    ))
                }
                Err(_) => None,
            };
            let settings = IndexSettings {
                sparse: index.get_bool("sparse").unwrap_or(false),
                partial,
                hidden: index.get_bool("hidden").unwrap_or(false),
                expire_after_seconds: index.get_i64("expireAfterSeconds").ok(),
                echoed: index.get_document("echoed").cloned().unwrap_or_default(),
                text,
                geo: GeoIndex::from_record(&name, &spec, index.get_document("geo").ok())
                    .map_err(|error| bad(&error.to_string()))?,
                collation: Some(
                    Collation::parse_option(index.get_document("collation").ok())
                        .map_err(|error| bad(&error.to_string()))?,
                ),
            };
            let fields = if settings.text.is_some() {
                Vec::new()
            } else {
                parse_index_keys(&name, &spec).map_err(|error| bad(&error.to_string()))?
            };
            indexes.push(IndexMeta {
                settings,
                hashed: hashed_field(&spec),
                name: index
                    .get_str("name")
                    .map_err(|_| bad("an index has no name"))?
                    .to_string(),
                fields,
                spec,
                unique: index.get_bool("unique").unwrap_or(false),
                keyspace: resolve_keyspace(store, &keyspace_name)?,
                keyspace_name,
                multikey: index.get_bool("multikey").unwrap_or(false),
            });
        }
        let validator = match record.get("validator") {
            Some(Bson::Document(spec)) => Some(
                ParsedFilter::parse(&name, VALIDATOR, spec)
                    .map_err(|error| bad(&error.to_string()))?,
            ),
            Some(_) => return Err(bad("the validator is not a document")),
            None => None,
        };
        let level = record.get_str("validationLevel").ok();
        let action = record.get_str("validationAction").ok();
        let validation = Validation {
            validator,
            level: level.and_then(ValidationLevel::parse).unwrap_or_default(),
            action: action.and_then(ValidationAction::parse).unwrap_or_default(),
            explicit: level.is_some() || action.is_some(),
        };
        let capped = match record.get("capped") {
            Some(Bson::Document(limits)) => Some(CappedLimits {
                size: limits
                    .get_i64("size")
                    .map_err(|_| bad("a capped collection has no size"))?
                    .unsigned_abs(),
                max: limits.get_i64("max").ok().map(i64::unsigned_abs),
            }),
            Some(_) => return Err(bad("capped is not a document")),
            None => None,
        };
        let view = match record.get("view") {
            Some(Bson::Document(view)) => Some(
                ViewDefinition::from_record(view)
                    .ok_or_else(|| bad("a view has no viewOn or pipeline"))?,
            ),
            Some(_) => return Err(bad("view is not a document")),
            None => None,
        };
        let timeseries = match record.get("timeseries") {
            Some(Bson::Document(layout)) => Some(
                Timeseries::from_record(layout)
                    .ok_or_else(|| bad("a time series has no timeField, span or buckets"))?,
            ),
            Some(_) => return Err(bad("timeseries is not a document")),
            None => None,
        };
        let collation = Collation::parse_option(record.get_document("collation").ok())
            .map_err(|error| bad(&error.to_string()))?;
        Ok(CollectionMeta {
            view,
            timeseries,
            collation,
            echoed: record.get_document("echoed").cloned().unwrap_or_default(),
            capped,
            validation,
            id: record.get_i64("id").map_err(|_| bad("no id"))? as u64,
            name,
            keyspace_name,
            docs,
            indexes,
        })
    }
}

/// The catalog key of a policy.
pub(crate) fn policy_key(pattern: &Pattern) -> Vec<u8> {
    format!(
        "{PATTERN_KEY_PREFIX}{}\0{}",
        pattern.collection(),
        pattern.field()
    )
    .into_bytes()
}

/// The catalog record of a policy: its declaration and its migration progress.
pub(crate) fn policy_record(policy: &Policy) -> Document {
    let mut record = policy.pattern.to_document();
    let (state, through) = match &policy.progress {
        Progress::Active => ("active", None),
        Progress::Applying { through } => ("applying", through.clone()),
        Progress::Removing { through } => ("removing", through.clone()),
    };
    record.insert(
        "progress",
        doc! { "state": state, "through": through.unwrap_or(Bson::Null) },
    );
    record.insert("created_side", policy.created_side);
    record
}

pub(crate) fn policy_from_record(record: &Document) -> Result<Policy> {
    let pattern = Pattern::from_document(record)
        .map_err(|error| Error::corruption(format!("catalog: {error}")))?;
    let progress = record.get_document("progress").map_err(|_| {
        Error::corruption(format!("catalog policy record {record} has no progress"))
    })?;
    let through = match progress.get("through") {
        None | Some(Bson::Null) => None,
        Some(id) => Some(id.clone()),
    };
    let progress = match progress.get_str("state") {
        Ok("active") => Progress::Active,
        Ok("applying") => Progress::Applying { through },
        Ok("removing") => Progress::Removing { through },
        _ => {
            return Err(Error::corruption(format!(
                "catalog policy record {record} has an unknown progress state"
            )));
        }
    };
    // Records written before `created_side` existed say nothing: treat the side collection
    // as adopted, so that removing the policy never drops it.
    let created_side = record.get_bool("created_side").unwrap_or(false);
    Ok(Policy {
        pattern,
        progress,
        created_side,
    })
}

fn resolve_keyspace(store: &Store, name: &str) -> Result<KeyspaceId> {
    store.keyspace_id(name).ok_or_else(|| {
        Error::corruption(format!(
            "the catalog refers to keyspace '{name}', which does not exist in the store"
        ))
    })
}

fn decode_record(key: &[u8], value: &[u8]) -> Result<Document> {
    Document::from_reader(value).map_err(|error| {
        Error::corruption(format!(
            "catalog record {:?} is not a BSON document: {error}",
            String::from_utf8_lossy(key)
        ))
    })
}
