// Issue 27's transparency checks with the official Node.js driver's ordinary helpers
// (`cargo xtask clients`).
//
// Every check runs the same operations against a collection with an outlier policy and against
// a plain collection holding the same writes, on the same server, and asserts the answers are
// equal: a collection with a policy must answer as a plain MongoDB collection of the logical
// documents would. The stored-view checks (`system.stored.<collection>`) are policy-only. The
// `plain:` checks hold the plain collection to MongoDB's documented answers, so that the
// harness is checked too (with `--plain-only` they are all that runs). `--control` declares no
// policy: both halves are plain collections, every comparison must then hold and the
// policy-only checks are left out; it checks the harness itself, on spillway or on a server
// without `setPattern` (the peer SecantusDB).
//
// Prints one line per check (`PASS name` or `FAIL name: why`) and ends with
// `N passed, N failed`; exits 1 when any check failed.
//
//     node node_driver_checks.js --uri mongodb://127.0.0.1:PORT [--plain-only | --control]
"use strict";

const { MongoClient, MongoError, BSON } = require("mongodb");

const DATABASE = "clients_node";
const FIELD = "customers_purchased";
const FLAG = "has_extras";
// The policy of most checks: issue 27's sort example uses threshold 3; small buckets make the
// overflow span several side documents.
const THRESHOLD = 3;
const CAPACITY = 2;
// The write-back round trip: issue 27's numbers (120 elements, 50 kept in the main document).
const ROUND_TRIP_THRESHOLD = 50;
const ROUND_TRIP_LENGTH = 120;
// MongoDB's CommandNotSupportedOnView: what a write to the read-only stored view answers.
const READ_ONLY_CODE = 166;

const users = (start, stop) =>
  Array.from({ length: stop - start }, (_, i) => "u" + String(start + i).padStart(2, "0"));

// Book 1 and 3 overflow (4 elements, threshold 3) with an overflow element that decides their
// sort keys; book 4 spans several buckets; book 5 has exactly the threshold; book 6 no array.
const books = () => [
  { _id: 1, title: "Invisible Cities", [FIELD]: ["m", "n", "o", "b"], year: 1972 },
  { _id: 2, title: "The Wooden Amulet", [FIELD]: ["c", "d"], year: 2023 },
  { _id: 3, title: "Ficciones", [FIELD]: ["e", "f", "g", "z"], year: 1944 },
  { _id: 4, title: "Viral", [FIELD]: users(0, 10), year: 2024 },
  { _id: 5, title: "Exactly Three", [FIELD]: ["h", "i", "j"], year: 2001 },
  { _id: 6, title: "No Buyers", year: 2000 },
];

class CheckFailed extends Error {}

// Canonical Extended JSON: field order and (as far as JavaScript keeps them) types both count.
const canonical = (value) => BSON.EJSON.stringify(value === undefined ? null : value, { relaxed: false });
const short = (value, limit = 400) => {
  const text = canonical(value);
  return text.length <= limit ? text : text.slice(0, limit) + "...";
};
const assert = (condition, message) => {
  if (!condition) throw new CheckFailed(message);
};
const same = (what, policy, plain) =>
  assert(canonical(policy) === canonical(plain), `${what}: policy gave ${short(policy)}, plain gave ${short(plain)}`);
const expect = (what, got, wanted) =>
  assert(canonical(got) === canonical(wanted), `${what}: got ${short(got)}, expected ${short(wanted)}`);
const ids = (documents) => documents.map((document) => document._id);

// A collection with the outlier policy on FIELD and a plain one, the same writes in both.
async function pair(db, name, documents, { threshold = THRESHOLD, capacity = CAPACITY, policy = true } = {}) {
  const policyName = `${name}_policy`;
  if (policy && !control) {
    await db.command({ setPattern: policyName, outlier: FIELD, threshold, bucketCapacity: capacity });
  }
  const result = {
    policyName,
    policy: db.collection(policyName),
    plain: db.collection(`${name}_plain`),
    both() {
      return [this.policy, this.plain];
    },
    // The stored view of the policy collection, through the ordinary helpers.
    stored() {
      return db.collection(`system.stored.${policyName}`);
    },
    // The logical array through the explicit `arrayPage` command, which reads the layout
    // itself and so does not depend on what a default read returns. Under --control there is
    // no layout: the array is the plain document's.
    async logicalArray(id) {
      if (control) return (await this.policy.findOne({ _id: id }))[FIELD];
      const page = await db.command({ arrayPage: policyName, _id: id, field: FIELD, skip: 0, limit: 100000 });
      return page.elements;
    },
  };
  for (const collection of result.both()) {
    await collection.insertMany(documents.map((document) => ({ ...document })));
  }
  return result;
}

// Set by --control: no collection gets the policy.
let control = false;
let passed = 0;
let failed = 0;

async function run(name, check) {
  try {
    await check();
    passed += 1;
    console.log(`PASS ${name}`);
  } catch (error) {
    failed += 1;
    if (error instanceof CheckFailed) {
      console.log(`FAIL ${name}: ${error.message}`);
    } else if (error instanceof MongoError) {
      console.log(`FAIL ${name}: ${error.constructor.name} (code ${error.code}): ${error.message}`);
    } else {
      console.log(`FAIL ${name}: ${String(error && error.stack).split("\n").join(" | ")}`);
    }
  }
}

// ---- the plain collection against MongoDB's documented answers (harness sanity) ----

async function plainChecks(db) {
  await run("plain: findOne returns the whole document", async () => {
    const p = await pair(db, "plain_find_one", books(), { policy: false });
    expect("findOne({_id: 4})", await p.plain.findOne({ _id: 4 }), books()[3]);
  });
  await run("plain: array sort keys (min ascending, max descending), find and aggregate", async () => {
    const p = await pair(db, "plain_sort", books().slice(0, 3), { policy: false });
    expect("sort ascending", ids(await p.plain.find().sort({ [FIELD]: 1 }).toArray()), [1, 2, 3]);
    expect("sort descending", ids(await p.plain.find().sort({ [FIELD]: -1 }).toArray()), [3, 1, 2]);
    expect("aggregate $sort ascending", ids(await p.plain.aggregate([{ $sort: { [FIELD]: 1 } }]).toArray()), [1, 2, 3]);
    expect("aggregate $sort descending", ids(await p.plain.aggregate([{ $sort: { [FIELD]: -1 } }]).toArray()), [3, 1, 2]);
  });
  await run("plain: $slice [skip, n] window", async () => {
    const p = await pair(db, "plain_slice", books(), { policy: false });
    const got = await p.plain.findOne({ _id: 4 }, { projection: { [FIELD]: { $slice: [2, 3] } } });
    expect("$slice [2, 3]", got[FIELD], users(2, 5));
  });
  await run("plain: findOneAndUpdate before and after", async () => {
    const p = await pair(db, "plain_fam", books(), { policy: false });
    const before = await p.plain.findOneAndUpdate({ _id: 1 }, { $push: { [FIELD]: "p" } }, { returnDocument: "before" });
    expect("before", before[FIELD], ["m", "n", "o", "b"]);
    const after = await p.plain.findOneAndUpdate({ _id: 1 }, { $push: { [FIELD]: "q" } }, { returnDocument: "after" });
    expect("after", after[FIELD], ["m", "n", "o", "b", "p", "q"]);
  });
  await run("plain: replaceOne(findOne) keeps 120 elements", async () => {
    const whole = users(0, ROUND_TRIP_LENGTH);
    const p = await pair(db, "plain_round_trip", [{ _id: 1, [FIELD]: whole }], { policy: false });
    await p.plain.replaceOne({ _id: 1 }, await p.plain.findOne({ _id: 1 }));
    expect("array after replaceOne(findOne)", (await p.plain.findOne({ _id: 1 }))[FIELD], whole);
  });
}

// ---- the policy collection against the plain one ----

async function policyChecks(db) {
  const reads = await pair(db, "reads", books());
  for (const collection of reads.both()) {
    await collection.updateOne({ _id: 4 }, { $push: { [FIELD]: { $each: users(10, 12) } } });
  }
  const flagged = (documents) => documents.filter((document) => FLAG in document).map((document) => document._id);

  await run("findOne returns the logical document, no flag", async () => {
    const policy = await reads.policy.findOne({ _id: 4 });
    assert(policy !== null, "findOne({_id: 4}) found nothing");
    assert(!(FLAG in policy), `the logical document shows the flag: ${short(policy)}`);
    same("findOne({_id: 4})", policy, await reads.plain.findOne({ _id: 4 }));
  });
  await run("a transaction over both collections commits or aborts as one", async () => {
    // A transaction pushing to both collections and writing a third: all or nothing.
    const txn = await pair(db, "txn", books());
    const orders = db.collection("txn_orders");
    const session = db.client.startSession();
    try {
      await session.withTransaction(async () => {
        for (const collection of txn.both()) {
          await collection.updateOne({ _id: 4 }, { $push: { [FIELD]: { $each: ["t1", "t2"] } } }, { session });
        }
        await orders.insertOne({ book: 4 }, { session });
        const inside = await txn.policy.findOne({ _id: 4 }, { session });
        expect("the logical array inside the transaction", inside[FIELD].slice(-2), ["t1", "t2"]);
      });
      same("after the commit", await txn.policy.findOne({ _id: 4 }), await txn.plain.findOne({ _id: 4 }));
      expect("orders after the commit", await orders.countDocuments({}), 1);
      session.startTransaction();
      for (const collection of txn.both()) {
        await collection.updateOne({ _id: 4 }, { $push: { [FIELD]: "aborted" } }, { session });
      }
      await orders.insertOne({ book: 4 }, { session });
      await session.abortTransaction();
    } finally {
      await session.endSession();
    }
    const policy = await txn.policy.findOne({ _id: 4 });
    assert(!policy[FIELD].includes("aborted"), "the aborted push is there");
    same("after the abort", policy, await txn.plain.findOne({ _id: 4 }));
    expect("orders after the abort", await orders.countDocuments({}), 1);
  });
  await run("find (with getMore) returns logical documents", async () => {
    // batchSize 2 makes the cursor fetch most documents with getMore.
    const read = (collection) => collection.find({}).sort({ _id: 1 }).batchSize(2).toArray();
    const policy = await read(reads.policy);
    assert(flagged(policy).length === 0, `documents ${flagged(policy)} show the flag ${FLAG}`);
    same("find({}) with getMore", policy, await read(reads.plain));
  });
  await run("find by an overflow element", async () => {
    const read = (collection) => collection.find({ [FIELD]: "u11" }).toArray();
    same("find({customers_purchased: 'u11'})", await read(reads.policy), await read(reads.plain));
  });
  await run("aggregate returns logical documents", async () => {
    const pipeline = [{ $match: { year: { $gte: 1900 } } }, { $sort: { _id: 1 } }];
    same("aggregate($match, $sort _id)", await reads.policy.aggregate(pipeline).toArray(), await reads.plain.aggregate(pipeline).toArray());
  });
  await run("aggregate $size of the managed array", async () => {
    const pipeline = [
      { $match: { [FIELD]: { $exists: true } } },
      { $project: { n: { $size: `$${FIELD}` } } },
      { $sort: { _id: 1 } },
    ];
    same("$size of the managed array", await reads.policy.aggregate(pipeline).toArray(), await reads.plain.aggregate(pipeline).toArray());
  });
  await run("distinct of the managed array", async () => {
    const sorted = (values) => values.slice().sort();
    same("distinct(customers_purchased)", sorted(await reads.policy.distinct(FIELD)), sorted(await reads.plain.distinct(FIELD)));
  });
  await run("sort on the managed array: issue 27's example", async () => {
    const example = await pair(db, "sort_example", books().slice(0, 3));
    for (const [direction, wanted] of [[1, [1, 2, 3]], [-1, [3, 1, 2]]]) {
      const plain = ids(await example.plain.find().sort({ [FIELD]: direction }).toArray());
      const policy = ids(await example.policy.find().sort({ [FIELD]: direction }).toArray());
      expect(`plain find().sort({a: ${direction}})`, plain, wanted);
      same(`find().sort({a: ${direction}})`, policy, plain);
    }
  });
  await run("sort on the managed array, both directions, all documents", async () => {
    for (const direction of [1, -1]) {
      // _id breaks ties so that both orders are fully determined.
      const read = (collection) => collection.find().sort({ [FIELD]: direction, _id: 1 }).toArray();
      same(`find().sort({${FIELD}: ${direction}, _id: 1})`, await read(reads.policy), await read(reads.plain));
    }
  });
  await run("aggregate with a leading $sort on the managed array", async () => {
    const example = await pair(db, "sort_aggregate", books().slice(0, 3));
    for (const [direction, wanted] of [[1, [1, 2, 3]], [-1, [3, 1, 2]]]) {
      const pipeline = [{ $sort: { [FIELD]: direction } }];
      const plain = await example.plain.aggregate(pipeline).toArray();
      expect(`plain aggregate $sort ${direction}`, ids(plain), wanted);
      same(`aggregate([{$sort: {a: ${direction}}}])`, await example.policy.aggregate(pipeline).toArray(), plain);
    }
  });
  const projections = [
    ["projection {$slice: 2}", { [FIELD]: { $slice: 2 } }],
    ["projection {$slice: -2}", { [FIELD]: { $slice: -2 } }],
    ["projection {$slice: [5, 3]}", { [FIELD]: { $slice: [5, 3] } }],
    ["projection {$slice: [2, 100]}", { [FIELD]: { $slice: [2, 100] } }],
    ["projection {field: 0}", { [FIELD]: 0 }],
    ["projection {field: 1, title: 1}", { [FIELD]: 1, title: 1 }],
  ];
  for (const [name, projection] of projections) {
    await run(name, async () => {
      const read = (collection) => collection.find({}, { projection }).sort({ _id: 1 }).toArray();
      const policy = await read(reads.policy);
      // Both problems are told: a window can be wrong besides the flag showing.
      const problems = [];
      if (flagged(policy).length > 0) problems.push(`documents ${flagged(policy)} show the flag ${FLAG}`);
      const withoutFlag = policy.map(({ [FLAG]: _flag, ...rest }) => rest);
      const plain = await read(reads.plain);
      if (canonical(withoutFlag) !== canonical(plain)) {
        problems.push(`find({}, ${canonical(projection)}) without the flag: policy gave ${short(withoutFlag)}, plain gave ${short(plain)}`);
      }
      assert(problems.length === 0, problems.join("; "));
    });
  }
  const findOneAndUpdate = (mode, update) => async () => {
    const p = await pair(db, `fou_${mode}`, books());
    const answers = [];
    for (const collection of p.both()) {
      answers.push(await collection.findOneAndUpdate({ _id: 4 }, update, { returnDocument: mode }));
    }
    assert(answers[0] !== null && !(FLAG in answers[0]), `the returned document shows the flag or is missing: ${short(answers[0])}`);
    same(`findOneAndUpdate(returnDocument: ${mode})`, ...answers);
    same("findOne afterwards", await p.policy.findOne({ _id: 4 }), await p.plain.findOne({ _id: 4 }));
  };
  await run("findOneAndUpdate $push, returnDocument before", findOneAndUpdate("before", { $push: { [FIELD]: "new" } }));
  await run("findOneAndUpdate $set, returnDocument after", findOneAndUpdate("after", { $set: { title: "Renamed" } }));
  const findOneAndReplace = (mode) => async () => {
    const p = await pair(db, `for_${mode}`, books());
    const answers = [];
    for (const collection of p.both()) {
      const replacement = { title: "Replaced", [FIELD]: users(20, 27), year: 1999 };
      answers.push(await collection.findOneAndReplace({ _id: 4 }, replacement, { returnDocument: mode }));
    }
    same(`findOneAndReplace(returnDocument: ${mode})`, ...answers);
    same("findOne afterwards", await p.policy.findOne({ _id: 4 }), await p.plain.findOne({ _id: 4 }));
  };
  await run("findOneAndReplace, returnDocument before", findOneAndReplace("before"));
  await run("findOneAndReplace, returnDocument after", findOneAndReplace("after"));
  await run("findOneAndDelete returns the logical document", async () => {
    const p = await pair(db, "fod", books());
    same("findOneAndDelete({_id: 4})", await p.policy.findOneAndDelete({ _id: 4 }), await p.plain.findOneAndDelete({ _id: 4 }));
  });
  const roundTrip = (writeBack) => async () => {
    const whole = users(0, ROUND_TRIP_LENGTH);
    const trip = await pair(db, `round_trip_${writeBack}`, [{ _id: 1, title: "Viral", [FIELD]: whole }], {
      threshold: ROUND_TRIP_THRESHOLD,
      capacity: 20,
    });
    for (const collection of trip.both()) {
      const read = await collection.findOne({ _id: 1 });
      if (writeBack === "replaceOne") {
        await collection.replaceOne({ _id: 1 }, read);
      } else {
        await collection.findOneAndReplace({ _id: 1 }, read);
      }
    }
    const logical = await trip.logicalArray(1);
    assert(
      canonical(logical) === canonical(whole),
      `the logical array after ${writeBack}(findOne) has ${logical.length} elements ` +
        `(first ${logical.slice(0, 2)}, last ${logical.slice(-2)}), expected ${whole.length} in order`,
    );
    same("findOne afterwards", await trip.policy.findOne({ _id: 1 }), await trip.plain.findOne({ _id: 1 }));
  };
  await run("replaceOne(findOne) keeps all 120 elements in order", roundTrip("replaceOne"));
  await run("findOneAndReplace(findOne) keeps all 120 elements", roundTrip("findOneAndReplace"));
  // The rest needs the policy itself (the stored view, the flag): --control leaves it out.
  if (control) return;
  await run("stored view: system.stored.<collection> shows the layout", async () => {
    const stored = await reads.stored().findOne({ _id: 4 });
    assert(stored !== null, "system.stored.reads_policy has no document 4");
    expect(`the stored ${FIELD}`, stored[FIELD], users(0, THRESHOLD));
    expect(`the stored ${FLAG}`, stored[FLAG], true);
    expect("the stored title", stored.title, "Viral");
  });
  await run("stored view: writes fail with code 166", async () => {
    const p = await pair(db, "read_only", books());
    const stored = p.stored();
    const before = await stored.find().sort({ _id: 1 }).toArray();
    assert(before.length > 0, "the stored view is empty");
    const attempts = {
      insertOne: () => stored.insertOne({ _id: 100, [FIELD]: [] }),
      updateOne: () => stored.updateOne({ _id: 4 }, { $set: { title: "x" } }),
      replaceOne: () => stored.replaceOne({ _id: 4 }, { title: "x" }),
      deleteOne: () => stored.deleteOne({ _id: 4 }),
    };
    const problems = [];
    for (const [what, attempt] of Object.entries(attempts)) {
      try {
        await attempt();
        problems.push(`${what} succeeded`);
      } catch (error) {
        if (!(error instanceof MongoError)) throw error;
        if (error.code !== READ_ONLY_CODE) {
          problems.push(`${what} failed with code ${error.code}, not ${READ_ONLY_CODE}: ${error.message}`);
        }
      }
    }
    assert(problems.length === 0, problems.join("; "));
    same("the stored view afterwards", await stored.find().sort({ _id: 1 }).toArray(), before);
    same("the logical document afterwards", await p.policy.findOne({ _id: 4 }), await p.plain.findOne({ _id: 4 }));
  });
  await run("writing the flag into the main collection is refused", async () => {
    const p = await pair(db, "flag_write", books());
    const stored = await p.stored().findOne({ _id: 4 });
    assert(stored !== null && stored[FLAG] === true, `the stored view of document 4 is not the flagged layout: ${short(stored)}`);
    const problems = [];
    const attempts = {
      "replaceOne(stored view)": () => p.policy.replaceOne({ _id: 4 }, stored),
      "insertOne(with the flag)": () => p.policy.insertOne({ _id: 100, [FIELD]: ["a"], [FLAG]: true }),
    };
    for (const [what, attempt] of Object.entries(attempts)) {
      try {
        await attempt();
        problems.push(`${what} succeeded`);
      } catch (error) {
        if (!(error instanceof MongoError)) throw error;
        if (!error.message.includes("system.stored.") && !error.message.toLowerCase().includes("stored view")) {
          problems.push(`${what} was refused without naming the stored view: ${error.message}`);
        }
      }
    }
    assert(problems.length === 0, problems.join("; "));
    assert((await p.policy.countDocuments({ _id: 100 })) === 0, "document 100 was inserted");
    expect("the logical array afterwards", await p.logicalArray(4), users(0, 10));
  });
}

async function main() {
  const args = process.argv.slice(2);
  const uriAt = args.indexOf("--uri");
  if (uriAt < 0 || !args[uriAt + 1]) {
    console.error("usage: node node_driver_checks.js --uri mongodb://127.0.0.1:PORT [--plain-only | --control]");
    process.exit(2);
  }
  control = args.includes("--control");
  const client = new MongoClient(args[uriAt + 1], { serverSelectionTimeoutMS: 10000, directConnection: true });
  await client.connect();
  const db = client.db(DATABASE);
  await db.dropDatabase();
  await plainChecks(db);
  if (!args.includes("--plain-only")) {
    await policyChecks(db);
  }
  await client.close();
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

main().catch((error) => {
  console.log(`FAIL the harness: ${String(error && error.stack).split("\n").join(" | ")}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exitCode = 1;
});
