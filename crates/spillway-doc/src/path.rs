//! Dotted field paths (`reviews.0.author`) and their use on decoded documents.
//!
//! A [`FieldPath`] is parsed once and checked: it is not empty, has no empty component and
//! no NUL byte. A component made only of ASCII digits (`0`, `17`) addresses an array element
//! when the value it is applied to is an array, and a field of that name otherwise, as in
//! MongoDB.
//!
//! This module gives exact-path access ([`get`], [`get_mut`], [`set`], [`unset`]) as updates
//! need it. The *query* traversal rules (where `reviews.author` fans out over every element of
//! `reviews`) belong to the filter module, which evaluates them on raw documents. Nothing
//! here knows about operators: positional components (`$`, `$[]`, `$[i]`) are resolved by the
//! update module before it calls into this one.

use std::fmt;

use bson::{Bson, Document};

use crate::error::{DocError, Result};

/// A parsed, validated dotted field path.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldPath {
    dotted: String,
    parts: Vec<String>,
}

impl FieldPath {
    /// Parses a dotted path such as `reviews.0.author`.
    pub fn parse(dotted: &str) -> Result<FieldPath> {
        let invalid = |reason: &str| DocError::InvalidPath {
            path: dotted.to_string(),
            reason: reason.to_string(),
        };
        if dotted.is_empty() {
            return Err(invalid("a path cannot be empty"));
        }
        if dotted.contains('\0') {
            return Err(invalid("a path cannot contain a NUL byte"));
        }
        let parts: Vec<String> = dotted.split('.').map(str::to_string).collect();
        if parts.iter().any(String::is_empty) {
            return Err(invalid(
                "a path cannot have an empty component (leading, trailing or double dot)",
            ));
        }
        Ok(FieldPath {
            dotted: dotted.to_string(),
            parts,
        })
    }

    /// Builds a path from components that are already known to be valid field names.
    pub fn from_parts(parts: &[String]) -> Result<FieldPath> {
        FieldPath::parse(&parts.join("."))
    }

    /// The components, in order.
    pub fn parts(&self) -> &[String] {
        &self.parts
    }

    /// The path as written, dots included.
    pub fn as_str(&self) -> &str {
        &self.dotted
    }

    /// The number of components.
    pub fn len(&self) -> usize {
        self.parts.len()
    }

    /// Always false: a path has at least one component. Present for API symmetry.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The first component (the top-level field).
    pub fn head(&self) -> &str {
        &self.parts[0]
    }

    /// Whether `self` is `other` or lies inside it (`a.b` is within `a`; `ab` is not).
    pub fn starts_with(&self, other: &FieldPath) -> bool {
        self.parts.len() >= other.parts.len() && self.parts[..other.parts.len()] == other.parts[..]
    }

    /// Whether one of the two paths is a prefix of the other (they touch the same data).
    pub fn overlaps(&self, other: &FieldPath) -> bool {
        self.starts_with(other) || other.starts_with(self)
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.dotted)
    }
}

/// Reads a path component as an array index: ASCII digits only, no sign, no leading zero
/// (except `0` itself), as MongoDB does for update paths.
pub fn array_index(part: &str) -> Option<usize> {
    let canonical = !part.is_empty()
        && part.bytes().all(|b| b.is_ascii_digit())
        && (part == "0" || !part.starts_with('0'));
    if canonical { part.parse().ok() } else { None }
}

/// The value at an exact path: numeric components index arrays, no fan-out over arrays.
pub fn get<'a>(document: &'a Document, path: &FieldPath) -> Option<&'a Bson> {
    let (first, rest) = path.parts.split_first()?;
    let mut current = document.get(first)?;
    for part in rest {
        current = child(current, part)?;
    }
    Some(current)
}

/// The value at an exact path, mutably.
pub fn get_mut<'a>(document: &'a mut Document, path: &FieldPath) -> Option<&'a mut Bson> {
    let (first, rest) = path.parts.split_first()?;
    let mut current = document.get_mut(first)?;
    for part in rest {
        current = child_mut(current, part)?;
    }
    Some(current)
}

fn child<'a>(value: &'a Bson, part: &str) -> Option<&'a Bson> {
    match value {
        Bson::Document(document) => document.get(part),
        Bson::Array(array) => array.get(array_index(part)?),
        _ => None,
    }
}

fn child_mut<'a>(value: &'a mut Bson, part: &str) -> Option<&'a mut Bson> {
    match value {
        Bson::Document(document) => document.get_mut(part),
        Bson::Array(array) => array.get_mut(array_index(part)?),
        _ => None,
    }
}

/// Why a path cannot be written in a given document.
#[derive(Debug, Clone, PartialEq)]
pub struct PathBlocked {
    /// The prefix of the path that holds a value the rest cannot go through.
    pub prefix: String,
    /// A description of that value (`a string`, `an array` when the component is not an
    /// index).
    pub found: &'static str,
}

impl fmt::Display for PathBlocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot create a field inside '{}', which is {}",
            self.prefix, self.found
        )
    }
}

/// Sets the value at an exact path, creating missing intermediate documents. Setting an
/// array index past the end pads the array with nulls, as MongoDB's `$set` does. Fails,
/// changing nothing, when the path would have to go through a scalar or use a non-index
/// component on an array.
pub fn set(document: &mut Document, path: &FieldPath, value: Bson) -> Result<(), PathBlocked> {
    let slot = slot_mut(document, path)?;
    *slot = value;
    Ok(())
}

/// The slot at `path`, created (as null, with missing parents as documents) if absent.
pub fn slot_mut<'a>(
    document: &'a mut Document,
    path: &FieldPath,
) -> Result<&'a mut Bson, PathBlocked> {
    // Check the whole path first so that a failure leaves the document untouched.
    check_writable(document, path)?;
    let (first, rest) = path.parts.split_first().expect("a path has a component");
    let mut current = document.entry(first.clone()).or_insert(Bson::Null);
    for (depth, part) in rest.iter().enumerate() {
        // Missing intermediates are created as documents; the last slot stays null.
        let is_last = depth + 1 == rest.len();
        let placeholder = if is_last {
            Bson::Null
        } else {
            Bson::Document(Document::new())
        };
        if matches!(current, Bson::Null) {
            *current = Bson::Document(Document::new());
        }
        current = match current {
            Bson::Document(inner) => inner.entry(part.clone()).or_insert(placeholder),
            Bson::Array(array) => {
                let index = array_index(part).expect("checked: array components are indexes");
                if index >= array.len() {
                    array.resize(index + 1, Bson::Null);
                }
                if !is_last && matches!(array[index], Bson::Null) {
                    array[index] = placeholder;
                }
                &mut array[index]
            }
            _ => unreachable!("checked: the path goes through documents and arrays only"),
        };
    }
    Ok(current)
}

/// Verifies that `set` can write `path` without going through a scalar.
fn check_writable(document: &Document, path: &FieldPath) -> Result<(), PathBlocked> {
    let (first, rest) = path.parts.split_first().expect("a path has a component");
    let Some(mut current) = document.get(first) else {
        return Ok(());
    };
    for (depth, part) in rest.iter().enumerate() {
        let blocked = |found| PathBlocked {
            prefix: path.parts[..=depth].join("."),
            found,
        };
        current = match current {
            Bson::Document(inner) => match inner.get(part) {
                Some(next) => next,
                None => return Ok(()),
            },
            Bson::Array(array) => match array_index(part) {
                Some(index) => match array.get(index) {
                    Some(next) => next,
                    None => return Ok(()),
                },
                None => return Err(blocked("an array")),
            },
            // MongoDB refuses to create a field inside an existing null ("Cannot create field
            // 'b' in element {a: null}"), so null blocks like any other scalar.
            other => return Err(blocked(describe(other))),
        };
    }
    Ok(())
}

/// Removes the value at an exact path and returns it. An array element is not removed but
/// set to null (MongoDB's `$unset` keeps array positions). A missing path is not an error.
pub fn unset(document: &mut Document, path: &FieldPath) -> Option<Bson> {
    let (last, parents) = path.parts.split_last()?;
    if parents.is_empty() {
        return document.remove(last);
    }
    let parent_path = FieldPath {
        dotted: parents.join("."),
        parts: parents.to_vec(),
    };
    match get_mut(document, &parent_path)? {
        Bson::Document(inner) => inner.remove(last),
        Bson::Array(array) => {
            let slot = array.get_mut(array_index(last)?)?;
            Some(std::mem::replace(slot, Bson::Null))
        }
        _ => None,
    }
}

/// A short description of a value's type for error messages: `a string`, `an array`...
pub fn describe(value: &Bson) -> &'static str {
    match value {
        Bson::Double(_) => "a double",
        Bson::String(_) => "a string",
        Bson::Array(_) => "an array",
        Bson::Document(_) => "an object",
        Bson::Boolean(_) => "a boolean",
        Bson::Null => "null",
        Bson::RegularExpression(_) => "a regular expression",
        Bson::JavaScriptCode(_) => "JavaScript code",
        Bson::JavaScriptCodeWithScope(_) => "JavaScript code with scope",
        Bson::Int32(_) => "an int",
        Bson::Int64(_) => "a long",
        Bson::Timestamp(_) => "a timestamp",
        Bson::Binary(_) => "binary data",
        Bson::ObjectId(_) => "an ObjectId",
        Bson::DateTime(_) => "a date",
        Bson::Symbol(_) => "a symbol",
        Bson::Decimal128(_) => "a decimal",
        Bson::Undefined => "undefined",
        Bson::MaxKey => "MaxKey",
        Bson::MinKey => "MinKey",
        Bson::DbPointer(_) => "a DBPointer",
    }
}

/// Collects the values at `parts` below `value`, fanning out over arrays of documents as
/// MongoDB's `distinct` does (a numeric component indexes an array instead).
pub fn distinct_values(value: &Bson, parts: &[String], found: &mut Vec<Bson>) {
    let Some((first, rest)) = parts.split_first() else {
        found.push(value.clone());
        return;
    };
    match value {
        Bson::Document(document) => {
            if let Some(child) = document.get(first) {
                distinct_values(child, rest, found);
            }
        }
        Bson::Array(items) => {
            if let Some(index) = array_index(first) {
                if let Some(child) = items.get(index) {
                    distinct_values(child, rest, found);
                }
            } else {
                for item in items {
                    if matches!(item, Bson::Document(_)) {
                        distinct_values(item, parts, found);
                    }
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use bson::{bson, doc};

    use super::*;

    fn path(text: &str) -> FieldPath {
        FieldPath::parse(text).unwrap()
    }

    #[test]
    fn parse_rejects_malformed_paths() {
        for bad in ["", ".a", "a.", "a..b", "a\0b"] {
            assert!(FieldPath::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(path("reviews.0.author").parts(), ["reviews", "0", "author"]);
        let error = FieldPath::parse("a..b").unwrap_err().to_string();
        assert_eq!(
            error,
            "invalid field path 'a..b': a path cannot have an empty component (leading, trailing or double dot)"
        );
    }

    #[test]
    fn array_indexes_are_canonical_digits() {
        assert_eq!(array_index("0"), Some(0));
        assert_eq!(array_index("12"), Some(12));
        for not_index in ["", "01", "-1", "+1", "1a", "$"] {
            assert_eq!(array_index(not_index), None, "{not_index:?}");
        }
    }

    #[test]
    fn get_follows_documents_and_indexes() {
        let document = doc! { "a": { "b": [ { "c": 1 }, { "c": 2 } ] }, "x": { "0": "field" } };
        assert_eq!(get(&document, &path("a.b.1.c")), Some(&Bson::Int32(2)));
        assert_eq!(
            get(&document, &path("x.0")),
            Some(&Bson::String("field".into()))
        );
        assert_eq!(
            get(&document, &path("a.b.c")),
            None,
            "no fan-out on exact paths"
        );
        assert_eq!(get(&document, &path("a.b.5")), None);
    }

    #[test]
    fn set_creates_missing_parents_and_pads_arrays() {
        let mut document = doc! { "_id": 1, "arr": [1] };
        set(&mut document, &path("a.b.c"), bson!(5)).unwrap();
        set(&mut document, &path("arr.3"), bson!("x")).unwrap();
        set(&mut document, &path("arr.5.k"), bson!(true)).unwrap();
        assert_eq!(
            document,
            doc! {
                "_id": 1,
                "arr": [1, null, null, "x", null, { "k": true }],
                "a": { "b": { "c": 5 } },
            }
        );
    }

    #[test]
    fn set_through_a_scalar_fails_and_changes_nothing() {
        let mut document = doc! { "a": { "b": 5 }, "arr": [1, 2], "n": null };
        let before = document.clone();
        let blocked = set(&mut document, &path("a.b.c"), bson!(1)).unwrap_err();
        assert_eq!(
            blocked.to_string(),
            "cannot create a field inside 'a.b', which is an int"
        );
        let blocked = set(&mut document, &path("arr.x"), bson!(1)).unwrap_err();
        assert_eq!(
            blocked.to_string(),
            "cannot create a field inside 'arr', which is an array"
        );
        assert_eq!(document, before);
    }

    #[test]
    fn unset_removes_fields_and_nulls_array_elements() {
        let mut document = doc! { "a": { "b": 1, "c": 2 }, "arr": [1, 2, 3] };
        assert_eq!(unset(&mut document, &path("a.b")), Some(bson!(1)));
        assert_eq!(unset(&mut document, &path("arr.1")), Some(bson!(2)));
        assert_eq!(unset(&mut document, &path("missing.x")), None);
        assert_eq!(document, doc! { "a": { "c": 2 }, "arr": [1, null, 3] });
    }
}
