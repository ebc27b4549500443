//! Comparison (`$cmp`, `$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`), boolean (`$and`, `$or`,
//! `$not`), conditional (`$cond`, `$ifNull`, `$switch`) operators and `$let`.

// Every operator function has the one signature of `CallFn` (the values by value, a
// `Result`), whether or not it consumes them or can fail.
#![allow(clippy::needless_pass_by_value, clippy::unnecessary_wraps)]

use std::cmp::Ordering;

use bson::{Bson, Document};

use super::{
    Context, Expr, Named, Operator, OperatorBox, Scope, expect_args, expression_error, is_truthy,
};
use crate::collation::Collation;
use crate::compare::compare;
use crate::error::Result;
use crate::path::describe;

/// Parses the operator `name`, if it is one of this family.
pub(super) fn parse(name: &str, argument: &Bson, scope: &mut Scope) -> Option<Result<Expr>> {
    let parsed = match name {
        "$cmp" | "$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte" => {
            let name: &'static str = match name {
                "$cmp" => "$cmp",
                "$eq" => "$eq",
                "$ne" => "$ne",
                "$gt" => "$gt",
                "$gte" => "$gte",
                "$lt" => "$lt",
                _ => "$lte",
            };
            expect_args(scope, name, argument, 2, Some(2))
                .map(|args| Expr::collated_call(name, args, comparison))
        }
        "$and" => expect_args(scope, "$and", argument, 0, None).map(|args| lazy(Lazy::And(args))),
        "$or" => expect_args(scope, "$or", argument, 0, None).map(|args| lazy(Lazy::Or(args))),
        "$not" => expect_args(scope, "$not", argument, 1, Some(1)).map(|args| {
            Expr::call("$not", args, |_, values| {
                Ok(Some(Bson::Boolean(!is_truthy(values[0].as_ref()))))
            })
        }),
        "$cond" => parse_cond(argument, scope),
        "$ifNull" => {
            expect_args(scope, "$ifNull", argument, 2, None).map(|args| lazy(Lazy::IfNull(args)))
        }
        "$switch" => parse_switch(argument, scope),
        "$let" => parse_let(argument, scope),
        _ => return None,
    };
    Some(parsed)
}

fn lazy(operator: Lazy) -> Expr {
    Expr::Operator(Box::new(operator))
}

/// `None` (missing) compares below every value, as MongoDB's expressions compare it.
pub(crate) fn compare_values(a: Option<&Bson>, b: Option<&Bson>) -> Ordering {
    match (a, b) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(a), Some(b)) => compare(a, b),
    }
}

/// [`compare_values`] under `collation`: strings, at any depth, by its order (through
/// [`crate::compare::compare_collated`], the comparator of filters and sorts).
pub(crate) fn compare_collated(
    a: Option<&Bson>,
    b: Option<&Bson>,
    collation: &Collation,
) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => crate::compare::compare_collated(a, b, collation),
        _ => compare_values(a, b),
    }
}

fn comparison(
    name: &'static str,
    values: Vec<Option<Bson>>,
    collation: &Collation,
) -> Result<Option<Bson>> {
    let order = compare_collated(values[0].as_ref(), values[1].as_ref(), collation);
    Ok(Some(match name {
        "$cmp" => Bson::Int32(match order {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }),
        "$eq" => Bson::Boolean(order == Ordering::Equal),
        "$ne" => Bson::Boolean(order != Ordering::Equal),
        "$gt" => Bson::Boolean(order == Ordering::Greater),
        "$gte" => Bson::Boolean(order != Ordering::Less),
        "$lt" => Bson::Boolean(order == Ordering::Less),
        _ => Bson::Boolean(order != Ordering::Greater),
    }))
}

fn parse_cond(argument: &Bson, scope: &mut Scope) -> Result<Expr> {
    let (condition, then, otherwise) = if let Bson::Document(_) = argument {
        let mut named = Named::parse(scope, "$cond", argument, &["if", "then", "else"], &[])
            .map_err(|_| {
                expression_error(
                    17080,
                    "Missing 'if', 'then' or 'else' parameter to $cond, or an unrecognized one",
                )
            })?;
        (
            named.take("if").expect("required"),
            named.take("then").expect("required"),
            named.take("else").expect("required"),
        )
    } else {
        let mut args = expect_args(scope, "$cond", argument, 3, Some(3))?.into_iter();
        let mut next = || args.next().expect("three arguments");
        (next(), next(), next())
    };
    Ok(lazy(Lazy::Cond(Box::new([condition, then, otherwise]))))
}

fn parse_switch(argument: &Bson, scope: &mut Scope) -> Result<Expr> {
    let Bson::Document(spec) = argument else {
        return Err(expression_error(
            40060,
            format!(
                "$switch requires an object as an argument, found: {}",
                describe(argument)
            ),
        ));
    };
    let mut branches = Vec::new();
    let mut default = None;
    for (key, value) in spec {
        match key.as_str() {
            "branches" => {
                let Bson::Array(items) = value else {
                    return Err(expression_error(
                        40061,
                        "$switch expected an array for 'branches'",
                    ));
                };
                for item in items {
                    let Bson::Document(branch) = item else {
                        return Err(expression_error(
                            40062,
                            "$switch expected each branch to be an object",
                        ));
                    };
                    let (mut case, mut then) = (None, None);
                    for (part, expr) in branch {
                        match part.as_str() {
                            "case" => case = Some(scope.parse(expr)?),
                            "then" => then = Some(scope.parse(expr)?),
                            other => {
                                return Err(expression_error(
                                    40063,
                                    format!(
                                        "$switch found an unknown argument to a branch: {other}"
                                    ),
                                ));
                            }
                        }
                    }
                    let case = case.ok_or_else(|| {
                        expression_error(
                            40064,
                            "$switch requires each branch have a 'case' expression",
                        )
                    })?;
                    let then = then.ok_or_else(|| {
                        expression_error(
                            40065,
                            "$switch requires each branch have a 'then' expression",
                        )
                    })?;
                    branches.push((case, then));
                }
            }
            "default" => default = Some(scope.parse(value)?),
            other => {
                return Err(expression_error(
                    40067,
                    format!("$switch found an unknown argument: {other}"),
                ));
            }
        }
    }
    if branches.is_empty() {
        return Err(expression_error(
            40068,
            "$switch requires at least one branch",
        ));
    }
    Ok(lazy(Lazy::Switch {
        branches,
        default: default.map(Box::new),
    }))
}

fn parse_let(argument: &Bson, scope: &mut Scope) -> Result<Expr> {
    let Bson::Document(spec) = argument else {
        return Err(expression_error(
            16874,
            "$let only supports an object as its argument",
        ));
    };
    let mut vars: Option<&Document> = None;
    let mut body: Option<&Bson> = None;
    for (key, value) in spec {
        match (key.as_str(), value) {
            ("vars", Bson::Document(defined)) => vars = Some(defined),
            ("vars", _) => {
                return Err(expression_error(
                    10065,
                    "invalid parameter: expected an object (vars)",
                ));
            }
            ("in", value) => body = Some(value),
            (other, _) => {
                return Err(expression_error(
                    16875,
                    format!("Unrecognized parameter to $let: {other}"),
                ));
            }
        }
    }
    let vars = vars.ok_or_else(|| expression_error(16876, "Missing 'vars' parameter to $let"))?;
    let body = body.ok_or_else(|| expression_error(16877, "Missing 'in' parameter to $let"))?;
    // The variables' expressions see the outer scope only.
    let values = vars
        .values()
        .map(|value| scope.parse(value))
        .collect::<Result<Vec<_>>>()?;
    let names: Vec<String> = vars.keys().cloned().collect();
    let body = scope.bind(&names, |inner| inner.parse(body))?;
    Ok(lazy(Lazy::Let {
        values,
        body: Box::new(body),
    }))
}

/// The operators that evaluate only some of their arguments, or bind variables.
#[derive(Debug, Clone)]
enum Lazy {
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Cond(Box<[Expr; 3]>),
    IfNull(Vec<Expr>),
    Switch {
        branches: Vec<(Expr, Expr)>,
        default: Option<Box<Expr>>,
    },
    Let {
        values: Vec<Expr>,
        body: Box<Expr>,
    },
}

impl Operator for Lazy {
    fn evaluate(&self, context: &mut Context<'_>) -> Result<Option<Bson>> {
        match self {
            Lazy::And(args) => {
                for arg in args {
                    if !is_truthy(arg.evaluate(context)?.as_ref()) {
                        return Ok(Some(Bson::Boolean(false)));
                    }
                }
                Ok(Some(Bson::Boolean(true)))
            }
            Lazy::Or(args) => {
                for arg in args {
                    if is_truthy(arg.evaluate(context)?.as_ref()) {
                        return Ok(Some(Bson::Boolean(true)));
                    }
                }
                Ok(Some(Bson::Boolean(false)))
            }
            Lazy::Cond(parts) => {
                let [condition, then, otherwise] = &**parts;
                if is_truthy(condition.evaluate(context)?.as_ref()) {
                    then.evaluate(context)
                } else {
                    otherwise.evaluate(context)
                }
            }
            Lazy::IfNull(args) => {
                let (last, rest) = args.split_last().expect("two arguments at least");
                for arg in rest {
                    let value = arg.evaluate(context)?;
                    if !matches!(value, None | Some(Bson::Null | Bson::Undefined)) {
                        return Ok(value);
                    }
                }
                last.evaluate(context)
            }
            Lazy::Switch { branches, default } => {
                for (case, then) in branches {
                    if is_truthy(case.evaluate(context)?.as_ref()) {
                        return then.evaluate(context);
                    }
                }
                match default {
                    Some(default) => default.evaluate(context),
                    None => Err(expression_error(
                        40066,
                        "$switch could not find a matching branch for an input, and no default was specified.",
                    )),
                }
            }
            Lazy::Let { values, body } => {
                let bound = values
                    .iter()
                    .map(|value| Ok(value.evaluate(context)?.unwrap_or(Bson::Undefined)))
                    .collect::<Result<Vec<_>>>()?;
                context.with_bound(bound, |inner| body.evaluate(inner))
            }
        }
    }

    fn clone_box(&self) -> OperatorBox {
        Box::new(self.clone())
    }

    fn children(&self) -> Vec<&Expr> {
        match self {
            Lazy::And(args) | Lazy::Or(args) | Lazy::IfNull(args) => args.iter().collect(),
            Lazy::Cond(parts) => parts.iter().collect(),
            Lazy::Switch { branches, default } => branches
                .iter()
                .flat_map(|(case, then)| [case, then])
                .chain(default.as_deref())
                .collect(),
            Lazy::Let { values, body } => values.iter().chain([&**body]).collect(),
        }
    }
}
