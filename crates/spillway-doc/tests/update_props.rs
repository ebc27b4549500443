//! Property tests of update operators against straightforward reference implementations.

use bson::{Bson, DateTime, Document, doc};
use proptest::prelude::*;
use spillway_doc::update::{ApplyContext, Update};

fn context() -> ApplyContext {
    ApplyContext::new(DateTime::from_millis(0))
}

/// MongoDB's `$push` with modifiers on integers, written from the documentation: insert at
/// the position (negative counts from the end, clamped), then sort, then slice.
fn reference_push(
    mut array: Vec<i32>,
    each: &[i32],
    position: Option<i64>,
    sort: Option<i32>,
    slice: Option<i64>,
) -> Vec<i32> {
    let length = array.len() as i64;
    let at = match position {
        None => length,
        Some(position) if position >= 0 => position.min(length),
        Some(position) => (length + position).max(0),
    } as usize;
    let tail = array.split_off(at);
    array.extend_from_slice(each);
    array.extend(tail);
    match sort {
        Some(1) => array.sort_unstable(),
        Some(_) => array.sort_by(|a, b| b.cmp(a)),
        None => {}
    }
    match slice {
        Some(slice) if slice >= 0 => array.into_iter().take(slice as usize).collect(),
        Some(slice) => {
            let keep = (-slice).min(array.len() as i64) as usize;
            array[array.len() - keep..].to_vec()
        }
        None => array,
    }
}

fn ints(values: &[i32]) -> Bson {
    Bson::Array(values.iter().copied().map(Bson::Int32).collect())
}

proptest! {
    #[test]
    fn push_with_modifiers_matches_the_reference(
        array in prop::collection::vec(-5_i32..5, 0..8),
        each in prop::collection::vec(-5_i32..5, 0..5),
        position in prop::option::of(-10_i64..10),
        sort in prop::option::of(prop_oneof![Just(1), Just(-1)]),
        slice in prop::option::of(-10_i64..10),
        order in Just(vec!["$each", "$position", "$sort", "$slice"]).prop_shuffle(),
    ) {
        // The modifiers are written in a random order; the result must not depend on it.
        let mut modifiers = Document::new();
        for name in order {
            match name {
                "$each" => { modifiers.insert(name, ints(&each)); }
                "$position" => if let Some(position) = position { modifiers.insert(name, position); },
                "$sort" => if let Some(sort) = sort { modifiers.insert(name, sort); },
                _ => if let Some(slice) = slice { modifiers.insert(name, slice); },
            }
        }
        let update = Update::parse(&doc! { "$push": { "a": modifiers } }, &[]).unwrap();
        let mut document = doc! { "_id": 1, "a": ints(&array) };
        update.apply(&mut document, &context()).unwrap();
        let expected = reference_push(array, &each, position, sort, slice);
        prop_assert_eq!(document, doc! { "_id": 1, "a": ints(&expected) });
    }

    /// `$addToSet` with `$each` keeps the existing elements and appends each new distinct
    /// value once, in order.
    #[test]
    fn add_to_set_matches_the_reference(
        array in prop::collection::vec(-3_i32..3, 0..6),
        each in prop::collection::vec(-3_i32..3, 0..6),
    ) {
        let update = Update::parse(&doc! { "$addToSet": { "a": { "$each": ints(&each) } } }, &[]).unwrap();
        let mut document = doc! { "a": ints(&array) };
        let outcome = update.apply(&mut document, &context()).unwrap();
        let mut expected = array.clone();
        for value in &each {
            if !expected.contains(value) {
                expected.push(*value);
            }
        }
        prop_assert_eq!(outcome.modified, expected.len() != array.len());
        prop_assert_eq!(document, doc! { "a": ints(&expected) });
    }

    /// `$pull` with a condition and `$pullAll` remove exactly the matching elements, keeping
    /// the order of the rest.
    #[test]
    fn pull_matches_the_reference(
        array in prop::collection::vec(-4_i32..4, 0..8),
        threshold in -4_i32..4,
        removed in prop::collection::vec(-4_i32..4, 0..3),
    ) {
        let update = Update::parse(&doc! { "$pull": { "a": { "$gte": threshold } }, "$pullAll": { "b": ints(&removed) } }, &[]).unwrap();
        let mut document = doc! { "a": ints(&array), "b": ints(&array) };
        update.apply(&mut document, &context()).unwrap();
        let kept_a: Vec<i32> = array.iter().copied().filter(|value| *value < threshold).collect();
        let kept_b: Vec<i32> = array.iter().copied().filter(|value| !removed.contains(value)).collect();
        prop_assert_eq!(document, doc! { "a": ints(&kept_a), "b": ints(&kept_b) });
    }

    /// `$inc` on int32 agrees with i64 arithmetic: int32 when the sum fits, int64 otherwise.
    #[test]
    fn inc_promotes_int32_exactly(start in any::<i32>(), increment in any::<i32>()) {
        let update = Update::parse(&doc! { "$inc": { "n": increment } }, &[]).unwrap();
        let mut document = doc! { "n": start };
        update.apply(&mut document, &context()).unwrap();
        let sum = i64::from(start) + i64::from(increment);
        let expected = i32::try_from(sum).map_or(Bson::Int64(sum), Bson::Int32);
        prop_assert_eq!(document, doc! { "n": expected });
    }
}
