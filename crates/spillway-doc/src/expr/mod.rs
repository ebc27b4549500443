//! MongoDB's aggregation expression language: an expression (`{$add: ["$price", 1]}`,
//! `"$reviews.stars"`, `{$size: "$customers_purchased"}`) parsed once into an [`Expression`],
//! then evaluated on decoded documents.
//!
//! [`Expression::parse`] checks what can be checked without a document (unknown operators,
//! argument counts, undefined variables, malformed field paths) and reports it with MongoDB's
//! error code ([`DocError::Expression`]); [`Expression::evaluate`] fails only where MongoDB
//! fails at run time (`$add` of a string, `$arrayElemAt` of a non-array...), with MongoDB's
//! code too. The result of an evaluation is `None` where MongoDB's is *missing* (a field path
//! that reaches nothing, `$$REMOVE`): a stage that writes the result into a document leaves
//! the field out, and operators treat it as they treat missing values, which is not always as
//! they treat `null`.
//!
//! ```
//! use bson::{Bson, doc};
//! use spillway_doc::expr::{Expression, Variables};
//!
//! let total = Expression::parse(&Bson::from(doc! { "$size": "$buyers" }))?;
//! let book = doc! { "title": "Dune", "buyers": ["ann", "bob"] };
//! assert_eq!(total.evaluate(&book, &Variables::default())?, Some(Bson::Int32(2)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Layout: this module holds the parsed shape (`Expr`), the scope of variables, the
//! evaluation context and the dispatch from an operator's name to its family; each family of
//! operators (arithmetic, strings, arrays, dates...) lives in its own module and only
//! registers a parse function in `FAMILIES`. This module must never touch storage or
//! collections: a stage that needs another collection (`$lookup`) belongs to the pipeline.

use std::fmt;

use bson::{Bson, DateTime, Document};

use crate::collation::Collation;
use crate::error::{DocError, Result};

mod args;
mod arith;
mod array;
mod convert;
mod date;
mod logic;
pub(crate) mod num;
mod object;
mod string;

pub use num::type_name;

pub(crate) use args::{Named, expect_args};

/// A parsed aggregation expression.
#[derive(Debug, Clone)]
pub struct Expression {
    expr: Expr,
}

/// Two expressions are equal when they were parsed from the same specification (their parsed
/// shapes print the same): filters holding `$expr` compare by it.
impl PartialEq for Expression {
    fn eq(&self, other: &Self) -> bool {
        format!("{:?}", self.expr) == format!("{:?}", other.expr)
    }
}

/// Values bound outside the expression: the pipeline's `let` variables and `$$NOW`.
#[derive(Debug, Clone)]
pub struct Variables {
    /// User variables (`let` of `aggregate`, `$lookup`), by name, without the `$$`.
    pub user: Vec<(String, Bson)>,
    /// The value of `$$NOW` (and `$$CLUSTER_TIME`'s date), fixed for one statement.
    pub now: DateTime,
    /// How the operators that compare values (`$eq` ... `$cmp`, `$in`, `$indexOfArray`, the
    /// set operators, `$max`/`$min`) compare strings, and how `$group` keys and accumulators
    /// compare them: the operation's collation, as MongoDB's expressions compare under it
    /// (simple by default).
    pub collation: Collation,
}

impl Default for Variables {
    fn default() -> Self {
        Variables {
            user: Vec::new(),
            now: DateTime::now(),
            collation: Collation::simple(),
        }
    }
}

impl Expression {
    /// Parses an expression with no user variables in scope.
    pub fn parse(spec: &Bson) -> Result<Expression> {
        Expression::parse_in(spec, &[])
    }

    /// Parses an expression in which the user variables `names` (without `$$`) are defined,
    /// as the pipeline's `let` defines them. [`Expression::evaluate`] must then be given
    /// [`Variables`] with the same names in the same order.
    pub fn parse_in(spec: &Bson, names: &[String]) -> Result<Expression> {
        let mut scope = Scope {
            names: names.to_vec(),
        };
        Ok(Expression {
            expr: scope.parse(spec)?,
        })
    }

    /// Evaluates the expression with `document` as `$$ROOT` and `$$CURRENT`. `None` is
    /// MongoDB's *missing*.
    pub fn evaluate(&self, document: &Document, variables: &Variables) -> Result<Option<Bson>> {
        let mut context = Context {
            root: document,
            vars: variables
                .user
                .iter()
                .map(|(_, value)| value.clone())
                .collect(),
            now: variables.now,
            collation: &variables.collation,
        };
        self.expr.evaluate(&mut context)
    }

    /// The constant this expression always evaluates to, if it needs no document.
    pub fn as_constant(&self) -> Option<&Bson> {
        match &self.expr {
            Expr::Constant(value) => Some(value),
            _ => None,
        }
    }

    /// Adds the fields of the input document this expression reads to `found`.
    pub fn dependencies(&self, found: &mut Dependencies) {
        self.expr.collect_dependencies(found);
    }

    /// The dotted path, if the expression is a plain field path such as `"$author.name"`.
    pub fn as_field_path(&self) -> Option<String> {
        match &self.expr {
            Expr::Path {
                base: Variable::Current,
                parts,
            } => Some(parts.join(".")),
            _ => None,
        }
    }
}

/// The fields of the input document an expression reads, so that a caller can avoid
/// materialising the others (a pattern's buckets, for one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dependencies {
    /// The dotted paths read (a variable bound to a field's value reads through that field's
    /// path, which is listed where the variable is bound).
    pub paths: Vec<String>,
    /// Whether the whole document is read (`$$ROOT`, `$$CURRENT`).
    pub whole_document: bool,
}

/// MongoDB's truthiness: `false`, `null`, missing, undefined and every numeric zero are
/// false; everything else (empty strings and arrays included) is true.
pub fn is_truthy(value: Option<&Bson>) -> bool {
    match value {
        None | Some(Bson::Null | Bson::Undefined | Bson::Boolean(false)) => false,
        Some(Bson::Int32(n)) => *n != 0,
        Some(Bson::Int64(n)) => *n != 0,
        Some(Bson::Double(n)) => *n != 0.0,
        // Every decimal zero ("0", "-0.00", "0E-6176") parses to a double zero; NaN is true.
        Some(Bson::Decimal128(n)) => n.to_string().parse::<f64>() != Ok(0.0),
        Some(_) => true,
    }
}

/// The parsed shape of an expression.
#[derive(Debug, Clone)]
pub(crate) enum Expr {
    /// A value known at parse time (`$literal`, or a literal that is not an expression).
    Constant(Bson),
    /// `"$a.b"` (relative to `$$CURRENT`) or `"$$var.a.b"`.
    Path {
        /// The variable the path starts from.
        base: Variable,
        /// The components after it (empty for `"$$var"` alone).
        parts: Vec<String>,
    },
    /// `{a: <expr>, b: <expr>}`: a document whose values are expressions. A field whose
    /// value is missing is left out.
    Object(Vec<(String, Expr)>),
    /// `[<expr>, ...]`: an array; a missing element becomes `null`, as in MongoDB.
    Array(Vec<Expr>),
    /// An operator, implemented by its family.
    Operator(OperatorBox),
}

/// The variables an expression can start a path from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variable {
    /// `$$CURRENT` (and every `"$field"` path).
    Current,
    /// `$$ROOT`.
    Root,
    /// `$$REMOVE`: always missing.
    Remove,
    /// `$$NOW`.
    Now,
    /// A user variable or one bound by `$let`, `$map`, `$filter`, `$reduce`: its slot.
    Slot(usize),
}

/// An operator node: what each family implements.
pub(crate) trait Operator: fmt::Debug + Send + Sync {
    /// Evaluates the operator in `context`.
    fn evaluate(&self, context: &mut Context<'_>) -> Result<Option<Bson>>;
    /// A copy of the node (expressions are cloned when a pipeline is shared).
    fn clone_box(&self) -> OperatorBox;
    /// Every sub-expression of the node, so that [`Expression::dependencies`] can find the
    /// fields an expression reads.
    fn children(&self) -> Vec<&Expr>;
}

/// A boxed [`Operator`].
pub(crate) type OperatorBox = Box<dyn Operator>;

impl Clone for OperatorBox {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// An operator whose arguments are all evaluated first (most of them): its name, its
/// arguments and the function of their values.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) name: &'static str,
    pub(crate) args: Vec<Expr>,
    pub(crate) function: CallFn,
}

/// The function of a [`Call`]: the operator's name (for error messages) and the values of
/// its arguments, each `None` where missing.
pub(crate) type CallFn = fn(&'static str, Vec<Option<Bson>>) -> Result<Option<Bson>>;

impl Operator for Call {
    fn evaluate(&self, context: &mut Context<'_>) -> Result<Option<Bson>> {
        let values = self
            .args
            .iter()
            .map(|arg| arg.evaluate(context))
            .collect::<Result<Vec<_>>>()?;
        (self.function)(self.name, values)
    }

    fn clone_box(&self) -> OperatorBox {
        Box::new(self.clone())
    }

    fn children(&self) -> Vec<&Expr> {
        self.args.iter().collect()
    }
}

/// An operator that compares its evaluated arguments ([`Call`]'s shape), under the
/// evaluation's collation.
#[derive(Debug, Clone)]
pub(crate) struct CollatedCall {
    pub(crate) name: &'static str,
    pub(crate) args: Vec<Expr>,
    pub(crate) function: CollatedFn,
}

/// The function of a [`CollatedCall`]: a [`CallFn`] that is also given the collation.
pub(crate) type CollatedFn =
    fn(&'static str, Vec<Option<Bson>>, &Collation) -> Result<Option<Bson>>;

impl Operator for CollatedCall {
    fn evaluate(&self, context: &mut Context<'_>) -> Result<Option<Bson>> {
        let values = self
            .args
            .iter()
            .map(|arg| arg.evaluate(context))
            .collect::<Result<Vec<_>>>()?;
        (self.function)(self.name, values, context.collation)
    }

    fn clone_box(&self) -> OperatorBox {
        Box::new(self.clone())
    }

    fn children(&self) -> Vec<&Expr> {
        self.args.iter().collect()
    }
}

impl Expr {
    /// Adds the document fields this node reads to `found` (see [`Dependencies`]).
    fn collect_dependencies(&self, found: &mut Dependencies) {
        match self {
            Expr::Constant(_) => {}
            Expr::Path { base, parts } => match base {
                Variable::Current | Variable::Root if parts.is_empty() => {
                    found.whole_document = true;
                }
                Variable::Current | Variable::Root => found.paths.push(parts.join(".")),
                Variable::Remove | Variable::Now | Variable::Slot(_) => {}
            },
            Expr::Object(fields) => {
                for (_, expr) in fields {
                    expr.collect_dependencies(found);
                }
            }
            Expr::Array(items) => {
                for item in items {
                    item.collect_dependencies(found);
                }
            }
            Expr::Operator(operator) => {
                for child in operator.children() {
                    child.collect_dependencies(found);
                }
            }
        }
    }

    /// An operator node of evaluated arguments.
    pub(crate) fn call(name: &'static str, args: Vec<Expr>, function: CallFn) -> Expr {
        Expr::Operator(Box::new(Call {
            name,
            args,
            function,
        }))
    }

    /// An operator node of evaluated arguments compared under the collation.
    pub(crate) fn collated_call(name: &'static str, args: Vec<Expr>, function: CollatedFn) -> Expr {
        Expr::Operator(Box::new(CollatedCall {
            name,
            args,
            function,
        }))
    }

    /// Evaluates this node.
    pub(crate) fn evaluate(&self, context: &mut Context<'_>) -> Result<Option<Bson>> {
        match self {
            Expr::Constant(value) => Ok(Some(value.clone())),
            Expr::Path { base, parts } => Ok(context.resolve(*base, parts)),
            Expr::Object(fields) => {
                let mut document = Document::new();
                for (name, expr) in fields {
                    if let Some(value) = expr.evaluate(context)? {
                        document.insert(name.clone(), value);
                    }
                }
                Ok(Some(Bson::Document(document)))
            }
            Expr::Array(items) => {
                let mut values = Vec::with_capacity(items.len());
                for item in items {
                    values.push(item.evaluate(context)?.unwrap_or(Bson::Null));
                }
                Ok(Some(Bson::Array(values)))
            }
            Expr::Operator(operator) => operator.evaluate(context),
        }
    }
}

/// What an evaluation reads: the root document, the variables' values by slot, `$$NOW`.
#[derive(Debug)]
pub(crate) struct Context<'a> {
    pub(crate) root: &'a Document,
    /// Values of [`Variable::Slot`]s: user variables first, then those bound by the
    /// operators being evaluated (pushed on entry, popped on exit).
    pub(crate) vars: Vec<Bson>,
    pub(crate) now: DateTime,
    /// How [`CollatedCall`]s compare strings.
    pub(crate) collation: &'a Collation,
}

impl Context<'_> {
    /// The value of `variable` followed by `parts`, with MongoDB's field path semantics: a
    /// path through an array maps over its elements (documents only; others are dropped),
    /// giving an array.
    pub(crate) fn resolve(&self, variable: Variable, parts: &[String]) -> Option<Bson> {
        match variable {
            Variable::Current | Variable::Root => resolve_in_document(self.root, parts),
            Variable::Remove => None,
            Variable::Now => resolve_path(&Bson::DateTime(self.now), parts),
            Variable::Slot(slot) => resolve_path(&self.vars[slot], parts),
        }
    }

    /// Evaluates `body` with `values` bound to the next slots (as [`Scope::bind`] numbered
    /// them when the body was parsed).
    pub(crate) fn with_bound<T>(
        &mut self,
        values: impl IntoIterator<Item = Bson>,
        body: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        let depth = self.vars.len();
        self.vars.extend(values);
        let result = body(self);
        self.vars.truncate(depth);
        result
    }
}

fn resolve_in_document(document: &Document, parts: &[String]) -> Option<Bson> {
    match parts.split_first() {
        None => Some(Bson::Document(document.clone())),
        Some((first, rest)) => document
            .get(first)
            .and_then(|child| resolve_path(child, rest)),
    }
}

/// `value` followed by the path `parts`, as a field path expression reads it.
pub(crate) fn resolve_path(value: &Bson, parts: &[String]) -> Option<Bson> {
    let Some((first, rest)) = parts.split_first() else {
        return Some(value.clone());
    };
    match value {
        Bson::Document(document) => document
            .get(first)
            .and_then(|child| resolve_path(child, rest)),
        // Unlike a query path, an expression path never indexes an array by a number: `$a.0`
        // on `[{"0": 1}]` reads the field "0" of each element.
        Bson::Array(items) => {
            let values: Vec<Bson> = items
                .iter()
                .filter(|item| matches!(item, Bson::Document(_) | Bson::Array(_)))
                .filter_map(|item| resolve_path(item, parts))
                .collect();
            Some(Bson::Array(values))
        }
        _ => None,
    }
}

/// The variables defined where an expression is being parsed, by slot.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scope {
    names: Vec<String>,
}

/// A family's parse function: `Some` if `name` is one of its operators.
pub(crate) type FamilyParser = fn(&str, &Bson, &mut Scope) -> Option<Result<Expr>>;

/// Every family of operators, tried in order by [`Scope::parse`].
const FAMILIES: &[FamilyParser] = &[
    arith::parse,
    logic::parse,
    array::parse,
    string::parse,
    object::parse,
    convert::parse,
    date::parse,
];

impl Scope {
    /// Parses `spec` as an expression.
    pub(crate) fn parse(&mut self, spec: &Bson) -> Result<Expr> {
        match spec {
            Bson::String(text) if text.starts_with("$$") => self.parse_variable(&text[2..]),
            Bson::String(text) if text.starts_with('$') => Ok(Expr::Path {
                base: Variable::Current,
                parts: parse_field_path(text, &text[1..])?,
            }),
            Bson::Document(document) => self.parse_document(document),
            Bson::Array(items) => Ok(Expr::Array(
                items
                    .iter()
                    .map(|item| self.parse(item))
                    .collect::<Result<_>>()?,
            )),
            other => Ok(Expr::Constant(other.clone())),
        }
    }

    /// Binds `names` to new slots while `body` parses the expressions that can see them.
    pub(crate) fn bind<T>(
        &mut self,
        names: &[String],
        body: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        for name in names {
            check_variable_name(name)?;
        }
        let depth = self.names.len();
        self.names.extend(names.iter().cloned());
        let result = body(self);
        self.names.truncate(depth);
        result
    }

    fn parse_variable(&self, text: &str) -> Result<Expr> {
        let (name, rest) = text.split_once('.').unwrap_or((text, ""));
        let parts = if rest.is_empty() {
            if text.ends_with('.') {
                return Err(expression_error(
                    15998,
                    format!("FieldPath field names may not be empty strings: '$${text}'"),
                ));
            }
            Vec::new()
        } else {
            parse_field_path(&format!("$${text}"), rest)?
        };
        let base = match name {
            "CURRENT" => Variable::Current,
            "ROOT" => Variable::Root,
            "REMOVE" => Variable::Remove,
            "NOW" => Variable::Now,
            // `$redact`'s actions.
            "DESCEND" | "PRUNE" | "KEEP" if rest.is_empty() => {
                return Ok(Expr::Constant(Bson::String(name.to_lowercase())));
            }
            _ => match self.names.iter().rposition(|defined| defined == name) {
                Some(slot) => Variable::Slot(slot),
                None if name.is_empty() => {
                    return Err(expression_error(
                        16869,
                        "empty variable names are not allowed",
                    ));
                }
                None => {
                    return Err(expression_error(
                        17276,
                        format!("Use of undefined variable: {name}"),
                    ));
                }
            },
        };
        Ok(Expr::Path { base, parts })
    }

    fn parse_document(&mut self, document: &Document) -> Result<Expr> {
        let first = document.keys().next();
        if let Some(name) = first.filter(|name| name.starts_with('$')) {
            if document.len() != 1 {
                return Err(expression_error(
                    15983,
                    format!(
                        "an expression specification must contain exactly one field, the name of the expression. Found {} fields in {}",
                        document.len(),
                        crate::error::abbreviate(
                            &document.to_string(),
                            crate::error::MAX_SHOWN_CHARS
                        )
                    ),
                ));
            }
            let argument = document.get(name).expect("the key was just read");
            return self.parse_operator(name, argument);
        }
        let mut fields = Vec::with_capacity(document.len());
        for (name, value) in document {
            if name.starts_with('$') {
                return Err(expression_error(
                    16410,
                    format!("FieldPath field names may not start with '$': '{name}'"),
                ));
            }
            if name.contains('.') {
                return Err(expression_error(
                    16412,
                    format!("FieldPath field names may not contain '.': '{name}'"),
                ));
            }
            fields.push((name.clone(), self.parse(value)?));
        }
        Ok(Expr::Object(fields))
    }

    fn parse_operator(&mut self, name: &str, argument: &Bson) -> Result<Expr> {
        if name == "$literal" {
            return Ok(Expr::Constant(argument.clone()));
        }
        for family in FAMILIES {
            if let Some(parsed) = family(name, argument, self) {
                return parsed;
            }
        }
        Err(expression_error(
            168,
            format!("Unrecognized expression '{name}'"),
        ))
    }
}

/// The components of a field path written `written` whose part after the `$` is `dotted`.
fn parse_field_path(written: &str, dotted: &str) -> Result<Vec<String>> {
    if dotted.is_empty() {
        return Err(expression_error(
            16872,
            format!("'{written}' by itself is not a valid FieldPath"),
        ));
    }
    let parts: Vec<String> = dotted.split('.').map(str::to_string).collect();
    for part in &parts {
        if part.is_empty() {
            return Err(expression_error(
                15998,
                format!("FieldPath field names may not be empty strings: '{written}'"),
            ));
        }
        if part.starts_with('$') {
            return Err(expression_error(
                16410,
                format!("FieldPath field names may not start with '$': '{written}'"),
            ));
        }
    }
    Ok(parts)
}

/// MongoDB's rule for user variable names: a lowercase letter or non-ASCII character first,
/// then letters, digits, `_` and non-ASCII characters.
fn check_variable_name(name: &str) -> Result<()> {
    let mut chars = name.chars();
    let valid_first = chars
        .next()
        .is_some_and(|first| first.is_ascii_lowercase() || !first.is_ascii());
    if valid_first && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii()) {
        Ok(())
    } else {
        Err(expression_error(
            16867,
            format!("'{name}' starts with an invalid character for a user variable name"),
        ))
    }
}

/// A [`DocError::Expression`] with MongoDB's `code`.
pub(crate) fn expression_error(code: i32, message: impl Into<String>) -> DocError {
    DocError::Expression {
        code,
        message: message.into(),
    }
}
