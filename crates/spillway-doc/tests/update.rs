//! Update operators, one MongoDB-documented case per line: `check(document, update,
//! expected)` compares the whole result (field order and types included), `check_err`
//! compares the error message and that the document is unchanged.

#![allow(
    clippy::needless_pass_by_value,
    reason = "one-line cases read best with owned `doc!` arguments"
)]

use bson::{Bson, DateTime, Decimal128, Document, Timestamp, doc};
use spillway_doc::filter::Filter;
use spillway_doc::update::{ApplyContext, Update, UpdateOutcome};

const NOW_MILLIS: i64 = 1_700_000_000_123;

fn context() -> ApplyContext {
    ApplyContext::new(DateTime::from_millis(NOW_MILLIS))
}

fn bytes(document: &Document) -> Vec<u8> {
    document.to_vec().expect("documents in tests encode")
}

/// Applies `update` (with `array_filters`) and returns the outcome and the document.
fn run(
    mut document: Document,
    update: &Document,
    array_filters: &[Document],
    context: &ApplyContext,
) -> Result<(UpdateOutcome, Document), String> {
    let parsed = Update::parse(update, array_filters).map_err(|error| error.to_string())?;
    let before = document.clone();
    match parsed.apply(&mut document, context) {
        Ok(outcome) => Ok((outcome, document)),
        Err(error) => {
            assert_eq!(
                bytes(&document),
                bytes(&before),
                "a failed update changed the document"
            );
            Err(error.to_string())
        }
    }
}

#[track_caller]
fn check_full(
    document: Document,
    update: Document,
    array_filters: &[Document],
    context: &ApplyContext,
    expected: Document,
) {
    let original = document.clone();
    let (outcome, updated) = run(document, &update, array_filters, context)
        .unwrap_or_else(|error| panic!("{update} on {original} failed: {error}"));
    assert_eq!(
        bytes(&updated),
        bytes(&expected),
        "\n{update} on {original}\n   gave {updated:?}\nexpected {expected:?}"
    );
    assert_eq!(
        outcome.modified,
        bytes(&original) != bytes(&expected),
        "modified flag of {update} on {original}"
    );
}

#[track_caller]
fn check(document: Document, update: Document, expected: Document) {
    check_full(document, update, &[], &context(), expected);
}

#[track_caller]
fn check_filters(document: Document, update: Document, filters: &[Document], expected: Document) {
    check_full(document, update, filters, &context(), expected);
}

#[track_caller]
fn check_positional(document: Document, update: Document, index: usize, expected: Document) {
    check_full(
        document,
        update,
        &[],
        &context().with_positional_index(Some(index)),
        expected,
    );
}

#[track_caller]
fn check_err(document: Document, update: Document, expected_message: &str) {
    check_err_filters(document, update, &[], expected_message);
}

#[track_caller]
fn check_err_filters(document: Document, update: Document, filters: &[Document], expected: &str) {
    match run(document.clone(), &update, filters, &context()) {
        Ok((_, updated)) => panic!("{update} on {document} succeeded with {updated}"),
        Err(message) => assert_eq!(message, expected, "{update} on {document}"),
    }
}

fn decimal(text: &str) -> Bson {
    Bson::Decimal128(text.parse::<Decimal128>().unwrap())
}

#[test]
fn set() {
    check(
        doc! { "_id": 1, "a": 1 },
        doc! { "$set": { "a": 2 } },
        doc! { "_id": 1, "a": 2 },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$set": { "b": 1, "a": 2 } },
        doc! { "_id": 1, "a": 2, "b": 1 },
    );
    check(
        doc! { "_id": 1, "z": 0 },
        doc! { "$set": { "x.b": 1, "x.a": 2 } },
        doc! { "_id": 1, "z": 0, "x": { "a": 2, "b": 1 } },
    );
    check(
        doc! { "_id": 1, "a": 1 },
        doc! { "$set": { "a": 1 } },
        doc! { "_id": 1, "a": 1 },
    );
    check(
        doc! { "_id": 1, "a": 1.0 },
        doc! { "$set": { "a": 1 } },
        doc! { "_id": 1, "a": 1 },
    );
    check(
        doc! { "_id": 100, "tags": ["apparel", "clothing"], "ratings": [{ "by": "Customer007", "rating": 4 }] },
        doc! { "$set": { "tags.1": "rain gear", "ratings.0.rating": 2 } },
        doc! { "_id": 100, "tags": ["apparel", "rain gear"], "ratings": [{ "by": "Customer007", "rating": 2 }] },
    );
    check(
        doc! { "_id": 1, "a": [1] },
        doc! { "$set": { "a.3": 4 } },
        doc! { "_id": 1, "a": [1, null, null, 4] },
    );
    check(
        doc! { "_id": 1, "a": [] },
        doc! { "$set": { "a.1.b": 4 } },
        doc! { "_id": 1, "a": [null, { "b": 4 }] },
    );
    check(
        doc! { "_id": 1, "a": { "0": 1 } },
        doc! { "$set": { "a.0": 2 } },
        doc! { "_id": 1, "a": { "0": 2 } },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$set": { "a.10": 1, "a.9": 2 } },
        doc! { "_id": 1, "a": { "9": 2, "10": 1 } },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$set": { "a.b.c": { "d": [1] } } },
        doc! { "_id": 1, "a": { "b": { "c": { "d": [1] } } } },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$set": { "_id": 1 } },
        doc! { "_id": 1 },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$set": { "ref": { "$ref": "c", "$id": 1 } } },
        doc! { "_id": 1, "ref": { "$ref": "c", "$id": 1 } },
    );
    check(
        doc! { "_id": 1, "a": 1 },
        doc! { "$set": {} },
        doc! { "_id": 1, "a": 1 },
    );
}

#[test]
fn set_failures() {
    check_err(
        doc! { "_id": 1, "a": 5 },
        doc! { "$set": { "a.b": 1 } },
        "$set: field 'a.b' cannot be created: 'a' is an int (document _id: 1)",
    );
    check_err(
        doc! { "_id": 1, "a": null },
        doc! { "$set": { "a.b": 1 } },
        "$set: field 'a.b' cannot be created: 'a' is null (document _id: 1)",
    );
    check_err(
        doc! { "_id": 1, "a": [1] },
        doc! { "$set": { "a.b": 1 } },
        "$set: field 'a.b' cannot be created: 'a' is an array and 'b' is not an array index (document _id: 1)",
    );
    check_err(
        doc! { "_id": 1 },
        doc! { "$set": { "_id": 2 } },
        "$set: field '_id' is immutable and cannot change from 1 to 2 (document _id: 1)",
    );
    check_err(
        doc! { "_id": { "a": 1 } },
        doc! { "$set": { "_id.a": 2 } },
        "$set: field '_id' is immutable and cannot change from { \"a\": 1 } to { \"a\": 2 } (document _id: { \"a\": 1 })",
    );
    check_err(
        doc! { "a": 5 },
        doc! { "$set": { "a.b": 1 } },
        "$set: field 'a.b' cannot be created: 'a' is an int (document without _id)",
    );
    check_err(
        doc! { "_id": 1, "a": [] },
        doc! { "$set": { "a.1500001": 1 } },
        "$set: field 'a.1500001' cannot be created: it would pad the array 'a' with 1500001 nulls (the limit is 1500000) (document _id: 1)",
    );
}

#[test]
fn unset() {
    check(
        doc! { "_id": 1, "quantity": 250, "instock": true, "x": 1 },
        doc! { "$unset": { "quantity": "", "instock": "" } },
        doc! { "_id": 1, "x": 1 },
    );
    check(
        doc! { "_id": 1, "a": { "b": 1, "c": 2 } },
        doc! { "$unset": { "a.b": 1 } },
        doc! { "_id": 1, "a": { "c": 2 } },
    );
    check(
        doc! { "_id": 1, "a": [1, 2, 3] },
        doc! { "$unset": { "a.1": true } },
        doc! { "_id": 1, "a": [1, null, 3] },
    );
    check(
        doc! { "_id": 1, "a": [1, null] },
        doc! { "$unset": { "a.1": true } },
        doc! { "_id": 1, "a": [1, null] },
    );
    check(
        doc! { "_id": 1, "a": 5 },
        doc! { "$unset": { "a.b": 1, "c": 1, "d.e": 1 } },
        doc! { "_id": 1, "a": 5 },
    );
    check(
        doc! { "_id": 1, "a": [{ "b": 1 }] },
        doc! { "$unset": { "a.b": 1 } },
        doc! { "_id": 1, "a": [{ "b": 1 }] },
    );
    check_err(
        doc! { "_id": 1, "a": 1 },
        doc! { "$unset": { "_id": 1 } },
        "$unset: field '_id' is immutable and cannot be removed (document _id: 1)",
    );
}

#[test]
fn inc_and_type_promotion() {
    check(
        doc! { "_id": 1, "sku": "abc123", "quantity": 10, "metrics": { "orders": 2, "ratings": 3.5 } },
        doc! { "$inc": { "quantity": -2, "metrics.orders": 1 } },
        doc! { "_id": 1, "sku": "abc123", "quantity": 8, "metrics": { "orders": 3, "ratings": 3.5 } },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$inc": { "n": 5_i64 } },
        doc! { "_id": 1, "n": 5_i64 },
    );
    check(
        doc! { "_id": 1, "n": 1 },
        doc! { "$inc": { "n": 0 } },
        doc! { "_id": 1, "n": 1 },
    );
    check(
        doc! { "_id": 1, "n": 1 },
        doc! { "$inc": { "n": 0_i64 } },
        doc! { "_id": 1, "n": 1_i64 },
    );
    check(
        doc! { "_id": 1, "n": i32::MAX },
        doc! { "$inc": { "n": 1 } },
        doc! { "_id": 1, "n": 2_147_483_648_i64 },
    );
    check(
        doc! { "_id": 1, "n": i32::MIN },
        doc! { "$inc": { "n": -1 } },
        doc! { "_id": 1, "n": -2_147_483_649_i64 },
    );
    check(
        doc! { "_id": 1, "n": 1 },
        doc! { "$inc": { "n": 2_i64 } },
        doc! { "_id": 1, "n": 3_i64 },
    );
    check(
        doc! { "_id": 1, "n": 1 },
        doc! { "$inc": { "n": 0.5 } },
        doc! { "_id": 1, "n": 1.5 },
    );
    check(
        doc! { "_id": 1, "n": 1.5 },
        doc! { "$inc": { "n": 1 } },
        doc! { "_id": 1, "n": 2.5 },
    );
    check(
        doc! { "_id": 1, "n": decimal("1.5") },
        doc! { "$inc": { "n": 1 } },
        doc! { "_id": 1, "n": decimal("2.5") },
    );
    check(
        doc! { "_id": 1, "n": 1 },
        doc! { "$inc": { "n": decimal("0.25") } },
        doc! { "_id": 1, "n": decimal("1.25") },
    );
    check(
        doc! { "_id": 1, "n": decimal("0.1") },
        doc! { "$inc": { "n": decimal("0.2") } },
        doc! { "_id": 1, "n": decimal("0.3") },
    );
    check(
        doc! { "_id": 1, "a": [1, 2] },
        doc! { "$inc": { "a.1": 1 } },
        doc! { "_id": 1, "a": [1, 3] },
    );
    check_err(
        doc! { "_id": 7, "n": i64::MAX },
        doc! { "$inc": { "n": 1 } },
        "$inc: field 'n' cannot be incremented: overflows a 64-bit integer (9223372036854775807 + 1) (document _id: 7)",
    );
    check_err(
        doc! { "_id": 7, "n": "x" },
        doc! { "$inc": { "n": 1 } },
        "$inc: field 'n' is a string, not a number (document _id: 7)",
    );
    check_err(
        doc! { "_id": 7, "n": null },
        doc! { "$inc": { "n": 1 } },
        "$inc: field 'n' is null, not a number (document _id: 7)",
    );
    check_err(
        doc! { "_id": 7, "n": 1, "s": "x" },
        doc! { "$inc": { "n": 1, "s": 1 } },
        "$inc: field 's' is a string, not a number (document _id: 7)",
    );
}

#[test]
fn mul() {
    check(
        doc! { "_id": 1, "item": "Hats", "price": decimal("10.99"), "quantity": 25 },
        doc! { "$mul": { "price": decimal("1.25"), "quantity": 2 } },
        doc! { "_id": 1, "item": "Hats", "price": decimal("13.7375"), "quantity": 50 },
    );
    check(
        doc! { "_id": 2, "item": "Unknown" },
        doc! { "$mul": { "price": 100_i64 } },
        doc! { "_id": 2, "item": "Unknown", "price": 0_i64 },
    );
    check(
        doc! { "_id": 2 },
        doc! { "$mul": { "p": 2.5 } },
        doc! { "_id": 2, "p": 0.0 },
    );
    check(
        doc! { "_id": 2 },
        doc! { "$mul": { "p": decimal("3") } },
        doc! { "_id": 2, "p": decimal("0") },
    );
    check(
        doc! { "_id": 3, "item": "Scarf", "price": 10_i64 },
        doc! { "$mul": { "price": 5 } },
        doc! { "_id": 3, "item": "Scarf", "price": 50_i64 },
    );
    check(
        doc! { "_id": 3, "n": 65_536 },
        doc! { "$mul": { "n": 65_536 } },
        doc! { "_id": 3, "n": 4_294_967_296_i64 },
    );
    check(
        doc! { "_id": 3, "n": 3 },
        doc! { "$mul": { "n": 0.5 } },
        doc! { "_id": 3, "n": 1.5 },
    );
    check(
        doc! { "_id": 3, "n": 3 },
        doc! { "$mul": { "n": 1 } },
        doc! { "_id": 3, "n": 3 },
    );
    check_err(
        doc! { "_id": 3, "n": i64::MAX },
        doc! { "$mul": { "n": 2 } },
        "$mul: field 'n' cannot be multiplied: overflows a 64-bit integer (9223372036854775807 * 2) (document _id: 3)",
    );
    check_err(
        doc! { "_id": 3, "n": [1] },
        doc! { "$mul": { "n": 2 } },
        "$mul: field 'n' is an array, not a number (document _id: 3)",
    );
}

#[test]
fn min_and_max() {
    check(
        doc! { "_id": 1, "highScore": 800, "lowScore": 200 },
        doc! { "$min": { "lowScore": 150 } },
        doc! { "_id": 1, "highScore": 800, "lowScore": 150 },
    );
    check(
        doc! { "_id": 1, "highScore": 800, "lowScore": 150 },
        doc! { "$min": { "lowScore": 250 } },
        doc! { "_id": 1, "highScore": 800, "lowScore": 150 },
    );
    check(
        doc! { "_id": 1, "highScore": 800 },
        doc! { "$max": { "highScore": 950 } },
        doc! { "_id": 1, "highScore": 950 },
    );
    check(
        doc! { "_id": 1, "highScore": 950 },
        doc! { "$max": { "highScore": 870 } },
        doc! { "_id": 1, "highScore": 950 },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$min": { "a": 5 }, "$max": { "b": 6 } },
        doc! { "_id": 1, "a": 5, "b": 6 },
    );
    check(
        doc! { "_id": 1, "a": 1 },
        doc! { "$min": { "a": 1.0 } },
        doc! { "_id": 1, "a": 1 },
    );
    check(
        doc! { "_id": 1, "a": "text" },
        doc! { "$min": { "a": 5 } },
        doc! { "_id": 1, "a": 5 },
    );
    check(
        doc! { "_id": 1, "a": "text" },
        doc! { "$max": { "a": 5 } },
        doc! { "_id": 1, "a": "text" },
    );
    check(
        doc! { "_id": 1, "a": null },
        doc! { "$min": { "a": 5 } },
        doc! { "_id": 1, "a": null },
    );
    check(
        doc! { "_id": 1, "a": null },
        doc! { "$max": { "a": 5 } },
        doc! { "_id": 1, "a": 5 },
    );
    check(
        doc! { "_id": 1, "d": DateTime::from_millis(1000) },
        doc! { "$max": { "d": DateTime::from_millis(2000) } },
        doc! { "_id": 1, "d": DateTime::from_millis(2000) },
    );
    check(
        doc! { "_id": 1, "a": 1_i64 << 53 },
        doc! { "$max": { "a": 9_007_199_254_740_993_i64 } },
        doc! { "_id": 1, "a": 9_007_199_254_740_993_i64 },
    );
}

#[test]
fn rename() {
    check(
        doc! { "_id": 1, "nmae": { "first": "george", "last": "washington" }, "z": 1 },
        doc! { "$rename": { "nmae": "name" } },
        doc! { "_id": 1, "z": 1, "name": { "first": "george", "last": "washington" } },
    );
    check(
        doc! { "_id": 1, "name": { "first": "george", "last": "washington" } },
        doc! { "$rename": { "name.first": "name.fname" } },
        doc! { "_id": 1, "name": { "last": "washington", "fname": "george" } },
    );
    check(
        doc! { "_id": 1, "a": 1 },
        doc! { "$rename": { "nickname": "alias", "cell": "mobile" } },
        doc! { "_id": 1, "a": 1 },
    );
    check(
        doc! { "_id": 1, "a": 1, "b": 2 },
        doc! { "$rename": { "a": "b" } },
        doc! { "_id": 1, "b": 1 },
    );
    check(
        doc! { "_id": 1, "a": { "b": 1 } },
        doc! { "$rename": { "a.b": "c.d" } },
        doc! { "_id": 1, "a": {}, "c": { "d": 1 } },
    );
    check(
        doc! { "_id": 1, "a": 1, "x": 5 },
        doc! { "$rename": { "a": "b" }, "$set": { "c": 1 } },
        doc! { "_id": 1, "x": 5, "b": 1, "c": 1 },
    );
    check_err(
        doc! { "_id": 1, "a": [{ "b": 1 }] },
        doc! { "$rename": { "a.0.b": "c" } },
        "$rename: field 'a.0.b' cannot be renamed: 'a' is an array ($rename does not go through arrays) (document _id: 1)",
    );
    check_err(
        doc! { "_id": 1, "a": 1, "c": [] },
        doc! { "$rename": { "a": "c.0" } },
        "$rename: field 'c.0' cannot be the destination of $rename: 'c' is an array ($rename does not go through arrays) (document _id: 1)",
    );
    check_err(
        doc! { "_id": 1, "a": 1, "c": 5 },
        doc! { "$rename": { "a": "c.d" } },
        "$rename: field 'c.d' cannot be created: 'c' is an int (document _id: 1)",
    );
    check_err(
        doc! { "_id": 1, "a": 1 },
        doc! { "$rename": { "_id": "b" } },
        "$rename: field '_id' is immutable and cannot be removed (document _id: 1)",
    );
    check_err(
        doc! { "_id": 1, "a": 2 },
        doc! { "$rename": { "a": "_id" } },
        "$rename: field '_id' is immutable and cannot change from 1 to 2 (document _id: 1)",
    );
    check(
        doc! { "_id": 1, "a": 1 },
        doc! { "$rename": { "a": "_id" } },
        doc! { "_id": 1 },
    );
}

#[test]
fn current_date() {
    let now = DateTime::from_millis(NOW_MILLIS);
    let timestamp = Timestamp {
        time: 1_700_000_000,
        increment: 1,
    };
    check(
        doc! { "_id": 1, "status": "a", "lastModified": DateTime::from_millis(0) },
        doc! {
            "$currentDate": { "lastModified": true, "cancellation.date": { "$type": "timestamp" } },
            "$set": { "cancellation.reason": "user request", "status": "D" },
        },
        doc! { "_id": 1, "status": "D", "lastModified": now, "cancellation": { "date": timestamp, "reason": "user request" } },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$currentDate": { "d": { "$type": "date" } } },
        doc! { "_id": 1, "d": now },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$currentDate": { "d": false } },
        doc! { "_id": 1, "d": now },
    );
    check(
        doc! { "_id": 1, "d": now },
        doc! { "$currentDate": { "d": true } },
        doc! { "_id": 1, "d": now },
    );
}

#[test]
fn set_on_insert_applies_only_to_upsert_inserts() {
    check(
        doc! { "_id": 1, "a": 1 },
        doc! { "$setOnInsert": { "b": 2 }, "$set": { "a": 3 } },
        doc! { "_id": 1, "a": 3 },
    );
    let update = Update::parse(
        &doc! { "$set": { "item": "apple" }, "$setOnInsert": { "defaultQty": 100 } },
        &[],
    )
    .unwrap();
    let inserted = update
        .upsert(&Filter::parse(&doc! { "_id": 1 }).unwrap(), &context())
        .unwrap();
    assert_eq!(
        bytes(&inserted),
        bytes(&doc! { "_id": 1, "defaultQty": 100, "item": "apple" })
    );
}

#[test]
fn push() {
    check(
        doc! { "_id": 1, "scores": [44, 78] },
        doc! { "$push": { "scores": 89 } },
        doc! { "_id": 1, "scores": [44, 78, 89] },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$push": { "scores": 89 } },
        doc! { "_id": 1, "scores": [89] },
    );
    check(
        doc! { "_id": 1, "s": [1] },
        doc! { "$push": { "s": [2, 3] } },
        doc! { "_id": 1, "s": [1, [2, 3]] },
    );
    check(
        doc! { "_id": 1, "s": [1] },
        doc! { "$push": { "s": { "a": 1 } } },
        doc! { "_id": 1, "s": [1, { "a": 1 }] },
    );
    check(
        doc! { "_id": 1, "s": [1] },
        doc! { "$push": { "s": { "$each": [90, 92, 85] } } },
        doc! { "_id": 1, "s": [1, 90, 92, 85] },
    );
    check(
        doc! { "_id": 1, "s": [1] },
        doc! { "$push": { "s": { "$each": [] } } },
        doc! { "_id": 1, "s": [1] },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$push": { "s": { "$each": [] } } },
        doc! { "_id": 1, "s": [] },
    );
    check(
        doc! { "_id": 1, "a": { "b": [1] } },
        doc! { "$push": { "a.b": 2 } },
        doc! { "_id": 1, "a": { "b": [1, 2] } },
    );
    check(
        doc! { "_id": 1, "a": [[1]] },
        doc! { "$push": { "a.0": 2 } },
        doc! { "_id": 1, "a": [[1, 2]] },
    );
    check_err(
        doc! { "_id": 7, "tags": "x" },
        doc! { "$push": { "tags": "y" } },
        "$push: field 'tags' is a string, not an array (document _id: 7)",
    );
    check_err(
        doc! { "_id": 7, "tags": { "a": 1 } },
        doc! { "$push": { "tags": { "$each": [1] } } },
        "$push: field 'tags' is an object, not an array (document _id: 7)",
    );
    check_err(
        doc! { "_id": 7, "a": 1 },
        doc! { "$push": { "a.b": 1 } },
        "$push: field 'a.b' cannot be created: 'a' is an int (document _id: 7)",
    );
}

#[test]
fn push_position() {
    check(
        doc! { "_id": 1, "scores": [100] },
        doc! { "$push": { "scores": { "$each": [50, 60, 70], "$position": 0 } } },
        doc! { "_id": 1, "scores": [50, 60, 70, 100] },
    );
    check(
        doc! { "_id": 1, "scores": [50, 60, 70, 100] },
        doc! { "$push": { "scores": { "$each": [20, 30], "$position": 2 } } },
        doc! { "_id": 1, "scores": [50, 60, 20, 30, 70, 100] },
    );
    check(
        doc! { "_id": 1, "scores": [50, 60, 20, 30, 70, 100] },
        doc! { "$push": { "scores": { "$each": [90, 80], "$position": -2 } } },
        doc! { "_id": 1, "scores": [50, 60, 20, 30, 90, 80, 70, 100] },
    );
    check(
        doc! { "_id": 1, "s": [1, 2] },
        doc! { "$push": { "s": { "$each": [9], "$position": 10 } } },
        doc! { "_id": 1, "s": [1, 2, 9] },
    );
    check(
        doc! { "_id": 1, "s": [1, 2] },
        doc! { "$push": { "s": { "$each": [9], "$position": -10 } } },
        doc! { "_id": 1, "s": [9, 1, 2] },
    );
    check(
        doc! { "_id": 1, "s": [1, 2] },
        doc! { "$push": { "s": { "$each": [9], "$position": -1 } } },
        doc! { "_id": 1, "s": [1, 9, 2] },
    );
    check(
        doc! { "_id": 1, "s": [1, 2] },
        doc! { "$push": { "s": { "$each": [9], "$position": 1.0 } } },
        doc! { "_id": 1, "s": [1, 9, 2] },
    );
    check(
        doc! { "_id": 1, "s": [1, 2] },
        doc! { "$push": { "s": { "$each": [9], "$position": 1_i64 } } },
        doc! { "_id": 1, "s": [1, 9, 2] },
    );
}

#[test]
fn push_slice() {
    check(
        doc! { "_id": 1, "scores": [40, 50, 60] },
        doc! { "$push": { "scores": { "$each": [80, 78, 86], "$slice": -5 } } },
        doc! { "_id": 1, "scores": [50, 60, 80, 78, 86] },
    );
    check(
        doc! { "_id": 2, "scores": [89, 90] },
        doc! { "$push": { "scores": { "$each": [100, 20], "$slice": 3 } } },
        doc! { "_id": 2, "scores": [89, 90, 100] },
    );
    check(
        doc! { "_id": 3, "scores": [89, 70, 100, 20] },
        doc! { "$push": { "scores": { "$each": [], "$slice": -3 } } },
        doc! { "_id": 3, "scores": [70, 100, 20] },
    );
    check(
        doc! { "_id": 1, "s": [1, 2] },
        doc! { "$push": { "s": { "$each": [3], "$slice": 0 } } },
        doc! { "_id": 1, "s": [] },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$push": { "s": { "$each": [3, 4], "$slice": 0 } } },
        doc! { "_id": 1, "s": [] },
    );
    check(
        doc! { "_id": 1, "s": [1, 2] },
        doc! { "$push": { "s": { "$each": [3], "$slice": 10 } } },
        doc! { "_id": 1, "s": [1, 2, 3] },
    );
    check(
        doc! { "_id": 1, "s": [1, 2] },
        doc! { "$push": { "s": { "$each": [3], "$slice": -10 } } },
        doc! { "_id": 1, "s": [1, 2, 3] },
    );
    check(
        doc! { "_id": 1, "s": [1, 2] },
        doc! { "$push": { "s": { "$each": [3], "$slice": 2.0 } } },
        doc! { "_id": 1, "s": [1, 2] },
    );
}

#[test]
fn push_sort() {
    check(
        doc! { "_id": 2, "tests": [89, 70, 89, 50] },
        doc! { "$push": { "tests": { "$each": [40, 60], "$sort": 1 } } },
        doc! { "_id": 2, "tests": [40, 50, 60, 70, 89, 89] },
    );
    check(
        doc! { "_id": 2, "tests": [40, 50, 60, 70, 89, 89] },
        doc! { "$push": { "tests": { "$each": [], "$sort": -1 } } },
        doc! { "_id": 2, "tests": [89, 89, 70, 60, 50, 40] },
    );
    check(
        doc! { "_id": 1, "quizzes": [{ "id": 1, "score": 6 }, { "id": 2, "score": 9 }] },
        doc! { "$push": { "quizzes": { "$each": [{ "id": 3, "score": 8 }, { "id": 4, "score": 7 }, { "id": 5, "score": 6 }], "$sort": { "score": 1 } } } },
        doc! { "_id": 1, "quizzes": [{ "id": 1, "score": 6 }, { "id": 5, "score": 6 }, { "id": 4, "score": 7 }, { "id": 3, "score": 8 }, { "id": 2, "score": 9 }] },
    );
    // Mixed types follow the BSON order: numbers < strings < objects < arrays < booleans.
    check(
        doc! { "_id": 1, "m": [true, [1], { "a": 1 }, "b", 2, null, 1.5] },
        doc! { "$push": { "m": { "$each": [], "$sort": 1 } } },
        doc! { "_id": 1, "m": [null, 1.5, 2, "b", { "a": 1 }, [1], true] },
    );
    // Sorting by a field: elements without it, and non-documents, sort as null.
    check(
        doc! { "_id": 1, "m": [{ "s": 2 }, 7, { "t": 1 }, { "s": "x" }, { "s": 1 }] },
        doc! { "$push": { "m": { "$each": [], "$sort": { "s": 1 } } } },
        doc! { "_id": 1, "m": [7, { "t": 1 }, { "s": 1 }, { "s": 2 }, { "s": "x" }] },
    );
    // Dotted sort fields and several keys.
    check(
        doc! { "_id": 1, "m": [{ "a": { "b": 2 }, "c": 1 }, { "a": { "b": 1 }, "c": 1 }, { "a": { "b": 2 }, "c": 0 }] },
        doc! { "$push": { "m": { "$each": [], "$sort": { "a.b": -1, "c": 1 } } } },
        doc! { "_id": 1, "m": [{ "a": { "b": 2 }, "c": 0 }, { "a": { "b": 2 }, "c": 1 }, { "a": { "b": 1 }, "c": 1 }] },
    );
    // $push's $sort compares an array field as a whole value (no min/max as in find).
    check(
        doc! { "_id": 1, "m": [{ "v": [1, 9] }, { "v": [2] }, { "v": 5 }] },
        doc! { "$push": { "m": { "$each": [], "$sort": { "v": 1 } } } },
        doc! { "_id": 1, "m": [{ "v": 5 }, { "v": [1, 9] }, { "v": [2] }] },
    );
}

#[test]
fn push_modifiers_apply_in_fixed_order_whatever_the_written_order() {
    let expected = doc! { "_id": 5, "quizzes": [{ "wk": 1, "score": 10 }, { "wk": 2, "score": 8 }, { "wk": 5, "score": 8 }] };
    let original = doc! { "_id": 5, "quizzes": [{ "wk": 1, "score": 10 }, { "wk": 2, "score": 8 }, { "wk": 3, "score": 5 }, { "wk": 4, "score": 6 }] };
    let each =
        bson::bson!([{ "wk": 5, "score": 8 }, { "wk": 6, "score": 7 }, { "wk": 7, "score": 6 }]);
    check(
        original.clone(),
        doc! { "$push": { "quizzes": { "$each": each.clone(), "$sort": { "score": -1 }, "$slice": 3 } } },
        expected.clone(),
    );
    check(
        original.clone(),
        doc! { "$push": { "quizzes": { "$slice": 3, "$sort": { "score": -1 }, "$each": each.clone() } } },
        expected.clone(),
    );
    check(
        original,
        doc! { "$push": { "quizzes": { "$sort": { "score": -1 }, "$each": each, "$slice": 3 } } },
        expected,
    );
    // Position, then sort (which makes the position irrelevant), then slice.
    check(
        doc! { "_id": 1, "s": [5, 1] },
        doc! { "$push": { "s": { "$slice": 2, "$position": 0, "$sort": -1, "$each": [3, 9] } } },
        doc! { "_id": 1, "s": [9, 5] },
    );
    // Position then slice: the inserted elements are at the front and survive.
    check(
        doc! { "_id": 1, "s": [5, 1] },
        doc! { "$push": { "s": { "$slice": 2, "$each": [3, 9], "$position": 0 } } },
        doc! { "_id": 1, "s": [3, 9] },
    );
    check(
        doc! { "_id": 1, "s": [5, 1] },
        doc! { "$push": { "s": { "$slice": -2, "$each": [3, 9], "$position": 0 } } },
        doc! { "_id": 1, "s": [5, 1] },
    );
    check(
        doc! { "_id": 1, "s": [5, 1, 4] },
        doc! { "$push": { "s": { "$each": [3], "$position": -1, "$slice": -3 } } },
        doc! { "_id": 1, "s": [1, 3, 4] },
    );
}

#[test]
fn add_to_set() {
    check(
        doc! { "_id": 1, "letters": ["a", "b"] },
        doc! { "$addToSet": { "letters": ["c", "d"] } },
        doc! { "_id": 1, "letters": ["a", "b", ["c", "d"]] },
    );
    check(
        doc! { "_id": 2, "item": "cable", "tags": ["electronics", "supplies"] },
        doc! { "$addToSet": { "tags": { "$each": ["camera", "electronics", "accessories"] } } },
        doc! { "_id": 2, "item": "cable", "tags": ["electronics", "supplies", "camera", "accessories"] },
    );
    check(
        doc! { "_id": 1, "t": ["a"] },
        doc! { "$addToSet": { "t": "a" } },
        doc! { "_id": 1, "t": ["a"] },
    );
    check(
        doc! { "_id": 1, "t": [1] },
        doc! { "$addToSet": { "t": 1.0 } },
        doc! { "_id": 1, "t": [1] },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$addToSet": { "t": "a" } },
        doc! { "_id": 1, "t": ["a"] },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$addToSet": { "t": { "$each": [] } } },
        doc! { "_id": 1, "t": [] },
    );
    check(
        doc! { "_id": 1, "t": [] },
        doc! { "$addToSet": { "t": { "$each": [1, 1, 2, 1] } } },
        doc! { "_id": 1, "t": [1, 2] },
    );
    // Documents are equal only with the same fields in the same order.
    check(
        doc! { "_id": 1, "t": [{ "a": 1, "b": 2 }] },
        doc! { "$addToSet": { "t": { "a": 1, "b": 2 } } },
        doc! { "_id": 1, "t": [{ "a": 1, "b": 2 }] },
    );
    check(
        doc! { "_id": 1, "t": [{ "a": 1, "b": 2 }] },
        doc! { "$addToSet": { "t": { "b": 2, "a": 1 } } },
        doc! { "_id": 1, "t": [{ "a": 1, "b": 2 }, { "b": 2, "a": 1 }] },
    );
    check_err(
        doc! { "_id": 1, "colors": "blue, green, red" },
        doc! { "$addToSet": { "colors": "c" } },
        "$addToSet: field 'colors' is a string, not an array (document _id: 1)",
    );
}

#[test]
fn pop() {
    check(
        doc! { "_id": 1, "scores": [8, 9, 10] },
        doc! { "$pop": { "scores": -1 } },
        doc! { "_id": 1, "scores": [9, 10] },
    );
    check(
        doc! { "_id": 1, "scores": [9, 10] },
        doc! { "$pop": { "scores": 1 } },
        doc! { "_id": 1, "scores": [9] },
    );
    check(
        doc! { "_id": 1, "scores": [9] },
        doc! { "$pop": { "scores": 1.0 } },
        doc! { "_id": 1, "scores": [] },
    );
    check(
        doc! { "_id": 1, "scores": [] },
        doc! { "$pop": { "scores": 1 } },
        doc! { "_id": 1, "scores": [] },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$pop": { "scores": 1 } },
        doc! { "_id": 1 },
    );
    check_err(
        doc! { "_id": 1, "scores": 5 },
        doc! { "$pop": { "scores": 1 } },
        "$pop: field 'scores' is an int, not an array (document _id: 1)",
    );
}

#[test]
fn pull() {
    check(
        doc! { "_id": 1, "fruits": ["apples", "pears", "oranges", "grapes", "bananas"], "vegetables": ["carrots", "celery", "squash", "carrots"] },
        doc! { "$pull": { "fruits": { "$in": ["apples", "oranges"] }, "vegetables": "carrots" } },
        doc! { "_id": 1, "fruits": ["pears", "grapes", "bananas"], "vegetables": ["celery", "squash"] },
    );
    check(
        doc! { "_id": 1, "votes": [3, 5, 6, 7, 7, 8] },
        doc! { "$pull": { "votes": { "$gte": 6 } } },
        doc! { "_id": 1, "votes": [3, 5] },
    );
    check(
        doc! { "_id": 1, "results": [{ "item": "A", "score": 5 }, { "item": "B", "score": 8 }] },
        doc! { "$pull": { "results": { "score": 8, "item": "B" } } },
        doc! { "_id": 1, "results": [{ "item": "A", "score": 5 }] },
    );
    check(
        doc! { "_id": 1, "results": [
            { "item": "A", "score": 5, "answers": [{ "q": 1, "a": 4 }, { "q": 2, "a": 6 }] },
            { "item": "B", "score": 8, "answers": [{ "q": 1, "a": 8 }, { "q": 2, "a": 9 }] },
        ] },
        doc! { "$pull": { "results": { "answers": { "$elemMatch": { "q": 2, "a": { "$gte": 8 } } } } } },
        doc! { "_id": 1, "results": [{ "item": "A", "score": 5, "answers": [{ "q": 1, "a": 4 }, { "q": 2, "a": 6 }] }] },
    );
    // A query on element documents never matches scalars; `{}` matches every document.
    check(
        doc! { "_id": 1, "a": [1, { "b": 1 }, { "c": 2 }] },
        doc! { "$pull": { "a": { "b": 1 } } },
        doc! { "_id": 1, "a": [1, { "c": 2 }] },
    );
    check(
        doc! { "_id": 1, "a": [1, { "b": 1 }, [2]] },
        doc! { "$pull": { "a": {} } },
        doc! { "_id": 1, "a": [1, [2]] },
    );
    // A value is compared whole: 1 == 1.0, arrays equal as arrays.
    check(
        doc! { "_id": 1, "a": [1, 1.0, 2, [1]] },
        doc! { "$pull": { "a": 1 } },
        doc! { "_id": 1, "a": [2, [1]] },
    );
    check(
        doc! { "_id": 1, "a": [[1, 2], [2, 1], 1] },
        doc! { "$pull": { "a": [1, 2] } },
        doc! { "_id": 1, "a": [[2, 1], 1] },
    );
    check(
        doc! { "_id": 1, "a": [{ "b": 1, "c": 2 }, { "b": 1 }] },
        doc! { "$pull": { "a": { "b": 1 } } },
        doc! { "_id": 1, "a": [] },
    );
    check(
        doc! { "_id": 1, "a": ["apple", "banana", "avocado"] },
        doc! { "$pull": { "a": bson::Regex { pattern: "^a".to_string().try_into().unwrap(), options: String::new().try_into().unwrap() } } },
        doc! { "_id": 1, "a": ["banana"] },
    );
    check(
        doc! { "_id": 1, "a": ["x", 1] },
        doc! { "$pull": { "a": { "$type": "string" } } },
        doc! { "_id": 1, "a": [1] },
    );
    check(
        doc! { "_id": 1, "a": [{ "b": 1 }, { "b": 2 }] },
        doc! { "$pull": { "a": { "$or": [{ "b": 1 }, { "b": 3 }] } } },
        doc! { "_id": 1, "a": [{ "b": 2 }] },
    );
    check(
        doc! { "_id": 1, "a": [1, 2] },
        doc! { "$pull": { "a": 3 } },
        doc! { "_id": 1, "a": [1, 2] },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$pull": { "a": 3 } },
        doc! { "_id": 1 },
    );
    check(
        doc! { "_id": 1, "a": { "b": [1, 2] } },
        doc! { "$pull": { "a.b": { "$lt": 2 } } },
        doc! { "_id": 1, "a": { "b": [2] } },
    );
    check_err(
        doc! { "_id": 1, "a": "x" },
        doc! { "$pull": { "a": "x" } },
        "$pull: field 'a' is a string, not an array (document _id: 1)",
    );
}

#[test]
fn pull_all() {
    check(
        doc! { "_id": 1, "scores": [0, 2, 5, 5, 1, 0] },
        doc! { "$pullAll": { "scores": [0, 5] } },
        doc! { "_id": 1, "scores": [2, 1] },
    );
    check(
        doc! { "_id": 1, "s": [[1], { "a": 1 }, 1.0] },
        doc! { "$pullAll": { "s": [[1], { "a": 1 }, 1] } },
        doc! { "_id": 1, "s": [] },
    );
    check(
        doc! { "_id": 1, "s": [1] },
        doc! { "$pullAll": { "s": [] } },
        doc! { "_id": 1, "s": [1] },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$pullAll": { "s": [1] } },
        doc! { "_id": 1 },
    );
    check_err(
        doc! { "_id": 1, "s": 1 },
        doc! { "$pullAll": { "s": [1] } },
        "$pullAll: field 's' is an int, not an array (document _id: 1)",
    );
}

#[test]
fn positional_dollar() {
    check_positional(
        doc! { "_id": 1, "grades": [85, 80, 80] },
        doc! { "$set": { "grades.$": 82 } },
        1,
        doc! { "_id": 1, "grades": [85, 82, 80] },
    );
    check_positional(
        doc! { "_id": 4, "grades": [{ "grade": 80, "mean": 75 }, { "grade": 85, "mean": 90 }] },
        doc! { "$set": { "grades.$.std": 6 } },
        1,
        doc! { "_id": 4, "grades": [{ "grade": 80, "mean": 75 }, { "grade": 85, "mean": 90, "std": 6 }] },
    );
    check_positional(
        doc! { "_id": 1, "a": [[1], [2]] },
        doc! { "$push": { "a.$": 3 } },
        1,
        doc! { "_id": 1, "a": [[1], [2, 3]] },
    );
    check_positional(
        doc! { "_id": 1, "a": [1, 2] },
        doc! { "$unset": { "a.$": 1 } },
        0,
        doc! { "_id": 1, "a": [null, 2] },
    );
    check_err(
        doc! { "_id": 1, "a": [1] },
        doc! { "$set": { "a.$": 1 } },
        "$set: field 'a.$' uses the positional operator '$', but the query did not match an array element (document _id: 1)",
    );
    let (_, updated) = run(
        doc! { "_id": 1, "a": [1] },
        &doc! { "$set": { "a.$": 5 } },
        &[],
        &context().with_positional_index(Some(0)),
    )
    .unwrap();
    assert_eq!(updated, doc! { "_id": 1, "a": [5] });
}

#[test]
fn all_elements() {
    check(
        doc! { "_id": 1, "grades": [85, 82, 80] },
        doc! { "$inc": { "grades.$[]": 10 } },
        doc! { "_id": 1, "grades": [95, 92, 90] },
    );
    check(
        doc! { "_id": 1, "grades": [{ "grade": 80, "mean": 75 }, { "grade": 85, "mean": 90 }] },
        doc! { "$inc": { "grades.$[].std": -2 } },
        doc! { "_id": 1, "grades": [{ "grade": 80, "mean": 75, "std": -2 }, { "grade": 85, "mean": 90, "std": -2 }] },
    );
    check(
        doc! { "_id": 1, "a": [] },
        doc! { "$set": { "a.$[]": 1 } },
        doc! { "_id": 1, "a": [] },
    );
    check(
        doc! { "_id": 1, "a": [[1, 2], [3]] },
        doc! { "$set": { "a.$[].$[]": 0 } },
        doc! { "_id": 1, "a": [[0, 0], [0]] },
    );
    check(
        doc! { "_id": 1, "a": [{ "b": [1] }, { "b": [] }] },
        doc! { "$push": { "a.$[].b": 2 } },
        doc! { "_id": 1, "a": [{ "b": [1, 2] }, { "b": [2] }] },
    );
    check_err(
        doc! { "_id": 1 },
        doc! { "$set": { "a.$[]": 1 } },
        "$set: field 'a' is missing, but 'a.$[]' needs an array there (document _id: 1)",
    );
    check_err(
        doc! { "_id": 1, "a": 5 },
        doc! { "$set": { "a.$[].b": 1 } },
        "$set: field 'a' is an int, not an array (needed by 'a.$[].b') (document _id: 1)",
    );
    check_err(
        doc! { "_id": 1, "a": [{ "b": 1 }, 5] },
        doc! { "$set": { "a.$[].b": 2 } },
        "$set: field 'a.1.b' cannot be created: 'a.1' is an int (document _id: 1)",
    );
}

#[test]
fn filtered_elements() {
    check_filters(
        doc! { "_id": 3, "grades": [95, 110, 100] },
        doc! { "$set": { "grades.$[element]": 100 } },
        &[doc! { "element": { "$gte": 100 } }],
        doc! { "_id": 3, "grades": [95, 100, 100] },
    );
    check_filters(
        doc! { "_id": 1, "grades": [{ "grade": 80, "mean": 75, "std": 6 }, { "grade": 85, "mean": 90, "std": 4 }, { "grade": 85, "mean": 85, "std": 6 }] },
        doc! { "$set": { "grades.$[elem].mean": 100 } },
        &[doc! { "elem.grade": { "$gte": 85 } }],
        doc! { "_id": 1, "grades": [{ "grade": 80, "mean": 75, "std": 6 }, { "grade": 85, "mean": 100, "std": 4 }, { "grade": 85, "mean": 100, "std": 6 }] },
    );
    check_filters(
        doc! { "_id": 1, "grades": [{ "grade": 80, "std": 6 }, { "grade": 85, "std": 4 }, { "grade": 85, "std": 6 }] },
        doc! { "$inc": { "grades.$[elem].std": -1 } },
        &[doc! { "elem.grade": { "$gte": 80 }, "elem.std": { "$gt": 5 } }],
        doc! { "_id": 1, "grades": [{ "grade": 80, "std": 5 }, { "grade": 85, "std": 4 }, { "grade": 85, "std": 5 }] },
    );
    check_filters(
        doc! { "_id": 1, "grades": [
            { "type": "quiz", "questions": [10, 8, 5] },
            { "type": "quiz", "questions": [8, 9, 6] },
            { "type": "hw", "questions": [5, 4, 3] },
            { "type": "exam", "questions": [25, 10, 23, 0] },
        ] },
        doc! { "$inc": { "grades.$[t].questions.$[score]": 2 } },
        &[doc! { "t.type": "quiz" }, doc! { "score": { "$gte": 8 } }],
        doc! { "_id": 1, "grades": [
            { "type": "quiz", "questions": [12, 10, 5] },
            { "type": "quiz", "questions": [10, 11, 6] },
            { "type": "hw", "questions": [5, 4, 3] },
            { "type": "exam", "questions": [25, 10, 23, 0] },
        ] },
    );
    check_filters(
        doc! { "_id": 1, "y": [{ "k": 1, "c": [{ "d": 1 }, { "d": 2 }] }, { "k": 2, "c": [{ "d": 1 }] }] },
        doc! { "$set": { "y.$[i].c.$[j].d": 0 } },
        &[doc! { "i.k": 1 }, doc! { "j.d": { "$gt": 1 } }],
        doc! { "_id": 1, "y": [{ "k": 1, "c": [{ "d": 1 }, { "d": 0 }] }, { "k": 2, "c": [{ "d": 1 }] }] },
    );
    check_filters(
        doc! { "_id": 1, "a": [1, 2, 3, 4] },
        doc! { "$set": { "a.$[low]": 0, "a.$[high]": 9 } },
        &[doc! { "low": { "$lt": 2 } }, doc! { "high": { "$gt": 3 } }],
        doc! { "_id": 1, "a": [0, 2, 3, 9] },
    );
    check_filters(
        doc! { "_id": 1, "a": [1, 2] },
        doc! { "$set": { "a.$[x]": 0 } },
        &[doc! { "x": 7 }],
        doc! { "_id": 1, "a": [1, 2] },
    );
    check_filters(
        doc! { "_id": 1, "a": [{ "b": 1 }, { "b": 2 }] },
        doc! { "$pull": { "a.$[e].c": 1 } , "$set": { "x": 1 } },
        &[doc! { "e.b": 9 }],
        doc! { "_id": 1, "a": [{ "b": 1 }, { "b": 2 }], "x": 1 },
    );
    check_filters(
        doc! { "_id": 1, "a": [[1, 5], [2]] },
        doc! { "$set": { "a.$[e]": [] } },
        &[doc! { "e": 5 }],
        doc! { "_id": 1, "a": [[], [2]] },
    );
    check_filters(
        doc! { "_id": 1, "a": [{ "n": 1 }, { "n": 2 }, { "n": 3 }] },
        doc! { "$set": { "a.$[e].hit": true } },
        &[doc! { "$or": [{ "e.n": 1 }, { "e.n": 3 }] }],
        doc! { "_id": 1, "a": [{ "n": 1, "hit": true }, { "n": 2 }, { "n": 3, "hit": true }] },
    );
    check_err_filters(
        doc! { "_id": 1, "a": [1, 2] },
        doc! { "$set": { "a.$[x]": 0, "a.$[y]": 1 } },
        &[doc! { "x": 1 }, doc! { "y": { "$lt": 5 } }],
        "$set: field 'a.0' is reached by two paths of the update (through positional operators); an update cannot change a field twice (document _id: 1)",
    );
}

#[test]
fn fields_are_applied_in_lexicographic_path_order() {
    check(
        doc! { "_id": 1 },
        doc! { "$set": { "c": 1 }, "$inc": { "a": 1 }, "$push": { "b": 1 } },
        doc! { "_id": 1, "a": 1, "b": [1], "c": 1 },
    );
    check(
        doc! { "_id": 1 },
        doc! { "$set": { "B": 1, "a": 1, "_x": 1 } },
        doc! { "_id": 1, "B": 1, "_x": 1, "a": 1 },
    );
    check(
        doc! { "_id": 1, "z": 1 },
        doc! { "$set": { "y.b": 1, "x": 1, "y.a": 1 } },
        doc! { "_id": 1, "z": 1, "x": 1, "y": { "a": 1, "b": 1 } },
    );
    check(
        doc! { "_id": 1, "a": [] },
        doc! { "$set": { "a.10": 1, "a.2": 2 } },
        doc! { "_id": 1, "a": [null, null, 2, null, null, null, null, null, null, null, 1] },
    );
}

#[test]
fn replacement() {
    check(
        doc! { "_id": 1, "a": 1, "b": 2 },
        doc! { "c": 3 },
        doc! { "_id": 1, "c": 3 },
    );
    check(
        doc! { "_id": 1, "a": 1 },
        doc! { "a": 1, "_id": 1 },
        doc! { "_id": 1, "a": 1 },
    );
    check(doc! { "_id": 1, "a": 1 }, doc! {}, doc! { "_id": 1 });
    check(doc! { "a": 1 }, doc! { "b": 1 }, doc! { "b": 1 });
    check(
        doc! { "_id": 1, "a": 1 },
        doc! { "a": { "b.c": 1 } },
        doc! { "_id": 1, "a": { "b.c": 1 } },
    );
    check_err(
        doc! { "_id": 1, "a": 1 },
        doc! { "_id": 2, "a": 1 },
        "replacement: field '_id' is immutable and cannot change from 1 to 2 (document _id: 1)",
    );
}

#[test]
fn a_failing_update_changes_nothing() {
    // The first field updates succeed on the working copy; the last one fails.
    check_err(
        doc! { "_id": 7, "a": 1, "tags": "x", "z": [1] },
        doc! { "$set": { "a": 2, "new": 1 }, "$push": { "z": 2, "tags": "y" } },
        "$push: field 'tags' is a string, not an array (document _id: 7)",
    );
    check_err(
        doc! { "_id": 7, "a": [1, 2] },
        doc! { "$inc": { "a.$[]": 1 }, "$set": { "b": 1, "_id": 8 } },
        "$set: field '_id' is immutable and cannot change from 7 to 8 (document _id: 7)",
    );
    check_err(
        doc! { "_id": 7, "a": [1, "x", 3] },
        doc! { "$inc": { "a.$[]": 1 } },
        "$inc: field 'a.1' is a string, not a number (document _id: 7)",
    );
}

#[test]
fn outcome_reports_real_changes_only() {
    let unchanged = [
        (doc! { "_id": 1, "a": 1 }, doc! { "$set": { "a": 1 } }),
        (
            doc! { "_id": 1, "a": [1] },
            doc! { "$addToSet": { "a": 1 } },
        ),
        (doc! { "_id": 1, "a": [1] }, doc! { "$pull": { "a": 2 } }),
        (doc! { "_id": 1 }, doc! { "$unset": { "a": 1 } }),
        (doc! { "_id": 1, "a": 5 }, doc! { "$min": { "a": 7 } }),
        (
            doc! { "_id": 1, "a": [1, 2] },
            doc! { "$push": { "a": { "$each": [], "$sort": 1 } } },
        ),
        (doc! { "_id": 1, "a": 1 }, doc! { "a": 1 }),
    ];
    for (document, update) in unchanged {
        let (outcome, _) = run(document.clone(), &update, &[], &context()).unwrap();
        assert!(!outcome.modified, "{update} on {document}");
    }
}

#[test]
fn upserts() {
    let upsert = |filter: Document, update: Document| {
        let update = Update::parse(&update, &[]).unwrap();
        update
            .upsert(&Filter::parse(&filter).unwrap(), &context())
            .map_err(|error| error.to_string())
    };
    let cases = [
        (
            doc! { "_id": 1 },
            doc! { "$set": { "item": "apple" }, "$setOnInsert": { "defaultQty": 100 } },
            doc! { "_id": 1, "defaultQty": 100, "item": "apple" },
        ),
        (
            doc! { "name": "ann", "_id": 3 },
            doc! { "$inc": { "n": 1 } },
            doc! { "_id": 3, "name": "ann", "n": 1 },
        ),
        (
            doc! { "a.b": 1, "c": { "$eq": 2 }, "d": { "$gt": 3 } },
            doc! { "$set": { "e": 1 } },
            doc! { "a": { "b": 1 }, "c": 2, "e": 1 },
        ),
        (
            doc! { "$and": [{ "a": 1 }, { "b": { "$in": [2] } }], "$or": [{ "x": 1 }, { "y": 1 }] },
            doc! { "$set": { "z": 1 } },
            doc! { "a": 1, "b": 2, "z": 1 },
        ),
        (
            doc! { "a": { "x": 1 }, "r": { "$regex": "^a" }, "s": { "$in": [1, 2] } },
            doc! { "$push": { "l": 1 } },
            doc! { "a": { "x": 1 }, "l": [1] },
        ),
        (
            doc! { "_id": 5, "a": 1 },
            doc! { "b": 2 },
            doc! { "_id": 5, "b": 2 },
        ),
        (doc! { "a": 1 }, doc! { "b": 2 }, doc! { "b": 2 }),
        (
            doc! { "_id": 5 },
            doc! { "$set": { "_id": 5, "x": 1 } },
            doc! { "_id": 5, "x": 1 },
        ),
        (
            doc! { "x": 5 },
            doc! { "$set": { "_id": 9 } },
            doc! { "_id": 9, "x": 5 },
        ),
        (
            doc! { "_id": 1 },
            doc! { "$currentDate": { "at": true } },
            doc! { "_id": 1, "at": DateTime::from_millis(NOW_MILLIS) },
        ),
    ];
    for (filter, update, expected) in cases {
        let inserted = upsert(filter.clone(), update.clone())
            .unwrap_or_else(|error| panic!("{filter} {update}: {error}"));
        assert_eq!(
            bytes(&inserted),
            bytes(&expected),
            "{filter} {update}: {inserted}"
        );
    }
    assert_eq!(
        upsert(doc! { "a": 1, "a.b": 2 }, doc! { "$set": { "c": 1 } }),
        Err("invalid update: upsert: the query has equality conditions on both 'a' and 'a.b', so the document to insert cannot be inferred".to_string())
    );
    assert_eq!(
        upsert(doc! { "_id": 1 }, doc! { "$set": { "_id": 2 } }),
        Err(
            "$set: field '_id' is immutable and cannot change from 1 to 2 (document _id: 1)"
                .to_string()
        )
    );
    assert_eq!(
        upsert(doc! { "_id": 1 }, doc! { "_id": 2 }),
        Err(
            "replacement: field '_id' is immutable and cannot change from 1 to 2 (document _id: 1)"
                .to_string()
        )
    );
    assert_eq!(
        upsert(doc! { "a": [1] }, doc! { "$set": { "a.$": 2 } }),
        Err("$set: field 'a.$' uses the positional operator '$', but the query did not match an array element (document without _id)".to_string())
    );
}

#[test]
fn parse_accessors() {
    let update = Update::parse(&doc! { "$set": { "b": 1 }, "$rename": { "x": "a" } }, &[]).unwrap();
    assert!(!update.is_replacement());
    assert_eq!(update.operations(), vec![("$rename", "x"), ("$set", "b")]);
    let touched: Vec<String> = update
        .touched_top_level_fields()
        .unwrap()
        .into_iter()
        .collect();
    assert_eq!(touched, ["a", "b", "x"]);
    let replacement = Update::parse(&doc! { "a": 1 }, &[]).unwrap();
    assert_eq!(replacement.replacement(), Some(&doc! { "a": 1 }));
    assert_eq!(replacement.touched_top_level_fields(), None);
}
