// The Subset pattern seed (MongoDB manual, "Group Data with the Subset Pattern") in mongosh,
// against `spillway serve`:
//
//     mongosh mongodb://127.0.0.1:27017/shop --file examples/mongosh/subset.js
//
// The seed's product with its reviews, as examples/subset.js has it for Spillway's own shell:
// the seed's four reviews (786, 785, 776 and 1) and generated ones between them, dated so that
// review_id order is date order. The policy is declared with the `setPattern` command
// (docs/patterns.md, "From any MongoDB driver"); the rest is plain MongoDB. `cargo xtask mongosh`
// runs this file and compares what mongosh prints with xtask/mongosh-expected/subset.out.

const productId = ObjectId("507f1f77bcf86cd993384520");
const seedReviews = {
  786: { review_author: "Kristina", review_text: "This is indeed an amazing widgt.", published_date: ISODate("2019-02-18") },
  785: { review_author: "Trina", review_text: "Very nice product, slow shipping.", published_date: ISODate("2019-02-17") },
  776: { review_author: "Pablo", review_text: "Amazing!", published_date: ISODate("2019-02-15") },
  1: { review_author: "Hans", review_text: "Meh, it's ok.", published_date: ISODate("2017-12-06") }
};
const authors = ["Amara", "Priya", "Chen", "Olu", "Mateo"];
const texts = ["Would buy again.", "Does the job.", "Good value for the price.", "Sturdy and well made."];
const review = (id) => seedReviews[id]
  ? { review_id: id, ...seedReviews[id] }
  : {
      review_id: id,
      review_author: authors[id % authors.length],
      review_text: texts[id % texts.length],
      // 777..784 on 2019-02-16, an hour apart; 2..775 an hour apart before 776's date.
      published_date: id > 776
        ? new Date(Date.UTC(2019, 1, 16, id - 767))
        : new Date(Date.UTC(2019, 1, 15) - (776 - id) * 3600 * 1000)
    };
const reviews = (newest, oldest) =>
  Array.from({ length: newest - oldest + 1 }, (_, i) => review(newest - i));

db.products.drop();
db.review.drop();

// The seed's first state: every review embedded in the product.
db.products.insertOne({
  _id: productId,
  name: "Super Widget",
  description: "This is the most useful item in your toolbox.",
  price: { value: Decimal128("119.99"), currency: "USD" },
  reviews: reviews(786, 1)
});
print("embedded reviews before the policy:", db.products.findOne().reviews.length);

// The Subset pattern as a policy: the 10 newest reviews stay embedded, every review goes to
// the `review` archive, linked by `product_id` and identified by `review_id`.
print("setPattern ok:", db.runCommand({
  setPattern: "products", subset: "reviews", keep: 10, sortBy: { published_date: -1 },
  archiveCollection: "review", linkField: "product_id", identity: "review_id"
}).ok);
printjson(db.runCommand({ getPatterns: "products" }).patterns);
printjson(db.runCommand({ verifyPatterns: 1 }).violations);

// The product page reads one small document: the 10 newest reviews, asked for in MongoDB's
// own syntax ({reviews: {$slice: 10}}, the same query on plain MongoDB). A read without the
// $slice returns every review, as a plain collection would.
const page = db.products.findOne({ _id: productId }, { name: 1, reviews: { $slice: 10 } });
printjson({ name: page.name, reviews: page.reviews.map((r) => r.review_id) });
print("reviews in a plain findOne:", db.products.findOne({ _id: productId }).reviews.length);
printjson(db.runCommand({ arrayLength: "products", _id: productId, field: "reviews" }).length);
printjson(db.runCommand({ arrayPage: "products", _id: productId, field: "reviews", skip: 9, limit: 2 })
  .elements.map((r) => r.review_id));
printjson(db.runCommand({ arrayPage: "products", _id: productId, field: "reviews", skip: 785 })
  .elements.map((r) => [r.review_id, r.review_author]));
print("archived reviews:", db.review.countDocuments({ product_id: productId }));

// Queries see every review: Hans wrote review 1, long gone from the embedded array.
printjson(db.products.find({ "reviews.review_author": "Hans" }, { name: 1 }).toArray());

// A new review is an ordinary $push. It is archived and, being the newest, embedded; the
// oldest embedded review (777) leaves the product.
db.products.updateOne({ _id: productId }, {
  $push: { reviews: { review_id: 787, review_author: "Ada", review_text: "Still the best widget.", published_date: ISODate("2019-02-19") } }
});
printjson(db.products.findOne({}, { _id: 0, reviews: { $slice: 10 } }).reviews.map((r) => r.review_id));
print("reviews now:", db.runCommand({ arrayLength: "products", _id: productId, field: "reviews" }).length,
      "archived:", db.review.countDocuments());

// A review deleted from the product is deleted from the archive, in the same write.
db.products.updateOne({ _id: productId }, { $pull: { reviews: { review_id: 1 } } });
print("after removing review 1:", db.review.countDocuments(), "archived;",
      db.products.countDocuments({ "reviews.review_author": "Hans" }), "products reviewed by Hans");
printjson(db.runCommand({ verifyPatterns: 1 }).violations);

// Removing the policy folds every review back into the product and drops the archive it made.
print("removePattern ok:", db.runCommand({ removePattern: "products", field: "reviews" }).ok);
print("embedded reviews after removePattern:", db.products.findOne().reviews.length);
printjson(db.getCollectionNames().sort());
