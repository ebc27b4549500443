//! Property tests of the filter evaluator: comparisons against a naive model written on
//! decoded values, and the algebra of negations and logical operators.

use std::cmp::Ordering;

use bson::{Bson, Document, RawDocumentBuf, doc};
use proptest::prelude::*;
use spillway_doc::compare::{canonical_type, compare};
use spillway_doc::filter::Filter;

fn scalar() -> impl Strategy<Value = Bson> {
    prop_oneof![
        (-3..3_i32).prop_map(Bson::Int32),
        (-3..3_i64).prop_map(Bson::Int64),
        prop::sample::select(vec![-1.5, 0.0, 0.5, 2.0, 1e300]).prop_map(Bson::Double),
        prop::sample::select(vec!["", "a", "b", "ab"]).prop_map(|text| Bson::String(text.into())),
        Just(Bson::Null),
        any::<bool>().prop_map(Bson::Boolean),
    ]
}

fn value() -> impl Strategy<Value = Bson> {
    scalar().prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Bson::Array),
            inner.prop_map(|value| Bson::Document(doc! { "b": value })),
        ]
    })
}

fn document() -> impl Strategy<Value = Document> {
    prop::option::of(value()).prop_map(|field| {
        let mut document = doc! { "z": 1 };
        if let Some(value) = field {
            document.insert("a", value);
        }
        document
    })
}

fn matches(filter: &Document, document: &Document) -> bool {
    let parsed = Filter::parse(filter).unwrap();
    let raw = RawDocumentBuf::try_from(document).unwrap();
    let from_raw = parsed.matches(&raw).unwrap();
    assert_eq!(from_raw, parsed.matches_document(document).unwrap());
    from_raw
}

const COMPARISONS: [&str; 5] = ["$eq", "$gt", "$gte", "$lt", "$lte"];

/// The comparison on one value, as MongoDB's reference describes it: only within the
/// operand's canonical type, by the BSON order.
fn model_single(operator: &str, value: &Bson, operand: &Bson) -> bool {
    if canonical_type(value) != canonical_type(operand) {
        return false;
    }
    let order = compare(value, operand);
    match operator {
        "$eq" => order == Ordering::Equal,
        "$gt" => order == Ordering::Greater,
        "$gte" => order != Ordering::Less,
        "$lt" => order == Ordering::Less,
        "$lte" => order != Ordering::Greater,
        _ => unreachable!("only comparisons are generated"),
    }
}

/// The comparison on field `a`: a missing field compares as null, an array matches through
/// any element or as a whole.
fn model(operator: &str, document: &Document, operand: &Bson) -> bool {
    match document.get("a") {
        None => model_single(operator, &Bson::Null, operand),
        Some(Bson::Array(elements)) => {
            elements
                .iter()
                .any(|element| model_single(operator, element, operand))
                || model_single(operator, &Bson::Array(elements.clone()), operand)
        }
        Some(value) => model_single(operator, value, operand),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn comparisons_agree_with_the_model(
        document in document(),
        operator in prop::sample::select(COMPARISONS.to_vec()),
        operand in scalar(),
    ) {
        let filter = doc! { "a": { operator: operand.clone() } };
        prop_assert_eq!(matches(&filter, &document), model(operator, &document, &operand), "{} on {}", filter, document);
    }

    #[test]
    fn negations_are_complements(
        document in document(),
        path in prop::sample::select(vec!["a", "a.b", "a.0", "a.b.b"]),
        operand in scalar(),
        others in prop::collection::vec(scalar(), 0..3),
        operator in prop::sample::select(COMPARISONS.to_vec()),
    ) {
        let eq = matches(&doc! { path: { "$eq": operand.clone() } }, &document);
        let ne = matches(&doc! { path: { "$ne": operand.clone() } }, &document);
        prop_assert_eq!(ne, !eq);

        let mut list = others.clone();
        list.push(operand.clone());
        let is_in = matches(&doc! { path: { "$in": list.clone() } }, &document);
        let not_in = matches(&doc! { path: { "$nin": list.clone() } }, &document);
        prop_assert_eq!(not_in, !is_in);
        // $in is the disjunction of equalities.
        let any_equal = list.iter().any(|value| matches(&doc! { path: value.clone() }, &document));
        prop_assert_eq!(is_in, any_equal);

        let positive = matches(&doc! { path: { operator: operand.clone() } }, &document);
        let negated = matches(&doc! { path: { "$not": { operator: operand.clone() } } }, &document);
        prop_assert_eq!(negated, !positive);

        let exists = matches(&doc! { path: { "$exists": true } }, &document);
        let absent = matches(&doc! { path: { "$exists": false } }, &document);
        prop_assert_eq!(absent, !exists);
    }

    #[test]
    fn logical_operators_compose(
        document in document(),
        first in scalar(),
        second in scalar(),
        operator in prop::sample::select(COMPARISONS.to_vec()),
    ) {
        let left = doc! { "a": { operator: first.clone() } };
        let right = doc! { "a.b": second.clone() };
        let (l, r) = (matches(&left, &document), matches(&right, &document));
        prop_assert_eq!(matches(&doc! { "$and": [left.clone(), right.clone()] }, &document), l && r);
        prop_assert_eq!(matches(&doc! { "$or": [left.clone(), right.clone()] }, &document), l || r);
        prop_assert_eq!(matches(&doc! { "$nor": [left.clone(), right.clone()] }, &document), !(l || r));
        let mut combined = left.clone();
        combined.extend(right.clone());
        prop_assert_eq!(matches(&combined, &document), l && r);
    }

    #[test]
    fn a_field_equals_its_own_value(document in document()) {
        if let Some(own) = document.get("a") {
            let equal = doc! { "a": { "$eq": own.clone() } };
            let listed = doc! { "a": { "$in": [own.clone()] } };
            let present = doc! { "a": { "$exists": true } };
            prop_assert!(matches(&equal, &document), "{}", document);
            prop_assert!(matches(&listed, &document), "{}", document);
            prop_assert!(matches(&present, &document), "{}", document);
        }
    }

    #[test]
    fn elem_match_value_form_is_any_element(
        elements in prop::collection::vec(scalar(), 0..5),
        operator in prop::sample::select(COMPARISONS.to_vec()),
        operand in scalar(),
    ) {
        let document = doc! { "a": elements.clone() };
        let expected = elements.iter().any(|element| model_single(operator, element, &operand));
        let filter = doc! { "a": { "$elemMatch": { operator: operand.clone() } } };
        prop_assert_eq!(matches(&filter, &document), expected);
        let size = doc! { "a": { "$size": elements.len() as i64 } };
        prop_assert!(matches(&size, &document), "{}", document);
    }
}

/// A filter on `a` built from one operator and operand, as the growth test draws them.
fn growth_filter(operator: &str, operand: &Bson) -> Document {
    match operator {
        "$in" | "$nin" | "$all" => doc! { "a": { operator: [operand.clone(), 1] } },
        "$exists" => doc! { "a": { operator: operand.as_bool().unwrap_or(true) } },
        "$size" => doc! { "a": { operator: 2 } },
        "$elemMatch" => doc! { "a": { operator: { "$gte": operand.clone() } } },
        "$not" => doc! { "a": { operator: { "$eq": operand.clone() } } },
        "$type" => doc! { "a": { operator: "array" } },
        _ => doc! { "a": { operator: operand.clone() } },
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    /// `Filter::holds_as_arrays_grow`: when it says so, a document whose array `a` matches
    /// still matches after elements are appended (the pattern layer then skips splicing the
    /// rest of a split array).
    #[test]
    fn filters_that_hold_as_arrays_grow_stay_true_when_elements_are_appended(
        prefix in prop::collection::vec(value(), 0..4),
        appended in prop::collection::vec(value(), 1..4),
        operator in prop::sample::select(vec![
            "$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin", "$all", "$exists",
            "$size", "$elemMatch", "$not", "$type",
        ]),
        operand in value(),
        path in prop::sample::select(vec!["a", "a.b", "a.0", "a.3"]),
    ) {
        let mut filter = growth_filter(operator, &operand);
        if path != "a" {
            let condition = filter.remove("a").unwrap();
            filter.insert(path, condition);
        }
        let parsed = Filter::parse(&filter).unwrap();
        let before = doc! { "z": 1, "a": prefix.clone() };
        let mut grown = prefix;
        grown.extend(appended);
        let after = doc! { "z": 1, "a": grown };
        if parsed.holds_as_arrays_grow(&|path| path == "a" || path.starts_with("a.")) && matches(&filter, &before) {
            prop_assert!(matches(&filter, &after), "{} matched {} but not {}", filter, before, after);
        }
    }
}
