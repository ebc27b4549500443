//! Concrete update targets: resolving positional paths (`a.$.b`, `a.$[].b`, `a.$[i].b`) into
//! exact paths of one document, and reading, writing and removing values at exact paths with
//! the rules of MongoDB's update operators.
//!
//! The rules differ from the query traversal: a numeric component indexes an array, there is
//! no fan-out over array elements, writing creates missing documents and pads arrays with
//! `null`, and writing through any scalar (`null` included) or through an array with a
//! non-numeric component fails. Failures are detected before anything is written, so a
//! failed write leaves the document as it was. This module must never decide what an
//! operator does with a value; it only finds and stores values.

use std::collections::HashMap;

use bson::{Bson, Document, doc};

use super::{ApplyContext, describe_value};
use crate::filter::Filter;
use crate::path::array_index;

/// One component of an update path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Part {
    /// A field name or array index.
    Field(String),
    /// `$`: the array element the query matched.
    Positional,
    /// `$[]`: every element of the array.
    AllElements,
    /// `$[<identifier>]`: the elements that match the identifier's array filter.
    Filtered(String),
}

/// A parsed update path, possibly with positional components.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct UpdatePath {
    /// The path as written.
    pub(super) dotted: String,
    /// Its components.
    pub(super) parts: Vec<Part>,
}

impl UpdatePath {
    /// The components as written (`$[i]` stays `$[i]`), for ordering and conflict checks.
    pub(super) fn written_parts(&self) -> Vec<&str> {
        self.dotted.split('.').collect()
    }

    pub(super) fn is_plain(&self) -> bool {
        self.parts.iter().all(|part| matches!(part, Part::Field(_)))
    }
}

/// MongoDB refuses to pad an array with more than this many nulls in one write.
const MAX_ARRAY_PADDING: usize = 1_500_000;

/// Why an update cannot be applied at a path of one document.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Failure {
    /// The (concrete where known) field the failure is about.
    pub(super) field: String,
    /// What is wrong, phrased to follow "field '<field>' ".
    pub(super) message: String,
}

impl Failure {
    pub(super) fn new(field: impl Into<String>, message: impl Into<String>) -> Failure {
        Failure {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Resolves `path` into the exact paths it designates in `document`, in array order.
pub(super) fn expand(
    document: &Document,
    path: &UpdatePath,
    context: &ApplyContext,
    array_filters: &HashMap<String, Filter>,
) -> Result<Vec<Vec<String>>, Failure> {
    let mut prefixes: Vec<Vec<String>> = vec![Vec::with_capacity(path.parts.len())];
    for part in &path.parts {
        match part {
            Part::Field(name) => {
                for prefix in &mut prefixes {
                    prefix.push(name.clone());
                }
            }
            Part::Positional => {
                let Some(index) = context.positional_index else {
                    return Err(Failure::new(
                        path.dotted.clone(),
                        "uses the positional operator '$', but the query did not match an array element",
                    ));
                };
                for prefix in &mut prefixes {
                    prefix.push(index.to_string());
                }
            }
            Part::AllElements | Part::Filtered(_) => {
                let mut expanded = Vec::new();
                for prefix in prefixes {
                    let items = match lookup(document, &prefix) {
                        Some(Bson::Array(items)) => items,
                        Some(other) => {
                            return Err(Failure::new(
                                prefix.join("."),
                                format!(
                                    "is {}, not an array (needed by '{}')",
                                    describe_value(other),
                                    path.dotted
                                ),
                            ));
                        }
                        None => {
                            return Err(Failure::new(
                                prefix.join("."),
                                format!("is missing, but '{}' needs an array there", path.dotted),
                            ));
                        }
                    };
                    for (index, item) in items.iter().enumerate() {
                        if let Part::Filtered(identifier) = part {
                            let filter = &array_filters[identifier];
                            let wrapped = doc! { identifier.as_str(): item.clone() };
                            let matched = filter.matches_document(&wrapped).map_err(|error| {
                                Failure::new(
                                    format!("{}.{index}", prefix.join(".")),
                                    format!("cannot be matched against the array filter for '{identifier}': {error}"),
                                )
                            })?;
                            if !matched {
                                continue;
                            }
                        }
                        let mut concrete = prefix.clone();
                        concrete.push(index.to_string());
                        expanded.push(concrete);
                    }
                }
                prefixes = expanded;
            }
        }
    }
    Ok(prefixes)
}

/// The child of `value` named `part`: a field of a document or an element of an array.
pub(super) fn child<'a>(value: &'a Bson, part: &str) -> Option<&'a Bson> {
    match value {
        Bson::Document(inner) => inner.get(part),
        Bson::Array(items) => items.get(array_index(part)?),
        _ => None,
    }
}

/// The value at an exact path, if there is one.
pub(super) fn lookup<'a>(document: &'a Document, parts: &[String]) -> Option<&'a Bson> {
    let (first, rest) = parts.split_first()?;
    let mut current = document.get(first)?;
    for part in rest {
        current = child(current, part)?;
    }
    Some(current)
}

/// The first proper prefix of `parts` that holds an array, if any (for `$rename`, which may
/// not go through arrays).
pub(super) fn array_on_the_way(document: &Document, parts: &[String]) -> Option<String> {
    let (first, rest) = parts.split_first()?;
    let mut current = document.get(first)?;
    for (depth, part) in rest.iter().enumerate() {
        if let Bson::Array(_) = current {
            return Some(parts[..=depth].join("."));
        }
        current = child(current, part)?;
    }
    None
}

/// Checks that `parts` can be written: every existing value on the way is a document, or an
/// array addressed by an index within the padding limit.
pub(super) fn check_writable(document: &Document, parts: &[String]) -> Result<(), Failure> {
    let dotted = || parts.join(".");
    let Some((first, rest)) = parts.split_first() else {
        return Ok(());
    };
    let Some(mut current) = document.get(first) else {
        return Ok(());
    };
    for (depth, part) in rest.iter().enumerate() {
        let prefix = || parts[..=depth].join(".");
        current = match current {
            Bson::Document(inner) => match inner.get(part) {
                Some(next) => next,
                None => return Ok(()),
            },
            Bson::Array(items) => {
                let Some(index) = array_index(part) else {
                    return Err(Failure::new(
                        dotted(),
                        format!(
                            "cannot be created: '{}' is an array and '{part}' is not an array index",
                            prefix()
                        ),
                    ));
                };
                match items.get(index) {
                    Some(next) => next,
                    None if index - items.len() > MAX_ARRAY_PADDING => {
                        return Err(Failure::new(
                            dotted(),
                            format!(
                                "cannot be created: it would pad the array '{}' with {} nulls (the limit is {MAX_ARRAY_PADDING})",
                                prefix(),
                                index - items.len()
                            ),
                        ));
                    }
                    None => return Ok(()),
                }
            }
            other => {
                return Err(Failure::new(
                    dotted(),
                    format!(
                        "cannot be created: '{}' is {}",
                        prefix(),
                        describe_value(other)
                    ),
                ));
            }
        };
    }
    Ok(())
}

/// Stores `value` at `parts`, creating missing documents and padding arrays with nulls.
/// Fails, writing nothing, when the path goes through a scalar or an array by name.
pub(super) fn write(document: &mut Document, parts: &[String], value: Bson) -> Result<(), Failure> {
    check_writable(document, parts)?;
    let (first, rest) = parts.split_first().expect("an update path has a component");
    let Some((last, middle)) = rest.split_last() else {
        document.insert(first.clone(), value);
        return Ok(());
    };
    let mut current = document
        .entry(first.clone())
        .or_insert_with(|| Bson::Document(Document::new()));
    for part in middle {
        current = match current {
            Bson::Document(inner) => inner
                .entry(part.clone())
                .or_insert_with(|| Bson::Document(Document::new())),
            Bson::Array(items) => {
                let index = array_index(part).expect("checked: array components are indexes");
                if index >= items.len() {
                    items.resize(index, Bson::Null);
                    items.push(Bson::Document(Document::new()));
                }
                &mut items[index]
            }
            _ => unreachable!("checked: the path goes through documents and arrays only"),
        };
    }
    match current {
        Bson::Document(inner) => {
            inner.insert(last.clone(), value);
        }
        Bson::Array(items) => {
            let index = array_index(last).expect("checked: array components are indexes");
            if index >= items.len() {
                items.resize(index + 1, Bson::Null);
            }
            items[index] = value;
        }
        _ => unreachable!("checked: the path goes through documents and arrays only"),
    }
    Ok(())
}

/// Removes the value at `parts` and returns it. An array element is replaced by `null`
/// (`$unset` keeps positions). A missing path, or one that goes through a scalar, removes
/// nothing.
pub(super) fn remove(document: &mut Document, parts: &[String]) -> Option<Bson> {
    let (last, parents) = parts.split_last()?;
    let Some((first, middle)) = parents.split_first() else {
        return document.remove(last);
    };
    let mut current = document.get_mut(first)?;
    for part in middle {
        current = match current {
            Bson::Document(inner) => inner.get_mut(part)?,
            Bson::Array(items) => items.get_mut(array_index(part)?)?,
            _ => return None,
        };
    }
    match current {
        Bson::Document(inner) => inner.remove(last),
        Bson::Array(items) => {
            let slot = items.get_mut(array_index(last)?)?;
            Some(std::mem::replace(slot, Bson::Null))
        }
        _ => None,
    }
}
