//! Array operators: `$size`, ...

use bson::Bson;

use super::{Expr, Scope, expect_args, expression_error};
use crate::error::Result;
use crate::path::describe;

/// Parses the array operator `name`, if it is one.
pub(super) fn parse(name: &str, argument: &Bson, scope: &mut Scope) -> Option<Result<Expr>> {
    let parsed = match name {
        "$size" => expect_args(scope, "$size", argument, 1, Some(1))
            .map(|args| Expr::call("$size", args, size)),
        _ => return None,
    };
    Some(parsed)
}

fn size(name: &'static str, values: Vec<Option<Bson>>) -> Result<Option<Bson>> {
    match values.into_iter().next().flatten() {
        Some(Bson::Array(items)) => Ok(Some(Bson::Int32(items.len() as i32))),
        other => Err(expression_error(
            17124,
            format!(
                "The argument to {name} must be an array, but was of type: {}",
                other.as_ref().map_or("missing", describe)
            ),
        )),
    }
}
