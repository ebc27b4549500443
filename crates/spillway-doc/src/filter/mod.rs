//! MongoDB's query language: a filter document parsed once into a typed [`Filter`], then
//! evaluated on raw BSON documents straight from storage.
//!
//! [`Filter::parse`] checks everything that can be checked without a document (unknown
//! operators, operand types, regular expressions, paths) and converts every operand to the
//! form evaluation needs, so that [`Filter::matches`] never allocates a decoded document and
//! never fails on a well-formed one. The parsed shape is public and stable enough for the
//! query planner to read: a [`Filter`] is an implicit AND of [`Clause`]s, and a field clause
//! pairs one [`FieldPath`] with one [`Predicate`] (`{a: {$gt: 1, $lt: 5}}` is two clauses on
//! `a`).
//!
//! The semantics are MongoDB's, array traversal included: `{"reviews.author": "ann"}`
//! looks inside every document of the `reviews` array, `{tags: "x"}` matches an array that
//! contains `"x"` as well as the string itself, `{a: null}` matches a missing `a`, and
//! comparisons only match values of the operand's type bracket (`{$gt: 5}` never matches a
//! string). The private `eval` module documents the traversal rules in detail. Where
//! Spillway differs (regular expressions use the `regex` crate, not PCRE; `null` no longer
//! matches the deprecated `undefined`, as in MongoDB 8) the item says so.
//!
//! ```
//! use bson::{RawDocumentBuf, doc};
//! use spillway_doc::filter::Filter;
//!
//! let filter = Filter::parse(&doc! { "reviews.stars": { "$gte": 4 } })?;
//! let stored = RawDocumentBuf::try_from(&doc! { "reviews": [{ "stars": 2 }, { "stars": 5 }] })?;
//! assert!(filter.matches(&stored)?);
//! // The element that matched, for a positional update or projection (`reviews.$`).
//! assert_eq!(filter.match_details(&stored)?.and_then(|details| details.array_index), Some(1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! This module must never decode a whole stored document to evaluate a filter, and never
//! mutate one: updates and projections build on it, not the other way round.
//!
//! Submodules, bottom first: `predicate` (the parsed shape) → `schema` (`$jsonSchema`,
//! parsed and matched on its own) → `eval` (which also gives
//! [`Predicate`], [`ElemMatch`] and [`geospatial::NearQuery`](crate::geospatial::NearQuery)
//! their methods that walk values), `parse` → `element`. Regular expressions come from the
//! crate's `regex_matcher`, which aggregation expressions share.

mod element;
mod eval;
mod parse;
mod predicate;
mod schema;

use std::sync::Arc;

use bson::{Bson, Document, RawDocument, RawDocumentBuf};

pub use element::ElementMatcher;
pub(crate) use parse::whole_number;
pub use predicate::{ElemMatch, InList, Operand, Predicate, TypeSet};
pub use schema::JsonSchema;

pub use crate::regex_matcher::{BACKTRACK_LIMIT, RegexMatch, RegexMatcher};

use crate::collation::Collation;
use crate::error::Result;
use crate::expr::{Dependencies, Expression, Variables};
use crate::geospatial::NearQuery;
use crate::javascript::WhereFunction;
use crate::path::FieldPath;
use crate::text::{BoundSearch, TextIndex, TextSearch};

/// A parsed filter: the implicit AND of its clauses. The empty filter matches every document.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Filter {
    /// The conditions a document must all satisfy, in the order they were written
    /// (`$comment` is dropped).
    pub clauses: Vec<Clause>,
    /// How strings compare in this filter's equalities, ranges and `$in` lists (not in
    /// `$regex`, which MongoDB never collates). Set on the whole filter with
    /// [`Filter::collated`]; nested filters (`$and`, `$elemMatch`...) follow the outermost.
    collation: Collation,
}

/// One condition of a [`Filter`].
#[derive(Debug, Clone, PartialEq)]
pub enum Clause {
    /// A predicate on the values a dotted path reaches (array traversal included).
    Field {
        /// The dotted path as written, e.g. `reviews.author`.
        path: FieldPath,
        /// What the values at `path` must satisfy.
        predicate: Predicate,
    },
    /// `$and`: every filter matches.
    And(Vec<Filter>),
    /// `$or`: at least one filter matches.
    Or(Vec<Filter>),
    /// `$nor`: no filter matches.
    Nor(Vec<Filter>),
    /// `$expr`: an aggregation expression, true for a match (MongoDB's truthiness).
    Expr(Box<Expression>),
    /// `$text`: a text search, answered once bound to the collection's text index
    /// ([`Filter::bind_text`]); only at the top level or in a top-level `$and`, once.
    Text(Box<TextSearch>),
    /// `$where`: JavaScript called with the document as `this`, true for a match.
    Where(Box<WhereFunction>),
    /// `$jsonSchema`: the document satisfies a JSON Schema ([`JsonSchema`]). Only on the whole
    /// document: refused inside `$elemMatch`.
    JsonSchema(Box<JsonSchema>),
}

/// What a successful match found out about the document, for the positional `$` operator of
/// updates and projections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MatchDetails {
    /// The index, in the outermost array a matching predicate traversed, of the element that
    /// satisfied it (MongoDB's "elemMatchKey"). When several ANDed predicates traverse arrays,
    /// the last one evaluated wins, as in MongoDB; `$or` and `$nor` branches and negations
    /// record nothing. `None` when the match did not go through an array element (a whole
    /// array compared equal, or no array at all).
    pub array_index: Option<usize>,
}

impl Filter {
    /// Parses a filter document such as `{ "reviews.author": "ann", qty: { $gt: 5 } }`.
    pub fn parse(filter: &Document) -> Result<Filter> {
        parse::parse_top_filter(filter, &[])
    }

    /// Parses a filter whose `$expr` clauses may read the user variables `names` (a
    /// pipeline's `let`); evaluate it with [`Filter::matches_with`].
    pub fn parse_in(filter: &Document, names: &[String]) -> Result<Filter> {
        parse::parse_top_filter(filter, names)
    }

    /// [`Filter::matches`] with the values of the variables `$expr` clauses read.
    pub fn matches_with(&self, document: &RawDocument, variables: &Variables) -> Result<bool> {
        Ok(eval::eval_filter(self, document, Some(variables), &self.collation)?.is_some())
    }

    /// This filter with strings compared under `collation` (MongoDB's `collation` option):
    /// under `{ locale: "en", strength: 2 }`, `{ name: "ANN" }` matches `"ann"`.
    #[must_use]
    pub fn collated(mut self, collation: &Collation) -> Filter {
        self.collation = collation.clone();
        self
    }

    /// A filter of other `clauses` (parts of this one, say) that compares strings as this
    /// one does.
    pub fn with_clauses(&self, clauses: Vec<Clause>) -> Filter {
        Filter {
            clauses,
            collation: self.collation.clone(),
        }
    }

    /// How this filter compares strings.
    pub fn collation(&self) -> &Collation {
        &self.collation
    }

    /// Adds the fields the filter reads to `found`.
    pub fn dependencies(&self, found: &mut Dependencies) {
        for clause in &self.clauses {
            match clause {
                Clause::Field { path, .. } => found.paths.push(path.as_str().to_string()),
                Clause::And(filters) | Clause::Or(filters) | Clause::Nor(filters) => {
                    for filter in filters {
                        filter.dependencies(found);
                    }
                }
                Clause::Expr(expression) => expression.dependencies(found),
                Clause::Text(_) | Clause::Where(_) | Clause::JsonSchema(_) => {
                    found.whole_document = true;
                }
            }
        }
    }

    /// Whether a document that matches stays matched when elements are added to the arrays
    /// at the paths for which `grows` holds: every clause on such a path asks for an element
    /// (or the array itself by type) that stays there. Equalities and comparisons with an
    /// array operand (which compare the whole array), `$size`, and every negation (`$ne`,
    /// `$nin`, `$not`, `$nor`, `$exists: false`) do not; nor does `$expr`.
    pub fn holds_as_arrays_grow(&self, grows: &dyn Fn(&str) -> bool) -> bool {
        self.clauses.iter().all(|clause| match clause {
            Clause::Field { path, predicate } => {
                !grows(path.as_str()) || predicate::holds_as_arrays_grow(predicate)
            }
            Clause::And(filters) | Clause::Or(filters) => filters
                .iter()
                .all(|filter| filter.holds_as_arrays_grow(grows)),
            Clause::Nor(filters) => {
                let mut found = Dependencies::default();
                for filter in filters {
                    filter.dependencies(&mut found);
                }
                !found.whole_document && !found.paths.iter().any(|path| grows(path))
            }
            // A schema may bound an array's length or its elements (`maxItems`, `items`).
            Clause::Expr(_) | Clause::Text(_) | Clause::Where(_) | Clause::JsonSchema(_) => false,
        })
    }

    /// The `$text` clause (top level or in a top-level `$and`), if any.
    pub fn text_search(&self) -> Option<&TextSearch> {
        self.clauses.iter().find_map(|clause| match clause {
            Clause::Text(search) => Some(&**search),
            Clause::And(filters) => filters.iter().find_map(Filter::text_search),
            _ => None,
        })
    }

    /// Binds the `$text` clause to the collection's text index, so that it can be evaluated
    /// and scored. Until then, evaluating it fails ("text index required").
    pub fn bind_text(&mut self, index: &Arc<TextIndex>) {
        for clause in &mut self.clauses {
            match clause {
                Clause::Text(search) => search.bind(Arc::clone(index)),
                Clause::And(filters) => {
                    for filter in filters {
                        filter.bind_text(index);
                    }
                }
                _ => {}
            }
        }
    }

    /// The bound `$text` search, which scores documents (`{ $meta: "textScore" }`).
    pub fn text_scorer(&self) -> Option<Arc<BoundSearch>> {
        self.text_search()
            .and_then(|search| search.bound().cloned())
    }

    /// The filter that matches every document (`{}`).
    pub fn match_all() -> Filter {
        Filter::default()
    }

    /// Whether this filter matches every document (it has no clause).
    pub fn is_match_all(&self) -> bool {
        self.clauses.is_empty()
    }

    /// Whether `document` satisfies the filter. Fails only on malformed BSON.
    pub fn matches(&self, document: &RawDocument) -> Result<bool> {
        Ok(eval::eval_filter(self, document, None, &self.collation)?.is_some())
    }

    /// Whether a decoded document satisfies the filter (it is encoded once, then evaluated
    /// as [`Filter::matches`] does, so that both give the same answer by construction).
    pub fn matches_document(&self, document: &Document) -> Result<bool> {
        let raw = RawDocumentBuf::try_from(document)?;
        self.matches(&raw)
    }

    /// Like [`Filter::matches`], and on a match also says which array element matched (for
    /// the positional `$` operator). `None` when the document does not match.
    pub fn match_details(&self, document: &RawDocument) -> Result<Option<MatchDetails>> {
        Ok(eval::eval_filter(self, document, None, &self.collation)?
            .map(|array_index| MatchDetails { array_index }))
    }

    /// [`Filter::match_details`] on a decoded document.
    pub fn match_details_document(&self, document: &Document) -> Result<Option<MatchDetails>> {
        let raw = RawDocumentBuf::try_from(document)?;
        self.match_details(&raw)
    }

    /// The field predicates every matching document must satisfy: the field clauses at the
    /// top level and inside top-level `$and`s (recursively). `$or`, `$nor` and negated
    /// predicates are not expanded. This is what a planner reads to find equality, `$in` and
    /// range predicates it can answer from an index.
    pub fn field_predicates(&self) -> impl Iterator<Item = (&FieldPath, &Predicate)> {
        let mut found = Vec::new();
        collect_field_predicates(self, &mut found);
        found.into_iter()
    }

    /// The `$near` or `$nearSphere` of this filter, with its path: results are to be ordered
    /// by [`NearQuery::distance_in`], nearest first. Parsing allows one, at the top level.
    pub fn near(&self) -> Option<(&FieldPath, &NearQuery)> {
        self.field_predicates()
            .find_map(|(path, predicate)| match predicate {
                Predicate::Near(near) => Some((path, near)),
                _ => None,
            })
    }

    /// Why `document` fails this filter's `$jsonSchema`, for a validator's `errInfo.details`
    /// ([`JsonSchema::explain_failure`]): the first `$jsonSchema` clause, at the top level or
    /// in a top-level `$and`, that refuses the document. `None` when there is none (the
    /// document matches, or fails on other clauses only).
    pub fn schema_failure(&self, document: &RawDocument) -> Result<Option<Document>> {
        for clause in &self.clauses {
            let found = match clause {
                Clause::JsonSchema(schema) => schema.explain_failure(document)?,
                Clause::And(filters) => {
                    let mut found = None;
                    for filter in filters {
                        found = filter.schema_failure(document)?;
                        if found.is_some() {
                            break;
                        }
                    }
                    found
                }
                _ => None,
            };
            if found.is_some() {
                return Ok(found);
            }
        }
        Ok(None)
    }

    /// The equality operand required on `path`, if some top-level ANDed clause pins it
    /// (`{a: 5}` or `{a: {$eq: 5}}`). A regular expression in implicit equality is not an
    /// equality (it is a [`Predicate::Regex`]).
    pub fn equality_on(&self, path: &str) -> Option<&Bson> {
        self.field_predicates()
            .find_map(|(field, predicate)| match predicate {
                Predicate::Eq(operand) if field.as_str() == path => Some(operand.value()),
                _ => None,
            })
    }
}

fn collect_field_predicates<'a>(
    filter: &'a Filter,
    found: &mut Vec<(&'a FieldPath, &'a Predicate)>,
) {
    for clause in &filter.clauses {
        match clause {
            Clause::Field { path, predicate } => found.push((path, predicate)),
            Clause::And(filters) => {
                for inner in filters {
                    collect_field_predicates(inner, found);
                }
            }
            Clause::Or(_)
            | Clause::Nor(_)
            | Clause::Expr(_)
            | Clause::Text(_)
            | Clause::Where(_)
            | Clause::JsonSchema(_) => {}
        }
    }
}
