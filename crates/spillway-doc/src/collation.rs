//! Collations: language-aware string comparison, as MongoDB's `collation` option asks for.
//!
//! A [`Collation`] is parsed once from MongoDB's collation document
//! (`{ locale: "en_US", strength: 2 }`) and then orders strings for filters, sorts and
//! `distinct`: under strength 2, `"PING"` equals `"ping"`; under strength 1, `"café"` also
//! equals `"cafe"`. Every other type still compares as the `compare` module says. The comparison
//! itself is the Unicode Collation Algorithm with CLDR's locale tailorings, from ICU4X
//! (`icu_collator`), the same algorithm and data MongoDB's ICU uses.
//!
//! The collator needs the `collation` feature (ICU4X and its data); without it, parsing any
//! collation other than `simple` fails with an error that says so.
//!
//! The default, `Collation::simple()` (and `{ locale: "simple" }`), compares strings by code
//! point, and costs nothing: a collated comparison is only made when the collation says so.
//!
//! What differs from MongoDB: `backwards: true` (French secondary ordering) is refused,
//! because ICU4X does not offer it as an option, and `normalization` is accepted but always
//! on (ICU4X normalizes every input; MongoDB's `false` is a speed hint that assumes inputs
//! are already normalized, so the answers agree for such inputs).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use bson::{Bson, Document, doc};

use crate::error::{DocError, Result};

/// The collator of a non-simple collation: ICU4X's with the `collation` feature.
#[cfg(feature = "collation")]
mod icu;

/// Without the `collation` feature: no collator, so that a collation other than `simple` is
/// refused when parsed (the only place this build differs).
#[cfg(not(feature = "collation"))]
mod icu {
    use std::cmp::Ordering;

    use super::{Spec, invalid};
    use crate::disabled::{NotBuilt, needs_feature};
    use crate::error::Result;

    /// A collator, which this build cannot make: no value exists.
    pub(super) struct Collator(NotBuilt);

    impl Collator {
        /// Compares two strings (never called: no value exists).
        pub(super) fn compare(&self, _a: &str, _b: &str) -> Ordering {
            match self.0 {}
        }

        /// A string's sort key (never called: no value exists).
        pub(super) fn sort_key_hex(&self, _text: &str) -> String {
            match self.0 {}
        }
    }

    /// Refuses every locale: collating needs the `collation` feature.
    pub(super) fn build_collator(spec: &Spec) -> Result<Collator> {
        Err(invalid(format!(
            "{} (only the simple collation is built in)",
            needs_feature(&format!("collation locale '{}'", spec.locale), "collation")
        )))
    }
}

/// The ICU version MongoDB reports in a resolved collation; drivers echo it back, so a
/// collation read from `listIndexes` can be sent again.
const ICU_VERSION: &str = "57.1";

/// How strings compare: by code point (`simple`) or by a locale's collation rules.
///
/// Cloning is cheap (the collator is shared). Two collations are equal when their resolved
/// specifications are.
#[derive(Clone, Default)]
pub struct Collation {
    collated: Option<Arc<Collated>>,
}

/// A non-simple collation: its resolved specification and the collator built from it.
struct Collated {
    spec: Spec,
    collator: icu::Collator,
}

/// The fields of a collation document, with MongoDB's defaults filled in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Spec {
    locale: String,
    case_level: bool,
    case_first: String,
    strength: i32,
    numeric_ordering: bool,
    alternate: String,
    max_variable: String,
    normalization: bool,
    backwards: bool,
}

impl Collation {
    /// The simple collation: strings compare by code point.
    pub const fn simple() -> Collation {
        Collation { collated: None }
    }

    /// Parses MongoDB's collation document. `{}` and `{ locale: "simple" }` are the simple
    /// collation; otherwise `locale` is required and every field is checked: an unknown
    /// field, a wrong type or a value out of range is an error that names it.
    pub fn parse(spec: &Document) -> Result<Collation> {
        if spec.is_empty() {
            return Ok(Collation::simple());
        }
        let mut locale = None;
        let mut parsed = Spec {
            locale: String::new(),
            case_level: false,
            case_first: "off".to_string(),
            strength: 3,
            numeric_ordering: false,
            alternate: "non-ignorable".to_string(),
            max_variable: "punct".to_string(),
            normalization: false,
            backwards: false,
        };
        for (field, value) in spec {
            match field.as_str() {
                "locale" => locale = Some(string_field(field, value)?.to_string()),
                "caseLevel" => parsed.case_level = bool_field(field, value)?,
                "caseFirst" => {
                    parsed.case_first =
                        one_of(field, value, &["upper", "lower", "off"])?.to_string();
                }
                "strength" => {
                    parsed.strength = match value {
                        Bson::Int32(number @ 1..=5) => *number,
                        Bson::Int64(number @ 1..=5) => *number as i32,
                        Bson::Double(number) if [1.0, 2.0, 3.0, 4.0, 5.0].contains(number) => {
                            *number as i32
                        }
                        other => {
                            return Err(invalid(format!(
                                "collation strength must be an integer from 1 to 5, got {other}"
                            )));
                        }
                    };
                }
                "numericOrdering" => parsed.numeric_ordering = bool_field(field, value)?,
                "alternate" => {
                    parsed.alternate =
                        one_of(field, value, &["non-ignorable", "shifted"])?.to_string();
                }
                "maxVariable" => {
                    parsed.max_variable = one_of(field, value, &["punct", "space"])?.to_string();
                }
                "normalization" => parsed.normalization = bool_field(field, value)?,
                "backwards" => parsed.backwards = bool_field(field, value)?,
                // Drivers send back the version a server reported; any version is accepted.
                "version" => {
                    string_field(field, value)?;
                }
                other => {
                    return Err(invalid(format!(
                        "unknown collation field '{other}' (known: locale, caseLevel, caseFirst, \
                         strength, numericOrdering, alternate, maxVariable, normalization, \
                         backwards, version)"
                    )));
                }
            }
        }
        let Some(locale) = locale else {
            return Err(invalid(format!("collation {spec} has no 'locale'")));
        };
        if locale == "simple" {
            // MongoDB accepts no other field beside `locale: "simple"`, except the defaults.
            return Ok(Collation::simple());
        }
        if parsed.backwards {
            return Err(invalid(
                "collation option 'backwards: true' (French secondary ordering) is not supported",
            ));
        }
        parsed.locale = locale;
        let collator = icu::build_collator(&parsed)?;
        Ok(Collation {
            collated: Some(Arc::new(Collated {
                spec: parsed,
                collator,
            })),
        })
    }

    /// Parses an optional collation document (absent: simple).
    pub fn parse_option(spec: Option<&Document>) -> Result<Collation> {
        spec.map_or_else(|| Ok(Collation::simple()), Collation::parse)
    }

    /// Whether strings compare by code point.
    pub fn is_simple(&self) -> bool {
        self.collated.is_none()
    }

    /// Compares two strings under this collation.
    pub fn compare_strings(&self, a: &str, b: &str) -> Ordering {
        match &self.collated {
            None => a.cmp(b),
            Some(collated) => collated.collator.compare(a, b),
        }
    }

    /// What an index under this collation holds for `value`: every string in it (at any
    /// depth) replaced by its collation key, so that the index's byte order is this
    /// collation's order and strings equal under it share a key, as MongoDB's collated
    /// indexes hold ICU sort keys. The key is the sort key's bytes in lowercase hexadecimal,
    /// which orders as the bytes do and keeps a string a string (the type order stays).
    /// Under the simple collation, `value` itself.
    pub fn key_value(&self, value: &Bson) -> Bson {
        let Some(collated) = &self.collated else {
            return value.clone();
        };
        collated_value(collated, value)
    }

    /// The resolved specification, as MongoDB reports it (`listIndexes`, `listCollections`):
    /// every field with its value or default, or `{ locale: "simple" }`.
    pub fn to_document(&self) -> Document {
        let Some(collated) = &self.collated else {
            return doc! { "locale": "simple" };
        };
        let spec = &collated.spec;
        doc! {
            "locale": &spec.locale,
            "caseLevel": spec.case_level,
            "caseFirst": &spec.case_first,
            "strength": spec.strength,
            "numericOrdering": spec.numeric_ordering,
            "alternate": &spec.alternate,
            "maxVariable": &spec.max_variable,
            "normalization": spec.normalization,
            "backwards": spec.backwards,
            "version": ICU_VERSION,
        }
    }
}

impl PartialEq for Collation {
    fn eq(&self, other: &Collation) -> bool {
        match (&self.collated, &other.collated) {
            (None, None) => true,
            (Some(a), Some(b)) => a.spec == b.spec,
            _ => false,
        }
    }
}

impl Eq for Collation {}

impl Hash for Collation {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.collated
            .as_ref()
            .map(|collated| &collated.spec)
            .hash(state);
    }
}

impl fmt::Debug for Collation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "Collation({})", self.to_document())
    }
}

/// [`Collation::key_value`] under a non-simple collation.
fn collated_value(collated: &Collated, value: &Bson) -> Bson {
    match value {
        Bson::String(text) => Bson::String(collated.collator.sort_key_hex(text)),
        Bson::Document(document) => Bson::Document(
            document
                .iter()
                .map(|(field, value)| (field.clone(), collated_value(collated, value)))
                .collect(),
        ),
        Bson::Array(items) => Bson::Array(
            items
                .iter()
                .map(|item| collated_value(collated, item))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn invalid(message: impl Into<String>) -> DocError {
    DocError::InvalidCollation {
        message: message.into(),
    }
}

fn string_field<'a>(field: &str, value: &'a Bson) -> Result<&'a str> {
    match value {
        Bson::String(text) => Ok(text),
        other => Err(invalid(format!(
            "collation field '{field}' must be a string, got {other}"
        ))),
    }
}

fn bool_field(field: &str, value: &Bson) -> Result<bool> {
    match value {
        Bson::Boolean(flag) => Ok(*flag),
        other => Err(invalid(format!(
            "collation field '{field}' must be a boolean, got {other}"
        ))),
    }
}

fn one_of<'a>(field: &str, value: &'a Bson, allowed: &[&str]) -> Result<&'a str> {
    let text = string_field(field, value)?;
    if allowed.contains(&text) {
        Ok(text)
    } else {
        Err(invalid(format!(
            "collation field '{field}' must be one of {}, got '{text}'",
            allowed.join(", ")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(feature = "collation")]
    fn strength_two_ignores_case_and_strength_one_accents() {
        let secondary = Collation::parse(&doc! { "locale": "en_US", "strength": 2 }).unwrap();
        assert_eq!(secondary.compare_strings("PING", "ping"), Ordering::Equal);
        assert_ne!(secondary.compare_strings("café", "cafe"), Ordering::Equal);
        let primary = Collation::parse(&doc! { "locale": "en_US", "strength": 1 }).unwrap();
        assert_eq!(primary.compare_strings("Café", "cafe"), Ordering::Equal);
        let tertiary = Collation::parse(&doc! { "locale": "en_US" }).unwrap();
        assert_ne!(tertiary.compare_strings("PING", "ping"), Ordering::Equal);
        // Language order, not code point order: "a" < "B" < "c".
        assert_eq!(tertiary.compare_strings("B", "a"), Ordering::Greater);
        assert_eq!(tertiary.compare_strings("B", "c"), Ordering::Less);
    }

    #[test]
    #[cfg(feature = "collation")]
    fn numeric_ordering_compares_digits_as_numbers() {
        let numeric = Collation::parse(&doc! { "locale": "en", "numericOrdering": true }).unwrap();
        assert_eq!(numeric.compare_strings("10", "9"), Ordering::Greater);
        assert_eq!(
            Collation::simple().compare_strings("10", "9"),
            Ordering::Less
        );
    }

    /// Index keys under a collation order as the collation compares, whatever the strings,
    /// and leave other values alone: checked against `compare_strings` on a spread of words.
    #[test]
    #[cfg(feature = "collation")]
    fn key_values_order_as_the_collation_compares() {
        let words = [
            "a", "A", "á", "ab", "Ab", "b", "B", "ping", "PING", "café", "cafe", "10", "9", "",
            "z\u{0}", "zz", "Ω", "ω",
        ];
        for spec in [
            doc! { "locale": "en", "strength": 2 },
            doc! { "locale": "en", "strength": 1 },
            doc! { "locale": "de", "numericOrdering": true },
            doc! { "locale": "fr", "strength": 3, "caseFirst": "upper" },
        ] {
            let collation = Collation::parse(&spec).unwrap();
            for a in words {
                for b in words {
                    let (Bson::String(key_a), Bson::String(key_b)) = (
                        collation.key_value(&Bson::from(a)),
                        collation.key_value(&Bson::from(b)),
                    ) else {
                        panic!("a string's key is a string");
                    };
                    assert_eq!(
                        key_a.cmp(&key_b),
                        collation.compare_strings(a, b),
                        "{spec}: {a:?} vs {b:?}"
                    );
                }
            }
            let nested = collation.key_value(&Bson::from(doc! { "n": 1, "s": ["PING"] }));
            let expected = collation.key_value(&Bson::from("PING"));
            assert_eq!(
                nested,
                Bson::from(doc! { "n": 1, "s": [expected.clone()] }),
                "{spec}"
            );
        }
        assert_eq!(
            Collation::simple().key_value(&Bson::from("PING")),
            Bson::from("PING")
        );
    }

    #[test]
    fn simple_and_empty_are_code_point_order() {
        assert!(Collation::parse(&doc! {}).unwrap().is_simple());
        assert!(
            Collation::parse(&doc! { "locale": "simple" })
                .unwrap()
                .is_simple()
        );
        assert_eq!(
            Collation::simple().to_document(),
            doc! { "locale": "simple" }
        );
    }

    #[test]
    #[cfg(feature = "collation")]
    fn the_resolved_spec_has_every_field_and_reparses_to_the_same_collation() {
        let collation = Collation::parse(&doc! { "locale": "fr", "strength": 1 }).unwrap();
        let spec = collation.to_document();
        assert_eq!(spec.get_i32("strength").unwrap(), 1);
        assert_eq!(spec.get_str("caseFirst").unwrap(), "off");
        assert_eq!(Collation::parse(&spec).unwrap(), collation);
    }

    #[test]
    #[cfg(feature = "collation")]
    fn bad_specifications_name_the_problem() {
        for (spec, expected) in [
            (doc! { "strength": 2 }, "has no 'locale'"),
            (doc! { "locale": 5 }, "'locale' must be a string"),
            (doc! { "locale": "en", "strength": 7 }, "from 1 to 5"),
            (
                doc! { "locale": "en", "caseFirst": "x" },
                "one of upper, lower, off",
            ),
            (
                doc! { "locale": "en", "colour": 1 },
                "unknown collation field 'colour'",
            ),
            (doc! { "locale": "not a locale!" }, "is not valid"),
            (doc! { "locale": "fr", "backwards": true }, "not supported"),
        ] {
            let error = Collation::parse(&spec).unwrap_err().to_string();
            assert!(error.contains(expected), "{spec}: {error}");
        }
    }

    #[test]
    #[cfg(not(feature = "collation"))]
    fn a_locale_needs_the_collation_feature_and_simple_does_not() {
        let error = Collation::parse(&doc! { "locale": "fr", "strength": 1 }).unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid collation: collation locale 'fr' needs spillway-doc's `collation` feature \
             (only the simple collation is built in)"
        );
        // What is checked before a collator is built is still checked.
        let error = Collation::parse(&doc! { "locale": "fr", "colour": 1 }).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("unknown collation field 'colour'")
        );
        assert!(
            Collation::parse(&doc! { "locale": "simple" })
                .unwrap()
                .is_simple()
        );
    }
}
