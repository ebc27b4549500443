//! Array operators: `$size`, `$arrayElemAt`, `$first`, `$last`, `$slice`, `$concatArrays`,
//! `$in`, `$indexOfArray`, `$isArray`, `$range`, `$reverseArray`, `$zip`, `$filter`, `$map`,
//! `$reduce`, and the set operators (`$setUnion`, `$setIntersection`, `$setDifference`,
//! `$setEquals`, `$setIsSubset`, `$anyElementTrue`, `$allElementsTrue`).
//!
//! The operators that compare elements (`$in`, `$indexOfArray` and the set operators other
//! than `$anyElementTrue`/`$allElementsTrue`) compare strings under the evaluation's
//! collation, as MongoDB's do: equality is [`compare_collated`], and a set is a
//! [`ValueSet`] under that collation.

// Every operator function has the one signature of `CallFn` (the values by value, a
// `Result`), whether or not it consumes them or can fail.
#![allow(clippy::needless_pass_by_value, clippy::unnecessary_wraps)]

use bson::{Bson, Document};

use super::num::{Num, is_nullish, type_name};
use super::{
    Context, Expr, Operator, OperatorBox, Scope, expect_args, expression_error, is_truthy,
};
use crate::collation::Collation;
use crate::compare::compare_collated;
use crate::error::Result;
use crate::value_set::ValueSet;

type Values = Vec<Option<Bson>>;

/// Parses the array operator `name`, if it is one.
pub(super) fn parse(name: &str, argument: &Bson, scope: &mut Scope) -> Option<Result<Expr>> {
    let call = |scope: &mut Scope, name: &'static str, min, max, function: super::CallFn| {
        expect_args(scope, name, argument, min, max).map(|args| Expr::call(name, args, function))
    };
    let collated =
        |scope: &mut Scope, name: &'static str, min, max, function: super::CollatedFn| {
            expect_args(scope, name, argument, min, max)
                .map(|args| Expr::collated_call(name, args, function))
        };
    let parsed = match name {
        "$size" => call(scope, "$size", 1, Some(1), size),
        "$arrayElemAt" => call(scope, "$arrayElemAt", 2, Some(2), array_elem_at),
        "$first" => call(scope, "$first", 1, Some(1), first_or_last),
        "$last" => call(scope, "$last", 1, Some(1), first_or_last),
        "$slice" => call(scope, "$slice", 2, Some(3), slice),
        "$concatArrays" => call(scope, "$concatArrays", 0, None, concat_arrays),
        "$in" => collated(scope, "$in", 2, Some(2), in_array),
        "$indexOfArray" => collated(scope, "$indexOfArray", 2, Some(4), index_of_array),
        "$isArray" => call(scope, "$isArray", 1, Some(1), |_, values| {
            Ok(Some(Bson::Boolean(matches!(
                values[0],
                Some(Bson::Array(_))
            ))))
        }),
        "$range" => call(scope, "$range", 2, Some(3), range),
        "$reverseArray" => call(scope, "$reverseArray", 1, Some(1), reverse_array),
        "$setUnion" => collated(scope, "$setUnion", 0, None, set_union),
        "$setIntersection" => collated(scope, "$setIntersection", 0, None, set_intersection),
        "$setDifference" => collated(scope, "$setDifference", 2, Some(2), set_difference),
        "$setEquals" => collated(scope, "$setEquals", 2, None, set_equals),
        "$setIsSubset" => collated(scope, "$setIsSubset", 2, Some(2), set_is_subset),
        "$anyElementTrue" => call(scope, "$anyElementTrue", 1, Some(1), any_element_true),
        "$allElementsTrue" => call(scope, "$allElementsTrue", 1, Some(1), all_elements_true),
        "$zip" => parse_zip(argument, scope),
        "$filter" => parse_filter(argument, scope),
        "$map" => parse_map(argument, scope),
        "$reduce" => parse_reduce(argument, scope),
        _ => return None,
    };
    Some(parsed)
}

fn array_error(code: i32, name: &str, what: &str, value: Option<&Bson>) -> crate::DocError {
    expression_error(
        code,
        format!(
            "{name}'s {what} must be an array, but is {}",
            type_name(value)
        ),
    )
}

fn size(name: &'static str, values: Values) -> Result<Option<Bson>> {
    match values.into_iter().next().flatten() {
        Some(Bson::Array(items)) => Ok(Some(Bson::Int32(items.len() as i32))),
        other => Err(expression_error(
            17124,
            format!(
                "The argument to {name} must be an array, but was of type: {}",
                type_name(other.as_ref())
            ),
        )),
    }
}

/// An index argument: a whole number that fits in an int.
fn index(name: &str, value: &Bson, code: i32) -> Result<i64> {
    Num::of(value)
        .and_then(Num::as_i64)
        .filter(|n| i32::try_from(*n).is_ok())
        .ok_or_else(|| {
            expression_error(
                code,
                format!("{name}'s second argument must be a numeric value representable as a 32-bit integral value, but is {}", type_name(Some(value))),
            )
        })
}

fn element(items: &[Bson], at: i64) -> Option<Bson> {
    let position = if at < 0 { items.len() as i64 + at } else { at };
    usize::try_from(position)
        .ok()
        .and_then(|p| items.get(p))
        .cloned()
}

fn array_elem_at(name: &'static str, values: Values) -> Result<Option<Bson>> {
    if is_nullish(values[0].as_ref()) || is_nullish(values[1].as_ref()) {
        return Ok(Some(Bson::Null));
    }
    let Some(Bson::Array(items)) = &values[0] else {
        return Err(array_error(
            28689,
            name,
            "first argument",
            values[0].as_ref(),
        ));
    };
    let at = index(name, values[1].as_ref().expect("checked"), 28690)?;
    Ok(element(items, at))
}

fn first_or_last(name: &'static str, values: Values) -> Result<Option<Bson>> {
    match &values[0] {
        value if is_nullish(value.as_ref()) => Ok(Some(Bson::Null)),
        Some(Bson::Array(items)) => Ok(if name == "$first" {
            items.first()
        } else {
            items.last()
        }
        .cloned()),
        other => Err(expression_error(
            28689,
            format!(
                "{name}'s argument must be an array, but is {}",
                type_name(other.as_ref())
            ),
        )),
    }
}

fn slice(name: &'static str, values: Values) -> Result<Option<Bson>> {
    if values.iter().any(|value| is_nullish(value.as_ref())) {
        return Ok(Some(Bson::Null));
    }
    let Some(Bson::Array(items)) = &values[0] else {
        return Err(array_error(
            28724,
            name,
            "first argument",
            values[0].as_ref(),
        ));
    };
    let length = items.len() as i64;
    let second = index(name, values[1].as_ref().expect("checked"), 28725)?;
    let (start, count) = if let Some(Some(third)) = values.get(2) {
        let count = index(name, third, 28727)?;
        if count <= 0 {
            return Err(expression_error(
                28729,
                format!("Third argument to {name} must be positive: {count}"),
            ));
        }
        let start = if second < 0 {
            (length + second).max(0)
        } else {
            second.min(length)
        };
        (start, count)
    } else if second < 0 {
        let start = (length + second).max(0);
        (start, length - start)
    } else {
        (0, second)
    };
    Ok(Some(Bson::Array(
        items
            .iter()
            .skip(start as usize)
            .take(count as usize)
            .cloned()
            .collect(),
    )))
}

fn concat_arrays(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let mut all = Vec::new();
    for value in &values {
        match value {
            value if is_nullish(value.as_ref()) => return Ok(Some(Bson::Null)),
            Some(Bson::Array(items)) => all.extend(items.iter().cloned()),
            other => {
                return Err(expression_error(
                    28664,
                    format!(
                        "{name} only supports arrays, not {}",
                        type_name(other.as_ref())
                    ),
                ));
            }
        }
    }
    Ok(Some(Bson::Array(all)))
}

fn in_array(name: &'static str, values: Values, collation: &Collation) -> Result<Option<Bson>> {
    let Some(Bson::Array(items)) = &values[1] else {
        return Err(expression_error(
            40081,
            format!(
                "{name} requires an array as a second argument, found: {}",
                type_name(values[1].as_ref())
            ),
        ));
    };
    let needle = values[0].clone().unwrap_or(Bson::Undefined);
    Ok(Some(Bson::Boolean(items.iter().any(|item| {
        compare_collated(item, &needle, collation).is_eq()
    }))))
}

fn index_of_array(
    name: &'static str,
    values: Values,
    collation: &Collation,
) -> Result<Option<Bson>> {
    let items = match &values[0] {
        value if is_nullish(value.as_ref()) => return Ok(Some(Bson::Null)),
        Some(Bson::Array(items)) => items,
        other => return Err(array_error(40090, name, "first argument", other.as_ref())),
    };
    let bound = |position: usize, default: i64| -> Result<i64> {
        match values.get(position) {
            None => Ok(default),
            Some(Some(value)) => match Num::of(value).and_then(Num::as_i64) {
                Some(n) if n >= 0 => Ok(n),
                _ => Err(expression_error(
                    40097,
                    format!("{name} requires a non-negative integral starting and ending index"),
                )),
            },
            Some(None) => Ok(default),
        }
    };
    let start = bound(2, 0)? as usize;
    let end = (bound(3, items.len() as i64)? as usize).min(items.len());
    let needle = values[1].clone().unwrap_or(Bson::Undefined);
    let found = (start..end)
        .find(|&position| compare_collated(&items[position], &needle, collation).is_eq());
    Ok(Some(Bson::Int32(
        found.map_or(-1, |position| position as i32),
    )))
}

fn range(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let integer = |position: usize, code: i32, what: &str| -> Result<i64> {
        values[position]
            .as_ref()
            .and_then(Num::of)
            .and_then(Num::as_i64)
            .filter(|n| i32::try_from(*n).is_ok())
            .ok_or_else(|| {
                expression_error(
                    code,
                    format!("{name} requires a {what} that can be represented as a 32-bit integer, found value of type: {}", type_name(values[position].as_ref())),
                )
            })
    };
    let start = integer(0, 34443, "starting value")?;
    let end = integer(1, 34445, "ending value")?;
    let step = if values.len() > 2 {
        integer(2, 34447, "step value")?
    } else {
        1
    };
    if step == 0 {
        return Err(expression_error(
            34449,
            format!("{name} requires a non-zero step value"),
        ));
    }
    let mut out = Vec::new();
    let mut at = start;
    while (step > 0 && at < end) || (step < 0 && at > end) {
        out.push(Bson::Int32(at as i32));
        at += step;
    }
    Ok(Some(Bson::Array(out)))
}

fn reverse_array(name: &'static str, values: Values) -> Result<Option<Bson>> {
    match &values[0] {
        value if is_nullish(value.as_ref()) => Ok(Some(Bson::Null)),
        Some(Bson::Array(items)) => Ok(Some(Bson::Array(items.iter().rev().cloned().collect()))),
        other => Err(array_error(34435, name, "argument", other.as_ref())),
    }
}

/// The arguments as arrays, or `None` when one is null or missing.
fn arrays(name: &str, values: &Values, code: i32) -> Result<Option<Vec<Vec<Bson>>>> {
    let mut out = Vec::new();
    for value in values {
        match value {
            value if is_nullish(value.as_ref()) => return Ok(None),
            Some(Bson::Array(items)) => out.push(items.clone()),
            other => {
                return Err(expression_error(
                    code,
                    format!(
                        "All operands of {name} must be arrays. One argument is of type: {}",
                        type_name(other.as_ref())
                    ),
                ));
            }
        }
    }
    Ok(Some(out))
}

/// The values of `items`, each once under `collation`.
fn value_set(items: Vec<Bson>, collation: &Collation) -> ValueSet {
    let mut set = ValueSet::new(collation);
    set.extend(items);
    set
}

fn set_union(name: &'static str, values: Values, collation: &Collation) -> Result<Option<Bson>> {
    let Some(all) = arrays(name, &values, 17043)? else {
        return Ok(Some(Bson::Null));
    };
    Ok(Some(Bson::Array(
        value_set(all.into_iter().flatten().collect(), collation).into_vec(),
    )))
}

fn set_intersection(
    name: &'static str,
    values: Values,
    collation: &Collation,
) -> Result<Option<Bson>> {
    let Some(all) = arrays(name, &values, 17047)? else {
        return Ok(Some(Bson::Null));
    };
    let mut iter = all.into_iter();
    let mut kept = value_set(iter.next().unwrap_or_default(), collation).into_vec();
    for other in iter {
        let other = value_set(other, collation);
        kept.retain(|value| other.contains(value));
    }
    Ok(Some(Bson::Array(kept)))
}

fn set_difference(
    name: &'static str,
    values: Values,
    collation: &Collation,
) -> Result<Option<Bson>> {
    let Some(mut all) = arrays(name, &values, 17048)? else {
        return Ok(Some(Bson::Null));
    };
    let removed = value_set(all.pop().expect("two arguments"), collation);
    let mut kept = value_set(all.pop().expect("two arguments"), collation).into_vec();
    kept.retain(|value| !removed.contains(value));
    Ok(Some(Bson::Array(kept)))
}

/// Whether every one of `needles` is in `haystack`.
fn contains_all(haystack: &ValueSet, needles: &ValueSet) -> bool {
    needles
        .as_slice()
        .iter()
        .all(|needle| haystack.contains(needle))
}

fn set_equals(name: &'static str, values: Values, collation: &Collation) -> Result<Option<Bson>> {
    let all = arrays(name, &values, 17044)?.ok_or_else(|| {
        expression_error(
            17044,
            format!("All operands of {name} must be arrays. One argument is null or missing"),
        )
    })?;
    let sets: Vec<ValueSet> = all
        .into_iter()
        .map(|items| value_set(items, collation))
        .collect();
    let equal = sets
        .windows(2)
        .all(|pair| contains_all(&pair[0], &pair[1]) && contains_all(&pair[1], &pair[0]));
    Ok(Some(Bson::Boolean(equal)))
}

fn set_is_subset(
    name: &'static str,
    values: Values,
    collation: &Collation,
) -> Result<Option<Bson>> {
    let mut all = arrays(name, &values, 17046)?.ok_or_else(|| {
        expression_error(17046, format!("both operands of {name} must be arrays"))
    })?;
    let superset = value_set(all.pop().expect("two arguments"), collation);
    let subset = value_set(all.pop().expect("two arguments"), collation);
    Ok(Some(Bson::Boolean(contains_all(&superset, &subset))))
}

fn any_element_true(name: &'static str, values: Values) -> Result<Option<Bson>> {
    match &values[0] {
        Some(Bson::Array(items)) => Ok(Some(Bson::Boolean(
            items.iter().any(|item| is_truthy(Some(item))),
        ))),
        other => Err(expression_error(
            17041,
            format!(
                "{name}'s argument must be an array, but is {}",
                type_name(other.as_ref())
            ),
        )),
    }
}

fn all_elements_true(name: &'static str, values: Values) -> Result<Option<Bson>> {
    match &values[0] {
        Some(Bson::Array(items)) => Ok(Some(Bson::Boolean(
            items.iter().all(|item| is_truthy(Some(item))),
        ))),
        other => Err(expression_error(
            17040,
            format!(
                "{name}'s argument must be an array, but is {}",
                type_name(other.as_ref())
            ),
        )),
    }
}

/// The `as` argument of `$filter`/`$map`: a constant string.
fn as_name(document: &Document, default: &str) -> Result<String> {
    match document.get("as") {
        None => Ok(default.to_string()),
        Some(Bson::String(name)) => Ok(name.clone()),
        Some(other) => Err(expression_error(
            16866,
            format!("'as' must be a string, found {}", type_name(Some(other))),
        )),
    }
}

fn named_document<'a>(name: &str, argument: &'a Bson, code: i32) -> Result<&'a Document> {
    match argument {
        Bson::Document(document) => Ok(document),
        other => Err(expression_error(
            code,
            format!(
                "{name} only supports an object as its argument, found {}",
                type_name(Some(other))
            ),
        )),
    }
}

fn check_fields(
    name: &str,
    document: &Document,
    allowed: &[&str],
    required: &[&str],
) -> Result<()> {
    for key in document.keys() {
        if !allowed.contains(&key.as_str()) {
            return Err(expression_error(
                28647,
                format!("Unrecognized parameter to {name}: {key}"),
            ));
        }
    }
    for key in required {
        if !document.contains_key(key) {
            return Err(expression_error(
                28648,
                format!("Missing '{key}' parameter to {name}"),
            ));
        }
    }
    Ok(())
}

fn parse_filter(argument: &Bson, scope: &mut Scope) -> Result<Expr> {
    let spec = named_document("$filter", argument, 28646)?;
    check_fields(
        "$filter",
        spec,
        &["input", "as", "cond", "limit"],
        &["input", "cond"],
    )?;
    let input = scope.parse(&spec["input"])?;
    let limit = spec
        .get("limit")
        .map(|limit| scope.parse(limit))
        .transpose()?;
    let name = as_name(spec, "this")?;
    let condition = scope.bind(&[name], |inner| inner.parse(&spec["cond"]))?;
    Ok(Expr::Operator(Box::new(Iterate::Filter {
        input,
        condition,
        limit,
    })))
}

fn parse_map(argument: &Bson, scope: &mut Scope) -> Result<Expr> {
    let spec = named_document("$map", argument, 16878)?;
    check_fields("$map", spec, &["input", "as", "in"], &["input", "in"])?;
    let input = scope.parse(&spec["input"])?;
    let name = as_name(spec, "this")?;
    let body = scope.bind(&[name], |inner| inner.parse(&spec["in"]))?;
    Ok(Expr::Operator(Box::new(Iterate::Map { input, body })))
}

fn parse_reduce(argument: &Bson, scope: &mut Scope) -> Result<Expr> {
    let spec = named_document("$reduce", argument, 40075)?;
    check_fields(
        "$reduce",
        spec,
        &["input", "initialValue", "in"],
        &["input", "initialValue", "in"],
    )?;
    let input = scope.parse(&spec["input"])?;
    let initial = scope.parse(&spec["initialValue"])?;
    let body = scope.bind(&["value".to_string(), "this".to_string()], |inner| {
        inner.parse(&spec["in"])
    })?;
    Ok(Expr::Operator(Box::new(Iterate::Reduce {
        input,
        initial,
        body,
    })))
}

fn parse_zip(argument: &Bson, scope: &mut Scope) -> Result<Expr> {
    let spec = named_document("$zip", argument, 34460)?;
    check_fields(
        "$zip",
        spec,
        &["inputs", "useLongestLength", "defaults"],
        &["inputs"],
    )?;
    let Bson::Array(inputs) = &spec["inputs"] else {
        return Err(expression_error(
            34461,
            "inputs must be an array of expressions",
        ));
    };
    let inputs = inputs
        .iter()
        .map(|input| scope.parse(input))
        .collect::<Result<Vec<_>>>()?;
    let longest = match spec.get("useLongestLength") {
        None => false,
        Some(Bson::Boolean(longest)) => *longest,
        Some(_) => return Err(expression_error(34463, "useLongestLength must be a bool")),
    };
    let defaults = spec
        .get("defaults")
        .map(|defaults| scope.parse(defaults))
        .transpose()?;
    if defaults.is_some() && !longest {
        return Err(expression_error(
            34466,
            "cannot specify defaults unless useLongestLength is true",
        ));
    }
    Ok(Expr::Operator(Box::new(Iterate::Zip {
        inputs,
        longest,
        defaults,
    })))
}

/// The operators that evaluate a body per element.
#[derive(Debug, Clone)]
enum Iterate {
    Filter {
        input: Expr,
        condition: Expr,
        limit: Option<Expr>,
    },
    Map {
        input: Expr,
        body: Expr,
    },
    Reduce {
        input: Expr,
        initial: Expr,
        body: Expr,
    },
    Zip {
        inputs: Vec<Expr>,
        longest: bool,
        defaults: Option<Expr>,
    },
}

/// The input array, or `None` for null/missing.
fn input_array(name: &str, value: Option<Bson>, code: i32) -> Result<Option<Vec<Bson>>> {
    match value {
        value if is_nullish(value.as_ref()) => Ok(None),
        Some(Bson::Array(items)) => Ok(Some(items)),
        other => Err(expression_error(
            code,
            format!(
                "input to {name} must be an array not {}",
                type_name(other.as_ref())
            ),
        )),
    }
}

impl Operator for Iterate {
    fn evaluate(&self, context: &mut Context<'_>) -> Result<Option<Bson>> {
        match self {
            Iterate::Filter {
                input,
                condition,
                limit,
            } => {
                let Some(items) = input_array("$filter", input.evaluate(context)?, 28651)? else {
                    return Ok(Some(Bson::Null));
                };
                let limit = match limit {
                    None => usize::MAX,
                    Some(limit) => match limit.evaluate(context)? {
                        value if is_nullish(value.as_ref()) => usize::MAX,
                        Some(value) => match Num::of(&value).and_then(Num::as_i64) {
                            Some(n) if n > 0 => n as usize,
                            _ => {
                                return Err(expression_error(
                                    327,
                                    "$filter: limit must be represented as a positive 32-bit integral value",
                                ));
                            }
                        },
                        None => usize::MAX,
                    },
                };
                let mut kept = Vec::new();
                for item in items {
                    if kept.len() >= limit {
                        break;
                    }
                    let keep =
                        context.with_bound([item.clone()], |inner| condition.evaluate(inner))?;
                    if is_truthy(keep.as_ref()) {
                        kept.push(item);
                    }
                }
                Ok(Some(Bson::Array(kept)))
            }
            Iterate::Map { input, body } => {
                let Some(items) = input_array("$map", input.evaluate(context)?, 16883)? else {
                    return Ok(Some(Bson::Null));
                };
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    let value = context.with_bound([item], |inner| body.evaluate(inner))?;
                    out.push(value.unwrap_or(Bson::Null));
                }
                Ok(Some(Bson::Array(out)))
            }
            Iterate::Reduce {
                input,
                initial,
                body,
            } => {
                let Some(items) = input_array("$reduce", input.evaluate(context)?, 40080)? else {
                    return Ok(Some(Bson::Null));
                };
                let mut value = initial.evaluate(context)?;
                for item in items {
                    let current = value.clone().unwrap_or(Bson::Null);
                    value = context.with_bound([current, item], |inner| body.evaluate(inner))?;
                }
                Ok(value)
            }
            Iterate::Zip {
                inputs,
                longest,
                defaults,
            } => {
                let mut arrays = Vec::new();
                for input in inputs {
                    match input.evaluate(context)? {
                        value if is_nullish(value.as_ref()) => return Ok(Some(Bson::Null)),
                        Some(Bson::Array(items)) => arrays.push(items),
                        other => {
                            return Err(expression_error(
                                34468,
                                format!(
                                    "$zip found a non-array expression in input: {}",
                                    type_name(other.as_ref())
                                ),
                            ));
                        }
                    }
                }
                let defaults = match defaults {
                    None => vec![Bson::Null; arrays.len()],
                    Some(defaults) => match defaults.evaluate(context)? {
                        Some(Bson::Array(items)) if items.len() == arrays.len() => items,
                        _ => {
                            return Err(expression_error(
                                34467,
                                "$zip requires defaults to be an array of the same length as inputs",
                            ));
                        }
                    },
                };
                let lengths = arrays.iter().map(Vec::len);
                let length = if *longest {
                    lengths.max()
                } else {
                    lengths.min()
                }
                .unwrap_or(0);
                let zipped = (0..length)
                    .map(|position| {
                        Bson::Array(
                            arrays
                                .iter()
                                .zip(&defaults)
                                .map(|(items, default)| {
                                    items
                                        .get(position)
                                        .cloned()
                                        .unwrap_or_else(|| default.clone())
                                })
                                .collect(),
                        )
                    })
                    .collect();
                Ok(Some(Bson::Array(zipped)))
            }
        }
    }

    fn clone_box(&self) -> OperatorBox {
        Box::new(self.clone())
    }

    fn children(&self) -> Vec<&Expr> {
        match self {
            Iterate::Filter {
                input,
                condition,
                limit,
            } => [input, condition].into_iter().chain(limit).collect(),
            Iterate::Map { input, body } => vec![input, body],
            Iterate::Reduce {
                input,
                initial,
                body,
            } => vec![input, initial, body],
            Iterate::Zip {
                inputs, defaults, ..
            } => inputs.iter().chain(defaults).collect(),
        }
    }
}
