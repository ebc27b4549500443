//! Object operators: `$mergeObjects`, `$objectToArray`, `$arrayToObject`, `$getField`,
//! `$setField`, `$unsetField`.

// Every operator function has the one signature of `CallFn` (the values by value, a
// `Result`), whether or not it consumes them or can fail.
#![allow(
    clippy::needless_pass_by_value,
    clippy::unnecessary_wraps,
    clippy::ref_option
)]

use bson::{Bson, Document, doc};

use super::num::{is_nullish, type_name};
use super::{Expr, Named, Scope, expect_args, expression_error};
use crate::error::Result;

type Values = Vec<Option<Bson>>;

/// Parses the object operator `name`, if it is one.
pub(super) fn parse(name: &str, argument: &Bson, scope: &mut Scope) -> Option<Result<Expr>> {
    let parsed = match name {
        "$mergeObjects" => expect_args(scope, "$mergeObjects", argument, 0, None)
            .map(|args| Expr::call("$mergeObjects", args, merge_objects)),
        "$objectToArray" => expect_args(scope, "$objectToArray", argument, 1, Some(1))
            .map(|args| Expr::call("$objectToArray", args, object_to_array)),
        "$arrayToObject" => expect_args(scope, "$arrayToObject", argument, 1, Some(1))
            .map(|args| Expr::call("$arrayToObject", args, array_to_object)),
        "$getField" => parse_get_field(argument, scope),
        "$setField" | "$unsetField" => parse_set_field(name, argument, scope),
        _ => return None,
    };
    Some(parsed)
}

fn merge_objects(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let mut merged = Document::new();
    for value in values {
        match value {
            value if is_nullish(value.as_ref()) => {}
            Some(Bson::Document(document)) => {
                for (key, value) in document {
                    merged.insert(key, value);
                }
            }
            other => {
                return Err(expression_error(
                    40400,
                    format!(
                        "{name} requires object inputs, but input {} is of type {}",
                        other
                            .as_ref()
                            .map_or("missing".to_string(), ToString::to_string),
                        type_name(other.as_ref())
                    ),
                ));
            }
        }
    }
    Ok(Some(Bson::Document(merged)))
}

fn object_to_array(name: &'static str, values: Values) -> Result<Option<Bson>> {
    match &values[0] {
        value if is_nullish(value.as_ref()) => Ok(Some(Bson::Null)),
        Some(Bson::Document(document)) => Ok(Some(Bson::Array(
            document
                .iter()
                .map(|(key, value)| Bson::Document(doc! { "k": key, "v": value.clone() }))
                .collect(),
        ))),
        other => Err(expression_error(
            40390,
            format!(
                "{name} requires a document input, found: {}",
                type_name(other.as_ref())
            ),
        )),
    }
}

fn array_to_object(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let items = match &values[0] {
        value if is_nullish(value.as_ref()) => return Ok(Some(Bson::Null)),
        Some(Bson::Array(items)) => items,
        other => {
            return Err(expression_error(
                40386,
                format!(
                    "{name} requires an array input, found: {}",
                    type_name(other.as_ref())
                ),
            ));
        }
    };
    let mut object = Document::new();
    for item in items {
        let (key, value) = match item {
            Bson::Array(pair) if pair.len() == 2 => match &pair[0] {
                Bson::String(key) => (key.clone(), pair[1].clone()),
                other => {
                    return Err(expression_error(
                        40395,
                        format!(
                            "{name} requires an array of key-value pairs, where the key must be of type string. Found key type: {}",
                            type_name(Some(other))
                        ),
                    ));
                }
            },
            Bson::Array(_) => {
                return Err(expression_error(
                    40397,
                    format!("{name} requires an array of size 2 arrays"),
                ));
            }
            Bson::Document(pair)
                if pair.len() == 2 && pair.contains_key("k") && pair.contains_key("v") =>
            {
                match &pair["k"] {
                    Bson::String(key) => (key.clone(), pair["v"].clone()),
                    other => {
                        return Err(expression_error(
                            40394,
                            format!(
                                "{name} requires an object with keys 'k' and 'v', where the value of 'k' must be of type string. Found type: {}",
                                type_name(Some(other))
                            ),
                        ));
                    }
                }
            }
            Bson::Document(_) => {
                return Err(expression_error(
                    40392,
                    format!("{name} requires an object keys of 'k' and 'v'"),
                ));
            }
            other => {
                return Err(expression_error(
                    40398,
                    format!(
                        "Unrecognised input type format for {name}: {}",
                        type_name(Some(other))
                    ),
                ));
            }
        };
        if key.contains('\0') {
            return Err(expression_error(
                4940400,
                format!("Key field cannot contain an embedded null byte in {name}"),
            ));
        }
        object.insert(key, value);
    }
    Ok(Some(Bson::Document(object)))
}

fn parse_get_field(argument: &Bson, scope: &mut Scope) -> Result<Expr> {
    let (field, input) = match argument {
        Bson::Document(spec) if spec.contains_key("field") => {
            let mut named = Named::parse(scope, "$getField", argument, &["field"], &["input"])?;
            let input = named
                .take("input")
                .unwrap_or(scope.parse(&Bson::String("$$CURRENT".into()))?);
            (named.take("field").expect("required"), input)
        }
        other => (
            scope.parse(other)?,
            scope.parse(&Bson::String("$$CURRENT".into()))?,
        ),
    };
    Ok(Expr::call("$getField", vec![field, input], get_field))
}

fn field_name(name: &str, value: &Option<Bson>) -> Result<String> {
    match value {
        Some(Bson::String(field)) => Ok(field.clone()),
        other => Err(expression_error(
            3041704,
            format!(
                "{name} requires 'field' to evaluate to type String, but got {}",
                type_name(other.as_ref())
            ),
        )),
    }
}

fn get_field(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let field = field_name(name, &values[0])?;
    match &values[1] {
        Some(Bson::Document(document)) => Ok(document.get(&field).cloned()),
        value if is_nullish(value.as_ref()) => Ok(Some(Bson::Null)),
        _ => Ok(None),
    }
}

fn parse_set_field(name: &str, argument: &Bson, scope: &mut Scope) -> Result<Expr> {
    if name == "$setField" {
        let mut named = Named::parse(scope, name, argument, &["field", "input", "value"], &[])?;
        let args = vec![
            named.take("field").expect("required"),
            named.take("input").expect("required"),
            named.take("value").expect("required"),
        ];
        Ok(Expr::call("$setField", args, set_field))
    } else {
        let mut named = Named::parse(scope, name, argument, &["field", "input"], &[])?;
        let args = vec![
            named.take("field").expect("required"),
            named.take("input").expect("required"),
        ];
        Ok(Expr::call("$unsetField", args, set_field))
    }
}

fn set_field(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let field = field_name(name, &values[0])?;
    let mut document = match &values[1] {
        Some(Bson::Document(document)) => document.clone(),
        value if is_nullish(value.as_ref()) => return Ok(Some(Bson::Null)),
        other => {
            return Err(expression_error(
                4161105,
                format!(
                    "{name} requires 'input' to evaluate to type Object, but got {}",
                    type_name(other.as_ref())
                ),
            ));
        }
    };
    match values.get(2) {
        Some(Some(value)) => {
            document.insert(field, value.clone());
        }
        _ => {
            document.remove(&field);
        }
    }
    Ok(Some(Bson::Document(document)))
}
