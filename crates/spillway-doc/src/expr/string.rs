//! String operators: `$concat`, `$toLower`, `$toUpper`, `$substr`, `$substrBytes`,
//! `$substrCP`, `$strLenCP`, `$strLenBytes`, `$split`, `$trim`, `$ltrim`, `$rtrim`,
//! `$strcasecmp`, `$indexOfCP`, `$indexOfBytes`, `$regexMatch`, `$regexFind`,
//! `$regexFindAll`, `$replaceOne`, `$replaceAll`.

// Every operator function has the one signature of `CallFn` (the values by value, a
// `Result`), whether or not it consumes them or can fail.
#![allow(
    clippy::needless_pass_by_value,
    clippy::unnecessary_wraps,
    clippy::ref_option
)]

use bson::{Bson, doc};

use super::num::{Num, is_nullish, type_name};
use super::{Expr, Named, Operator, OperatorBox, Scope, expect_args, expression_error};
use crate::error::Result;
use crate::regex_matcher::{RegexMatch, RegexMatcher};

type Values = Vec<Option<Bson>>;

/// Parses the string operator `name`, if it is one.
pub(super) fn parse(name: &str, argument: &Bson, scope: &mut Scope) -> Option<Result<Expr>> {
    let call = |scope: &mut Scope, name: &'static str, min, max, function: super::CallFn| {
        expect_args(scope, name, argument, min, max).map(|args| Expr::call(name, args, function))
    };
    let parsed = match name {
        "$concat" => call(scope, "$concat", 0, None, concat),
        "$toLower" => call(scope, "$toLower", 1, Some(1), change_case),
        "$toUpper" => call(scope, "$toUpper", 1, Some(1), change_case),
        "$substr" => call(scope, "$substr", 3, Some(3), substr_bytes),
        "$substrBytes" => call(scope, "$substrBytes", 3, Some(3), substr_bytes),
        "$substrCP" => call(scope, "$substrCP", 3, Some(3), substr_cp),
        "$strLenCP" => call(scope, "$strLenCP", 1, Some(1), str_len),
        "$strLenBytes" => call(scope, "$strLenBytes", 1, Some(1), str_len),
        "$split" => call(scope, "$split", 2, Some(2), split),
        "$strcasecmp" => call(scope, "$strcasecmp", 2, Some(2), strcasecmp),
        "$indexOfCP" => call(scope, "$indexOfCP", 2, Some(4), index_of),
        "$indexOfBytes" => call(scope, "$indexOfBytes", 2, Some(4), index_of),
        "$trim" | "$ltrim" | "$rtrim" => parse_named(name, argument, scope, &["input"], &["chars"]),
        "$regexMatch" | "$regexFind" | "$regexFindAll" => {
            parse_named(name, argument, scope, &["input", "regex"], &["options"])
        }
        "$replaceOne" | "$replaceAll" => parse_named(
            name,
            argument,
            scope,
            &["input", "find", "replacement"],
            &[],
        ),
        _ => return None,
    };
    Some(parsed)
}

/// A string argument, `None` for null/missing.
fn string<'a>(name: &str, value: &'a Option<Bson>, code: i32) -> Result<Option<&'a str>> {
    match value {
        value if is_nullish(value.as_ref()) => Ok(None),
        Some(Bson::String(text)) => Ok(Some(text)),
        other => Err(expression_error(
            code,
            format!(
                "{name} requires a string argument, found: {}",
                type_name(other.as_ref())
            ),
        )),
    }
}

fn concat(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let mut out = String::new();
    for value in &values {
        match string(name, value, 16702)? {
            None => return Ok(Some(Bson::Null)),
            Some(text) => out.push_str(text),
        }
    }
    Ok(Some(Bson::String(out)))
}

/// The text form `$toLower`/`$toUpper`/`$substr` give a value: numbers and dates as text,
/// null as "".
fn coerce_to_string(name: &str, value: &Option<Bson>) -> Result<String> {
    Ok(match value {
        value if is_nullish(value.as_ref()) => String::new(),
        Some(Bson::String(text)) => text.clone(),
        Some(Bson::Int32(n)) => n.to_string(),
        Some(Bson::Int64(n)) => n.to_string(),
        Some(Bson::Double(n)) => n.to_string(),
        Some(Bson::Decimal128(n)) => n.to_string(),
        Some(Bson::DateTime(at)) => at.try_to_rfc3339_string().unwrap_or_default(),
        other => {
            return Err(expression_error(
                16007,
                format!(
                    "can't convert from BSON type {} to String in {name}",
                    type_name(other.as_ref())
                ),
            ));
        }
    })
}

fn change_case(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let text = coerce_to_string(name, &values[0])?;
    Ok(Some(Bson::String(if name == "$toLower" {
        text.to_lowercase()
    } else {
        text.to_uppercase()
    })))
}

fn integer(name: &str, value: &Option<Bson>, code: i32) -> Result<i64> {
    value
        .as_ref()
        .and_then(Num::of)
        .and_then(Num::as_i64)
        .ok_or_else(|| {
            expression_error(
                code,
                format!(
                    "{name}: starting index and length must be numbers, found {}",
                    type_name(value.as_ref())
                ),
            )
        })
}

fn substr_bytes(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let text = coerce_to_string(name, &values[0])?;
    let start = integer(name, &values[1], 16034)?;
    let length = integer(name, &values[2], 16035)?;
    let bytes = text.as_bytes();
    if start < 0 {
        return Ok(Some(Bson::String(String::new())));
    }
    let start = (start as usize).min(bytes.len());
    let end = if length < 0 {
        bytes.len()
    } else {
        (start + length as usize).min(bytes.len())
    };
    match std::str::from_utf8(&bytes[start..end]) {
        Ok(part) => Ok(Some(Bson::String(part.to_string()))),
        Err(_) => Err(expression_error(
            28656,
            format!(
                "{name}: Invalid range, starting index or ending index is a UTF-8 continuation byte"
            ),
        )),
    }
}

fn substr_cp(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let text = coerce_to_string(name, &values[0])?;
    let start = integer(name, &values[1], 34450)?;
    let length = integer(name, &values[2], 34452)?;
    if start < 0 {
        return Err(expression_error(
            34455,
            format!("{name}: the starting index must be nonnegative integer"),
        ));
    }
    if length < 0 {
        return Err(expression_error(
            34454,
            format!("{name}: length must be a nonnegative integer"),
        ));
    }
    Ok(Some(Bson::String(
        text.chars()
            .skip(start as usize)
            .take(length as usize)
            .collect(),
    )))
}

fn str_len(name: &'static str, values: Values) -> Result<Option<Bson>> {
    match &values[0] {
        Some(Bson::String(text)) => Ok(Some(Bson::Int32(if name == "$strLenCP" {
            text.chars().count()
        } else {
            text.len()
        } as i32))),
        other => Err(expression_error(
            if name == "$strLenCP" { 34471 } else { 34473 },
            format!(
                "{name} requires a string argument, found: {}",
                type_name(other.as_ref())
            ),
        )),
    }
}

fn split(name: &'static str, values: Values) -> Result<Option<Bson>> {
    if is_nullish(values[0].as_ref()) {
        return Ok(Some(Bson::Null));
    }
    let Some(Bson::String(text)) = &values[0] else {
        return Err(expression_error(
            40085,
            format!(
                "{name} requires an expression that evaluates to a string as a first argument, found: {}",
                type_name(values[0].as_ref())
            ),
        ));
    };
    let Some(Bson::String(delimiter)) = &values[1] else {
        return Err(expression_error(
            40086,
            format!(
                "{name} requires an expression that evaluates to a string as a second argument, found: {}",
                type_name(values[1].as_ref())
            ),
        ));
    };
    if delimiter.is_empty() {
        return Err(expression_error(
            40087,
            format!("{name} requires a non-empty separator"),
        ));
    }
    Ok(Some(Bson::Array(
        text.split(delimiter.as_str())
            .map(|part| Bson::String(part.to_string()))
            .collect(),
    )))
}

fn strcasecmp(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let a = coerce_to_string(name, &values[0])?.to_uppercase();
    let b = coerce_to_string(name, &values[1])?.to_uppercase();
    Ok(Some(Bson::Int32(match a.cmp(&b) {
        std::cmp::Ordering::Less => -1,
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1,
    })))
}

fn index_of(name: &'static str, values: Values) -> Result<Option<Bson>> {
    let Some(text) = string(name, &values[0], 40091)? else {
        return Ok(Some(Bson::Null));
    };
    let Some(Bson::String(needle)) = &values[1] else {
        return Err(expression_error(
            40092,
            format!(
                "{name} requires a string as the second argument, found: {}",
                type_name(values[1].as_ref())
            ),
        ));
    };
    let by_chars = name == "$indexOfCP";
    let units: Vec<usize> = if by_chars {
        text.char_indices()
            .map(|(at, _)| at)
            .chain([text.len()])
            .collect()
    } else {
        (0..=text.len()).collect()
    };
    let count = units.len() - 1;
    let bound = |position: usize, default: usize| -> Result<usize> {
        match values.get(position) {
            None | Some(None) => Ok(default),
            Some(value) => match value.as_ref().and_then(Num::of).and_then(Num::as_i64) {
                Some(n) if n >= 0 => Ok(n as usize),
                _ => Err(expression_error(
                    40096,
                    format!("{name} requires a nonnegative integral starting and ending index"),
                )),
            },
        }
    };
    let start = bound(2, 0)?;
    let end = bound(3, count)?.min(count);
    for unit in start..end.max(start) {
        let at = units[unit];
        if text[at..].starts_with(needle.as_str()) && at + needle.len() <= units[end] {
            return Ok(Some(Bson::Int32(unit as i32)));
        }
    }
    if needle.is_empty() && start <= count && start <= end {
        return Ok(Some(Bson::Int32(start as i32)));
    }
    Ok(Some(Bson::Int32(-1)))
}

fn parse_named(
    name: &str,
    argument: &Bson,
    scope: &mut Scope,
    required: &[&str],
    optional: &[&str],
) -> Result<Expr> {
    let mut named = Named::parse(scope, name, argument, required, optional)?;
    let mut take = |field: &str| named.take(field);
    let operator = match name {
        "$trim" | "$ltrim" | "$rtrim" => Named3::Trim {
            name: if name == "$trim" {
                "$trim"
            } else if name == "$ltrim" {
                "$ltrim"
            } else {
                "$rtrim"
            },
            input: take("input").expect("required"),
            chars: take("chars"),
        },
        "$regexMatch" | "$regexFind" | "$regexFindAll" => Named3::Regex {
            name: if name == "$regexMatch" {
                "$regexMatch"
            } else if name == "$regexFind" {
                "$regexFind"
            } else {
                "$regexFindAll"
            },
            input: take("input").expect("required"),
            regex: take("regex").expect("required"),
            options: take("options"),
        },
        _ => Named3::Replace {
            all: name == "$replaceAll",
            input: take("input").expect("required"),
            find: take("find").expect("required"),
            replacement: take("replacement").expect("required"),
        },
    };
    Ok(Expr::Operator(Box::new(operator)))
}

/// The string operators with named arguments.
#[derive(Debug, Clone)]
enum Named3 {
    Trim {
        name: &'static str,
        input: Expr,
        chars: Option<Expr>,
    },
    Regex {
        name: &'static str,
        input: Expr,
        regex: Expr,
        options: Option<Expr>,
    },
    Replace {
        all: bool,
        input: Expr,
        find: Expr,
        replacement: Expr,
    },
}

impl Operator for Named3 {
    fn evaluate(&self, context: &mut super::Context<'_>) -> Result<Option<Bson>> {
        match self {
            Named3::Trim { name, input, chars } => trim(name, input, chars.as_ref(), context),
            Named3::Regex {
                name,
                input,
                regex,
                options,
            } => regex_operator(name, input, regex, options.as_ref(), context),
            Named3::Replace {
                all,
                input,
                find,
                replacement,
            } => replace(*all, input, find, replacement, context),
        }
    }

    fn clone_box(&self) -> OperatorBox {
        Box::new(self.clone())
    }

    fn children(&self) -> Vec<&Expr> {
        match self {
            Named3::Trim { input, chars, .. } => [input].into_iter().chain(chars).collect(),
            Named3::Regex {
                input,
                regex,
                options,
                ..
            } => [input, regex].into_iter().chain(options).collect(),
            Named3::Replace {
                input,
                find,
                replacement,
                ..
            } => vec![input, find, replacement],
        }
    }
}

/// `$trim`, `$ltrim` and `$rtrim`: strips `chars` (whitespace and NUL by default) from the ends.
fn trim(
    name: &str,
    input: &Expr,
    chars: Option<&Expr>,
    context: &mut super::Context<'_>,
) -> Result<Option<Bson>> {
    let input = input.evaluate(context)?;
    let Some(text) = string(name, &input, 50699)? else {
        return Ok(Some(Bson::Null));
    };
    let chars: Option<Vec<char>> = match chars {
        None => None,
        Some(chars) => match chars.evaluate(context)? {
            value if is_nullish(value.as_ref()) => return Ok(Some(Bson::Null)),
            Some(Bson::String(chars)) => Some(chars.chars().collect()),
            other => {
                return Err(expression_error(
                    50700,
                    format!(
                        "{name} requires 'chars' to be a string, found: {}",
                        type_name(other.as_ref())
                    ),
                ));
            }
        },
    };
    let trimmed = |c: char| match &chars {
        Some(set) => set.contains(&c),
        None => c.is_whitespace() || c == '\0',
    };
    let result = match name {
        "$ltrim" => text.trim_start_matches(trimmed),
        "$rtrim" => text.trim_end_matches(trimmed),
        _ => text.trim_matches(trimmed),
    };
    Ok(Some(Bson::String(result.to_string())))
}

/// What `$regexMatch`, `$regexFind` or `$regexFindAll` gives for a missing regex or input.
fn regex_nothing(name: &str) -> Bson {
    if name == "$regexMatch" {
        Bson::Boolean(false)
    } else if name == "$regexFind" {
        Bson::Null
    } else {
        Bson::Array(Vec::new())
    }
}

/// `$regexMatch`, `$regexFind` and `$regexFindAll`: `regex` (with `options`) over `input`.
fn regex_operator(
    name: &str,
    input: &Expr,
    regex: &Expr,
    options: Option<&Expr>,
    context: &mut super::Context<'_>,
) -> Result<Option<Bson>> {
    let input = input.evaluate(context)?;
    let regex = regex.evaluate(context)?;
    let options = match options {
        Some(options) => options.evaluate(context)?,
        None => None,
    };
    let (pattern, mut flags) = match &regex {
        Some(Bson::String(pattern)) => (pattern.clone(), String::new()),
        Some(Bson::RegularExpression(regex)) => {
            (regex.pattern.to_string(), regex.options.to_string())
        }
        value if is_nullish(value.as_ref()) => return Ok(Some(regex_nothing(name))),
        other => {
            return Err(expression_error(
                51105,
                format!(
                    "{name} needs 'regex' to be of type string or regex, found {}",
                    type_name(other.as_ref())
                ),
            ));
        }
    };
    match &options {
        Some(Bson::String(given)) => flags.push_str(given),
        value if is_nullish(value.as_ref()) => {}
        other => {
            return Err(expression_error(
                51106,
                format!(
                    "{name} needs 'options' to be of type string, found {}",
                    type_name(other.as_ref())
                ),
            ));
        }
    }
    let text = match &input {
        Some(Bson::String(text)) => text.clone(),
        value if is_nullish(value.as_ref()) => return Ok(Some(regex_nothing(name))),
        other => {
            return Err(expression_error(
                51104,
                format!(
                    "{name} needs 'input' to be of type string, found {}",
                    type_name(other.as_ref())
                ),
            ));
        }
    };
    let matcher = RegexMatcher::new(&pattern, &flags)
        .map_err(|error| expression_error(51111, format!("{name}: {error}")))?;
    if name == "$regexMatch" {
        return Ok(Some(Bson::Boolean(matcher.is_match(&text))));
    }
    let describe = |found: RegexMatch| -> Bson {
        let captures: Vec<Bson> = found
            .captures
            .into_iter()
            .map(|group| group.map_or(Bson::Null, Bson::String))
            .collect();
        Bson::Document(doc! {
            "match": found.text,
            "idx": text[..found.start].chars().count() as i32,
            "captures": captures,
        })
    };
    let all = name == "$regexFindAll";
    let mut found = matcher.find(&text, all).into_iter().map(describe);
    if all {
        return Ok(Some(Bson::Array(found.collect())));
    }
    Ok(Some(found.next().unwrap_or(Bson::Null)))
}

/// `$replaceOne` (`all` false) and `$replaceAll`: replaces `find` in `input` by `replacement`.
fn replace(
    all: bool,
    input: &Expr,
    find: &Expr,
    replacement: &Expr,
    context: &mut super::Context<'_>,
) -> Result<Option<Bson>> {
    let name = if all { "$replaceAll" } else { "$replaceOne" };
    let input = input.evaluate(context)?;
    let find = find.evaluate(context)?;
    let replacement = replacement.evaluate(context)?;
    let parts = [
        ("input", &input),
        ("find", &find),
        ("replacement", &replacement),
    ];
    for (what, value) in parts {
        if !is_nullish(value.as_ref()) && !matches!(value, Some(Bson::String(_))) {
            return Err(expression_error(
                51746,
                format!(
                    "{name} requires that '{what}' be a string, found: {}",
                    type_name(value.as_ref())
                ),
            ));
        }
    }
    let (Some(Bson::String(input)), Some(Bson::String(find)), Some(Bson::String(replacement))) =
        (input, find, replacement)
    else {
        return Ok(Some(Bson::Null));
    };
    Ok(Some(Bson::String(if all {
        input.replace(&find, &replacement)
    } else {
        input.replacen(&find, &replacement, 1)
    })))
}
