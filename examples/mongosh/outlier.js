// The Outlier pattern seed (MongoDB manual, "Group Data with the Outlier Pattern") in mongosh,
// against `spillway serve`:
//
//     mongosh mongodb://127.0.0.1:27017/bookstore --file examples/mongosh/outlier.js
//
// The seed's statements as examples/outlier.js has them for Spillway's own shell, with the
// seed's placeholders ("user00", ... "user49"; "user50", ... "user999") generated in JavaScript
// and the policy declared with the `setPattern` command (docs/patterns.md, "From any MongoDB
// driver"). Everything after the policy is plain MongoDB: the application keeps its ordinary
// inserts, updates and queries, and Spillway keeps the layout. `cargo xtask mongosh` runs this
// file and compares what mongosh prints with xtask/mongosh-expected/outlier.out.

const users = (from, to) =>
  Array.from({ length: to - from + 1 }, (_, i) => "user" + String(from + i).padStart(2, "0"));

db.sales.drop();
db.extra_sales.drop();

// The seed's documents, laid out by hand as the seed does: the first 50 buyers of the viral
// book in `sales` with `has_extras: true`, the other 950 in one `extra_sales` document.
db.sales.insertOne({
  "_id": 1,
  "title": "Invisible Cities",
  "year": 1972,
  "author": "Italo Calvino",
  "customers_purchased": ["user00", "user01", "user02"]
});
db.sales.insertOne({
  "_id": 2,
  "title": "The Wooden Amulet",
  "year": 2023,
  "author": "Lesley Moreno",
  "customers_purchased": users(0, 49),
  "has_extras": true
});
db.extra_sales.insertOne({ "book_id": 2, "customers_purchased_extra": users(50, 999) });

// The seed's layout as a policy: Spillway adopts the documents already there.
// `unboundedBuckets: true` keeps the seed's one extra_sales document per book.
print("setPattern ok:", db.runCommand({
  setPattern: "sales", outlier: "customers_purchased", threshold: 50,
  overflowCollection: "extra_sales", linkField: "book_id", flagField: "has_extras",
  overflowField: "customers_purchased_extra", unboundedBuckets: true
}).ok);
printjson(db.runCommand({ getPatterns: "sales" }).patterns);
printjson(db.runCommand({ verifyPatterns: 1 }).violations);

// Reads answer as a plain collection would: the logical array is whole. The hot path, the
// first 50 buyers, reads the main document only; the stored layout is its own namespace.
const logical = db.sales.findOne({ _id: 2 });
print("logical buyers of book 2:", logical.customers_purchased.length,
      "last:", logical.customers_purchased[999], "has_extras shown:", "has_extras" in logical);
const first = db.sales.findOne({ _id: 2 }, { customers_purchased: { $slice: 50 } });
print("first page of book 2:", first.customers_purchased.length, "buyers");
const stored = db.getCollection("system.stored.sales").findOne({ _id: 2 });
print("stored buyers of book 2:", stored.customers_purchased.length, "has_extras:", stored.has_extras);
printjson(db.runCommand({ arrayLength: "sales", _id: 2, field: "customers_purchased" }).length);
printjson(db.runCommand({ arrayPage: "sales", _id: 2, field: "customers_purchased", skip: 500, limit: 5 }).elements);

// Queries match the logical array: user777 is in the overflow document, not in `sales`.
printjson(db.sales.find({ customers_purchased: "user777" }, { title: 1 }).toArray());
print("books bought by user777:", db.sales.countDocuments({ customers_purchased: "user777" }));

// "Updates for Outliers": the application just pushes. Book 1 passes 50 buyers and spills;
// the flag flips in the same atomic write. Nothing here mentions extra_sales.
for (let n = 3; n < 60; n++) {
  db.sales.updateOne({ _id: 1 }, { $push: { customers_purchased: "user" + String(n).padStart(2, "0") } });
}
const book1 = db.getCollection("system.stored.sales").findOne({ _id: 1 });
print("book 1 after 57 pushes: stored", book1.customers_purchased.length, "has_extras:", book1.has_extras);
printjson(db.runCommand({ arrayLength: "sales", _id: 1, field: "customers_purchased" }).length);
printjson(db.sales.aggregate([
  { $match: { customers_purchased: "user59" } },
  { $project: { _id: 1, title: 1 } }
]).toArray());

// A $pull that brings book 1 back under the threshold folds its overflow back in.
db.sales.updateOne({ _id: 1 }, { $pull: { customers_purchased: { $in: users(10, 59) } } });
const folded = db.getCollection("system.stored.sales").findOne({ _id: 1 });
print("book 1 after the pull: stored", folded.customers_purchased.length, "has_extras present:", "has_extras" in folded);
print("overflow documents of book 1:", db.extra_sales.countDocuments({ book_id: 1 }));
printjson(db.runCommand({ verifyPatterns: 1 }).violations);
