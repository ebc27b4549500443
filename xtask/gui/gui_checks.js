// Issue 30's GUI checks (`cargo xtask gui`): mongo-express, driven by headless Chromium,
// browses and edits a plain collection and a collection with an outlier policy on
// `spillway serve`, and the official Node.js driver checks what its saves wrote.
//
// The task starts spillway serve and mongo-express; this script seeds the database `gui`
// through the driver (the same documents in `plain` and in `patterned`, whose outlier policy
// keeps 3 elements in the main document, so that two of them spill), then visits each page as
// a user would, screenshots it, and fails a check on any HTTP error, error banner, console
// error or page error of mongo-express's own pages. The saves go through mongo-express's
// document editor (keystrokes typed into its CodeMirror, then its Save button); afterwards the
// driver checks that each collection holds exactly the seed plus the edits, and that the
// patterned collection's layout neither lost nor duplicated a spilled element.
//
// Prints one line per check (`PASS name` or `FAIL name: why`) and ends with
// `N passed, N failed`; exits 1 when any check failed.
//
//     node gui_checks.js --uri mongodb://127.0.0.1:PORT --app http://127.0.0.1:PORT
//         --chromium /usr/bin/chromium --profile DIR --screenshots DIR
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { MongoClient, ObjectId, BSON } = require("mongodb");
const { chromium } = require("playwright-core");

const DATABASE = "gui";
const PLAIN = "plain";
const PATTERNED = "patterned";
const FIELD = "customers_purchased";
const THRESHOLD = 3;
const CAPACITY = 2;
// The outlier policy's side collection and its array field (docs/patterns.md's defaults).
const OVERFLOW = `extra_${PATTERNED}`;
const OVERFLOW_FIELD = `${FIELD}_extra`;
// The subset collection: each product keeps its 2 newest reviews, every review is in the
// archive `reviews`; reviews are identified by `review_id`.
const SUBSET = "products";
const REVIEWS = "reviews";
const ARCHIVE = "review_archive";
const KEEP = 2;
// How long one page may take to load and settle.
const PAGE_TIMEOUT_MS = 30000;

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

const users = (start, stop) =>
  Array.from({ length: stop - start }, (_, i) => "u" + String(start + i).padStart(2, "0"));
const id = (n) => new ObjectId(n.toString(16).padStart(24, "0"));

// Book 1 spills one element, book 3 seven (four overflow buckets), book 2 none, book 4 has no
// array at all.
const seed = () => [
  { _id: id(1), title: "Invisible Cities", [FIELD]: ["m", "n", "o", "b"], year: 1972, tags: { genre: "fiction" } },
  { _id: id(2), title: "The Wooden Amulet", [FIELD]: ["c", "d"], year: 2023 },
  { _id: id(3), title: "Viral", [FIELD]: users(0, 10), year: 2024 },
  { _id: id(4), title: "No Buyers", year: 2000 },
  { _id: id(5), title: "Out of Print", [FIELD]: users(20, 26), year: 1990 },
];

// The document deleted through its page's Delete button (it spills three elements), and the
// one added through the New Document dialog (it spills three too).
const DELETED = id(5);
const ADDED = { _id: id(6), title: "Added", [FIELD]: users(30, 36), year: 2025 };
const ADDED_TEXT =
  "{\n  _id: ObjectId('" + ADDED._id.toHexString() + "'),\n  title: 'Added',\n  " + FIELD + ": [" +
  ADDED[FIELD].map((user) => `'${user}'`).join(", ") + "],\n  year: 2025\n}";

// Reviews of the subset collection, newest first (the policy's order).
const review = (n, author, text, day) => ({
  review_id: n,
  author,
  text,
  published_date: new Date(Date.UTC(2026, 0, day)),
});
const products = () => [
  {
    _id: id(101),
    name: "Super Widget",
    [REVIEWS]: [
      review(5, "Ana", "works", 25),
      review(4, "Kristina", "sturdy", 20),
      review(3, "Ben", "meh", 12),
      review(2, "Chen", "broke in a week", 5),
      review(1, "Dora", "first!", 1),
    ],
  },
  { _id: id(102), name: "Plain Gadget", [REVIEWS]: [review(6, "Eve", "fine", 3)] },
];

// The edit typed into the subset collection's editor: an archived review's text (the third
// newest, not embedded in the main document).
const REVIEW_EDIT = {
  _id: id(101),
  after: "'meh",
  keys: ", then fine",
  apply: (document) => ({
    ...document,
    [REVIEWS]: document[REVIEWS].map((r) => (r.review_id === 3 ? { ...r, text: "meh, then fine" } : r)),
  }),
};

// The edits typed into the document editor, the same on both collections, and what each does
// to the seed.
const EDITS = [
  {
    name: "a title of a document whose array spills seven elements",
    _id: id(3),
    // Typed right after the title's text.
    after: "'Viral",
    keys: " (edited)",
    apply: (document) => ({ ...document, title: "Viral (edited)" }),
  },
  {
    name: "an element appended to an array that spills",
    _id: id(1),
    // Typed right after the array's last element.
    after: "'b'",
    keys: ", 'a'",
    apply: (document) => ({ ...document, [FIELD]: [...document[FIELD], "a"] }),
  },
];

class CheckFailed extends Error {}

const canonical = (value) => BSON.EJSON.stringify(value === undefined ? null : value, { relaxed: false });
const short = (value, limit = 600) => {
  const text = typeof value === "string" ? value : canonical(value);
  return text.length <= limit ? text : text.slice(0, limit) + "...";
};
const assert = (condition, message) => {
  if (!condition) throw new CheckFailed(message);
};
const expect = (what, got, wanted) =>
  assert(canonical(got) === canonical(wanted), `${what}: got ${short(got)}, expected ${short(wanted)}`);

let passed = 0;
let failed = 0;

async function run(name, check) {
  try {
    await check();
    passed += 1;
    console.log(`PASS ${name}`);
  } catch (error) {
    failed += 1;
    const why = error instanceof CheckFailed ? error.message : String(error && error.stack).split("\n").join(" | ");
    console.log(`FAIL ${name}: ${why}`);
  }
}

function parseArguments(argv) {
  const wanted = ["uri", "app", "chromium", "profile", "screenshots"];
  const options = {};
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i].replace(/^--/, "");
    if (!wanted.includes(name) || argv[i + 1] === undefined) {
      throw new Error(`usage: node gui_checks.js ${wanted.map((w) => `--${w} VALUE`).join(" ")} (got ${argv[i]})`);
    }
    options[name] = argv[i + 1];
  }
  for (const name of wanted) {
    if (!options[name]) throw new Error(`--${name} is required`);
  }
  return options;
}

// ---- the browser side ----

// One tab of mongo-express: every problem its pages report is collected, per visit.
class Browser {
  constructor(context, app, screenshots) {
    this.context = context;
    this.origin = new URL(app).origin;
    this.app = app.replace(/\/$/, "");
    this.screenshots = screenshots;
    this.problems = [];
    this.page = null;
  }

  async open() {
    this.page = this.context.pages()[0] || (await this.context.newPage());
    this.page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    const own = (url) => url.startsWith(this.origin);
    this.page.on("console", (message) => {
      if (message.type() === "error" && own(message.location().url || this.page.url())) {
        this.problems.push(`console error: ${message.text()}`);
      }
    });
    this.page.on("pageerror", (error) => this.problems.push(`page error: ${error.message}`));
    this.page.on("response", (response) => {
      if (own(response.url()) && response.status() >= 400) {
        this.problems.push(`HTTP ${response.status()} for ${response.url()}`);
      }
    });
    this.page.on("requestfailed", (request) => {
      if (own(request.url())) this.problems.push(`request failed: ${request.url()} (${request.failure().errorText})`);
    });
  }

  // Goes to `route` (relative to mongo-express), waits for it to settle, screenshots it as
  // `shot`, and fails on any problem the visit raised.
  async visit(route, shot) {
    this.problems = [];
    const response = await this.page.goto(`${this.app}${route}`, { waitUntil: "networkidle" });
    assert(response !== null, `no response for ${route}`);
    await this.settled(shot);
  }

  // After a navigation (a visit or a form submitted): screenshot, then the problems.
  async settled(shot) {
    await this.page.waitForLoadState("networkidle");
    await this.page.screenshot({ path: path.join(this.screenshots, `${shot}.png`), fullPage: true });
    const banners = await this.page.locator(".alert-danger").allInnerTexts();
    for (const banner of banners) this.problems.push(`error banner: ${banner.replace(/^×\s*/, "").trim()}`);
    assert(this.problems.length === 0, `${this.page.url()}: ${this.problems.join("; ")}`);
  }

  async text(selector) {
    return (await this.page.locator(selector).allInnerTexts()).join("\n");
  }
}

const collectionRoute = (name) => `/db/${DATABASE}/${name}`;
const documentRoute = (name, _id) => `${collectionRoute(name)}/${encodeURIComponent(JSON.stringify(_id.toHexString()))}`;

// The values of the home page's server status table, by their label.
async function serverStatus(browser) {
  return browser.page.evaluate(() => {
    const values = {};
    for (const row of document.querySelectorAll("table tr")) {
      const cells = [...row.querySelectorAll("td")];
      for (let i = 0; i + 1 < cells.length; i += 2) {
        const label = cells[i].innerText.trim();
        if (label) values[label] = cells[i + 1].innerText.trim();
      }
    }
    return values;
  });
}

// The document editor's text (CodeMirror keeps it; the textarea is hidden).
const editorText = (browser) => browser.page.evaluate(() => document.querySelector(".CodeMirror").CodeMirror.getValue());

async function browse(browser, db) {
  await run("home page: the databases and the server status", async () => {
    await browser.visit("/", "01-home");
    const databases = await browser.text("table");
    assert(databases.includes(DATABASE), `the home page does not list the database ${DATABASE}`);
    const status = await serverStatus(browser);
    // The counters issue 30 found blank: each must show a value.
    for (const label of [
      "Hostname", "MongoDB Version", "Uptime", "Current Connections", "Available Connections",
      "Active Clients", "Queued Operations", "Clients Reading", "Clients Writing",
      "Total Inserts", "Total Queries", "Total Updates", "Total Deletes",
    ]) {
      assert(status[label] !== undefined && status[label] !== "", `the server status shows no '${label}' (${short(status)})`);
    }
  });

  await run("database page: both collections and the database's statistics", async () => {
    await browser.visit(`/db/${DATABASE}/`, "02-database");
    const text = await browser.text("body");
    for (const name of [PLAIN, PATTERNED]) {
      assert(text.includes(name), `the database page does not list ${name}`);
    }
  });

  for (const [name, shot] of [[PLAIN, "03-plain-collection"], [PATTERNED, "04-patterned-collection"]]) {
    await run(`collection page of ${name}: every document, whole, with its statistics and indexes`, async () => {
      await browser.visit(collectionRoute(name), shot);
      const rows = await browser.page.locator("tr[id^='doc-']").count();
      expect(`${name}: rows listed`, rows, seed().length);
      const table = await browser.page.locator("tr[id^='doc-']").allTextContents();
      const all = table.join("\n");
      // The logical array: its last element is past the threshold, in an overflow bucket.
      for (const element of ["u00", "u09", "b"]) {
        assert(all.includes(element), `${name}: the documents shown lack '${element}': ${short(all)}`);
      }
      const indexes = await browser.text("#indexes");
      for (const index of ["_id_", "title_1"]) {
        assert(indexes.includes(index), `${name}: the index table lacks ${index}: ${short(indexes)}`);
      }
      const stats = await browser.page.evaluate(() => {
        const values = {};
        for (const row of document.querySelectorAll("table tr")) {
          const cells = [...row.querySelectorAll("td")];
          if (cells.length === 2) values[cells[0].innerText.trim()] = cells[1].innerText.trim();
        }
        return values;
      });
      expect(`${name}: the statistics' document count`, stats["Documents"], String(seed().length));
    });
  }

  await run("document page of the patterned collection: the logical document", async () => {
    const viral = seed()[2];
    await browser.visit(documentRoute(PATTERNED, viral._id), "05-patterned-document");
    const text = await editorText(browser);
    const shown = users(0, 10).filter((user) => text.includes(`'${user}'`));
    expect("the buyers shown in the editor", shown, users(0, 10));
    assert(!text.includes("has_extras"), `the editor shows the stored layout's flag: ${short(text)}`);
  });

  await run("document page of the plain collection", async () => {
    await browser.visit(documentRoute(PLAIN, seed()[0]._id), "06-plain-document");
    const text = await editorText(browser);
    assert(text.includes("Invisible Cities"), `the editor lacks the title: ${short(text)}`);
  });

  await run("the side collection's page: the overflow buckets", async () => {
    await browser.visit(collectionRoute(OVERFLOW), "07-side-collection");
    const rows = await browser.page.locator("tr[id^='doc-']").count();
    assert(rows > 0, `${OVERFLOW} shows no bucket`);
  });

  // The searches, sorts and exports of the collection page, on both collections: the patterned
  // one must list what the plain one lists (the transparency rule), and the plain one what
  // MongoDB would.
  const listed = () => browser.page.locator("tr[id^='doc-']").allInnerTexts();
  const searches = [
    {
      name: "Simple tab: a String search for an element that spilled",
      wanted: ["Viral"],
      async fill() {
        await browser.page.fill("#key", FIELD);
        await browser.page.fill("#value", "u09");
        await browser.page.click("#simple button[type='submit']");
      },
    },
    {
      name: "Advanced tab: a query on a spilled element with a $slice projection",
      wanted: ["Viral", "u08,u09"],
      async fill() {
        await browser.page.click("#tabs a[href='#advanced']");
        await browser.page.fill("#query", `{ ${FIELD}: 'u08' }`);
        await browser.page.fill("#projection", `{ title: 1, ${FIELD}: { $slice: -2 } }`);
        await browser.page.click("#advanced button[type='submit']");
      },
    },
    {
      name: "Advanced tab: an aggregate query unwinding the arrays",
      wanted: ["u05", "u09", "u24"],
      async fill() {
        await browser.page.click("#tabs a[href='#advanced']");
        await browser.page.fill("#query", `[{ $unwind: '$${FIELD}' }, { $match: { ${FIELD}: { $gte: 'u05' } } }]`);
        await browser.page.check("#runAggregate");
        await browser.page.click("#advanced button[type='submit']");
      },
    },
    {
      name: "a click on the array's column header sorts by it",
      wanted: ["No Buyers"],
      async fill() {
        await browser.page.click(`th.sorting-button[data-column='${FIELD}']`);
      },
    },
  ];
  let searchShot = 0;
  for (const search of searches) {
    await run(search.name, async () => {
      const answers = {};
      for (const name of [PLAIN, PATTERNED]) {
        searchShot += 1;
        await browser.visit(collectionRoute(name), `08-search-${searchShot}-${name}-before`);
        await Promise.all([browser.page.waitForNavigation({ waitUntil: "networkidle" }), search.fill()]);
        await browser.settled(`08-search-${searchShot}-${name}`);
        answers[name] = (await listed()).map((row) => row.replace(/\s+/g, " ").trim());
      }
      assert(answers[PLAIN].length > 0, `the plain collection listed nothing: ${browser.page.url()}`);
      const all = answers[PLAIN].join("\n");
      for (const wanted of search.wanted) assert(all.includes(wanted), `the plain collection's rows lack '${wanted}': ${short(all)}`);
      expect(`${PATTERNED}'s rows against ${PLAIN}'s`, answers[PATTERNED], answers[PLAIN]);
    });
  }

  // The Tools' three exports (downloads, fetched with the page's session).
  for (const [tool, route] of [["Export Standard", "export"], ["Export --jsonArray", "expArr"], ["Export --csv", "expCsv"]]) {
    await run(`${tool}: the logical documents`, async () => {
      const exported = {};
      for (const name of [PLAIN, PATTERNED]) {
        const response = await browser.page.request.get(`${browser.app}/db/${DATABASE}/${route}/${name}`);
        expect(`the export of ${name}: HTTP status`, response.status(), 200);
        exported[name] = await response.text();
      }
      for (const user of users(0, 10)) {
        assert(exported[PATTERNED].includes(user), `the export of ${PATTERNED} lacks ${user}: ${short(exported[PATTERNED])}`);
      }
      expect(`the export of ${PATTERNED} against ${PLAIN}'s`, exported[PATTERNED], exported[PLAIN]);
    });
  }

  await run("the Compact tool on the patterned collection", async () => {
    await browser.visit(collectionRoute(PATTERNED), "08-compact-before");
    await Promise.all([
      browser.page.waitForNavigation({ waitUntil: "networkidle" }),
      browser.page.click(`a[href$='/compact/${PATTERNED}']`),
    ]);
    await browser.settled("08-compact-after");
    const success = await browser.text(".alert-success");
    assert(success.includes("Collection compacted!"), `no 'Collection compacted!' (${short(success)})`);
  });

  await run("an index created through the New Index dialog", async () => {
    await browser.visit(collectionRoute(PATTERNED), "09-patterned-before-new-index");
    await browser.page.click("button[data-target='#addIndex']");
    await browser.page.locator("#addIndex").waitFor({ state: "visible" });
    await browser.page.evaluate(() => {
      // The dialog's editor is a CodeMirror on #index.
      const editor = document.querySelector("#addIndex .CodeMirror");
      if (editor) editor.CodeMirror.setValue("{\n  \"year\": -1\n}");
      else document.querySelector("#index").value = "{\n  \"year\": -1\n}";
    });
    browser.problems = [];
    await Promise.all([
      browser.page.waitForNavigation({ waitUntil: "networkidle" }),
      browser.page.click("#addIndex button[type='submit']"),
    ]);
    await browser.settled("10-patterned-after-new-index");
    const indexes = await browser.text("#indexes");
    assert(indexes.includes("year_-1"), `the index table lacks year_-1: ${short(indexes)}`);
    const names = (await db.collection(PATTERNED).indexes()).map((index) => index.name);
    assert(names.includes("year_-1"), `the server has no index year_-1: ${names}`);
  });

  await run("an index dropped through the index table's DEL button", async () => {
    await browser.visit(collectionRoute(PATTERNED), "10-patterned-before-drop-index");
    await Promise.all([
      browser.page.waitForNavigation({ waitUntil: "networkidle" }),
      browser.page.click("#indexes a[href*='dropIndex'][href$='name=title_1']"),
    ]);
    await browser.settled("10-patterned-after-drop-index");
    const success = await browser.text(".alert-success");
    assert(success.includes("Index deleted!"), `no 'Index deleted!' (${short(success)})`);
    const indexes = await browser.text("#indexes");
    assert(!indexes.includes("title_1") && indexes.includes("year_-1"), `the index table after the drop: ${short(indexes)}`);
    const names = (await db.collection(PATTERNED).indexes()).map((index) => index.name);
    expect("the patterned collection's indexes on the server", names, ["_id_", "year_-1"]);
  });

  let shot = 11;
  for (const name of [PLAIN, PATTERNED]) {
    for (const edit of EDITS) {
      await run(`${name}: saving ${edit.name} through the document editor`, async () => {
        await typeAndSave(browser, name, edit, String(shot).padStart(2, "0"), String(shot + 1).padStart(2, "0"));
        shot += 2;
      });
    }
  }
}

// Opens `edit._id`'s page of collection `name`, types `edit.keys` right after the first
// `edit.after` of the editor, as a user would, and saves; screenshots `before`-numbered pages
// before and after typing and the `after`-numbered page the save leads to.
async function typeAndSave(browser, name, edit, before, after) {
  const tag = `${name}-${edit._id.toHexString().replace(/^0+/, "")}`;
  await browser.visit(documentRoute(name, edit._id), `${before}-${tag}-edit`);
  const place = await browser.page.evaluate((text) => {
    const editor = document.querySelector(".CodeMirror").CodeMirror;
    const lines = editor.getValue().split("\n");
    const line = lines.findIndex((candidate) => candidate.includes(text));
    if (line < 0) return null;
    const ch = lines[line].indexOf(text) + text.length;
    editor.focus();
    editor.setCursor({ line, ch });
    return { line, ch };
  }, edit.after);
  assert(place !== null, `the editor has no ${edit.after}: ${short(await editorText(browser))}`);
  await browser.page.keyboard.type(edit.keys);
  await browser.page.screenshot({ path: path.join(browser.screenshots, `${before}-${tag}-typed.png`), fullPage: true });
  await Promise.all([
    browser.page.waitForNavigation({ waitUntil: "networkidle" }),
    browser.page.locator("#documentEditForm button[type='submit']").last().click(),
  ]);
  await browser.settled(`${after}-${tag}-saved`);
  const success = await browser.text(".alert-success");
  assert(success.includes("Document updated!"), `no 'Document updated!' after the save (${short(success)})`);
}

// The subset collection's pages: every review shown (the archived ones too), and an archived
// review's text edited and saved.
async function browseSubset(browser) {
  await run(`collection page of ${SUBSET} (subset policy): every review, archived ones too`, async () => {
    await browser.visit(collectionRoute(SUBSET), "23-subset-collection");
    const rows = await browser.page.locator("tr[id^='doc-']").allInnerTexts();
    expect(`${SUBSET}: rows listed`, rows.length, products().length);
    // The table shows arrays of documents as renderjson trees, each review folded to
    // `{4 items}`: Super Widget's row must show five, not the two embedded ones.
    const widget = rows.find((row) => row.includes("Super Widget")) || "";
    const shown = (widget.match(/\{4 items\}/g) || []).length;
    expect(`${SUBSET}: Super Widget's reviews shown`, shown, 5);
  });
  await run(`document page of ${SUBSET}: the logical document, reviews newest first`, async () => {
    await browser.visit(documentRoute(SUBSET, id(101)), "24-subset-document");
    const text = await editorText(browser);
    const order = ["works", "sturdy", "meh", "broke in a week", "first!"].map((review) => text.indexOf(`'${review}'`));
    assert(order.every((at, i) => at >= 0 && (i === 0 || at > order[i - 1])), `the reviews are not all there, newest first: ${short(text)}`);
  });
  await run(`${SUBSET}: saving an archived review's text through the document editor`, () =>
    typeAndSave(browser, SUBSET, REVIEW_EDIT, "25", "26"));
}

// A document added through the New Document dialog and one deleted through its page's Delete
// button, on both collections.
async function addAndDelete(browser) {
  for (const name of [PLAIN, PATTERNED]) {
    await run(`${name}: a document added through the New Document dialog`, async () => {
      await browser.visit(collectionRoute(name), `19-${name}-before-new-document`);
      await browser.page.click("button[data-target='#addDocument']");
      await browser.page.locator("#addDocument").waitFor({ state: "visible" });
      await browser.page.evaluate((text) => document.querySelector("#addDocument .CodeMirror").CodeMirror.setValue(text), ADDED_TEXT);
      browser.problems = [];
      await Promise.all([
        browser.page.waitForNavigation({ waitUntil: "networkidle" }),
        browser.page.click("#addDocument button[type='submit']"),
      ]);
      await browser.settled(`20-${name}-after-new-document`);
      const success = await browser.text(".alert-success");
      assert(success.includes("Document added!"), `no 'Document added!' after the dialog (${short(success)})`);
    });
    await run(`${name}: a document deleted through its page's Delete button`, async () => {
      await browser.visit(documentRoute(name, DELETED), `21-${name}-before-delete`);
      browser.problems = [];
      await Promise.all([
        browser.page.waitForNavigation({ waitUntil: "networkidle" }),
        // mongo-express deletes without a confirmation unless ME_CONFIG_OPTIONS_CONFIRM_DELETE.
        browser.page.click(".deleteButtonDocument"),
      ]);
      await browser.settled(`22-${name}-after-delete`);
      const success = await browser.text(".alert-success");
      assert(success.includes("Document deleted!"), `no 'Document deleted!' after the delete (${short(success)})`);
    });
  }
}

// ---- the driver side ----

async function seedDatabase(db) {
  await db.dropDatabase();
  await db.command({ setPattern: PATTERNED, outlier: FIELD, threshold: THRESHOLD, bucketCapacity: CAPACITY });
  for (const name of [PLAIN, PATTERNED]) {
    await db.collection(name).insertMany(seed());
    await db.collection(name).createIndex({ title: 1 });
  }
  await db.command({
    setPattern: SUBSET, subset: REVIEWS, keep: KEEP, sortBy: { published_date: -1 },
    archiveCollection: ARCHIVE, linkField: "product_id", identity: "review_id",
  });
  await db.collection(SUBSET).insertMany(products());
  const stored = await db.collection(`system.stored.${PATTERNED}`).findOne({ _id: id(3) });
  assert(stored !== null && stored.has_extras === true, `the seed did not spill: ${short(stored)}`);
}

// What each collection must hold after the saves: the seed with every edit applied.
function expected() {
  const edited = seed().map((document) => EDITS.reduce(
    (current, edit) => (edit._id.equals(current._id) ? edit.apply(current) : current),
    document,
  ));
  return [...edited.filter((document) => !document._id.equals(DELETED)), ADDED];
}

async function checkWrites(db) {
  for (const name of [PLAIN, PATTERNED]) {
    await run(`${name}: the saves, the addition and the deletion changed exactly what was typed`, async () => {
      const documents = await db.collection(name).find().sort({ _id: 1 }).toArray();
      expect(`${name}'s documents`, documents, expected());
    });
  }
  await run(`${PATTERNED}: the layout kept every spilled element once`, async () => {
    const violations = (await db.command({ verifyPatterns: 1 })).violations;
    expect("verifyPatterns' violations", violations, []);
    for (const document of expected()) {
      const array = document[FIELD] || [];
      const stored = await db.collection(`system.stored.${PATTERNED}`).findOne({ _id: document._id });
      if (document[FIELD] !== undefined) {
        expect(`the stored main array of ${document.title}`, stored[FIELD], array.slice(0, THRESHOLD));
      }
      const buckets = await db.collection(OVERFLOW).find({ [`${PATTERNED}_id`]: document._id }).toArray();
      const spilled = buckets.flatMap((bucket) => bucket[OVERFLOW_FIELD]);
      expect(`the overflow elements of ${document.title}`, [...spilled].sort(), array.slice(THRESHOLD).sort());
      const page = await db.command({ arrayPage: PATTERNED, _id: document._id, field: FIELD, skip: 0, limit: 1000 });
      if (document[FIELD] !== undefined) expect(`arrayPage of ${document.title}`, page.elements, array);
    }
    const orphans = await db.collection(OVERFLOW).countDocuments({ [`${PATTERNED}_id`]: DELETED });
    expect("overflow buckets left of the deleted document", orphans, 0);
  });
  await run(`${SUBSET}: the save changed exactly the review typed in, each review archived once`, async () => {
    const wanted = products().map((document) => (document._id.equals(REVIEW_EDIT._id) ? REVIEW_EDIT.apply(document) : document));
    expect(`${SUBSET}'s documents`, await db.collection(SUBSET).find().sort({ _id: 1 }).toArray(), wanted);
    expect("verifyPatterns' violations", (await db.command({ verifyPatterns: 1 })).violations, []);
    for (const document of wanted) {
      const archived = await db.collection(ARCHIVE)
        .find({ product_id: document._id }, { projection: { _id: 0, product_id: 0 } })
        .sort({ published_date: -1 })
        .toArray();
      expect(`the archived reviews of ${document.name}`, archived, document[REVIEWS]);
      const stored = await db.collection(`system.stored.${SUBSET}`).findOne({ _id: document._id });
      expect(`the embedded reviews of ${document.name}`, stored[REVIEWS], document[REVIEWS].slice(0, KEEP));
    }
  });
}

async function main() {
  const options = parseArguments(process.argv.slice(2));
  fs.mkdirSync(options.screenshots, { recursive: true });
  const client = new MongoClient(options.uri, { serverSelectionTimeoutMS: 10000 });
  await client.connect();
  const db = client.db(DATABASE);
  let context = null;
  try {
    await run("seed: a plain collection and one whose outlier policy spills", () => seedDatabase(db));
    context = await chromium.launchPersistentContext(options.profile, {
      executablePath: options.chromium,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 900 },
    });
    const browser = new Browser(context, options.app, options.screenshots);
    await browser.open();
    await browse(browser, db);
    await addAndDelete(browser);
    await browseSubset(browser);
    await checkWrites(db);
  } finally {
    if (context !== null) await context.close();
    await client.close();
  }
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = failed === 0 ? 0 : 1;
}

main().catch((error) => {
  console.log(`FAIL the script itself: ${String(error && error.stack).split("\n").join(" | ")}`);
  failed += 1;
  console.log(`${passed} passed, ${failed} failed`);
  process.exitCode = 1;
});
