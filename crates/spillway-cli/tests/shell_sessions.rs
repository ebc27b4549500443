//! Snapshot tests of shell sessions: a script goes through the same session, parser,
//! executor and printer as `spillway shell` and `spillway run`, and the transcript
//! (statements, results, errors with their carets) is compared with a reviewed snapshot.

use std::fmt::Write as _;

use spillway::Database;
use spillway_cli::shell::{Executor, RunOptions, Session, StringTranscript};

/// Runs `script` on a fresh in-memory database, going on after errors, and returns the
/// transcript with generated ObjectIds replaced by `[oid]`.
fn transcript(script: &str) -> String {
    let database = Database::open_in_memory().unwrap();
    let mut session = Session::new(Executor::new(database).with_batch_size(3));
    let mut transcript = StringTranscript::default();
    session.run(script, RunOptions { keep_going: true }, &mut transcript);
    redact_object_ids(&transcript.text)
}

fn redact_object_ids(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("ObjectId('") {
        let after = &rest[start + "ObjectId('".len()..];
        let hex_len = after.chars().take_while(char::is_ascii_hexdigit).count();
        out.push_str(&rest[..start]);
        if hex_len == 24 && after[24..].starts_with("')") {
            out.push_str("ObjectId('[oid]')");
            rest = &after[26..];
        } else {
            out.push_str("ObjectId('");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

#[test]
fn inserts_and_finds() {
    insta::assert_snapshot!(transcript(
        r#"
db.sales.insertOne(
{
"_id": 1,
"title": "Invisible Cities",
"year": 1972,
"author": "Italo Calvino",
"customers_purchased": [ "user00", "user01", "user02" ]
}
)
db.sales.insertOne({ title: 'Generated id', year: 2001 })
db.sales.insertMany([{ _id: 2, title: 'The Wooden Amulet', year: 2023 }, { _id: 3, title: 'Dune', year: 1965 }])
db.sales.find({ year: { $gt: 1970 } }, { title: 1 }).sort({ year: -1 })
db.sales.findOne({ _id: 1 })
db.sales.findOne({ _id: 404 })
db['sales'].countDocuments()
db.sales.countDocuments({ year: { $lt: 2000 } }, { limit: 1 })
db.sales.estimatedDocumentCount()
db.sales.distinct('year', { year: { $gte: 1972 } })
db.sales.find({}, { _id: 1 }).skip(1).limit(2); db.sales.find({ nothing: true })
show collections
"#
    ));
}

#[test]
fn batches_continue_with_it() {
    insta::assert_snapshot!(transcript(
        "db.n.insertMany([{_id: 1}, {_id: 2}, {_id: 3}, {_id: 4}, {_id: 5}, {_id: 6}, {_id: 7}])
db.n.find()
it
it
it
db.n.find().limit(3)
it"
    ));
}

#[test]
fn a_last_batch_that_is_full_offers_no_it() {
    insta::assert_snapshot!(transcript(
        "db.n.insertMany([{_id: 1}, {_id: 2}, {_id: 3}, {_id: 4}, {_id: 5}, {_id: 6}])
db.n.find()
it
it"
    ));
}

#[test]
fn updates_replaces_and_deletes() {
    insta::assert_snapshot!(transcript(
        r"
db.books.insertMany([
  { _id: 1, title: 'Dune', tags: ['sf'], grades: [{ g: 1 }, { g: 5 }] },
  { _id: 2, title: 'Emma', tags: [] }
])
db.books.updateOne({ _id: 1 }, { $push: { tags: 'classic' } })
db.books.updateMany({}, { $set: { checked: true } })
db.books.updateOne({ _id: 3 }, { $set: { title: 'New' } }, { upsert: true })
db.books.updateOne({ _id: 1 }, { $set: { 'grades.$[high].top': true } }, { arrayFilters: [{ 'high.g': { $gt: 3 } }] })
db.books.findOne({ _id: 1 })
db.books.replaceOne({ _id: 2 }, { title: 'Emma', author: 'Austen' })
db.books.replaceOne({ _id: 9 }, { title: 'Nine' }, { upsert: true })
db.books.findOneAndUpdate({ _id: 1 }, { $inc: { reads: 1 } }, { returnDocument: 'after', projection: { reads: 1 } })
db.books.findOneAndUpdate({ _id: 1 }, { $inc: { reads: 1 } }, { projection: { reads: 1 } })
db.books.findOneAndReplace({ _id: 3 }, { title: 'Three' }, { returnNewDocument: true })
db.books.findOneAndDelete({ checked: true }, { sort: { _id: -1 } })
db.books.deleteOne({ _id: 1 })
db.books.deleteMany({})
db.books.countDocuments()
"
    ));
}

#[test]
fn indexes_and_explain() {
    insta::assert_snapshot!(transcript(
        r"
db.collection('people').insertMany([{ _id: 1, email: 'a@x', age: 30 }, { _id: 2, email: 'b@x', age: 40 }])
db.collection('people').createIndex({ email: 1 }, { unique: true })
db.people.createIndex({ age: -1 }, { name: 'by_age' })
db.people.getIndexes()
db.people.find({ email: 'a@x' }).explain()
db.people.insertOne({ _id: 3, email: 'a@x' })
db.people.dropIndex('by_age')
db.people.dropIndex({ email: 1 })
db.people.dropIndex('nope')
db.people.getIndexes()
db.people.drop()
db.people.drop()
show collections
"
    ));
}

#[test]
fn insert_one_with_an_array_runs_as_insert_many() {
    // The subset seed writes this; mongosh would refuse it.
    insta::assert_snapshot!(transcript(
        r#"
db.collection('products').insertOne( [
{
_id: ObjectId("507f1f77bcf86cd993384520"),
name: "Super Widget",
description: "This is the most useful item in your toolbox.",
price: { value: Decimal128("119.99"), currency: "USD" },
reviews: [
{
review_id: 786,
review_author: "Kristina",
review_text: "This is indeed an amazing widgt.",
published_date: ISODate("2019-02-18")
}
]
}
] )
db.collection('products').findOne()
"#
    ));
}

#[test]
fn syntax_errors_point_at_the_line_and_column() {
    // Each case is its own session: an unclosed bracket swallows the lines after it.
    let cases = [
        "db.products.insertOne({\n  name: \"Super Widget\",\n  description: \"no comma after this\"\n  price: 12\n})",
        "db.products.find({ a: 1 }\n",
        "db.products.insertOne({ s: 'unterminated })",
        "db.products.find() db.other.find()",
        "db.products.find({ a: 1 }).sort({ b: 1 }))",
        "db.products.insertOne({ a.b: 1 })",
        "db.products.insertOne({\n  when: ISODate('2019-13-45') })",
        "db.products.find({ tags: /a/g })",
        "\tdb.products.find({ a: @ })",
        "db.products.find({}).sort({ a: 1 }).",
    ];
    let sessions: Vec<String> = cases.iter().map(|case| transcript(case)).collect();
    insta::assert_snapshot!(sessions.join("\n"));
}

#[test]
fn usage_errors_name_the_argument_or_option() {
    insta::assert_snapshot!(transcript(
        r"
db.c.insertOne('not a document')
db.c.insertOne()
db.c.insertMany([{ a: 1 }, 2])
db.c.insertMany([{ a: 1 }], { ordered: false })
db.c.updateOne({}, [{ $set: { a: 1 } }])
db.c.updateOne({}, { $set: { a: 1 } }, { upsert: 'yes' })
db.c.updateOne({}, { $set: { a: 1 } }, { collation: {} })
db.c.findOneAndUpdate({}, { $set: { a: 1 } }, { returnDocument: 'later' })
db.c.find().sort({ a: 1 }).size()
db.c.find().count().limit(1)
db.c.find().explain().limit(1)
db.c.find().limit('ten')
db.c.countDocuments().limit(1)
db.c.frobnicate()
db.c.find
db.c
db
print('hello')
show dbs
show users
it
db.c.insertOne({ _id: ObjectId('123') })
db.c.find({}, {}, {}, {})
show collections
"
    ));
}

#[test]
fn cursor_count_counts_what_the_filter_matches_as_mongosh_does() {
    // mongosh's `cursor.count(applySkipLimit)`: skip and limit count only when asked.
    let session = transcript(
        r"
db.c.insertMany([{ a: 1 }, { a: 2 }, { a: 3 }, { a: 4 }])
db.c.find({ a: { $gt: 1 } }).count()
db.c.find({ a: { $gt: 1 } }).skip(1).limit(1).count()
db.c.find({ a: { $gt: 1 } }).skip(1).limit(1).count(true)
",
    );
    let answers: Vec<&str> = session
        .lines()
        .filter(|line| line.chars().all(|c| c.is_ascii_digit()) && !line.is_empty())
        .collect();
    assert_eq!(answers, ["3", "3", "1"], "{session}");
}

#[test]
fn updates_without_operators_are_refused_as_mongosh_refuses_them() {
    // An update with no operators would empty (`{}`) or replace (`{ x: 1 }`) the document;
    // mongosh refuses both, and the document stays as it was.
    insta::assert_snapshot!(transcript(
        r"
db.c.insertOne({ _id: 1, a: 1, b: 2 })
db.c.updateOne({ _id: 1 }, {})
db.c.updateOne({ _id: 1 }, { x: 1 })
db.c.updateMany({}, {})
db.c.updateMany({}, { x: 1, $set: { y: 1 } })
db.c.findOneAndUpdate({ _id: 1 }, { x: 1 })
db.c.find()
db.c.replaceOne({ _id: 1 }, { x: 1 })
db.c.find()
"
    ));
}

#[test]
fn database_errors_change_nothing() {
    insta::assert_snapshot!(transcript(
        r"
db.c.insertMany([{ _id: 1 }, { _id: 2 }])
db.c.insertMany([{ _id: 1 }, { _id: 3 }])
db.c.countDocuments()
db.c.updateOne({ _id: 1 }, { $bogus: { a: 1 } })
db.c.updateMany({}, { $inc: { _id: 1 } })
db.c.find({ $where: 'x' })
db.c.find().sort({ a: 'up' })
db['system.views'].insertOne({})
db.c.find()
"
    ));
}

#[test]
fn insert_many_keeps_the_documents_before_a_failure_as_mongosh_does() {
    // An ordered insertMany stops at its first failure; the documents before it stay, and
    // the error says how many, as mongosh reports a MongoBulkWriteError.
    insta::assert_snapshot!(transcript(
        r"
db.c.insertOne({ _id: 2 })
db.c.insertMany([{ _id: 1 }, { _id: 2 }, { _id: 3 }])
db.c.find()
"
    ));
}

#[test]
fn help_and_exit() {
    insta::assert_snapshot!(transcript(
        "help\ndb.c.insertOne({ _id: 1 })\nexit\ndb.c.insertOne({ _id: 2 })"
    ));
}

#[test]
fn a_script_stops_at_its_first_error_unless_told_to_keep_going() {
    let database = Database::open_in_memory().unwrap();
    let mut session = Session::new(Executor::new(database.clone()));
    let mut transcript = StringTranscript::default();
    let script =
        "db.c.insertOne({ _id: 1 })\ndb.c.insertOne({ _id: 1 })\ndb.c.insertOne({ _id: 2 })";
    let summary = session.run(script, RunOptions::default(), &mut transcript);
    assert_eq!(summary.statements_succeeded, 1);
    assert_eq!(summary.failed_lines, [2]);
    let count = database
        .collection::<spillway::bson::Document>("c")
        .count_documents(spillway::doc! {})
        .run()
        .unwrap();
    assert_eq!(count, 1);
    let summary = session.run(script, RunOptions { keep_going: true }, &mut transcript);
    assert_eq!(summary.statements_succeeded, 1);
    assert_eq!(summary.failed_lines, [1, 2]);
}

/// `customers_purchased` for books with `buyers` buyers, as a shell array literal.
fn buyers(from: usize, to: usize) -> String {
    let names: Vec<String> = (from..to).map(|n| format!("'user{n:02}'")).collect();
    format!("[{}]", names.join(", "))
}

#[test]
fn outlier_patterns_are_declared_listed_read_and_removed() {
    insta::assert_snapshot!(transcript(&format!(
        r#"
db.sales.insertOne({{ _id: 1, title: 'Invisible Cities', customers_purchased: {small} }})
db.sales.insertOne({{ _id: 2, title: 'The Wooden Amulet', customers_purchased: {large} }})
show patterns
db.sales.setPattern({{ outlier: "customers_purchased", threshold: 5, overflowCollection: "extra_sales", linkField: "book_id", flagField: "has_extras", bucketCapacity: 4 }})
show patterns
db.getPatterns()
db.sales.findOne({{ _id: 2 }})
db.extra_sales.find({{}}, {{ _id: 0 }})
db.sales.arrayLength(2, "customers_purchased")
db.sales.arrayLength(1, "customers_purchased")
db.sales.arrayLength(404, "customers_purchased")
db.sales.arrayPage(2, "customers_purchased", {{ skip: 4, limit: 3 }})
db.sales.arrayPage(2, "customers_purchased")
db.sales.findOne({{ _id: 2 }}, {{ title: 1, customers_purchased: 1 }})
db.sales.find({{ customers_purchased: "user10" }}, {{ title: 1 }})
db['system.stored.sales'].find({{ _id: 2 }})
db['system.stored.sales'].insertOne({{ _id: 9 }})
db.sales.updateOne({{ _id: 1 }}, {{ $push: {{ customers_purchased: {{ $each: ['user03', 'user04', 'user05'] }} }} }})
db.sales.findOne({{ _id: 1 }})
db.verifyPatterns()
db.sales.removePattern("customers_purchased")
show patterns
db.sales.findOne({{ _id: 2 }})
show collections
"#,
        small = buyers(0, 3),
        large = buyers(0, 12),
    )));
}

#[test]
fn subset_patterns_keep_the_newest_and_archive_everything() {
    insta::assert_snapshot!(transcript(
        r#"
db.products.insertOne({ _id: 1, name: 'Super Widget', reviews: [
  { review_id: 4, review_author: 'Kristina', published_date: ISODate('2019-02-18') },
  { review_id: 3, review_author: 'Trina', published_date: ISODate('2019-02-17') },
  { review_id: 2, review_author: 'Pablo', published_date: ISODate('2019-02-15') },
  { review_id: 1, review_author: 'Hans', published_date: ISODate('2017-12-06') }
] })
db.products.setPattern({ subset: "reviews", keep: 2, sortBy: { published_date: -1 }, archiveCollection: "review", linkField: "product_id", identity: "review_id" })
db.getPatterns()
db.products.findOne()
db.review.countDocuments({ product_id: 1 })
db.products.arrayLength(1, 'reviews')
db.products.arrayPage(1, 'reviews', { skip: 2, limit: 5 })
db.products.updateOne({ _id: 1 }, { $push: { reviews: { review_id: 5, review_author: 'Ana', published_date: ISODate('2019-03-01') } } })
db.products.findOne({}, { reviews: 1 })
db.products.find({ 'reviews.review_author': 'Hans' }, { name: 1 })
db.verifyPatterns()
db.review.drop()
"#
    ));
}

/// docs/patterns.md: with `identity: "_id"` an element's `_id` is its archive document's.
#[test]
fn subset_patterns_with_identity_id_keep_element_ids() {
    insta::assert_snapshot!(transcript(
        r#"
db.products.insertOne({ _id: 1, name: 'Super Widget', reviews: [
  { _id: 'r3', stars: 5 },
  { _id: 'r2', stars: 4 },
  { _id: 'r1', stars: 2 }
] })
db.products.setPattern({ subset: "reviews", keep: 2, archiveCollection: "review", linkField: "product_id", identity: "_id" })
db.getPatterns()
db.review.find({}, { _seq: 0 }).sort({ _id: 1 })
db.products.updateOne({ _id: 1 }, { $push: { reviews: { _id: 'r4', stars: 3 } } })
db.products.findOne()
db.products.arrayPage(1, 'reviews', { skip: 0, limit: 10 })
db.review.findOne({ _id: 'r4' }, { _seq: 0 })
db.verifyPatterns()
"#
    ));
}

#[test]
fn pattern_statement_errors_change_nothing() {
    insta::assert_snapshot!(transcript(
        r#"
db.sales.insertOne({ _id: 1, customers_purchased: ['a', 'b'] })
db.sales.setPattern({ outlier: "customers_purchased", treshold: 50 })
db.sales.setPattern({ threshold: 50 })
db.sales.setPattern({ outlier: "customers_purchased", subset: "customers_purchased" })
db.sales.setPattern({ outlier: "customers_purchased", bucketCapacity: 10, unboundedBuckets: true })
db.sales.setPattern({ outlier: 7 })
db.sales.setPattern({ outlier: "customers_purchased", threshold: -1 })
db.sales.setPattern({ outlier: "customers_purchased", threshold: 0 })
db.sales.setPattern({ subset: "reviews", keep: 10, overflowCollection: "x" })
db.sales.setPattern("customers_purchased")
db['system.nothing'].setPattern({ outlier: "customers_purchased" })
db.sales.setPattern({ outlier: "customers_purchased", threshold: 1 })
db.sales.setPattern({ outlier: "customers_purchased" })
db.extra_sales.drop()
db.sales.removePattern("title")
db.sales.removePattern()
db.sales.arrayPage(1, "customers_purchased", { offset: 1 })
db.sales.arrayLength(1)
db.sales.find().expand('yes')
db.sales.findOne({}, {}, { expand: 1 })
db.getPatterns(1)
db.verifyPatterns().length
show pattern
show patterns
db.sales.findOne()
db.verifyPatterns()
"#
    ));
}

#[test]
fn database_statements_print_as_mongosh_prints_them() {
    insta::assert_snapshot!(transcript(
        r"
db.getName()
db.version()
db.getCollectionNames()
db.createCollection('books')
db.createCollection('logs', { capped: true, size: 4096 })
db.createCollection('bad', { nonsense: 1 })
db.createCollection('')
db.books.insertMany([{ _id: 1, title: 'Dune', tags: ['sf', 'classic'] }, { _id: 2, title: 'Emma', tags: 'novel' }, { _id: 3, title: 'Ulysses' }])
db.getCollectionNames()
show collections
db.stats()
db.books.stats()
db.books.renameCollection('novels')
db.novels.renameCollection('logs')
db.novels.renameCollection('logs', true)
db.novels.renameCollection('shelf', 'yes')
db.missing.renameCollection('other')
db.getCollectionNames()
db.logs.find()
db.dropDatabase()
db.getCollectionNames()
db.stats(1024)
db.getName().length
"
    ));
}

#[test]
fn a_policy_declared_before_any_data_creates_its_collection() {
    insta::assert_snapshot!(transcript(
        r#"
db.getCollectionNames()
db.sales.setPattern({ outlier: "customers_purchased", threshold: 2 })
db.getCollectionNames()
db.sales.insertOne({ _id: 1, customers_purchased: ['a', 'b', 'c'] })
db.sales.arrayLength(1, 'customers_purchased')
db.refused.setPattern({ outlier: "x", threshold: 0 })
db.refused.setPattern({ outlier: "x", overflowCollection: "sales" })
db.getCollectionNames()
"#
    ));
}

#[test]
fn array_length_is_null_without_an_array_and_an_error_for_another_value() {
    insta::assert_snapshot!(transcript(
        r"
db.books.insertMany([{ _id: 1, tags: ['a', 'b'] }, { _id: 2, tags: 'x' }, { _id: 3 }, { _id: 4, tags: [] }])
db.books.arrayLength(1, 'tags')
db.books.arrayLength(4, 'tags')
db.books.arrayLength(3, 'tags')
db.books.arrayLength(99, 'tags')
db.books.arrayLength(2, 'tags')
"
    ));
}

#[test]
fn advise_reports_on_a_collection() {
    let mut script = String::from("db.sales.insertMany([");
    for book in 0..40 {
        let count = if book == 7 { 400 } else { book % 6 };
        write!(
            script,
            "{{ _id: {book}, customers_purchased: {} }},",
            buyers(0, count)
        )
        .unwrap();
    }
    script.push_str("])\ndb.sales.advise()\ndb.empty.advise()\n");
    let text = transcript(&script);
    // The insert statement is long: keep only what follows it.
    let advice = &text[text.find("> db.sales.advise()").unwrap()..];
    insta::assert_snapshot!(advice);
}

#[test]
fn policies_never_change_user_data_and_side_writes_keep_the_layout() {
    insta::assert_snapshot!(transcript(
        r#"
db.sales.insertMany([{ _id: 1, title: 'Invisible Cities', customers_purchased: ['a', 'b', 'c'] }, { _id: 2, title: 'Dune', customers_purchased: ['d'] }])
db.sales.setPattern({ outlier: "customers_purchased", threshold: 1, flagField: "title" })
db.notes.insertOne({ _id: 7, text: 'call the printer' })
db.sales.setPattern({ outlier: "customers_purchased", threshold: 1, overflowCollection: "notes" })
show patterns
db.sales.find()
db.notes.find()
db.books.insertOne({ _id: 1, buyers: ['a', 'b'], has_extras: true })
db.extra_books.insertOne({ _id: 'b0', book_id: 1, buyers_extra: ['c', 'd', 'e'] })
db.books.setPattern({ outlier: "buyers", threshold: 2, linkField: "book_id", bucketCapacity: 2 })
db.extra_books.find({}, { _id: 0 })
db.extra_books.updateMany({}, { $push: { buyers_extra: 'X' } })
db.books.findOne({ _id: 1 })
db.extra_books.insertOne({ _id: 'stray', book_id: 404, buyers_extra: ['z'] })
db.extra_books.updateMany({}, { $unset: { buyers_extra: '' } })
db.verifyPatterns()
db.books.removePattern("buyers")
show collections
db.extra_books.countDocuments()
db.books.findOne()
"#
    ));
}

#[test]
fn aggregate_prints_like_mongosh_and_reads_logical_documents() {
    insta::assert_snapshot!(transcript(
        r"
db.sales.insertMany([{ _id: 1, author: 'Calvino', year: 1972, buyers: ['u1', 'u2', 'u3', 'u4', 'u5'] }, { _id: 2, author: 'Calvino', year: 1979, buyers: [] }, { _id: 3, author: 'Herbert', year: 1965, buyers: ['u2'] }])
db.sales.setPattern({ outlier: 'buyers', threshold: 2, bucketCapacity: 2 })
db.sales.aggregate([{ $group: { _id: '$author', books: { $sum: 1 }, first: { $min: '$year' } } }, { $sort: { _id: 1 } }])
db.sales.aggregate([{ $project: { n: { $size: '$buyers' }, last: { $last: '$buyers' } } }])
db.sales.aggregate([{ $unwind: '$buyers' }, { $group: { _id: '$buyers', n: { $sum: 1 } } }, { $sort: { n: -1, _id: 1 } }])
it
db.sales.aggregate([{ $storedDocuments: {} }, { $match: { has_extras: true } }, { $project: { buyers: 1, has_extras: 1 } }])
db.sales.aggregate([{ $match: { year: { $gt: 1970 } } }, { $count: 'recent' }], { let: { x: 1 } }).toArray()
db.sales.aggregate([{ $bogus: 1 }])
db.sales.aggregate([{ $project: { x: { $add: ['$author', 1] } } }])
db.sales.aggregate({ $match: {} })
db.sales.aggregate([]).sort({ a: 1 })
"
    ));
}

/// One front end: the shell passes every option it does not read itself to the command layer,
/// so it takes what `spillway serve` takes (a TTL index, a sparse index, collations on reads
/// and writes) and refuses what the server refuses, with the server's own message.
#[test]
fn the_shell_takes_and_refuses_the_options_the_command_layer_does() {
    use spillway::bson::doc;
    use spillway::command::{Commands, Namespaces};

    let text = transcript(
        r"
db.e.insertMany([{ _id: 1, ts: 1, name: 'Anna' }, { _id: 2, ts: 2, name: 'anna' }, { _id: 3, name: 'Bob' }])
db.e.createIndex({ ts: 1 }, { expireAfterSeconds: 3600 })
db.e.createIndex({ name: 1 }, { name: 'by_name', sparse: true })
db.e.getIndexes()
db.e.countDocuments({ name: 'ANNA' }, { collation: { locale: 'en', strength: 2 } })
db.e.distinct('name', { name: 'ANNA' }, { collation: { locale: 'en', strength: 2 } })
db.e.updateMany({ name: 'ANNA' }, { $set: { seen: true } }, { collation: { locale: 'en', strength: 2 } })
db.e.deleteOne({ name: 'BOB' }, { collation: { locale: 'en', strength: 2 } })
db.e.find({}, { _id: 1, seen: 1 })
db.e.find({}, {}, { bogus: 1 })
db.e.createIndex({ x: 1 }, { bogus: 1 })
",
    );
    for expected in [
        "name: 'ts_1', expireAfterSeconds: 3600",
        "name: 'by_name', sparse: true",
        "[ 'Anna' ]",
        "modifiedCount: 2",
        "deletedCount: 1",
        "[ { _id: 1, seen: true }, { _id: 2, seen: true } ]",
    ] {
        assert!(text.contains(expected), "{expected:?} not in:\n{text}");
    }
    assert!(!text.contains("unknown option"), "{text}");

    // The refusals are the command layer's own messages.
    let database = spillway::Database::open_in_memory().unwrap();
    let commands = Commands::with_namespaces(database, Namespaces::Flat);
    for command in [
        doc! { "find": "e", "filter": {}, "bogus": 1 },
        doc! { "createIndexes": "e", "indexes": [{ "key": { "x": 1 }, "name": "x_1", "bogus": 1 }] },
    ] {
        let reply = commands.execute(command);
        let message = reply.get_str("errmsg").unwrap();
        assert!(text.contains(message), "{message:?} not in:\n{text}");
    }
}
