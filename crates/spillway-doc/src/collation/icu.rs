//! The ICU4X collator behind a non-simple [`Collation`](super::Collation) (the `collation`
//! feature): MongoDB's collation fields as ICU4X's preferences and options, ICU's locale
//! syntax as BCP 47.

use icu_collator::options::{AlternateHandling, CaseLevel, CollatorOptions, MaxVariable, Strength};
use icu_collator::preferences::{CollationCaseFirst, CollationNumericOrdering};
use icu_collator::{CollatorBorrowed, CollatorPreferences};

use super::{Spec, invalid};
use crate::error::Result;

/// The collator a collation compares strings with.
pub(super) struct Collator(CollatorBorrowed<'static>);

impl Collator {
    /// Compares two strings.
    pub(super) fn compare(&self, a: &str, b: &str) -> std::cmp::Ordering {
        self.0.compare(a, b)
    }

    /// `text`'s sort key (up to the collator's strength) in lowercase hexadecimal: two
    /// digits a byte, so that the hex strings order as the keys' bytes do.
    pub(super) fn sort_key_hex(&self, text: &str) -> String {
        use std::fmt::Write as _;
        let mut key: Vec<u8> = Vec::new();
        let Ok(()) = self.0.write_sort_key_to(text, &mut key);
        let mut hex = String::with_capacity(key.len() * 2);
        for byte in key {
            let _ = write!(hex, "{byte:02x}");
        }
        hex
    }
}

/// Builds the ICU4X collator for a resolved specification.
pub(super) fn build_collator(spec: &Spec) -> Result<Collator> {
    // MongoDB writes locales ICU's way (`en_US`, `de@collation=phonebook`); ICU4X reads
    // BCP 47 (`en-US`, `de-u-co-phonebk`).
    let tag = bcp47(&spec.locale)
        .ok_or_else(|| invalid(format!("collation locale '{}' is not valid", spec.locale)))?;
    let locale: icu_locale_core::Locale = tag
        .parse()
        .map_err(|_| invalid(format!("collation locale '{}' is not valid", spec.locale)))?;
    let mut preferences = CollatorPreferences::from(&locale);
    preferences.case_first = Some(match spec.case_first.as_str() {
        "upper" => CollationCaseFirst::Upper,
        "lower" => CollationCaseFirst::Lower,
        _ => CollationCaseFirst::False,
    });
    preferences.numeric_ordering = Some(if spec.numeric_ordering {
        CollationNumericOrdering::True
    } else {
        CollationNumericOrdering::False
    });
    let mut options = CollatorOptions::default();
    options.strength = Some(match spec.strength {
        1 => Strength::Primary,
        2 => Strength::Secondary,
        3 => Strength::Tertiary,
        4 => Strength::Quaternary,
        _ => Strength::Identical,
    });
    options.case_level = Some(if spec.case_level {
        CaseLevel::On
    } else {
        CaseLevel::Off
    });
    options.alternate_handling = Some(if spec.alternate == "shifted" {
        AlternateHandling::Shifted
    } else {
        AlternateHandling::NonIgnorable
    });
    options.max_variable = Some(if spec.max_variable == "space" {
        MaxVariable::Space
    } else {
        MaxVariable::Punctuation
    });
    icu_collator::Collator::try_new(preferences, options)
        .map(Collator)
        .map_err(|error| {
            invalid(format!(
                "no collation data for locale '{}': {error}",
                spec.locale
            ))
        })
}

/// ICU's locale syntax (`en_US`, `de@collation=phonebook`) as a BCP 47 tag; `None` for a
/// keyword this module does not translate.
fn bcp47(locale: &str) -> Option<String> {
    let (language, keywords) = match locale.split_once('@') {
        Some((language, keywords)) => (language, Some(keywords)),
        None => (locale, None),
    };
    let mut tag = language.replace('_', "-");
    if let Some(keywords) = keywords {
        let mut extension = String::new();
        for keyword in keywords.split(';') {
            let (key, value) = keyword.split_once('=')?;
            let value = match (key, value) {
                ("collation", "phonebook") => "phonebk",
                ("collation", "dictionary") => "dict",
                ("collation", "traditional") => "trad",
                ("collation", "gb2312han") => "gb2312",
                ("collation", other) => other,
                _ => return None,
            };
            extension.push_str("-co-");
            extension.push_str(value);
        }
        tag.push_str("-u");
        tag.push_str(&extension);
    }
    Some(tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn icu_keywords_become_bcp47_extensions() {
        assert_eq!(bcp47("en_US").as_deref(), Some("en-US"));
        assert_eq!(
            bcp47("de@collation=phonebook").as_deref(),
            Some("de-u-co-phonebk")
        );
        assert_eq!(bcp47("de@colour=blue"), None);
    }
}
