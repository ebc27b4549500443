//! Parsing of filter documents into [`Filter`]s, with MongoDB's validation rules and error
//! messages that name the operator and the path.
//!
//! Parsing never looks at a stored document: everything it rejects is wrong for every
//! document.

use std::cmp::Ordering;

use bson::spec::ElementType;
use bson::{Bson, Document};

use super::predicate::{ElemMatch, InList, Operand, Predicate, TypeSet, type_alias};
use super::schema::JsonSchema;
use super::{Clause, Filter};
use crate::compare::compare;
use crate::error::{DocError, Result};
use crate::geospatial;
use crate::javascript::WhereFunction;
use crate::path::{FieldPath, describe};
use crate::regex_matcher::RegexMatcher;
use crate::text::{TextQuery, TextSearch};

/// Top-level operators MongoDB has and Spillway does not.
const UNSUPPORTED_TOP_LEVEL: [&str; 3] = ["$sampleRate", "$alwaysTrue", "$alwaysFalse"];

/// Field operators MongoDB has and Spillway does not (bitwise queries).
const UNSUPPORTED_FIELD_OPERATORS: [&str; 4] = [
    "$bitsAllSet",
    "$bitsAnySet",
    "$bitsAllClear",
    "$bitsAnyClear",
];

/// Parses a whole filter (not one nested in `$and`, `$elemMatch`...): [`parse_filter`], and
/// MongoDB's rule that a `$near` or `$nearSphere` stands once, at the top level (or in a
/// top-level `$and`), since it decides the order of the results.
pub(super) fn parse_top_filter(filter: &Document, names: &[String]) -> Result<Filter> {
    let parsed = parse_filter(filter, names)?;
    let top_level = parsed
        .field_predicates()
        .filter(|(_, predicate)| matches!(predicate, Predicate::Near(_)))
        .count();
    let anywhere = count_near(&parsed);
    if top_level != anywhere || anywhere > 1 {
        let operator = if anywhere > 1 && top_level == anywhere {
            "only one $near or $nearSphere is allowed in a filter"
        } else {
            "$near and $nearSphere must be at the top level of a filter (not in $or, $nor, $not or $elemMatch)"
        };
        return Err(DocError::filter("", operator));
    }
    Ok(parsed)
}

/// How many `$near` and `$nearSphere` predicates a filter has, wherever they are.
fn count_near(filter: &Filter) -> usize {
    fn in_predicate(predicate: &Predicate) -> usize {
        match predicate {
            Predicate::Near(_) => 1,
            Predicate::Not(inner) | Predicate::All(inner) => inner.iter().map(in_predicate).sum(),
            Predicate::ElemMatch(ElemMatch::Value(inner)) => inner.iter().map(in_predicate).sum(),
            Predicate::ElemMatch(ElemMatch::Document(inner)) => count_near(inner),
            _ => 0,
        }
    }
    filter
        .clauses
        .iter()
        .map(|clause| match clause {
            Clause::Field { predicate, .. } => in_predicate(predicate),
            Clause::And(filters) | Clause::Or(filters) | Clause::Nor(filters) => {
                filters.iter().map(count_near).sum()
            }
            Clause::Expr(_) | Clause::Text(_) | Clause::Where(_) | Clause::JsonSchema(_) => 0,
        })
        .sum()
}

pub(super) fn parse_filter(filter: &Document, names: &[String]) -> Result<Filter> {
    let parsed = parse_filter_at(filter, names)?;
    let mut n_text = 0;
    check_text_placement(&parsed, true, &mut n_text)?;
    Ok(parsed)
}

/// A filter inside an operator (`$elemMatch`), where `$text` is never allowed, nor
/// `$jsonSchema` (which applies to the whole document, as in MongoDB).
pub(super) fn parse_filter_nested(filter: &Document, names: &[String]) -> Result<Filter> {
    let parsed = parse_filter_at(filter, names)?;
    check_text_placement(&parsed, false, &mut 0)?;
    if has_json_schema(&parsed) {
        return Err(DocError::filter(
            "$jsonSchema",
            "$jsonSchema can only be applied to the top-level document",
        ));
    }
    Ok(parsed)
}

/// Whether a `$jsonSchema` clause is in `filter`, under any `$and`, `$or` or `$nor`.
fn has_json_schema(filter: &Filter) -> bool {
    filter.clauses.iter().any(|clause| match clause {
        Clause::JsonSchema(_) => true,
        Clause::And(filters) | Clause::Or(filters) | Clause::Nor(filters) => {
            filters.iter().any(has_json_schema)
        }
        Clause::Field { .. } | Clause::Expr(_) | Clause::Text(_) | Clause::Where(_) => false,
    })
}

/// `$text` may appear once, at the top level or in a top-level `$and` (MongoDB also plans
/// it under an `$or` whose other branches are indexed; Spillway does not).
fn check_text_placement(filter: &Filter, top: bool, n_text: &mut usize) -> Result<()> {
    for clause in &filter.clauses {
        match clause {
            Clause::Text(_) if !top => {
                return Err(DocError::filter(
                    "$text",
                    "$text is only allowed at the top level of a filter or in a top-level $and",
                ));
            }
            Clause::Text(_) => {
                *n_text += 1;
                if *n_text > 1 {
                    return Err(DocError::filter("$text", "Too many text expressions"));
                }
            }
            Clause::And(filters) => {
                for inner in filters {
                    check_text_placement(inner, top, n_text)?;
                }
            }
            Clause::Or(filters) | Clause::Nor(filters) => {
                for inner in filters {
                    check_text_placement(inner, false, n_text)?;
                }
            }
            Clause::Field { .. } | Clause::Expr(_) | Clause::Where(_) | Clause::JsonSchema(_) => {}
        }
    }
    Ok(())
}

fn parse_filter_at(filter: &Document, names: &[String]) -> Result<Filter> {
    let mut clauses = Vec::with_capacity(filter.len());
    for (key, value) in filter {
        if key.starts_with('$') {
            if let Some(clause) = parse_top_level_operator(key, value, names)? {
                clauses.push(clause);
            }
            continue;
        }
        let path = FieldPath::parse(key).map_err(|error| match error {
            DocError::InvalidPath { reason, .. } => DocError::filter(key.as_str(), reason),
            other => other,
        })?;
        for predicate in parse_field_condition(&path, value)? {
            clauses.push(Clause::Field {
                path: path.clone(),
                predicate,
            });
        }
    }
    Ok(Filter {
        clauses,
        ..Filter::default()
    })
}

fn parse_top_level_operator(
    operator: &str,
    value: &Bson,
    names: &[String],
) -> Result<Option<Clause>> {
    let build: fn(Vec<Filter>) -> Clause = match operator {
        "$expr" => {
            return Ok(Some(Clause::Expr(Box::new(
                crate::expr::Expression::parse_in(value, names)?,
            ))));
        }
        "$where" => {
            return Ok(Some(Clause::Where(Box::new(WhereFunction::parse(value)?))));
        }
        "$text" => {
            return Ok(Some(Clause::Text(Box::new(TextSearch::new(
                TextQuery::parse(value)?,
            )))));
        }
        "$jsonSchema" => {
            return Ok(Some(Clause::JsonSchema(Box::new(JsonSchema::parse(
                value,
            )?))));
        }
        "$and" => Clause::And,
        "$or" => Clause::Or,
        "$nor" => Clause::Nor,
        "$comment" => return Ok(None),
        unsupported if UNSUPPORTED_TOP_LEVEL.contains(&unsupported) => {
            return Err(DocError::filter(
                operator,
                format!("{operator} is not supported"),
            ));
        }
        _ => {
            return Err(DocError::filter(
                operator,
                format!("unknown top-level operator {operator}"),
            ));
        }
    };
    let Bson::Array(entries) = value else {
        return Err(DocError::filter(
            operator,
            format!(
                "{operator} needs a non-empty array of documents, found {}",
                describe(value)
            ),
        ));
    };
    if entries.is_empty() {
        return Err(DocError::filter(
            operator,
            format!("{operator} needs a non-empty array of documents"),
        ));
    }
    let mut filters = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        let Bson::Document(entry) = entry else {
            return Err(DocError::filter(
                operator,
                format!(
                    "{operator} needs an array of documents, found {} at index {index}",
                    describe(entry)
                ),
            ));
        };
        filters.push(parse_filter_at(entry, names)?);
    }
    Ok(Some(build(filters)))
}

/// Whether a document is a set of operators (`{$gt: 1}`) rather than a literal to compare
/// with: its first key starts with `$` and is not a DBRef field.
pub(super) fn is_operator_document(document: &Document) -> bool {
    document.keys().next().is_some_and(|first| {
        first.starts_with('$') && !matches!(first.as_str(), "$ref" | "$id" | "$db")
    })
}

/// The predicates of `{path: value}`: one equality or regular expression, or one per
/// operator of an operator document.
fn parse_field_condition(path: &FieldPath, value: &Bson) -> Result<Vec<Predicate>> {
    match value {
        Bson::RegularExpression(regex) => {
            let matcher = RegexMatcher::new(regex.pattern.as_str(), regex.options.as_str())
                .map_err(|error| at_path(error, path))?;
            Ok(vec![Predicate::Regex(matcher)])
        }
        Bson::Document(operators) if is_operator_document(operators) => {
            parse_operators(path, operators)
        }
        _ => Ok(vec![Predicate::Eq(operand(path, "$eq", value)?)]),
    }
}

/// Fills in the path of an error raised where it was not known.
fn at_path(error: DocError, path: &FieldPath) -> DocError {
    match error {
        DocError::InvalidFilter {
            path: empty,
            message,
        } if empty.is_empty() => DocError::filter(path.as_str(), message),
        other => other,
    }
}

fn operand(path: &FieldPath, operator: &str, value: &Bson) -> Result<Operand> {
    if matches!(value, Bson::Undefined) {
        return Err(DocError::filter(
            path.as_str(),
            format!("{operator} cannot compare to undefined"),
        ));
    }
    Operand::new(value.clone()).map_err(|error| at_path(error, path))
}

/// Parses an operator document (`{$gt: 1, $lt: 5}`) into its predicates, in order.
pub(super) fn parse_operators(path: &FieldPath, operators: &Document) -> Result<Vec<Predicate>> {
    let error = |message: String| DocError::filter(path.as_str(), message);
    // `$maxDistance` and `$minDistance` belong to the `$near` beside them.
    if ["$near", "$nearSphere", "$maxDistance", "$minDistance"]
        .iter()
        .any(|near| operators.contains_key(near))
    {
        return Ok(vec![Predicate::Near(
            geospatial::parse_near(operators).map_err(error)?,
        )]);
    }
    let mut predicates = Vec::with_capacity(operators.len());
    let mut regex: Option<(&str, &str)> = None;
    let mut regex_options: Option<&str> = None;
    for (operator, value) in operators {
        let predicate = match operator.as_str() {
            "$eq" => Predicate::Eq(operand(path, operator, value)?),
            "$ne" => {
                if matches!(value, Bson::RegularExpression(_)) {
                    return Err(error(
                        "$ne cannot take a regular expression (use $not)".to_string(),
                    ));
                }
                Predicate::Ne(operand(path, operator, value)?)
            }
            "$gt" => Predicate::Gt(operand(path, operator, value)?),
            "$gte" => Predicate::Gte(operand(path, operator, value)?),
            "$lt" => Predicate::Lt(operand(path, operator, value)?),
            "$lte" => Predicate::Lte(operand(path, operator, value)?),
            "$in" => Predicate::In(parse_in_list(path, operator, value)?),
            "$nin" => Predicate::Nin(parse_in_list(path, operator, value)?),
            "$exists" => Predicate::Exists(truthy(value)),
            "$type" => Predicate::Type(parse_type_set(path, value)?),
            "$size" => Predicate::Size(parse_size(path, value)?),
            "$all" => Predicate::All(parse_all(path, value)?),
            "$elemMatch" => Predicate::ElemMatch(parse_elem_match(path, value)?),
            "$not" => Predicate::Not(parse_not(path, value)?),
            "$mod" => parse_mod(path, value)?,
            "$geoWithin" | "$within" => {
                Predicate::GeoWithin(geospatial::parse_within(value).map_err(error)?)
            }
            "$geoIntersects" => {
                Predicate::GeoIntersects(geospatial::parse_intersects(value).map_err(error)?)
            }
            "$regex" => {
                regex = Some(match value {
                    Bson::String(pattern) => (pattern.as_str(), ""),
                    Bson::RegularExpression(regex) => {
                        (regex.pattern.as_str(), regex.options.as_str())
                    }
                    other => {
                        return Err(error(format!(
                            "$regex needs a string or a regular expression, found {}",
                            describe(other)
                        )));
                    }
                });
                continue;
            }
            "$options" => {
                let Bson::String(options) = value else {
                    return Err(error(format!(
                        "$options needs a string, found {}",
                        describe(value)
                    )));
                };
                regex_options = Some(options.as_str());
                continue;
            }
            unsupported if UNSUPPORTED_FIELD_OPERATORS.contains(&unsupported) => {
                return Err(error(format!("{operator} is not supported")));
            }
            unknown if unknown.starts_with('$') => {
                return Err(error(format!("unknown operator {operator}")));
            }
            field => {
                return Err(error(format!(
                    "expected an operator, found field '{field}' (a condition cannot mix operators and fields)"
                )));
            }
        };
        predicates.push(predicate);
    }
    match (regex, regex_options) {
        (None, None) => {}
        (None, Some(_)) => return Err(error("$options needs a $regex beside it".to_string())),
        (Some((pattern, inline_options)), options) => {
            if !inline_options.is_empty() && options.is_some() {
                return Err(error(
                    "$regex: options given both in the regular expression and in $options"
                        .to_string(),
                ));
            }
            let options = options.unwrap_or(inline_options);
            let matcher =
                RegexMatcher::new(pattern, options).map_err(|error| at_path(error, path))?;
            predicates.push(Predicate::Regex(matcher));
        }
    }
    Ok(predicates)
}

/// MongoDB's truth value of an operand (`$exists: 0` is false, `$exists: "no"` is true).
fn truthy(value: &Bson) -> bool {
    match value {
        Bson::Boolean(value) => *value,
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_) => {
            compare(value, &Bson::Int32(0)) != Ordering::Equal
        }
        Bson::Null | Bson::Undefined => false,
        _ => true,
    }
}

fn parse_in_list(path: &FieldPath, operator: &str, value: &Bson) -> Result<InList> {
    let Bson::Array(entries) = value else {
        return Err(DocError::filter(
            path.as_str(),
            format!("{operator} needs an array, found {}", describe(value)),
        ));
    };
    let mut list = InList::default();
    for entry in entries {
        match entry {
            Bson::RegularExpression(regex) => list.regexes.push(
                RegexMatcher::new(regex.pattern.as_str(), regex.options.as_str())
                    .map_err(|error| at_path(error, path))?,
            ),
            Bson::Document(inner) if is_operator_document(inner) => {
                let nested = inner.keys().next().map_or("", String::as_str);
                return Err(DocError::filter(
                    path.as_str(),
                    format!("{operator} cannot contain an operator expression ({nested})"),
                ));
            }
            other => list.values.push(operand(path, operator, other)?),
        }
    }
    Ok(list)
}

fn parse_type_set(path: &FieldPath, value: &Bson) -> Result<TypeSet> {
    let mut set = TypeSet::default();
    match value {
        Bson::Array(entries) => {
            for entry in entries {
                add_type(path, entry, &mut set)?;
            }
        }
        single => add_type(path, single, &mut set)?,
    }
    Ok(set)
}

fn add_type(path: &FieldPath, value: &Bson, set: &mut TypeSet) -> Result<()> {
    let error = |message: String| DocError::filter(path.as_str(), message);
    let element_type = match value {
        Bson::String(alias) if alias == "number" => {
            set.all_numbers = true;
            return Ok(());
        }
        Bson::String(alias) => type_alias(alias)
            .ok_or_else(|| error(format!("$type: unknown type alias '{alias}'")))?,
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) => {
            let code = whole_number(value)
                .ok_or_else(|| error(format!("$type: type code {value} is not a whole number")))?;
            type_code(code).ok_or_else(|| error(format!("$type: unknown type code {code}")))?
        }
        other => {
            return Err(error(format!(
                "$type needs a type code, a type alias or an array of them, found {}",
                describe(other)
            )));
        }
    };
    if !set.types.contains(&element_type) {
        set.types.push(element_type);
    }
    Ok(())
}

fn type_code(code: i64) -> Option<ElementType> {
    match code {
        -1 => Some(ElementType::MinKey),
        127 => Some(ElementType::MaxKey),
        1..=19 => ElementType::from(code as u8),
        _ => None,
    }
}

/// The value of an int, long or whole double; `None` for anything else.
pub(crate) fn whole_number(value: &Bson) -> Option<i64> {
    match value {
        Bson::Int32(int) => Some(i64::from(*int)),
        Bson::Int64(long) => Some(*long),
        Bson::Double(double) if double.fract() == 0.0 && double.abs() < 9.0e18 => {
            Some(*double as i64)
        }
        _ => None,
    }
}

fn parse_size(path: &FieldPath, value: &Bson) -> Result<usize> {
    let error = |message: String| DocError::filter(path.as_str(), message);
    if !matches!(
        value,
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_)
    ) {
        return Err(error(format!(
            "$size needs a number, found {}",
            describe(value)
        )));
    }
    let size = whole_number(value)
        .ok_or_else(|| error(format!("$size needs a whole number, found {value}")))?;
    usize::try_from(size)
        .map_err(|_| error(format!("$size needs a non-negative number, found {size}")))
}

fn parse_all(path: &FieldPath, value: &Bson) -> Result<Vec<Predicate>> {
    let error = |message: String| DocError::filter(path.as_str(), message);
    let Bson::Array(entries) = value else {
        return Err(error(format!(
            "$all needs an array, found {}",
            describe(value)
        )));
    };
    let is_elem_match = |entry: &Bson| matches!(entry, Bson::Document(inner) if inner.keys().next().is_some_and(|key| key == "$elemMatch"));
    if entries.first().is_some_and(is_elem_match) {
        let mut predicates = Vec::with_capacity(entries.len());
        for entry in entries {
            let Bson::Document(inner) = entry else {
                return Err(error(
                    "$all cannot mix $elemMatch and plain values".to_string(),
                ));
            };
            if !is_elem_match(entry) || inner.len() != 1 {
                return Err(error(
                    "$all cannot mix $elemMatch and plain values".to_string(),
                ));
            }
            let spec = inner
                .get("$elemMatch")
                .expect("checked: the first key is $elemMatch");
            predicates.push(Predicate::ElemMatch(parse_elem_match(path, spec)?));
        }
        return Ok(predicates);
    }
    let mut predicates = Vec::with_capacity(entries.len());
    for entry in entries {
        match entry {
            Bson::RegularExpression(regex) => predicates.push(Predicate::Regex(
                RegexMatcher::new(regex.pattern.as_str(), regex.options.as_str())
                    .map_err(|error| at_path(error, path))?,
            )),
            Bson::Document(inner) if is_operator_document(inner) => {
                let nested = inner.keys().next().map_or("", String::as_str);
                return Err(error(format!(
                    "$all cannot contain an operator expression ({nested})"
                )));
            }
            other => predicates.push(Predicate::Eq(operand(path, "$all", other)?)),
        }
    }
    Ok(predicates)
}

fn parse_elem_match(path: &FieldPath, value: &Bson) -> Result<ElemMatch> {
    let Bson::Document(spec) = value else {
        return Err(DocError::filter(
            path.as_str(),
            format!("$elemMatch needs a document, found {}", describe(value)),
        ));
    };
    let first_key = spec.keys().next().map_or("", String::as_str);
    let is_value_form = is_operator_document(spec)
        && !matches!(
            first_key,
            "$and" | "$or" | "$nor" | "$comment" | "$jsonSchema"
        )
        && !UNSUPPORTED_TOP_LEVEL.contains(&first_key);
    if is_value_form {
        Ok(ElemMatch::Value(parse_operators(path, spec)?))
    } else {
        // Errors inside name the path from the top: `a.b` for `{a: {$elemMatch: {b: ...}}}`.
        let filter = parse_filter_nested(spec, &[]).map_err(|error| match error {
            DocError::InvalidFilter {
                path: inner,
                message,
            } => DocError::filter(format!("{}.{inner}", path.as_str()), message),
            other => other,
        })?;
        Ok(ElemMatch::Document(Box::new(filter)))
    }
}

fn parse_not(path: &FieldPath, value: &Bson) -> Result<Vec<Predicate>> {
    let error = |message: String| DocError::filter(path.as_str(), message);
    match value {
        Bson::RegularExpression(regex) => Ok(vec![Predicate::Regex(
            RegexMatcher::new(regex.pattern.as_str(), regex.options.as_str()).map_err(|error| at_path(error, path))?,
        )]),
        Bson::Document(operators) if operators.is_empty() => Err(error("$not needs at least one operator".to_string())),
        Bson::Document(operators) if is_operator_document(operators) => parse_operators(path, operators),
        Bson::Document(_) => Err(error("$not needs a regular expression or a document of operators, found a document of fields".to_string())),
        other => Err(error(format!(
            "$not needs a regular expression or a document of operators, found {}",
            describe(other)
        ))),
    }
}

fn parse_mod(path: &FieldPath, value: &Bson) -> Result<Predicate> {
    let error = |message: &str| DocError::filter(path.as_str(), message.to_string());
    let usage = "$mod needs an array of two numbers [divisor, remainder]";
    let Bson::Array(entries) = value else {
        return Err(error(usage));
    };
    let [divisor, remainder] = entries.as_slice() else {
        return Err(error(usage));
    };
    let truncated = |value: &Bson| match value {
        Bson::Int32(int) => Some(i64::from(*int)),
        Bson::Int64(long) => Some(*long),
        Bson::Double(double) if double.is_finite() => Some(double.trunc() as i64),
        _ => None,
    };
    let (Some(divisor), Some(remainder)) = (truncated(divisor), truncated(remainder)) else {
        return Err(error(usage));
    };
    if divisor == 0 {
        return Err(error("$mod: the divisor cannot be 0"));
    }
    Ok(Predicate::Mod { divisor, remainder })
}
