//! MongoDB's `$jsonSchema` query operator: JSON Schema draft 4 as MongoDB implements it, plus
//! `bsonType`, parsed once into a [`JsonSchema`] and matched on raw documents.
//!
//! The keywords are MongoDB's list: `type`, `bsonType`, `enum`, `required`, `properties`,
//! `patternProperties`, `additionalProperties`, `minProperties`, `maxProperties`,
//! `dependencies`, `items`, `additionalItems`, `minItems`, `maxItems`, `uniqueItems`,
//! `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `minLength`,
//! `maxLength`, `pattern`, `allOf`, `anyOf`, `oneOf`, `not`, and the annotations `title` and
//! `description` (checked to be strings, otherwise ignored). Any other keyword is refused
//! with MongoDB's codes: 9 (FailedToParse) for an unknown keyword or one MongoDB does not
//! support (`$ref`, `$schema`, `default`, `definitions`, `format`, `id`), 14 (TypeMismatch)
//! for a keyword's value of the wrong type, 9 or 2 (BadValue) for a wrong value, each message
//! naming the keyword and where it is in the schema.
//!
//! Semantics, as in MongoDB: a keyword applies only to values of its type (`minimum` lets a
//! string through, `properties` a number); numbers compare by value across int, long,
//! double and decimal; `required` asks for the field to be present (`null` counts);
//! `multipleOf` divides exactly, doubles first rounded to 15 significant digits as MongoDB
//! converts them to decimals (so `0.3` is a multiple of `0.1`); `enum` and `uniqueItems`
//! compare embedded documents regardless of field order; a schema applies to a value as it
//! is, with no array traversal (`{properties: {a: {bsonType: "int"}}}` refuses `a: [1]`).
//! `maxLength` and `minLength` count Unicode code points; `pattern` and
//! `patternProperties` search (not anchor) with the crate's regular expressions. The top
//! level is always a document, so a top-level `type` without `object` matches nothing.
//!
//! A refused document can be explained ([`JsonSchema::explain_failure`]) in the shape of
//! MongoDB's `errInfo.details` for validators: `{operatorName: "$jsonSchema",
//! schemaRulesNotSatisfied: [...]}`, each entry naming the keyword that failed.
//!
//! This module never decodes a whole document to match it (only the values `enum`,
//! `uniqueItems` and explanations compare or quote), and never looks at the filter parser:
//! it is a leaf the parser and the evaluator build on.

use std::cmp::Ordering;
use std::ops::ControlFlow;

use bson::spec::ElementType;
use bson::{Bson, Document, RawBson, RawBsonRef, RawDocument, doc};

use super::predicate::{TypeSet, type_alias, type_alias_name};
use crate::compare::{compare, compare_raw};
use crate::decode;
use crate::error::{DocError, Result};
use crate::number::{ExactDecimal, Number};
use crate::path::describe;
use crate::regex_matcher::RegexMatcher;

/// MongoDB's FailedToParse.
const FAILED_TO_PARSE: i32 = 9;
/// MongoDB's TypeMismatch.
const TYPE_MISMATCH: i32 = 14;
/// MongoDB's BadValue.
const BAD_VALUE: i32 = 2;

/// Every keyword MongoDB's `$jsonSchema` accepts.
const KEYWORDS: [&str; 29] = [
    "additionalItems",
    "additionalProperties",
    "allOf",
    "anyOf",
    "bsonType",
    "dependencies",
    "description",
    "enum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "items",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "not",
    "oneOf",
    "pattern",
    "patternProperties",
    "properties",
    "required",
    "title",
    "type",
    "uniqueItems",
];

/// JSON Schema keywords MongoDB refuses as "not currently supported".
const UNSUPPORTED_KEYWORDS: [&str; 6] =
    ["$ref", "$schema", "default", "definitions", "format", "id"];

/// MongoDB's client-side encryption keywords, which need an encrypting driver and a key
/// vault Spillway does not have.
const ENCRYPTION_KEYWORDS: [&str; 2] = ["encrypt", "encryptMetadata"];

/// A parsed `$jsonSchema`: what a document must satisfy.
#[derive(Debug, Clone)]
pub struct JsonSchema {
    root: Schema,
}

impl PartialEq for JsonSchema {
    fn eq(&self, other: &JsonSchema) -> bool {
        self.root.spec == other.root.spec
    }
}

impl JsonSchema {
    /// Parses the operand of `$jsonSchema`, which must be a document.
    pub fn parse(value: &Bson) -> Result<JsonSchema> {
        let Bson::Document(spec) = value else {
            return Err(invalid(
                TYPE_MISMATCH,
                format!("$jsonSchema must be an object, found {}", describe(value)),
            ));
        };
        Ok(JsonSchema {
            root: Schema::parse(spec, "")?,
        })
    }

    /// The schema as written.
    pub fn spec(&self) -> &Document {
        &self.root.spec
    }

    /// Whether `document` satisfies the schema. Fails only on malformed BSON.
    pub fn matches(&self, document: &RawDocument) -> Result<bool> {
        self.root.check(RawBsonRef::Document(document), None)
    }

    /// Why `document` does not satisfy the schema, in MongoDB's shape of a validator's
    /// `errInfo.details`: `{operatorName: "$jsonSchema", schemaRulesNotSatisfied: [...]}`,
    /// one entry per keyword that failed (nested for `properties`, `items`, `allOf`...).
    /// `None` when it does.
    pub fn explain_failure(&self, document: &RawDocument) -> Result<Option<Document>> {
        let mut failures = Vec::new();
        if self
            .root
            .check(RawBsonRef::Document(document), Some(&mut failures))?
        {
            return Ok(None);
        }
        Ok(Some(doc! {
            "operatorName": "$jsonSchema",
            "schemaRulesNotSatisfied": failures,
        }))
    }
}

fn invalid(code: i32, message: String) -> DocError {
    DocError::InvalidSchema { code, message }
}

/// One (sub)schema, parsed.
#[derive(Debug, Clone)]
struct Schema {
    /// As written: `specifiedAs` in explanations quotes it.
    spec: Document,
    /// `type` or `bsonType`, with the keyword used.
    types: Option<(&'static str, TypeSet)>,
    /// The `enum` values, canonical ([`canonical`]).
    enumeration: Option<Vec<Bson>>,
    minimum: Option<Bound>,
    maximum: Option<Bound>,
    /// The divisor of `multipleOf`, as exact decimal digits.
    multiple_of: Option<ExactDigits>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<RegexMatcher>,
    items: Option<Items>,
    additional_items: Option<Additional>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    unique_items: bool,
    required: Vec<String>,
    properties: Vec<(String, Schema)>,
    pattern_properties: Vec<(RegexMatcher, Schema)>,
    additional_properties: Option<Additional>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    dependencies: Vec<(String, Dependency)>,
    all_of: Vec<Schema>,
    any_of: Vec<Schema>,
    one_of: Vec<Schema>,
    not: Option<Box<Schema>>,
}

/// `minimum` or `maximum`, with its `exclusive...` flag.
#[derive(Debug, Clone)]
struct Bound {
    value: RawBson,
    exclusive: bool,
}

/// `items`: one schema for every element, or one per position.
#[derive(Debug, Clone)]
enum Items {
    Every(Box<Schema>),
    Positions(Vec<Schema>),
}

/// `additionalItems` and `additionalProperties`: allowed or not, or a schema.
#[derive(Debug, Clone)]
enum Additional {
    Allowed(bool),
    Schema(Box<Schema>),
}

/// One entry of `dependencies`: properties that must be present too, or a schema the whole
/// object must satisfy, when the named property is present.
#[derive(Debug, Clone)]
enum Dependency {
    Properties(Vec<String>),
    Schema(Box<Schema>),
}

/// Where a keyword sits in the schema, for messages: ` (in properties.age)`, or nothing at
/// the top level.
fn located(message: String, location: &str) -> String {
    if location.is_empty() {
        message
    } else {
        format!("{message} (in {location})")
    }
}

fn nested_location(location: &str, step: &str) -> String {
    if location.is_empty() {
        step.to_string()
    } else {
        format!("{location}.{step}")
    }
}

/// Records a failed keyword in `$outcome` (the explanation, a block, is only built when asked
/// for) and returns from the check when nobody asked.
macro_rules! fail {
    ($outcome:expr, $explanation:block) => {
        if $outcome.fail(|| Ok($explanation))?.is_break() {
            return Ok(Flow::Break(()));
        }
    };
}

impl Schema {
    fn parse(spec: &Document, location: &str) -> Result<Schema> {
        let error = |code: i32, message: String| invalid(code, located(message, location));
        for keyword in spec.keys() {
            let keyword = keyword.as_str();
            if UNSUPPORTED_KEYWORDS.contains(&keyword) {
                return Err(error(
                    FAILED_TO_PARSE,
                    format!("$jsonSchema keyword '{keyword}' is not currently supported"),
                ));
            }
            if ENCRYPTION_KEYWORDS.contains(&keyword) {
                return Err(error(
                    FAILED_TO_PARSE,
                    format!(
                        "$jsonSchema keyword '{keyword}' is not supported by Spillway (no client-side field level encryption)"
                    ),
                ));
            }
            if !KEYWORDS.contains(&keyword) {
                return Err(error(
                    FAILED_TO_PARSE,
                    format!("Unknown $jsonSchema keyword: {keyword}"),
                ));
            }
        }
        for annotation in ["description", "title"] {
            if let Some(value) = spec.get(annotation)
                && !matches!(value, Bson::String(_))
            {
                return Err(error(
                    TYPE_MISMATCH,
                    format!(
                        "$jsonSchema keyword '{annotation}' must be of type string, found {}",
                        describe(value)
                    ),
                ));
            }
        }
        let types = match (spec.get("type"), spec.get("bsonType")) {
            (Some(_), Some(_)) => {
                return Err(error(
                    FAILED_TO_PARSE,
                    "Cannot specify both $jsonSchema keywords 'type' and 'bsonType'".to_string(),
                ));
            }
            (Some(value), None) => Some((
                "type",
                parse_types("type", value, json_type_alias)
                    .map_err(|(code, message)| error(code, message))?,
            )),
            (None, Some(value)) => Some((
                "bsonType",
                parse_types("bsonType", value, bson_type_alias)
                    .map_err(|(code, message)| error(code, message))?,
            )),
            (None, None) => None,
        };
        let mut schema = Schema {
            spec: spec.clone(),
            types,
            enumeration: None,
            minimum: None,
            maximum: None,
            multiple_of: None,
            min_length: None,
            max_length: None,
            pattern: None,
            items: None,
            additional_items: None,
            min_items: None,
            max_items: None,
            unique_items: false,
            required: Vec::new(),
            properties: Vec::new(),
            pattern_properties: Vec::new(),
            additional_properties: None,
            min_properties: None,
            max_properties: None,
            dependencies: Vec::new(),
            all_of: Vec::new(),
            any_of: Vec::new(),
            one_of: Vec::new(),
            not: None,
        };
        schema.parse_scalar_keywords(spec, location)?;
        schema.parse_array_keywords(spec, location)?;
        schema.parse_object_keywords(spec, location)?;
        schema.parse_logic_keywords(spec, location)?;
        Ok(schema)
    }

    /// `pattern`, the lengths and counts, `multipleOf`, `minimum` and `maximum`.
    fn parse_scalar_keywords(&mut self, spec: &Document, location: &str) -> Result<()> {
        let error = |code: i32, message: String| invalid(code, located(message, location));
        let keyword_error = |(code, message): (i32, String)| error(code, message);
        if let Some(value) = spec.get("pattern") {
            let Bson::String(pattern) = value else {
                return Err(keyword_error(must_be("pattern", "a string", value)));
            };
            self.pattern = Some(compile(pattern).map_err(|message| {
                error(
                    BAD_VALUE,
                    format!("$jsonSchema keyword 'pattern': {message}"),
                )
            })?);
        }
        for (keyword, slot) in [
            ("maxLength", &mut self.max_length),
            ("minLength", &mut self.min_length),
            ("minItems", &mut self.min_items),
            ("maxItems", &mut self.max_items),
            ("minProperties", &mut self.min_properties),
            ("maxProperties", &mut self.max_properties),
        ] {
            if let Some(value) = spec.get(keyword) {
                *slot = Some(parse_count(keyword, value).map_err(keyword_error)?);
            }
        }
        if let Some(value) = spec.get("multipleOf") {
            if !is_number(value) {
                return Err(keyword_error(must_be("multipleOf", "a number", value)));
            }
            let divisor =
                digits_of(value).filter(|digits| !digits.digits.is_empty() && !digits.negative);
            let Some(divisor) = divisor else {
                return Err(error(
                    FAILED_TO_PARSE,
                    format!(
                        "$jsonSchema keyword 'multipleOf' must have a positive value, found {value}"
                    ),
                ));
            };
            self.multiple_of = Some(divisor);
        }
        self.maximum = parse_bound(spec, "maximum", "exclusiveMaximum").map_err(keyword_error)?;
        self.minimum = parse_bound(spec, "minimum", "exclusiveMinimum").map_err(keyword_error)?;
        Ok(())
    }

    /// `uniqueItems`, `items` and `additionalItems`.
    fn parse_array_keywords(&mut self, spec: &Document, location: &str) -> Result<()> {
        let error = |code: i32, message: String| invalid(code, located(message, location));
        let keyword_error = |(code, message): (i32, String)| error(code, message);
        if let Some(value) = spec.get("uniqueItems") {
            let Bson::Boolean(unique) = value else {
                return Err(keyword_error(must_be("uniqueItems", "a boolean", value)));
            };
            self.unique_items = *unique;
        }
        if let Some(value) = spec.get("items") {
            self.items = Some(match value {
                Bson::Document(inner) => Items::Every(Box::new(Schema::parse(
                    inner,
                    &nested_location(location, "items"),
                )?)),
                Bson::Array(entries) => {
                    let mut schemas = Vec::with_capacity(entries.len());
                    for (index, entry) in entries.iter().enumerate() {
                        let Bson::Document(inner) = entry else {
                            return Err(error(
                                TYPE_MISMATCH,
                                format!(
                                    "$jsonSchema keyword 'items' requires that each element of the array is an object, found {} at index {index}",
                                    describe(entry)
                                ),
                            ));
                        };
                        schemas.push(Schema::parse(
                            inner,
                            &nested_location(location, &format!("items.{index}")),
                        )?);
                    }
                    Items::Positions(schemas)
                }
                other => {
                    return Err(keyword_error(must_be(
                        "items",
                        "an array or an object",
                        other,
                    )));
                }
            });
        }
        if let Some(value) = spec.get("additionalItems") {
            self.additional_items = Some(parse_additional("additionalItems", value, location)?);
        }
        Ok(())
    }

    /// `required`, `properties`, `patternProperties`, `additionalProperties` and
    /// `dependencies`.
    fn parse_object_keywords(&mut self, spec: &Document, location: &str) -> Result<()> {
        let error = |code: i32, message: String| invalid(code, located(message, location));
        let keyword_error = |(code, message): (i32, String)| error(code, message);
        if let Some(value) = spec.get("required") {
            self.required = parse_names("required", value).map_err(keyword_error)?;
        }
        if let Some(value) = spec.get("properties") {
            let Bson::Document(properties) = value else {
                return Err(keyword_error(must_be("properties", "an object", value)));
            };
            for (name, inner) in properties {
                let Bson::Document(inner) = inner else {
                    return Err(error(
                        TYPE_MISMATCH,
                        format!(
                            "Nested schema for $jsonSchema property '{name}' must be an object, found {}",
                            describe(inner)
                        ),
                    ));
                };
                let nested = Schema::parse(
                    inner,
                    &nested_location(location, &format!("properties.{name}")),
                )?;
                self.properties.push((name.clone(), nested));
            }
        }
        if let Some(value) = spec.get("patternProperties") {
            let Bson::Document(patterns) = value else {
                return Err(keyword_error(must_be(
                    "patternProperties",
                    "an object",
                    value,
                )));
            };
            for (pattern, inner) in patterns {
                let Bson::Document(inner) = inner else {
                    return Err(error(
                        TYPE_MISMATCH,
                        format!(
                            "$jsonSchema keyword 'patternProperties' has property '{pattern}' which is not an object"
                        ),
                    ));
                };
                let matcher = compile(pattern).map_err(|message| {
                    error(
                        BAD_VALUE,
                        format!("$jsonSchema keyword 'patternProperties': {message}"),
                    )
                })?;
                let nested = Schema::parse(
                    inner,
                    &nested_location(location, &format!("patternProperties.{pattern}")),
                )?;
                self.pattern_properties.push((matcher, nested));
            }
        }
        if let Some(value) = spec.get("additionalProperties") {
            self.additional_properties =
                Some(parse_additional("additionalProperties", value, location)?);
        }
        if let Some(value) = spec.get("dependencies") {
            let Bson::Document(dependencies) = value else {
                return Err(keyword_error(must_be("dependencies", "an object", value)));
            };
            for (name, dependency) in dependencies {
                let parsed = match dependency {
                    Bson::Document(inner) => Dependency::Schema(Box::new(Schema::parse(
                        inner,
                        &nested_location(location, &format!("dependencies.{name}")),
                    )?)),
                    Bson::Array(_) => Dependency::Properties(
                        parse_names(&format!("dependencies.{name}"), dependency)
                            .map_err(keyword_error)?,
                    ),
                    other => {
                        return Err(error(
                            TYPE_MISMATCH,
                            format!(
                                "property '{name}' in $jsonSchema keyword 'dependencies' must be either an object or an array, found {}",
                                describe(other)
                            ),
                        ));
                    }
                };
                self.dependencies.push((name.clone(), parsed));
            }
        }
        Ok(())
    }

    /// `allOf`, `anyOf`, `oneOf`, `not` and `enum`.
    fn parse_logic_keywords(&mut self, spec: &Document, location: &str) -> Result<()> {
        let error = |code: i32, message: String| invalid(code, located(message, location));
        let keyword_error = |(code, message): (i32, String)| error(code, message);
        for (keyword, slot) in [
            ("allOf", &mut self.all_of),
            ("anyOf", &mut self.any_of),
            ("oneOf", &mut self.one_of),
        ] {
            let Some(value) = spec.get(keyword) else {
                continue;
            };
            let Bson::Array(entries) = value else {
                return Err(keyword_error(must_be(keyword, "an array", value)));
            };
            if entries.is_empty() {
                return Err(error(
                    BAD_VALUE,
                    format!("$jsonSchema keyword '{keyword}' must be a non-empty array"),
                ));
            }
            for (index, entry) in entries.iter().enumerate() {
                let Bson::Document(inner) = entry else {
                    return Err(error(
                        TYPE_MISMATCH,
                        format!(
                            "$jsonSchema keyword '{keyword}' must be an array of objects, found {} at index {index}",
                            describe(entry)
                        ),
                    ));
                };
                slot.push(Schema::parse(
                    inner,
                    &nested_location(location, &format!("{keyword}.{index}")),
                )?);
            }
        }
        if let Some(value) = spec.get("not") {
            let Bson::Document(inner) = value else {
                return Err(keyword_error(must_be("not", "an object", value)));
            };
            self.not = Some(Box::new(Schema::parse(
                inner,
                &nested_location(location, "not"),
            )?));
        }
        if let Some(value) = spec.get("enum") {
            let Bson::Array(entries) = value else {
                return Err(keyword_error(must_be("enum", "an array", value)));
            };
            if entries.is_empty() {
                return Err(error(
                    FAILED_TO_PARSE,
                    "$jsonSchema keyword 'enum' cannot be an empty array".to_string(),
                ));
            }
            let mut values: Vec<Bson> = entries.iter().map(canonical).collect();
            values.sort_by(compare);
            if values
                .windows(2)
                .any(|pair| compare(&pair[0], &pair[1]) == Ordering::Equal)
            {
                return Err(error(
                    FAILED_TO_PARSE,
                    "$jsonSchema keyword 'enum' array cannot contain duplicate values".to_string(),
                ));
            }
            self.enumeration = Some(values);
        }
        Ok(())
    }

    /// `{keyword: value}` as written, for `specifiedAs`.
    fn specified(&self, keywords: &[&str]) -> Document {
        keywords
            .iter()
            .filter_map(|keyword| {
                self.spec
                    .get(*keyword)
                    .map(|value| ((*keyword).to_string(), value.clone()))
            })
            .collect()
    }

    /// Whether `value` satisfies this schema. With `report`, every keyword is checked and each
    /// one that fails adds its explanation; without, the first failure answers.
    fn check(&self, value: RawBsonRef<'_>, report: Option<&mut Vec<Document>>) -> Result<bool> {
        let mut outcome = Outcome {
            satisfied: true,
            report,
        };
        // A `Break` only says the answer came early; `satisfied` holds it either way.
        let _early = self.check_into(value, &mut outcome)?;
        Ok(outcome.satisfied)
    }

    fn check_into(&self, value: RawBsonRef<'_>, outcome: &mut Outcome<'_>) -> Result<Flow> {
        if let Some((keyword, types)) = &self.types
            && !types.contains(value.element_type())
        {
            fail!(outcome, {
                doc! {
                    "operatorName": *keyword,
                    "specifiedAs": self.specified(&[*keyword]),
                    "reason": "type did not match",
                    "consideredValue": decode::value(value)?,
                    "consideredType": type_alias_name(value.element_type()),
                }
            });
        }
        if let Some(values) = &self.enumeration {
            let considered = canonical(&decode::value(value)?);
            if !values
                .iter()
                .any(|allowed| compare(allowed, &considered) == Ordering::Equal)
            {
                fail!(outcome, {
                    doc! {
                        "operatorName": "enum",
                        "specifiedAs": self.specified(&["enum"]),
                        "reason": "value was not found in enum",
                        "consideredValue": decode::value(value)?,
                    }
                });
            }
        }
        let by_type = match value {
            RawBsonRef::Int32(_)
            | RawBsonRef::Int64(_)
            | RawBsonRef::Double(_)
            | RawBsonRef::Decimal128(_) => self.check_number(value, outcome)?,
            RawBsonRef::String(text) => self.check_string(text, outcome)?,
            RawBsonRef::Array(array) => {
                let elements = array.into_iter().collect::<Result<Vec<_>, _>>()?;
                self.check_array(value, &elements, outcome)?
            }
            RawBsonRef::Document(document) => {
                let fields = document
                    .into_iter()
                    .map(|entry| entry.map(|(name, field)| (name.as_str(), field)))
                    .collect::<Result<Vec<_>, _>>()?;
                self.check_object(value, &fields, outcome)?
            }
            _ => Flow::Continue(()),
        };
        if by_type.is_break() {
            return Ok(by_type);
        }
        self.check_logic(value, outcome)
    }

    /// `minimum`, `maximum` and `multipleOf`.
    fn check_number(&self, value: RawBsonRef<'_>, outcome: &mut Outcome<'_>) -> Result<Flow> {
        for (keyword, exclusive_keyword, bound, wanted) in [
            (
                "minimum",
                "exclusiveMinimum",
                &self.minimum,
                Ordering::Greater,
            ),
            ("maximum", "exclusiveMaximum", &self.maximum, Ordering::Less),
        ] {
            if let Some(bound) = bound
                && !bound.allows(value, wanted)
            {
                fail!(outcome, {
                    doc! {
                        "operatorName": keyword,
                        "specifiedAs": self.specified(&[keyword, exclusive_keyword]),
                        "reason": "comparison failed",
                        "consideredValue": decode::value(value)?,
                    }
                });
            }
        }
        if let Some(divisor) = &self.multiple_of
            && !is_multiple(value, divisor)
        {
            fail!(outcome, {
                doc! {
                    "operatorName": "multipleOf",
                    "specifiedAs": self.specified(&["multipleOf"]),
                    "reason": "considered value is not a multiple of the specified value",
                    "consideredValue": decode::value(value)?,
                }
            });
        }
        Ok(Flow::Continue(()))
    }

    /// `minLength`, `maxLength` and `pattern`.
    fn check_string(&self, text: &str, outcome: &mut Outcome<'_>) -> Result<Flow> {
        if self.min_length.is_some() || self.max_length.is_some() {
            let length = text.chars().count() as u64;
            for (keyword, limit, too_far) in [
                ("minLength", self.min_length, Ordering::Less),
                ("maxLength", self.max_length, Ordering::Greater),
            ] {
                if let Some(limit) = limit
                    && length.cmp(&limit) == too_far
                {
                    fail!(outcome, {
                        doc! {
                            "operatorName": keyword,
                            "specifiedAs": self.specified(&[keyword]),
                            "reason": "specified string length was not satisfied",
                            "consideredValue": text,
                        }
                    });
                }
            }
        }
        if let Some(pattern) = &self.pattern
            && !pattern.is_match(text)
        {
            fail!(outcome, {
                doc! {
                    "operatorName": "pattern",
                    "specifiedAs": self.specified(&["pattern"]),
                    "reason": "regular expression did not match",
                    "consideredValue": text,
                }
            });
        }
        Ok(Flow::Continue(()))
    }

    /// `minItems`, `maxItems`, `uniqueItems`, `items` and `additionalItems`.
    fn check_array(
        &self,
        value: RawBsonRef<'_>,
        elements: &[RawBsonRef<'_>],
        outcome: &mut Outcome<'_>,
    ) -> Result<Flow> {
        let length = elements.len() as u64;
        for (keyword, limit, too_far) in [
            ("minItems", self.min_items, Ordering::Less),
            ("maxItems", self.max_items, Ordering::Greater),
        ] {
            if let Some(limit) = limit
                && length.cmp(&limit) == too_far
            {
                fail!(outcome, {
                    doc! {
                        "operatorName": keyword,
                        "specifiedAs": self.specified(&[keyword]),
                        "reason": "array did not match specified length",
                        "consideredValue": decode::value(value)?,
                    }
                });
            }
        }
        if self.unique_items
            && let Some(duplicate) = first_duplicate(elements)?
        {
            fail!(outcome, {
                doc! {
                    "operatorName": "uniqueItems",
                    "specifiedAs": self.specified(&["uniqueItems"]),
                    "reason": "found a duplicate item",
                    "consideredValue": decode::value(value)?,
                    "duplicatedValue": duplicate,
                }
            });
        }
        let explaining = outcome.explaining();
        let (positional, rest) = match &self.items {
            Some(Items::Every(schema)) => {
                if let Some(failure) = first_failing_item(schema, elements, 0, explaining)? {
                    fail!(outcome, { item_failure("items", failure) });
                }
                (0, None)
            }
            Some(Items::Positions(schemas)) => {
                let pairs = schemas.iter().zip(elements).enumerate();
                for (index, (schema, element)) in pairs {
                    let mut nested = Vec::new();
                    if !schema.check(*element, explaining.then_some(&mut nested))? {
                        fail!(outcome, { item_failure("items", (index, nested)) });
                        break;
                    }
                }
                (schemas.len(), self.additional_items.as_ref())
            }
            // `additionalItems` only applies after an array of `items`.
            None => (0, None),
        };
        match rest {
            Some(Additional::Allowed(false)) if elements.len() > positional => {
                fail!(outcome, {
                    doc! {
                        "operatorName": "additionalItems",
                        "specifiedAs": self.specified(&["additionalItems"]),
                        "reason": "found additional items",
                        "additionalItems": elements[positional..]
                            .iter()
                            .map(|element| decode::value(*element).map_err(DocError::from))
                            .collect::<Result<Vec<_>>>()?,
                    }
                });
            }
            Some(Additional::Schema(schema)) => {
                if let Some(failure) = first_failing_item(schema, elements, positional, explaining)?
                {
                    fail!(outcome, { item_failure("additionalItems", failure) });
                }
            }
            _ => {}
        }
        Ok(Flow::Continue(()))
    }

    /// `required`, `properties`, `minProperties`, `maxProperties`, `dependencies`, then
    /// `patternProperties` and `additionalProperties`.
    fn check_object(
        &self,
        value: RawBsonRef<'_>,
        fields: &[(&str, RawBsonRef<'_>)],
        outcome: &mut Outcome<'_>,
    ) -> Result<Flow> {
        let present = |name: &str| fields.iter().any(|(field, _)| *field == name);
        let missing: Vec<&str> = self
            .required
            .iter()
            .map(String::as_str)
            .filter(|name| !present(name))
            .collect();
        if !missing.is_empty() {
            fail!(outcome, {
                doc! {
                    "operatorName": "required",
                    "specifiedAs": self.specified(&["required"]),
                    "missingProperties": missing,
                }
            });
        }
        let explaining = outcome.explaining();
        let mut properties_failed = Vec::new();
        for (name, schema) in &self.properties {
            let Some((_, field_value)) = fields.iter().find(|(field, _)| field == name) else {
                continue;
            };
            let mut nested = Vec::new();
            if !schema.check(*field_value, explaining.then_some(&mut nested))? {
                properties_failed.push(doc! { "propertyName": name.as_str(), "details": nested });
                if !explaining {
                    break;
                }
            }
        }
        if !properties_failed.is_empty() {
            fail!(outcome, {
                doc! {
                    "operatorName": "properties",
                    "propertiesNotSatisfied": properties_failed,
                }
            });
        }
        let count = fields.len() as u64;
        for (keyword, limit, too_far) in [
            ("minProperties", self.min_properties, Ordering::Less),
            ("maxProperties", self.max_properties, Ordering::Greater),
        ] {
            if let Some(limit) = limit
                && count.cmp(&limit) == too_far
            {
                fail!(outcome, {
                    doc! {
                        "operatorName": keyword,
                        "specifiedAs": self.specified(&[keyword]),
                        "reason": "specified number of properties was not satisfied",
                        "numberOfProperties": i64::try_from(count).unwrap_or(i64::MAX),
                    }
                });
            }
        }
        let mut dependencies_failed = Vec::new();
        for (name, dependency) in &self.dependencies {
            if !present(name) {
                continue;
            }
            let failure = match dependency {
                Dependency::Properties(names) => {
                    let missing: Vec<&str> = names
                        .iter()
                        .map(String::as_str)
                        .filter(|needed| !present(needed))
                        .collect();
                    (!missing.is_empty()).then(|| {
                        doc! { "conditionalProperty": name.as_str(), "missingProperties": missing }
                    })
                }
                Dependency::Schema(schema) => {
                    let mut nested = Vec::new();
                    (!schema.check(value, explaining.then_some(&mut nested))?).then(|| {
                        doc! { "conditionalProperty": name.as_str(), "details": nested }
                    })
                }
            };
            if let Some(failure) = failure {
                dependencies_failed.push(failure);
                if !explaining {
                    break;
                }
            }
        }
        if !dependencies_failed.is_empty() {
            fail!(outcome, {
                doc! {
                    "operatorName": "dependencies",
                    "failingDependencies": dependencies_failed,
                }
            });
        }
        self.check_allowed_properties(fields, outcome)
    }

    /// `patternProperties` and `additionalProperties`: each field matched by a pattern
    /// satisfies its schema; each field neither named in `properties` nor matched satisfies
    /// `additionalProperties`.
    fn check_allowed_properties(
        &self,
        fields: &[(&str, RawBsonRef<'_>)],
        outcome: &mut Outcome<'_>,
    ) -> Result<Flow> {
        if self.pattern_properties.is_empty() && self.additional_properties.is_none() {
            return Ok(Flow::Continue(()));
        }
        let explaining = outcome.explaining();
        let mut patterns_failed = Vec::new();
        let mut additional_names = Vec::new();
        let mut additional_failed = Vec::new();
        for (name, field_value) in fields {
            let mut matched_a_pattern = false;
            for (pattern, schema) in &self.pattern_properties {
                if !pattern.is_match(name) {
                    continue;
                }
                matched_a_pattern = true;
                let mut nested = Vec::new();
                if !schema.check(*field_value, explaining.then_some(&mut nested))? {
                    patterns_failed.push(doc! {
                        "propertyName": *name,
                        "regexMatched": pattern.pattern(),
                        "details": nested,
                    });
                }
            }
            let named = self.properties.iter().any(|(property, _)| property == name);
            if !matched_a_pattern && !named {
                match &self.additional_properties {
                    Some(Additional::Allowed(false)) => additional_names.push(*name),
                    Some(Additional::Schema(schema)) => {
                        let mut nested = Vec::new();
                        if !schema.check(*field_value, explaining.then_some(&mut nested))? {
                            additional_failed
                                .push(doc! { "propertyName": *name, "details": nested });
                        }
                    }
                    Some(Additional::Allowed(true)) | None => {}
                }
            }
            let failed_already = !(patterns_failed.is_empty()
                && additional_names.is_empty()
                && additional_failed.is_empty());
            if failed_already && !explaining {
                break;
            }
        }
        if !patterns_failed.is_empty() {
            fail!(outcome, {
                doc! { "operatorName": "patternProperties", "details": patterns_failed }
            });
        }
        if !additional_names.is_empty() {
            fail!(outcome, {
                doc! {
                    "operatorName": "additionalProperties",
                    "specifiedAs": self.specified(&["additionalProperties"]),
                    "additionalProperties": additional_names,
                }
            });
        }
        if !additional_failed.is_empty() {
            fail!(outcome, {
                doc! {
                    "operatorName": "additionalProperties",
                    "reason": "at least one additional property did not match its subschema",
                    "details": additional_failed,
                }
            });
        }
        Ok(Flow::Continue(()))
    }

    /// `allOf`, `anyOf`, `oneOf` and `not`, on a value of any type.
    fn check_logic(&self, value: RawBsonRef<'_>, outcome: &mut Outcome<'_>) -> Result<Flow> {
        let explaining = outcome.explaining();
        let mut all_of_failed = Vec::new();
        for (index, schema) in self.all_of.iter().enumerate() {
            let mut nested = Vec::new();
            if !schema.check(value, explaining.then_some(&mut nested))? {
                all_of_failed.push(doc! { "index": index as i32, "details": nested });
                if !explaining {
                    break;
                }
            }
        }
        if !all_of_failed.is_empty() {
            fail!(outcome, {
                doc! { "operatorName": "allOf", "schemasNotSatisfied": all_of_failed }
            });
        }
        if !self.any_of.is_empty() {
            let mut any_of_failed = Vec::new();
            let mut matched = false;
            for (index, schema) in self.any_of.iter().enumerate() {
                let mut nested = Vec::new();
                if schema.check(value, explaining.then_some(&mut nested))? {
                    matched = true;
                    break;
                }
                any_of_failed.push(doc! { "index": index as i32, "details": nested });
            }
            if !matched {
                fail!(outcome, {
                    doc! { "operatorName": "anyOf", "schemasNotSatisfied": any_of_failed }
                });
            }
        }
        if !self.one_of.is_empty() {
            let mut one_of_failed = Vec::new();
            let mut matching = Vec::new();
            for (index, schema) in self.one_of.iter().enumerate() {
                let mut nested = Vec::new();
                if schema.check(value, explaining.then_some(&mut nested))? {
                    matching.push(index as i32);
                    if matching.len() > 1 && !explaining {
                        break;
                    }
                } else {
                    one_of_failed.push(doc! { "index": index as i32, "details": nested });
                }
            }
            if matching.is_empty() {
                fail!(outcome, {
                    doc! { "operatorName": "oneOf", "schemasNotSatisfied": one_of_failed }
                });
            } else if matching.len() > 1 {
                fail!(outcome, {
                    doc! {
                        "operatorName": "oneOf",
                        "reason": "more than one subschema matched",
                        "matchingSchemaIndexes": matching,
                    }
                });
            }
        }
        if let Some(schema) = &self.not
            && schema.check(value, None)?
        {
            fail!(outcome, {
                doc! {
                    "operatorName": "not",
                    "specifiedAs": self.specified(&["not"]),
                    "reason": "child expression matched",
                }
            });
        }
        Ok(Flow::Continue(()))
    }
}

/// Whether checking a value goes on (`Continue`) or has its answer, a failure nobody asked to
/// explain (`Break`).
type Flow = ControlFlow<()>;

/// What checking a value found so far: whether every keyword held, and the explanations of
/// those that failed when they are asked for.
struct Outcome<'r> {
    satisfied: bool,
    report: Option<&'r mut Vec<Document>>,
}

impl Outcome<'_> {
    fn explaining(&self) -> bool {
        self.report.is_some()
    }

    /// Records a failed keyword; its explanation is only built when one is asked for.
    fn fail(&mut self, explanation: impl FnOnce() -> Result<Document>) -> Result<Flow> {
        self.satisfied = false;
        match self.report.as_deref_mut() {
            Some(found) => {
                found.push(explanation()?);
                Ok(Flow::Continue(()))
            }
            None => Ok(Flow::Break(())),
        }
    }
}

/// The first element from `start` on that `schema` refuses, with its explanation when asked.
fn first_failing_item(
    schema: &Schema,
    elements: &[RawBsonRef<'_>],
    start: usize,
    explaining: bool,
) -> Result<Option<(usize, Vec<Document>)>> {
    for (index, element) in elements.iter().enumerate().skip(start) {
        let mut nested = Vec::new();
        if !schema.check(*element, explaining.then_some(&mut nested))? {
            return Ok(Some((index, nested)));
        }
    }
    Ok(None)
}

fn item_failure(keyword: &str, (index, details): (usize, Vec<Document>)) -> Document {
    doc! {
        "operatorName": keyword,
        "reason": "At least one item did not match the sub-schema",
        "itemIndex": i64::try_from(index).unwrap_or(i64::MAX),
        "details": details,
    }
}

impl Bound {
    /// Whether a number is on the allowed side: `wanted` is `Greater` for a minimum. NaN is
    /// only equal to NaN and comparable to nothing else, as in filters.
    fn allows(&self, value: RawBsonRef<'_>, wanted: Ordering) -> bool {
        let bound = self.value.as_raw_bson_ref();
        let order = match (is_nan(value), is_nan(bound)) {
            (true, true) => Ordering::Equal,
            (false, false) => compare_raw(value, bound),
            _ => return false,
        };
        order == wanted || (order == Ordering::Equal && !self.exclusive)
    }
}

fn is_nan(value: RawBsonRef<'_>) -> bool {
    match value {
        RawBsonRef::Double(double) => double.is_nan(),
        RawBsonRef::Decimal128(decimal) => {
            matches!(Number::Decimal(decimal).to_exact(), ExactDecimal::NaN)
        }
        _ => false,
    }
}

fn is_number(value: &Bson) -> bool {
    matches!(
        value,
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_)
    )
}

fn number_of(value: RawBsonRef<'_>) -> Option<Number> {
    match value {
        RawBsonRef::Int32(int) => Some(Number::Int(i64::from(int))),
        RawBsonRef::Int64(long) => Some(Number::Int(long)),
        RawBsonRef::Double(double) => Some(Number::Double(double)),
        RawBsonRef::Decimal128(decimal) => Some(Number::Decimal(decimal)),
        _ => None,
    }
}

/// A finite number as decimal digits: `± 0.d1 d2 ... × 10^exponent`, no leading or trailing
/// zero digit (zero has none).
#[derive(Debug, Clone, PartialEq)]
struct ExactDigits {
    negative: bool,
    digits: Vec<u8>,
    exponent: i32,
}

impl ExactDigits {
    /// The digits as an integer and the power of ten it is scaled by.
    fn coefficient(&self) -> Option<(u128, i32)> {
        let mut coefficient: u128 = 0;
        for digit in &self.digits {
            coefficient = coefficient
                .checked_mul(10)?
                .checked_add(u128::from(*digit))?;
        }
        Some((coefficient, self.exponent - self.digits.len() as i32))
    }
}

/// The digits of a number as MongoDB's `multipleOf` sees it: integers and decimals exactly,
/// doubles rounded to 15 significant digits (MongoDB's conversion of a double to a
/// decimal). `None` for NaN, infinities and non-numbers.
fn digits_of(value: &Bson) -> Option<ExactDigits> {
    let raw = RawBson::try_from(value.clone()).ok()?;
    raw_digits_of(raw.as_raw_bson_ref())
}

fn raw_digits_of(value: RawBsonRef<'_>) -> Option<ExactDigits> {
    if let RawBsonRef::Double(double) = value {
        if !double.is_finite() {
            return None;
        }
        if double == 0.0 {
            return Some(ExactDigits {
                negative: false,
                digits: Vec::new(),
                exponent: 0,
            });
        }
        // `d.dddddddddddddde±x`: 15 significant digits.
        let text = format!("{:.14e}", double.abs());
        let (mantissa, exponent) = text.split_once('e')?;
        let mut digits: Vec<u8> = mantissa
            .bytes()
            .filter(u8::is_ascii_digit)
            .map(|digit| digit - b'0')
            .collect();
        while digits.last() == Some(&0) {
            digits.pop();
        }
        return Some(ExactDigits {
            negative: double < 0.0,
            digits,
            exponent: exponent.parse::<i32>().ok()? + 1,
        });
    }
    match number_of(value)?.to_exact() {
        ExactDecimal::Finite {
            negative,
            digits,
            exponent,
        } => Some(ExactDigits {
            negative,
            digits,
            exponent,
        }),
        _ => None,
    }
}

/// Whether `value` is a whole multiple of `divisor` (exactly, on decimal digits).
fn is_multiple(value: RawBsonRef<'_>, divisor: &ExactDigits) -> bool {
    let Some(value) = raw_digits_of(value) else {
        return false;
    };
    if value.digits.is_empty() {
        return true;
    }
    let (Some((value_coefficient, value_scale)), Some((divisor_coefficient, divisor_scale))) =
        (value.coefficient(), divisor.coefficient())
    else {
        return false;
    };
    if divisor_scale >= value_scale {
        // value = a × 10^s, divisor = b × 10^(s + k): a multiple of b × 10^k.
        let shift = (divisor_scale - value_scale) as u32;
        let Some(scaled) = 10u128
            .checked_pow(shift)
            .and_then(|power| divisor_coefficient.checked_mul(power))
        else {
            // The divisor is larger than any coefficient: no non-zero multiple.
            return false;
        };
        return value_coefficient % scaled == 0;
    }
    // value = a × 10^(s + k), divisor = b × 10^s: a × 10^k mod b, one digit at a time.
    let mut remainder = value_coefficient % divisor_coefficient;
    for _ in 0..(value_scale - divisor_scale) {
        if remainder == 0 {
            break;
        }
        remainder = (remainder * 10) % divisor_coefficient;
    }
    remainder == 0
}

/// A value with every embedded document's fields sorted by name, so that comparing two
/// canonical values ignores field order, as MongoDB's `enum` and `uniqueItems` do.
fn canonical(value: &Bson) -> Bson {
    match value {
        Bson::Document(document) => {
            let mut fields: Vec<(&String, &Bson)> = document.iter().collect();
            fields.sort_by(|a, b| a.0.cmp(b.0));
            Bson::Document(
                fields
                    .into_iter()
                    .map(|(name, inner)| (name.clone(), canonical(inner)))
                    .collect(),
            )
        }
        Bson::Array(elements) => Bson::Array(elements.iter().map(canonical).collect()),
        other => other.clone(),
    }
}

/// An element equal to an earlier one (field order aside), if any.
fn first_duplicate(elements: &[RawBsonRef<'_>]) -> Result<Option<Bson>> {
    let mut values = elements
        .iter()
        .map(|element| {
            decode::value(*element)
                .map(|value| canonical(&value))
                .map_err(DocError::from)
        })
        .collect::<Result<Vec<_>>>()?;
    values.sort_by(compare);
    Ok(values
        .windows(2)
        .find(|pair| compare(&pair[0], &pair[1]) == Ordering::Equal)
        .map(|pair| pair[0].clone()))
}

/// `(code, message)`: "keyword must be ..., found ..." (TypeMismatch).
fn must_be(keyword: &str, what: &str, found: &Bson) -> (i32, String) {
    (
        TYPE_MISMATCH,
        format!(
            "$jsonSchema keyword '{keyword}' must be {what}, found {}",
            describe(found)
        ),
    )
}

/// `type` or `bsonType`: a type name or a non-empty array of distinct ones.
fn parse_types(
    keyword: &str,
    value: &Bson,
    alias: fn(&str) -> Option<TypeAlias>,
) -> std::result::Result<TypeSet, (i32, String)> {
    let names: Vec<&str> = match value {
        Bson::String(name) => vec![name.as_str()],
        Bson::Array(entries) => {
            let mut names = Vec::with_capacity(entries.len());
            for entry in entries {
                let Bson::String(name) = entry else {
                    return Err((
                        TYPE_MISMATCH,
                        format!(
                            "$jsonSchema keyword '{keyword}' array elements must be strings, found {}",
                            describe(entry)
                        ),
                    ));
                };
                if names.contains(&name.as_str()) {
                    return Err((
                        FAILED_TO_PARSE,
                        format!("$jsonSchema keyword '{keyword}' has duplicate value: {name}"),
                    ));
                }
                names.push(name.as_str());
            }
            names
        }
        other => {
            return Err(must_be(
                keyword,
                "either a string or an array of strings",
                other,
            ));
        }
    };
    if names.is_empty() {
        return Err((
            FAILED_TO_PARSE,
            format!("$jsonSchema keyword '{keyword}' must name at least one type"),
        ));
    }
    let mut set = TypeSet::default();
    for name in names {
        if name == "integer" {
            return Err((
                FAILED_TO_PARSE,
                "$jsonSchema type 'integer' is not currently supported".to_string(),
            ));
        }
        match alias(name) {
            Some(TypeAlias::AllNumbers) => set.all_numbers = true,
            Some(TypeAlias::One(element_type)) => set.types.push(element_type),
            None => {
                return Err((
                    BAD_VALUE,
                    format!("Unknown type name alias: {name} (in $jsonSchema keyword '{keyword}')"),
                ));
            }
        }
    }
    Ok(set)
}

/// What a type name stands for.
enum TypeAlias {
    AllNumbers,
    One(ElementType),
}

/// The names `type` takes: JSON's types (`integer` is refused before).
fn json_type_alias(name: &str) -> Option<TypeAlias> {
    Some(match name {
        "number" => TypeAlias::AllNumbers,
        "object" => TypeAlias::One(ElementType::EmbeddedDocument),
        "array" => TypeAlias::One(ElementType::Array),
        "boolean" => TypeAlias::One(ElementType::Boolean),
        "string" => TypeAlias::One(ElementType::String),
        "null" => TypeAlias::One(ElementType::Null),
        _ => return None,
    })
}

/// The names `bsonType` takes: `$type`'s aliases.
fn bson_type_alias(name: &str) -> Option<TypeAlias> {
    if name == "number" {
        return Some(TypeAlias::AllNumbers);
    }
    type_alias(name).map(TypeAlias::One)
}

/// A count (`minLength`, `maxItems`...): a non-negative whole number.
fn parse_count(keyword: &str, value: &Bson) -> std::result::Result<u64, (i32, String)> {
    let whole = match value {
        Bson::Int32(int) => Some(i64::from(*int)),
        Bson::Int64(long) => Some(*long),
        Bson::Double(double) if double.fract() == 0.0 && double.abs() < 9.0e18 => {
            Some(*double as i64)
        }
        Bson::Double(_) => None,
        Bson::Decimal128(_) => digits_of(value).and_then(|digits| {
            let (coefficient, scale) = digits.coefficient()?;
            let whole = if scale >= 0 {
                coefficient.checked_mul(10u128.checked_pow(scale as u32)?)?
            } else {
                return None;
            };
            let whole = i64::try_from(whole).ok()?;
            Some(if digits.negative { -whole } else { whole })
        }),
        other => return Err(must_be(keyword, "a number", other)),
    };
    match whole.map(u64::try_from) {
        Some(Ok(count)) => Ok(count),
        _ => Err((
            FAILED_TO_PARSE,
            format!(
                "$jsonSchema keyword '{keyword}' must be a non-negative whole number, found {value}"
            ),
        )),
    }
}

/// `required` and the arrays of `dependencies`: a non-empty array of distinct names.
fn parse_names(keyword: &str, value: &Bson) -> std::result::Result<Vec<String>, (i32, String)> {
    let Bson::Array(entries) = value else {
        return Err(must_be(keyword, "an array", value));
    };
    if entries.is_empty() {
        return Err((
            FAILED_TO_PARSE,
            format!("$jsonSchema keyword '{keyword}' cannot be an empty array"),
        ));
    }
    let mut names: Vec<String> = Vec::with_capacity(entries.len());
    for entry in entries {
        let Bson::String(name) = entry else {
            return Err((
                TYPE_MISMATCH,
                format!(
                    "$jsonSchema keyword '{keyword}' must be an array of strings, found {}",
                    describe(entry)
                ),
            ));
        };
        if names.contains(name) {
            return Err((
                FAILED_TO_PARSE,
                format!(
                    "$jsonSchema keyword '{keyword}' array cannot contain duplicate values ({name})"
                ),
            ));
        }
        names.push(name.clone());
    }
    Ok(names)
}

/// `minimum`/`maximum` and their `exclusive...` flag.
fn parse_bound(
    spec: &Document,
    keyword: &str,
    exclusive_keyword: &str,
) -> std::result::Result<Option<Bound>, (i32, String)> {
    let exclusive = match spec.get(exclusive_keyword) {
        None => None,
        Some(Bson::Boolean(exclusive)) => Some(*exclusive),
        Some(other) => return Err(must_be(exclusive_keyword, "a boolean", other)),
    };
    let Some(value) = spec.get(keyword) else {
        if exclusive.is_some() {
            return Err((
                FAILED_TO_PARSE,
                format!(
                    "$jsonSchema keyword '{keyword}' must be present if {exclusive_keyword} is present"
                ),
            ));
        }
        return Ok(None);
    };
    if !is_number(value) {
        return Err(must_be(keyword, "a number", value));
    }
    let value = RawBson::try_from(value.clone()).map_err(|error| {
        (
            BAD_VALUE,
            format!("$jsonSchema keyword '{keyword}': {error}"),
        )
    })?;
    Ok(Some(Bound {
        value,
        exclusive: exclusive.unwrap_or(false),
    }))
}

/// `additionalItems` or `additionalProperties`: a boolean or a schema.
fn parse_additional(keyword: &str, value: &Bson, location: &str) -> Result<Additional> {
    match value {
        Bson::Boolean(allowed) => Ok(Additional::Allowed(*allowed)),
        Bson::Document(inner) => Ok(Additional::Schema(Box::new(Schema::parse(
            inner,
            &nested_location(location, keyword),
        )?))),
        other => {
            let (code, message) = must_be(keyword, "an object or a boolean", other);
            Err(invalid(code, located(message, location)))
        }
    }
}

/// A JSON Schema regular expression: no flags.
fn compile(pattern: &str) -> std::result::Result<RegexMatcher, String> {
    RegexMatcher::new(pattern, "").map_err(|error| match error {
        DocError::InvalidFilter { message, .. } => message,
        other => other.to_string(),
    })
}
