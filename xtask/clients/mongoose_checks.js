// Issue 27's transparency checks with Mongoose's models (`cargo xtask clients`): load a
// patterned document, reassign its array, `save()`, and sort on the managed array, each against
// a collection with an outlier policy and a plain collection with the same writes on the same
// server. The `plain:` checks hold the plain collection to MongoDB's documented answers (with
// `--plain-only` they are all that runs). `--control` declares no policy: both halves are plain
// collections, every comparison must then hold and the policy-only check is left out; it checks
// the harness itself, on spillway or on a server without `setPattern` (the peer SecantusDB).
//
// Prints one line per check (`PASS name` or `FAIL name: why`) and ends with
// `N passed, N failed`; exits 1 when any check failed.
//
//     node mongoose_checks.js --uri mongodb://127.0.0.1:PORT [--plain-only | --control]
"use strict";

const mongoose = require("mongoose");
const { MongoError, BSON } = require("mongodb");

const DATABASE = "clients_mongoose";
const FIELD = "customers_purchased";
const FLAG = "has_extras";
const THRESHOLD = 3;
const CAPACITY = 2;
// Issue 27's numbers: load + reassign + save() took a 120-element array to 51.
const ROUND_TRIP_THRESHOLD = 50;
const ROUND_TRIP_LENGTH = 120;
const READ_ONLY_CODE = 166;

const users = (start, stop) =>
  Array.from({ length: stop - start }, (_, i) => "u" + String(start + i).padStart(2, "0"));

const books = () => [
  { _id: 1, title: "Invisible Cities", [FIELD]: ["m", "n", "o", "b"], year: 1972 },
  { _id: 2, title: "The Wooden Amulet", [FIELD]: ["c", "d"], year: 2023 },
  { _id: 3, title: "Ficciones", [FIELD]: ["e", "f", "g", "z"], year: 1944 },
  { _id: 4, title: "Viral", [FIELD]: users(0, 10), year: 2024 },
  { _id: 5, title: "Exactly Three", [FIELD]: ["h", "i", "j"], year: 2001 },
];

class CheckFailed extends Error {}

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

// The application's schema: the array is an ordinary array of strings; the policy's flag is
// not part of it (the application never sees one).
const bookSchema = (collection) =>
  new mongoose.Schema(
    { _id: Number, title: String, year: Number, [FIELD]: [String] },
    // The collections are made by the checks (setPattern creates the policy's), not by Mongoose.
    { collection, autoCreate: false, autoIndex: false },
  );

let modelCount = 0;

// A model over a collection with the outlier policy on FIELD and one over a plain collection,
// seeded with the same documents through Mongoose.
async function pair(connection, name, documents, { threshold = THRESHOLD, capacity = CAPACITY, policy = true } = {}) {
  const policyName = `${name}_policy`;
  const db = connection.db;
  if (policy && !control) {
    await db.command({ setPattern: policyName, outlier: FIELD, threshold, bucketCapacity: capacity });
  }
  modelCount += 1;
  const result = {
    policyName,
    policy: connection.model(`PolicyBook${modelCount}`, bookSchema(policyName)),
    plain: connection.model(`PlainBook${modelCount}`, bookSchema(`${name}_plain`)),
    both() {
      return [this.policy, this.plain];
    },
    // The logical array through the explicit `arrayPage` command, which reads the layout itself
    // and so does not depend on what a default read returns. Under --control there is no
    // layout: the array is the plain document's.
    async logicalArray(id) {
      if (control) return (await this.policy.findById(id).lean())[FIELD];
      const page = await db.command({ arrayPage: policyName, _id: id, field: FIELD, skip: 0, limit: 100000 });
      return page.elements;
    },
  };
  for (const model of result.both()) {
    await model.insertMany(documents.map((document) => ({ ...document })));
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

// Load, reassign the array with one more element, save(); returns the array as loaded.
async function reassignAndSave(model, id, element) {
  const document = await model.findById(id);
  const loaded = document[FIELD].slice();
  document[FIELD] = [...document[FIELD], element];
  await document.save();
  return loaded;
}

async function sortedIds(model, direction) {
  return ids(await model.find().sort({ [FIELD]: direction, _id: 1 }).lean());
}

async function plainChecks(connection) {
  await run("plain: load, reassign the array, save() keeps every element", async () => {
    const whole = users(0, ROUND_TRIP_LENGTH);
    const p = await pair(connection, "plain_save", [{ _id: 1, title: "Viral", [FIELD]: whole }], { policy: false });
    await reassignAndSave(p.plain, 1, "new");
    expect("the array after save()", (await p.plain.findById(1).lean())[FIELD], [...whole, "new"]);
  });
  await run("plain: Model.find().sort() on the array uses MongoDB's array sort keys", async () => {
    const p = await pair(connection, "plain_sort", books().slice(0, 3), { policy: false });
    expect("ascending", await sortedIds(p.plain, 1), [1, 2, 3]);
    expect("descending", await sortedIds(p.plain, -1), [3, 1, 2]);
  });
}

async function policyChecks(connection) {
  await run("findById returns the logical array (hydrated and lean), no flag", async () => {
    const p = await pair(connection, "load", books());
    const hydrated = await Promise.all(p.both().map((model) => model.findById(4)));
    same("findById(4).toObject()", hydrated[0].toObject(), hydrated[1].toObject());
    const lean = await Promise.all(p.both().map((model) => model.findById(4).lean()));
    assert(lean[0] !== null && !(FLAG in lean[0]), `the lean document shows the flag or is missing: ${short(lean[0])}`);
    same("findById(4).lean()", lean[0], lean[1]);
  });
  await run("load, reassign the array, save(): every old element plus the new one", async () => {
    const whole = users(0, ROUND_TRIP_LENGTH);
    const p = await pair(connection, "reassign", [{ _id: 1, title: "Viral", [FIELD]: whole }], {
      threshold: ROUND_TRIP_THRESHOLD,
      capacity: 20,
    });
    const loaded = await reassignAndSave(p.policy, 1, "new");
    await reassignAndSave(p.plain, 1, "new");
    const logical = await p.logicalArray(1);
    assert(
      canonical(logical) === canonical([...whole, "new"]),
      `the logical array after load (${loaded.length} elements), reassign, save() has ${logical.length} ` +
        `elements (last ${logical.slice(-2)}), expected ${whole.length + 1}: the old ones in order, then 'new'`,
    );
    same("findById(1).lean() afterwards", await p.policy.findById(1).lean(), await p.plain.findById(1).lean());
  });
  await run("load, change the title, save(): the array is unchanged", async () => {
    const whole = users(0, ROUND_TRIP_LENGTH);
    const p = await pair(connection, "retitle", [{ _id: 1, title: "Viral", [FIELD]: whole }], {
      threshold: ROUND_TRIP_THRESHOLD,
      capacity: 20,
    });
    for (const model of p.both()) {
      const document = await model.findById(1);
      document.title = "Renamed";
      await document.save();
    }
    expect("the logical array after save()", await p.logicalArray(1), whole);
    same("findById(1).lean() afterwards", await p.policy.findById(1).lean(), await p.plain.findById(1).lean());
  });
  await run("Model.find().sort() on the managed array: issue 27's example", async () => {
    const p = await pair(connection, "sort_example", books().slice(0, 3));
    for (const [direction, wanted] of [[1, [1, 2, 3]], [-1, [3, 1, 2]]]) {
      const plain = await sortedIds(p.plain, direction);
      expect(`plain sort ${direction}`, plain, wanted);
      same(`Model.find().sort({${FIELD}: ${direction}})`, await sortedIds(p.policy, direction), plain);
    }
  });
  await run("Model.find().sort() on the managed array, all documents", async () => {
    const p = await pair(connection, "sort_all", books());
    for (const direction of [1, -1]) {
      const read = (model) => model.find().sort({ [FIELD]: direction, _id: 1 }).lean();
      same(`Model.find().sort({${FIELD}: ${direction}, _id: 1})`, await read(p.policy), await read(p.plain));
    }
  });
  await run("Model.findOneAndUpdate, before (the default) and after", async () => {
    const p = await pair(connection, "fam", books());
    const update = { $push: { [FIELD]: "new" } };
    const before = await Promise.all(p.both().map((model) => model.findOneAndUpdate({ _id: 4 }, update).lean()));
    same("findOneAndUpdate (before)", ...before);
    const after = await Promise.all(
      p.both().map((model) => model.findOneAndUpdate({ _id: 4 }, update, { returnDocument: "after" }).lean()),
    );
    same("findOneAndUpdate (returnDocument: 'after')", ...after);
  });
  await run("Model.find().select() with {$slice: [5, 3]}", async () => {
    const p = await pair(connection, "slice", books());
    const read = (model) => model.find().select({ [FIELD]: { $slice: [5, 3] } }).sort({ _id: 1 }).lean();
    same("select {$slice: [5, 3]}", await read(p.policy), await read(p.plain));
  });
  // The rest needs the policy itself (the stored view): --control leaves it out.
  if (control) return;
  await run("a model over system.stored.<collection> reads the layout; its save() fails with 166", async () => {
    const p = await pair(connection, "stored", books());
    const schema = new mongoose.Schema(
      { _id: Number, title: String, year: Number, [FIELD]: [String], [FLAG]: Boolean },
      { collection: `system.stored.${p.policyName}`, autoCreate: false, autoIndex: false },
    );
    modelCount += 1;
    const Stored = connection.model(`StoredBook${modelCount}`, schema);
    const stored = await Stored.findById(4);
    assert(stored !== null, `system.stored.${p.policyName} has no document 4`);
    expect(`the stored ${FIELD}`, stored[FIELD].slice(), users(0, THRESHOLD));
    expect(`the stored ${FLAG}`, stored[FLAG], true);
    stored.title = "Edited";
    try {
      await stored.save();
      throw new CheckFailed("save() of a stored-view document succeeded");
    } catch (error) {
      if (error instanceof CheckFailed) throw error;
      assert(error.code === READ_ONLY_CODE, `save() failed with code ${error.code}, not ${READ_ONLY_CODE}: ${error.message}`);
    }
    expect("the title afterwards", (await p.policy.findById(4).lean()).title, "Viral");
  });
}

async function main() {
  const args = process.argv.slice(2);
  const uriAt = args.indexOf("--uri");
  if (uriAt < 0 || !args[uriAt + 1]) {
    console.error("usage: node mongoose_checks.js --uri mongodb://127.0.0.1:PORT [--plain-only | --control]");
    process.exit(2);
  }
  control = args.includes("--control");
  const connection = mongoose.createConnection(args[uriAt + 1], {
    dbName: DATABASE,
    serverSelectionTimeoutMS: 10000,
    directConnection: true,
  });
  await connection.asPromise();
  await connection.db.dropDatabase();
  await plainChecks(connection);
  if (!args.includes("--plain-only")) {
    await policyChecks(connection);
  }
  await connection.close();
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

main().catch((error) => {
  console.log(`FAIL the harness: ${String(error && error.stack).split("\n").join(" | ")}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exitCode = 1;
});
