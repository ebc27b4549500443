//! [`ValueSet`]: values kept once each under MongoDB's equality, in the order first added, as
//! `distinct`, `$addToSet` and the set expressions keep them.
//!
//! A list searched from the start for each new value makes a set of n distinct values cost
//! n²/2 comparisons: 350,000 values took minutes. Here each value is also kept in an ordered
//! tree under the same comparison, so adding one costs O(log n) comparisons.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use bson::{Bson, Document};

use crate::collation::Collation;
use crate::compare::compare_collated;
use crate::path::FieldPath;

/// Values in the order they were first added, each once: two values that compare equal under
/// the set's collation (`1`, `1.0` and `NumberLong(1)`; `"a"` and `"A"` at strength 2) are
/// one value, the first one added.
#[derive(Debug, Clone, Default)]
pub struct ValueSet {
    collation: Collation,
    in_order: Vec<Bson>,
    seen: BTreeSet<Ordered>,
}

/// A value with the collation that orders it, so that the tree can compare two of them.
#[derive(Debug, Clone)]
struct Ordered {
    value: Bson,
    collation: Collation,
}

impl Ord for Ordered {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_collated(&self.value, &other.value, &self.collation)
    }
}

impl PartialOrd for Ordered {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ordered {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Ordered {}

impl ValueSet {
    /// An empty set under `collation` (`Collation::default()` is the simple one).
    pub fn new(collation: &Collation) -> ValueSet {
        ValueSet {
            collation: collation.clone(),
            in_order: Vec::new(),
            seen: BTreeSet::new(),
        }
    }

    /// Adds `value` unless an equal value is in the set; whether it was added.
    pub fn insert(&mut self, value: Bson) -> bool {
        let added = self.seen.insert(Ordered {
            value: value.clone(),
            collation: self.collation.clone(),
        });
        if added {
            self.in_order.push(value);
        }
        added
    }

    /// Whether a value equal to `value` is in the set.
    pub fn contains(&self, value: &Bson) -> bool {
        self.seen.contains(&Ordered {
            value: value.clone(),
            collation: self.collation.clone(),
        })
    }

    /// How many values the set holds.
    pub fn len(&self) -> usize {
        self.in_order.len()
    }

    /// Whether the set holds no value.
    pub fn is_empty(&self) -> bool {
        self.in_order.is_empty()
    }

    /// The values, in the order they were first added.
    pub fn as_slice(&self) -> &[Bson] {
        &self.in_order
    }

    /// Adds the values of `path` in `document` as MongoDB's `distinct` reads them: arrays of
    /// documents fanned out along the path, the array found at its end unwound one level.
    pub fn add_distinct_values(&mut self, document: &Document, path: &FieldPath) {
        let mut reached = Vec::new();
        if let Some((first, rest)) = path.parts().split_first()
            && let Some(child) = document.get(first)
        {
            crate::path::distinct_values(child, rest, &mut reached);
        }
        for value in reached {
            match value {
                Bson::Array(items) => self.extend(items),
                other => {
                    self.insert(other);
                }
            }
        }
    }

    /// The values, in the order they were first added.
    pub fn into_vec(self) -> Vec<Bson> {
        self.in_order
    }
}

impl Extend<Bson> for ValueSet {
    fn extend<I: IntoIterator<Item = Bson>>(&mut self, values: I) {
        for value in values {
            self.insert(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use bson::{Decimal128, bson, doc};

    use super::*;

    #[test]
    fn equal_numbers_are_one_value_the_first_added() {
        let mut set = ValueSet::default();
        assert!(set.insert(Bson::Int32(1)));
        assert!(!set.insert(Bson::Double(1.0)));
        assert!(!set.insert(Bson::Int64(1)));
        assert!(!set.insert(Bson::Decimal128("1.00".parse::<Decimal128>().unwrap())));
        assert!(set.insert(Bson::String("1".into())));
        assert!(set.insert(Bson::Null));
        assert_eq!(
            set.into_vec(),
            vec![Bson::Int32(1), Bson::String("1".into()), Bson::Null]
        );
    }

    #[test]
    fn documents_and_arrays_compare_whole_with_field_order() {
        let mut set = ValueSet::default();
        assert!(set.insert(bson!({ "a": 1, "b": 2 })));
        assert!(set.insert(bson!({ "b": 2, "a": 1 })));
        assert!(!set.insert(bson!({ "a": 1.0, "b": 2 })));
        assert!(set.insert(bson!([1, 2])));
        assert!(!set.insert(bson!([1.0, 2])));
        assert!(set.contains(&Bson::Document(doc! { "a": 1_i64, "b": 2 })));
        assert_eq!(set.len(), 3);
    }

    #[test]
    fn many_distinct_values_keep_their_first_order() {
        let mut set = ValueSet::default();
        for round in 0..2 {
            for n in (0..50_000_i64).rev() {
                assert_eq!(set.insert(Bson::Int64(n)), round == 0);
            }
        }
        let values = set.into_vec();
        assert_eq!(values.len(), 50_000);
        assert_eq!(values.first(), Some(&Bson::Int64(49_999)));
        assert_eq!(values.last(), Some(&Bson::Int64(0)));
    }

    #[cfg(feature = "collation")]
    #[test]
    fn strings_equal_under_the_collation_are_one_value() {
        let collation = Collation::parse(&doc! { "locale": "en", "strength": 2 }).unwrap();
        let mut set = ValueSet::new(&collation);
        assert!(set.insert(Bson::String("Ping".into())));
        assert!(!set.insert(Bson::String("PING".into())));
        assert!(set.insert(Bson::String("pong".into())));
        assert!(set.contains(&Bson::String("pInG".into())));
        assert_eq!(
            set.into_vec(),
            vec![Bson::String("Ping".into()), Bson::String("pong".into())]
        );
    }
}
