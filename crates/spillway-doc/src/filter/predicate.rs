//! The typed predicates of a parsed filter and their operands, converted at parse time to
//! the form evaluation needs (raw BSON values, compiled regular expressions).
//!
//! Nothing here walks documents; the evaluator does. Constructors validate what MongoDB
//! validates, so that a predicate built by hand (say, by a query rewriter) is as sound as a
//! parsed one.

use bson::spec::ElementType;
use bson::{Bson, RawBson, RawBsonRef};

use super::Filter;
use crate::error::{DocError, Result};
use crate::geospatial::{GeoRegion, NearQuery};
use crate::regex_matcher::RegexMatcher;

/// A condition on the values one field path reaches.
///
/// Positive predicates are satisfied when *any* value the path reaches satisfies them
/// (array elements, the array itself, or "missing"); the negations `$ne`, `$nin` and `$not`
/// are the negation of the positive predicate over all of them (`{a: {$ne: 5}}` does not
/// match `{a: [5, 6]}`).
#[derive(Debug, Clone, PartialEq)]
pub enum Predicate {
    /// Equality (`{a: v}`, `$eq`): MongoDB's value equality (`1 == 1.0`, embedded documents
    /// field by field in order). `null` also matches a missing field.
    Eq(Operand),
    /// `$ne`: no value the path reaches equals the operand.
    Ne(Operand),
    /// `$gt`, within the operand's canonical type bracket.
    Gt(Operand),
    /// `$gte`, within the operand's canonical type bracket.
    Gte(Operand),
    /// `$lt`, within the operand's canonical type bracket.
    Lt(Operand),
    /// `$lte`, within the operand's canonical type bracket.
    Lte(Operand),
    /// `$in`: equal to one of the values, or matched by one of the regular expressions.
    In(InList),
    /// `$nin`: the negation of `$in`.
    Nin(InList),
    /// `$exists`: whether the path reaches any value (`true`) or none (`false`).
    Exists(bool),
    /// `$type`: a value of one of the types.
    Type(TypeSet),
    /// `$size`: an array with exactly this many elements.
    Size(usize),
    /// `$all`: every predicate (equalities, regular expressions or `$elemMatch`es) holds.
    /// An empty list matches nothing.
    All(Vec<Predicate>),
    /// `$elemMatch`: an array with one element satisfying every condition.
    ElemMatch(ElemMatch),
    /// A regular expression (`{a: /x/}`, `$regex`): a string (or symbol) it matches, or a
    /// stored regular expression with the same pattern and options.
    Regex(RegexMatcher),
    /// `$mod: [divisor, remainder]`: a number whose integer part has that remainder.
    Mod {
        /// The divisor, never zero.
        divisor: i64,
        /// The expected remainder (sign as in C and Rust: it follows the dividend).
        remainder: i64,
    },
    /// `$not`: the conjunction of these predicates does not hold.
    Not(Vec<Predicate>),
    /// `$geoWithin` (and its old name `$within`): a location (GeoJSON object or legacy
    /// pair) within the region ([`crate::geospatial`] says how each shape is tested).
    GeoWithin(GeoRegion),
    /// `$geoIntersects`: a location with a point in common with the GeoJSON region.
    GeoIntersects(GeoRegion),
    /// `$near` and `$nearSphere`: a location within `$minDistance` and `$maxDistance` of the
    /// point. As a filter it only bounds distances; ordering results by distance is the
    /// caller's ([`Filter::near`](super::Filter::near)). Allowed once, at the top level.
    Near(NearQuery),
}

impl Predicate {
    /// The operator as MongoDB spells it (`$eq` for implicit equality, `$regex` for a regular
    /// expression), for messages and explain output.
    pub fn operator(&self) -> &'static str {
        match self {
            Predicate::Eq(_) => "$eq",
            Predicate::Ne(_) => "$ne",
            Predicate::Gt(_) => "$gt",
            Predicate::Gte(_) => "$gte",
            Predicate::Lt(_) => "$lt",
            Predicate::Lte(_) => "$lte",
            Predicate::In(_) => "$in",
            Predicate::Nin(_) => "$nin",
            Predicate::Exists(_) => "$exists",
            Predicate::Type(_) => "$type",
            Predicate::Size(_) => "$size",
            Predicate::All(_) => "$all",
            Predicate::ElemMatch(_) => "$elemMatch",
            Predicate::Regex(_) => "$regex",
            Predicate::Mod { .. } => "$mod",
            Predicate::Not(_) => "$not",
            Predicate::GeoWithin(_) => "$geoWithin",
            Predicate::GeoIntersects(_) => "$geoIntersects",
            Predicate::Near(near) => near.operator(),
        }
    }
}

/// A comparison operand, kept both decoded (for planners and messages) and raw (for
/// evaluation on raw documents).
#[derive(Debug, Clone, PartialEq)]
pub struct Operand {
    value: Bson,
    raw: RawBson,
}

impl Operand {
    /// Wraps a value. Fails for `undefined`, which MongoDB refuses to compare to.
    pub fn new(value: Bson) -> Result<Operand> {
        if matches!(value, Bson::Undefined) {
            return Err(DocError::filter("", "cannot compare to undefined"));
        }
        let raw = RawBson::try_from(value.clone())?;
        Ok(Operand { value, raw })
    }

    /// The operand as a decoded value.
    pub fn value(&self) -> &Bson {
        &self.value
    }

    /// The operand as a raw value.
    pub fn raw(&self) -> RawBsonRef<'_> {
        self.raw.as_raw_bson_ref()
    }

    /// Whether the operand is `null` (which also matches missing fields).
    pub fn is_null(&self) -> bool {
        matches!(self.value, Bson::Null)
    }
}

/// The operand of `$in` and `$nin`: values compared for equality and regular expressions.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InList {
    /// The values, in the order written.
    pub values: Vec<Operand>,
    /// The regular expressions, in the order written.
    pub regexes: Vec<RegexMatcher>,
}

impl InList {
    /// Whether the list contains `null` (so that it matches a missing field).
    pub fn contains_null(&self) -> bool {
        self.values.iter().any(Operand::is_null)
    }
}

/// The operand of `$type`: a set of BSON types, `"number"` standing for all four numeric
/// types.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TypeSet {
    /// Whether every numeric type (double, int, long, decimal) is in the set.
    pub all_numbers: bool,
    /// The individual types in the set.
    pub types: Vec<ElementType>,
}

impl TypeSet {
    /// Whether a value of type `element_type` is in the set.
    pub fn contains(&self, element_type: ElementType) -> bool {
        let is_number = matches!(
            element_type,
            ElementType::Double | ElementType::Int32 | ElementType::Int64 | ElementType::Decimal128
        );
        (self.all_numbers && is_number) || self.types.contains(&element_type)
    }
}

/// The operand of `$elemMatch`.
#[derive(Debug, Clone, PartialEq)]
pub enum ElemMatch {
    /// `{$elemMatch: {$gte: 80, $lt: 85}}`: an element satisfies every predicate, each
    /// applied to the element itself (no further array traversal).
    Value(Vec<Predicate>),
    /// `{$elemMatch: {author: "ann", stars: 5}}`: an element that is a document (or an
    /// array, seen as a document with keys `0`, `1`...) matches the filter.
    Document(Box<Filter>),
}

/// Whether `predicate` stays true of an array when elements are added to it
/// ([`Filter::holds_as_arrays_grow`](super::Filter::holds_as_arrays_grow)).
pub(crate) fn holds_as_arrays_grow(predicate: &Predicate) -> bool {
    let scalar = |value: &Bson| !matches!(value, Bson::Array(_));
    match predicate {
        Predicate::Eq(operand)
        | Predicate::Gt(operand)
        | Predicate::Gte(operand)
        | Predicate::Lt(operand)
        | Predicate::Lte(operand) => scalar(operand.value()),
        Predicate::In(list) => list.values.iter().all(|value| scalar(value.value())),
        Predicate::Exists(exists) => *exists,
        Predicate::Type(_)
        | Predicate::ElemMatch(_)
        | Predicate::Regex(_)
        | Predicate::Mod { .. }
        | Predicate::GeoWithin(_)
        | Predicate::GeoIntersects(_)
        | Predicate::Near(_) => true,
        Predicate::All(predicates) => predicates.iter().all(holds_as_arrays_grow),
        Predicate::Ne(_) | Predicate::Nin(_) | Predicate::Size(_) | Predicate::Not(_) => false,
    }
}

/// The BSON type a `$type` or `bsonType` alias names (`"int"`, `"objectId"`...); `"number"`,
/// which names four types, is the caller's.
pub(super) fn type_alias(alias: &str) -> Option<ElementType> {
    Some(match alias {
        "double" => ElementType::Double,
        "string" => ElementType::String,
        "object" => ElementType::EmbeddedDocument,
        "array" => ElementType::Array,
        "binData" => ElementType::Binary,
        "undefined" => ElementType::Undefined,
        "objectId" => ElementType::ObjectId,
        "bool" => ElementType::Boolean,
        "date" => ElementType::DateTime,
        "null" => ElementType::Null,
        "regex" => ElementType::RegularExpression,
        "dbPointer" => ElementType::DbPointer,
        "javascript" => ElementType::JavaScriptCode,
        "symbol" => ElementType::Symbol,
        "javascriptWithScope" => ElementType::JavaScriptCodeWithScope,
        "int" => ElementType::Int32,
        "timestamp" => ElementType::Timestamp,
        "long" => ElementType::Int64,
        "decimal" => ElementType::Decimal128,
        "minKey" => ElementType::MinKey,
        "maxKey" => ElementType::MaxKey,
        _ => return None,
    })
}

/// MongoDB's alias of a BSON type, the inverse of [`type_alias`] (for messages).
pub(super) fn type_alias_name(element_type: ElementType) -> &'static str {
    match element_type {
        ElementType::Double => "double",
        ElementType::String => "string",
        ElementType::EmbeddedDocument => "object",
        ElementType::Array => "array",
        ElementType::Binary => "binData",
        ElementType::Undefined => "undefined",
        ElementType::ObjectId => "objectId",
        ElementType::Boolean => "bool",
        ElementType::DateTime => "date",
        ElementType::Null => "null",
        ElementType::RegularExpression => "regex",
        ElementType::DbPointer => "dbPointer",
        ElementType::JavaScriptCode => "javascript",
        ElementType::Symbol => "symbol",
        ElementType::JavaScriptCodeWithScope => "javascriptWithScope",
        ElementType::Int32 => "int",
        ElementType::Timestamp => "timestamp",
        ElementType::Int64 => "long",
        ElementType::Decimal128 => "decimal",
        ElementType::MinKey => "minKey",
        ElementType::MaxKey => "maxKey",
    }
}
