//! Text search: what a text index (`{ title: "text", body: "text" }`) holds for a document,
//! and how a `$text` query matches and scores it, after MongoDB's text index version 3.
//!
//! - **Tokens**: a string is cut at every character that is not a letter, a digit or `_`;
//!   each token is case-folded and stripped of diacritics (`Élan` → `elan`; NFD, combining
//!   marks dropped), English stop words (MongoDB's list) are dropped, and what is left is
//!   stemmed with the Snowball English stemmer (`rust-stemmers`), the stemmer MongoDB uses.
//!   Language `none` keeps every token and stems nothing.
//! - **Terms of a document**: the stemmed tokens of every string the index's fields reach
//!   (array elements and arrays of documents included; `$**` reaches every string field).
//!   Each term has MongoDB's score, summed over the strings it appears in:
//!   `weight × freq × (0.5 × count / tokens + 0.5) × adjustment`, where `count` is how often
//!   it appears in the string, `freq` = 1 + ½ + ¼ + … (`count` terms), `tokens` the string's
//!   token count after stop words, and `adjustment` 1.1 when the whole string is the term
//!   (1 otherwise). This is the formula of MongoDB's `FTSSpec::_scoreStringV2`.
//! - **A `$text` query** (`$search`): words are terms, any of which matches (OR); a
//!   `"quoted phrase"` must appear as a substring (AND, its words count as terms too); a
//!   word or phrase after a `-` must not appear. A document matches when it has at least
//!   one term, every phrase and no negated term or phrase; its score is the sum of the
//!   scores of the query's terms it has. `$caseSensitive` and `$diacriticSensitive` keep
//!   case and diacritics when matching (the score is always computed on folded terms, as
//!   MongoDB computes it from the index keys).
//!
//! Where Spillway differs: MongoDB's tokenizer keeps a few punctuation rules of its own
//! (apostrophes in English words, for instance), so a token boundary can differ on unusual
//! text; with `$caseSensitive`, tokens are stemmed as written. Languages other than English
//! and `none` are refused.
//!
//! This module knows nothing of storage or indexes as stored: the caller keeps the index
//! entries ([`TextIndex::terms`]) and binds a parsed `$text` clause to the collection's text
//! index ([`TextSearch::bind`]) before evaluating it.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, LazyLock};

use bson::{Bson, Document, RawBsonRef, RawDocument};
use rust_stemmers::{Algorithm, Stemmer};

use crate::error::{DocError, Result};

/// The text index version Spillway implements (MongoDB's `textIndexVersion`).
pub const TEXT_INDEX_VERSION: i32 = 3;

/// The key pattern field of a text index's terms, as MongoDB lists it (`{ _fts: "text",
/// _ftsx: 1 }`).
pub const FTS_FIELD: &str = "_fts";
/// The key pattern field that follows [`FTS_FIELD`].
pub const FTSX_FIELD: &str = "_ftsx";

/// The wildcard field of a text index: every string field.
pub const WILDCARD: &str = "$**";

/// MongoDB's English stop words (`stop_words_english.txt`).
const ENGLISH_STOP_WORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "aren't",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can't",
    "cannot",
    "could",
    "couldn't",
    "did",
    "didn't",
    "do",
    "does",
    "doesn't",
    "doing",
    "don't",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "hadn't",
    "has",
    "hasn't",
    "have",
    "haven't",
    "having",
    "he",
    "he'd",
    "he'll",
    "he's",
    "her",
    "here",
    "here's",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "how's",
    "i",
    "i'd",
    "i'll",
    "i'm",
    "i've",
    "if",
    "in",
    "into",
    "is",
    "isn't",
    "it",
    "it's",
    "its",
    "itself",
    "let's",
    "me",
    "more",
    "most",
    "mustn't",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "ought",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "shan't",
    "she",
    "she'd",
    "she'll",
    "she's",
    "should",
    "shouldn't",
    "so",
    "some",
    "such",
    "than",
    "that",
    "that's",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "there's",
    "these",
    "they",
    "they'd",
    "they'll",
    "they're",
    "they've",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "wasn't",
    "we",
    "we'd",
    "we'll",
    "we're",
    "we've",
    "were",
    "weren't",
    "what",
    "what's",
    "when",
    "when's",
    "where",
    "where's",
    "which",
    "while",
    "who",
    "who's",
    "whom",
    "why",
    "why's",
    "with",
    "won't",
    "would",
    "wouldn't",
    "you",
    "you'd",
    "you'll",
    "you're",
    "you've",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

static ENGLISH_STOP_SET: LazyLock<BTreeSet<&'static str>> =
    LazyLock::new(|| ENGLISH_STOP_WORDS.iter().copied().collect());

static ENGLISH_STEMMER: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));

/// A text search language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    /// English: stop words dropped, Snowball English stems.
    English,
    /// `none`: every token kept as it is (folded), no stemming.
    None,
}

impl Language {
    /// Reads MongoDB's name of a language (`english`, `en`, `none`); other languages are
    /// not supported.
    pub fn parse(name: &str) -> Option<Language> {
        match name.to_ascii_lowercase().as_str() {
            "english" | "en" => Some(Language::English),
            "none" => Some(Language::None),
            _ => None,
        }
    }

    /// MongoDB's name of the language.
    pub fn name(self) -> &'static str {
        match self {
            Language::English => "english",
            Language::None => "none",
        }
    }

    fn unsupported(name: &str) -> DocError {
        DocError::filter(
            "$text",
            format!(
                "unsupported language: \"{name}\" (Spillway's text search knows \"english\" and \"none\")"
            ),
        )
    }
}

/// How tokens are folded before they are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
struct Folding {
    case_sensitive: bool,
    diacritic_sensitive: bool,
}

/// Removes diacritics: NFD, then combining marks dropped.
fn strip_diacritics(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    let decomposed = icu_normalizer::DecomposingNormalizerBorrowed::new_nfd().normalize(text);
    Cow::Owned(
        decomposed
            .chars()
            .filter(|c| !is_combining_mark(*c))
            .collect(),
    )
}

fn is_combining_mark(c: char) -> bool {
    matches!(c as u32,
        0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

fn fold(text: &str, folding: Folding) -> String {
    let text = if folding.diacritic_sensitive {
        Cow::Borrowed(text)
    } else {
        strip_diacritics(text)
    };
    if folding.case_sensitive {
        text.into_owned()
    } else {
        text.to_lowercase()
    }
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The terms of `text` in order (stop words dropped, stems), folded as `folding` says.
fn terms_of(text: &str, language: Language, folding: Folding) -> Vec<String> {
    text.split(|c: char| !is_word_char(c))
        .filter(|token| !token.is_empty())
        .filter_map(|token| {
            let folded = fold(token, folding);
            match language {
                Language::None => Some(folded),
                Language::English => {
                    let lower = if folding.case_sensitive {
                        folded.to_lowercase()
                    } else {
                        folded.clone()
                    };
                    if ENGLISH_STOP_SET.contains(lower.as_str()) {
                        return None;
                    }
                    Some(ENGLISH_STEMMER.stem(&folded).into_owned())
                }
            }
        })
        .collect()
}

/// A text index's definition, as far as matching and scoring need it.
#[derive(Debug, Clone, PartialEq)]
pub struct TextIndex {
    /// Each indexed field (a dotted path, or [`WILDCARD`]) and its weight.
    pub weights: Vec<(String, i32)>,
    /// The language of documents that do not name one.
    pub default_language: Language,
    /// The top-level field a document names its language in (`language` by default).
    pub language_override: String,
}

/// Per-string scoring state of one term (MongoDB's `ScoreHelperStruct`).
#[derive(Default)]
struct TermCount {
    freq: f64,
    count: f64,
    exp: f64,
}

impl TextIndex {
    /// The language of `document`: its language override field when it is a string, the
    /// index's default otherwise; an unsupported language is an error (MongoDB's 17262).
    pub fn document_language(&self, document: &RawDocument) -> Result<Language> {
        match document.get(&self.language_override).ok().flatten() {
            Some(RawBsonRef::String(name)) => {
                Language::parse(name).ok_or_else(|| DocError::InvalidValue {
                    message: format!(
                        "field '{}': language override unsupported: {name}",
                        self.language_override
                    ),
                })
            }
            _ => Ok(self.default_language),
        }
    }

    /// The terms of `document` with their scores (the index's entries for it).
    pub fn terms(&self, document: &RawDocument) -> Result<BTreeMap<String, f64>> {
        let language = self.document_language(document)?;
        let mut scores = BTreeMap::new();
        self.visit_strings(document, &mut |weight, text| {
            score_string(text, language, f64::from(weight), &mut scores);
        });
        Ok(scores)
    }

    /// [`TextIndex::terms`] of a decoded document.
    pub fn terms_document(&self, document: &Document) -> Result<BTreeMap<String, f64>> {
        let raw = bson::RawDocumentBuf::try_from(document)?;
        self.terms(&raw)
    }

    /// Calls `visit` with the weight and text of every string the index's fields reach.
    fn visit_strings(&self, document: &RawDocument, visit: &mut dyn FnMut(i32, &str)) {
        let wildcard = self
            .weights
            .iter()
            .find(|(path, _)| path == WILDCARD)
            .map(|(_, weight)| *weight);
        match wildcard {
            Some(wildcard) => {
                visit_all(document, "", &self.weights, wildcard, visit);
            }
            None => {
                for (path, weight) in &self.weights {
                    let parts: Vec<&str> = path.split('.').collect();
                    visit_path(RawBsonRef::Document(document), &parts, &mut |text| {
                        visit(*weight, text);
                    });
                }
            }
        }
    }
}

/// Adds the scores of `text`'s terms to `scores` (MongoDB's `_scoreStringV2`).
fn score_string(text: &str, language: Language, weight: f64, scores: &mut BTreeMap<String, f64>) {
    let terms = terms_of(text, language, Folding::default());
    if terms.is_empty() {
        return;
    }
    let n_tokens = terms.len() as f64;
    let mut counts: BTreeMap<&str, TermCount> = BTreeMap::new();
    for term in &terms {
        let data = counts.entry(term.as_str()).or_default();
        data.exp = if data.exp == 0.0 { 1.0 } else { data.exp * 2.0 };
        data.count += 1.0;
        data.freq += 1.0 / data.exp;
    }
    for (term, data) in counts {
        let coefficient = 0.5 * data.count / n_tokens + 0.5;
        let adjustment = if text.len() == term.len() && text.eq_ignore_ascii_case(term) {
            1.1
        } else {
            1.0
        };
        *scores.entry(term.to_string()).or_insert(0.0) +=
            weight * data.freq * coefficient * adjustment;
    }
}

/// The strings `parts` reaches below `value`, through arrays (of strings and documents).
fn visit_path(value: RawBsonRef<'_>, parts: &[&str], visit: &mut dyn FnMut(&str)) {
    match (value, parts.split_first()) {
        (RawBsonRef::String(text), None) => visit(text),
        (RawBsonRef::Array(items), None) => {
            for item in items.into_iter().map_while(std::result::Result::ok) {
                if let RawBsonRef::String(text) = item {
                    visit(text);
                }
            }
        }
        (RawBsonRef::Document(document), Some((first, rest))) => {
            if let Ok(Some(child)) = document.get(first) {
                visit_path(child, rest, visit);
            }
        }
        (RawBsonRef::Array(items), Some(_)) => {
            for item in items.into_iter().map_while(std::result::Result::ok) {
                if let RawBsonRef::Document(_) = item {
                    visit_path(item, parts, visit);
                }
            }
        }
        _ => {}
    }
}

/// Every string below `document` (a `$**` index), weighted by its path's own weight when the
/// index lists it, by the wildcard's otherwise.
fn visit_all(
    document: &RawDocument,
    prefix: &str,
    weights: &[(String, i32)],
    wildcard: i32,
    visit: &mut dyn FnMut(i32, &str),
) {
    for element in document.into_iter().map_while(std::result::Result::ok) {
        let (name, value) = element;
        let path = if prefix.is_empty() {
            name.as_str().to_string()
        } else {
            format!("{prefix}.{}", name.as_str())
        };
        visit_value(value, &path, weights, wildcard, visit);
    }
}

fn visit_value(
    value: RawBsonRef<'_>,
    path: &str,
    weights: &[(String, i32)],
    wildcard: i32,
    visit: &mut dyn FnMut(i32, &str),
) {
    match value {
        RawBsonRef::String(text) => {
            let weight = weights
                .iter()
                .find(|(known, _)| known == path)
                .map_or(wildcard, |(_, weight)| *weight);
            visit(weight, text);
        }
        RawBsonRef::Document(inner) => visit_all(inner, path, weights, wildcard, visit),
        RawBsonRef::Array(items) => {
            for item in items.into_iter().map_while(std::result::Result::ok) {
                visit_value(item, path, weights, wildcard, visit);
            }
        }
        _ => {}
    }
}

/// A parsed `$text` operand: `{ $search, $language?, $caseSensitive?, $diacriticSensitive? }`.
#[derive(Debug, Clone, PartialEq)]
pub struct TextQuery {
    /// The search string as given.
    pub search: String,
    /// `$language`, if given.
    pub language: Option<Language>,
    /// `$caseSensitive`.
    pub case_sensitive: bool,
    /// `$diacriticSensitive`.
    pub diacritic_sensitive: bool,
}

impl TextQuery {
    /// Parses the operand of `$text`, with MongoDB's checks.
    pub fn parse(value: &Bson) -> Result<TextQuery> {
        let bad = |message: String| DocError::filter("$text", message);
        let Bson::Document(spec) = value else {
            return Err(bad(format!("$text expects an object, found {value}")));
        };
        let mut query = TextQuery {
            search: String::new(),
            language: None,
            case_sensitive: false,
            diacritic_sensitive: false,
        };
        let mut search = None;
        for (key, value) in spec {
            match (key.as_str(), value) {
                ("$search", Bson::String(text)) => search = Some(text.clone()),
                ("$search", other) => {
                    return Err(bad(format!(
                        "$search requires a string value, found {other}"
                    )));
                }
                ("$language", Bson::String(name)) => {
                    query.language =
                        Some(Language::parse(name).ok_or_else(|| Language::unsupported(name))?);
                }
                ("$language", other) => {
                    return Err(bad(format!(
                        "$language requires a string value, found {other}"
                    )));
                }
                ("$caseSensitive", Bson::Boolean(flag)) => query.case_sensitive = *flag,
                ("$diacriticSensitive", Bson::Boolean(flag)) => query.diacritic_sensitive = *flag,
                ("$caseSensitive" | "$diacriticSensitive", other) => {
                    return Err(bad(format!(
                        "{key} requires a boolean value, found {other}"
                    )));
                }
                (other, _) => {
                    return Err(bad(format!("extra fields in $text: {other}")));
                }
            }
        }
        query.search = search.ok_or_else(|| bad("$search required".into()))?;
        Ok(query)
    }

    fn folding(&self) -> Folding {
        Folding {
            case_sensitive: self.case_sensitive,
            diacritic_sensitive: self.diacritic_sensitive,
        }
    }
}

/// The parts of a search string: words and phrases, each kept or negated.
#[derive(Debug, Default)]
struct SearchParts {
    words: Vec<String>,
    negated_words: Vec<String>,
    phrases: Vec<String>,
    negated_phrases: Vec<String>,
}

/// Splits a search string as MongoDB does: `"` opens and closes a phrase (an unclosed one
/// runs to the end), a `-` that starts a word or phrase negates it.
fn split_search(search: &str) -> SearchParts {
    let mut parts = SearchParts::default();
    let chars: Vec<char> = search.chars().collect();
    let mut position = 0;
    while position < chars.len() {
        let c = chars[position];
        let at_start = position == 0 || chars[position - 1].is_whitespace();
        let negated = c == '-' && at_start;
        let start = if negated { position + 1 } else { position };
        if chars.get(start) == Some(&'"') && (at_start || negated) {
            let end = chars[start + 1..]
                .iter()
                .position(|c| *c == '"')
                .map_or(chars.len(), |offset| start + 1 + offset);
            let phrase: String = chars[start + 1..end].iter().collect();
            if negated {
                parts.negated_phrases.push(phrase);
            } else {
                parts.words.push(phrase.clone());
                parts.phrases.push(phrase);
            }
            position = end + 1;
            continue;
        }
        if negated {
            let end = chars[start..]
                .iter()
                .position(|c| c.is_whitespace())
                .map_or(chars.len(), |offset| start + offset);
            parts.negated_words.push(chars[start..end].iter().collect());
            position = end;
            continue;
        }
        let end = chars[position..]
            .iter()
            .position(|c| c.is_whitespace() || *c == '"')
            .map_or(chars.len(), |offset| position + offset)
            .max(position + 1);
        parts.words.push(chars[position..end].iter().collect());
        position = end;
    }
    parts
}

/// A `$text` clause: the query, and once bound, the collection's text index and the terms.
#[derive(Debug, Clone)]
pub struct TextSearch {
    /// The query as parsed.
    pub query: TextQuery,
    bound: Option<Arc<BoundSearch>>,
}

impl PartialEq for TextSearch {
    fn eq(&self, other: &TextSearch) -> bool {
        self.query == other.query
    }
}

/// A `$text` query bound to a text index: its terms stemmed in its language.
#[derive(Debug)]
pub struct BoundSearch {
    index: Arc<TextIndex>,
    query: TextQuery,
    language: Language,
    /// The terms to look up and score (folded as the index folds).
    positive: BTreeSet<String>,
    /// The same, folded as the query asks (for matching).
    positive_matching: BTreeSet<String>,
    negated: BTreeSet<String>,
    phrases: Vec<String>,
    negated_phrases: Vec<String>,
}

impl TextSearch {
    /// An unbound search for `query`.
    pub fn new(query: TextQuery) -> TextSearch {
        TextSearch { query, bound: None }
    }

    /// Binds the search to the collection's text index.
    pub fn bind(&mut self, index: Arc<TextIndex>) {
        let language = self.query.language.unwrap_or(index.default_language);
        let folding = self.query.folding();
        let parts = split_search(&self.query.search);
        let collect = |words: &[String], folding: Folding| -> BTreeSet<String> {
            words
                .iter()
                .flat_map(|word| terms_of(word, language, folding))
                .collect()
        };
        let fold_phrase = |phrase: &String| fold(phrase, folding);
        self.bound = Some(Arc::new(BoundSearch {
            positive: collect(&parts.words, Folding::default()),
            positive_matching: collect(&parts.words, folding),
            negated: collect(&parts.negated_words, folding),
            phrases: parts.phrases.iter().map(fold_phrase).collect(),
            negated_phrases: parts.negated_phrases.iter().map(fold_phrase).collect(),
            query: self.query.clone(),
            language,
            index,
        }));
    }

    /// The bound search, if [`TextSearch::bind`] was called.
    pub fn bound(&self) -> Option<&Arc<BoundSearch>> {
        self.bound.as_ref()
    }

    /// Whether `document` matches; an unbound search is an error (no text index).
    pub fn matches(&self, document: &RawDocument) -> Result<bool> {
        match &self.bound {
            Some(bound) => bound.matches(document),
            None => Err(DocError::filter(
                "$text",
                "text index required for $text query",
            )),
        }
    }
}

impl BoundSearch {
    /// The terms an index lookup needs (any of them may match; none: nothing matches).
    pub fn lookup_terms(&self) -> impl Iterator<Item = &str> {
        self.positive.iter().map(String::as_str)
    }

    /// The text index the search is bound to.
    pub fn index(&self) -> &TextIndex {
        &self.index
    }

    /// Whether `document` matches the search.
    pub fn matches(&self, document: &RawDocument) -> Result<bool> {
        if self.positive.is_empty() {
            return Ok(false);
        }
        let folding = self.query.folding();
        let document_language = self.index.document_language(document)?;
        let mut has_positive = false;
        let mut has_negated = false;
        let mut phrases_found = vec![false; self.phrases.len()];
        let mut negated_phrase_found = false;
        let language = if self.query.language.is_some() {
            self.language
        } else {
            document_language
        };
        self.index.visit_strings(document, &mut |_, text| {
            for term in terms_of(text, language, folding) {
                has_positive |= self.positive_matching.contains(&term);
                has_negated |= self.negated.contains(&term);
            }
            if !self.phrases.is_empty() || !self.negated_phrases.is_empty() {
                let folded = fold(text, folding);
                for (phrase, found) in self.phrases.iter().zip(&mut phrases_found) {
                    *found |= folded.contains(phrase.as_str());
                }
                negated_phrase_found |= self
                    .negated_phrases
                    .iter()
                    .any(|phrase| folded.contains(phrase.as_str()));
            }
        });
        Ok(has_positive
            && !has_negated
            && !negated_phrase_found
            && phrases_found.iter().all(|found| *found))
    }

    /// The text score of `document` (0 when it has none of the terms).
    pub fn score(&self, document: &RawDocument) -> f64 {
        let Ok(terms) = self.index.terms(document) else {
            return 0.0;
        };
        self.positive
            .iter()
            .filter_map(|term| terms.get(term))
            .sum()
    }

    /// [`BoundSearch::score`] of a decoded document.
    pub fn score_document(&self, document: &Document) -> f64 {
        bson::RawDocumentBuf::try_from(document).map_or(0.0, |raw| self.score(&raw))
    }
}

#[cfg(test)]
mod tests {
    use bson::{RawDocumentBuf, doc};

    use super::*;

    fn index(weights: &[(&str, i32)]) -> Arc<TextIndex> {
        Arc::new(TextIndex {
            weights: weights
                .iter()
                .map(|(path, weight)| ((*path).to_string(), *weight))
                .collect(),
            default_language: Language::English,
            language_override: "language".into(),
        })
    }

    fn search(index: &Arc<TextIndex>, spec: Document) -> TextSearch {
        let mut search = TextSearch::new(TextQuery::parse(&Bson::Document(spec)).unwrap());
        search.bind(Arc::clone(index));
        search
    }

    fn raw(document: &Document) -> RawDocumentBuf {
        RawDocumentBuf::try_from(document).unwrap()
    }

    #[test]
    fn tokens_fold_drop_stop_words_and_stem() {
        let terms = terms_of(
            "The Élan of running dogs, and_more",
            Language::English,
            Folding::default(),
        );
        assert_eq!(terms, ["elan", "run", "dog", "and_mor"]);
        let terms = terms_of("The dogs", Language::None, Folding::default());
        assert_eq!(terms, ["the", "dogs"]);
    }

    #[test]
    fn scores_follow_mongodbs_formula() {
        let index = index(&[("t", 1)]);
        let spam = search(&index, doc! { "$search": "spam" });
        let bound = spam.bound().unwrap();
        // "spam eggs and spam": spam twice in 3 tokens: 1.5 × (0.5 × 2/3 + 0.5) = 1.25.
        let score = bound.score(&raw(&doc! { "t": "spam eggs and spam" }));
        assert!((score - 1.25).abs() < 1e-9, "{score}");
        // The whole string is the term: 1 × 1 × 1.1.
        let score = bound.score(&raw(&doc! { "t": "spam" }));
        assert!((score - 1.1).abs() < 1e-9, "{score}");
        let weighted = index_weighted();
        let bound = search(&weighted, doc! { "$search": "spam" });
        let score = bound
            .bound()
            .unwrap()
            .score(&raw(&doc! { "t": "spam", "u": ["spam", "x", "spam ham"] }));
        // t: 10 × 1.1; u: each string on its own: 2 × 1.1, nothing, 2 × 1 × (0.5 × 1/2 + 0.5).
        assert!((score - (11.0 + 2.2 + 1.5)).abs() < 1e-9, "{score}");
    }

    fn index_weighted() -> Arc<TextIndex> {
        index(&[("t", 10), ("u", 2)])
    }

    fn check(search_text: &str, text: &str, expected: bool) {
        let index = index(&[("t", 1)]);
        let found = search(&index, doc! { "$search": search_text })
            .matches(&raw(&doc! { "t": text }))
            .unwrap();
        assert_eq!(found, expected, "{search_text:?} on {text:?}");
    }

    #[test]
    fn searches_match_terms_phrases_and_negations() {
        check("coffee", "I like Coffee", true);
        check("coffees", "coffee shop", true);
        check("tea coffee", "coffee shop", true);
        check("tea", "coffee shop", false);
        check("\"coffee shop\"", "The Coffee Shop", true);
        check("\"coffee shop\"", "shop for coffee", false);
        check("coffee -shop", "coffee shop", false);
        check("coffee -\"coffee shop\"", "coffee shop", false);
        check("coffee -\"coffee cake\"", "coffee shop", true);
        check("-shop", "coffee", false);
        check("the", "the", false);
        check("pre-market", "market", true);
        check("cafe", "café", true);
    }

    #[test]
    fn sensitivity_options_keep_case_and_diacritics() {
        let index = index(&[("t", 1)]);
        let document = raw(&doc! { "t": "Café Society" });
        let case = search(&index, doc! { "$search": "café", "$caseSensitive": true });
        assert!(!case.matches(&document).unwrap());
        let case = search(
            &index,
            doc! { "$search": "Society", "$caseSensitive": true },
        );
        assert!(case.matches(&document).unwrap());
        let diacritics = search(
            &index,
            doc! { "$search": "cafe", "$diacriticSensitive": true },
        );
        assert!(!diacritics.matches(&document).unwrap());
        let diacritics = search(
            &index,
            doc! { "$search": "café", "$diacriticSensitive": true },
        );
        assert!(diacritics.matches(&document).unwrap());
    }

    #[test]
    fn languages_come_from_the_query_the_document_or_the_index() {
        let index = index(&[("t", 1)]);
        let none = search(&index, doc! { "$search": "running", "$language": "none" });
        assert!(!none.matches(&raw(&doc! { "t": "run" })).unwrap());
        assert!(none.matches(&raw(&doc! { "t": "running" })).unwrap());
        let unsupported = index.document_language(&raw(&doc! { "language": "klingon" }));
        assert!(unsupported.is_err());
        let parsed = TextQuery::parse(&Bson::Document(doc! { "$search": "x", "$language": "fr" }));
        assert!(parsed.is_err());
    }

    #[test]
    fn wildcard_indexes_read_every_string() {
        let index = index(&[(WILDCARD, 1), ("b.c", 3)]);
        let terms = index
            .terms(&raw(
                &doc! { "a": "alpha", "b": { "c": "gamma", "d": ["delta"] }, "n": 1 },
            ))
            .unwrap();
        let names: Vec<&str> = terms.keys().map(String::as_str).collect();
        assert_eq!(names, ["alpha", "delta", "gamma"]);
        assert!((terms["gamma"] - 3.3).abs() < 1e-9);
    }
}
