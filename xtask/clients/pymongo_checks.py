"""Issue 27's transparency checks with pymongo's ordinary helpers (`cargo xtask clients`).

Every check runs the same operations against a collection with an outlier policy and against a
plain collection holding the same writes, on the same server, and asserts the answers are
equal: a collection with a policy must answer as a plain MongoDB collection of the logical
documents would. The stored-view checks (`system.stored.<collection>`) are policy-only. The
`plain:` checks hold the plain collection to MongoDB's documented answers, so that the harness
is checked too (with `--plain-only` they are all that runs). `--control` declares no policy:
both halves are plain collections, every comparison must then hold and the policy-only checks
are left out; it checks the harness itself, on spillway or on a server without `setPattern`
(the peer SecantusDB).

Prints one line per check (`PASS name` or `FAIL name: why`) and ends with
`N passed, N failed`; exits 1 when any check failed.

    python pymongo_checks.py --uri mongodb://127.0.0.1:PORT [--plain-only | --control]
"""

import argparse
import sys
import traceback

from bson import json_util
from bson.json_util import CANONICAL_JSON_OPTIONS
from pymongo import MongoClient, ReturnDocument
from pymongo.errors import PyMongoError

DATABASE = "clients_pymongo"
FIELD = "customers_purchased"
FLAG = "has_extras"
# The policy of most checks: issue 27's sort example uses threshold 3; small buckets make the
# overflow span several side documents.
THRESHOLD = 3
CAPACITY = 2
# The write-back round trip: issue 27's numbers (120 elements, 50 kept in the main document).
ROUND_TRIP_THRESHOLD = 50
ROUND_TRIP_LENGTH = 120
# MongoDB's CommandNotSupportedOnView: what a write to the read-only stored view answers.
READ_ONLY_CODE = 166


def users(start, stop):
    return [f"u{n:02}" for n in range(start, stop)]


def books():
    """The documents of most checks. Book 1 and 3 overflow (4 elements, threshold 3) with an
    overflow element that decides their sort keys; book 4 spans several buckets; book 5 has
    exactly the threshold; book 6 has no array at all."""
    return [
        {"_id": 1, "title": "Invisible Cities", FIELD: ["m", "n", "o", "b"], "year": 1972},
        {"_id": 2, "title": "The Wooden Amulet", FIELD: ["c", "d"], "year": 2023},
        {"_id": 3, "title": "Ficciones", FIELD: ["e", "f", "g", "z"], "year": 1944},
        {"_id": 4, "title": "Viral", FIELD: users(0, 10), "year": 2024},
        {"_id": 5, "title": "Exactly Three", FIELD: ["h", "i", "j"], "year": 2001},
        {"_id": 6, "title": "No Buyers", "year": 2000},
    ]


def canonical(value):
    """Canonical Extended JSON: field order and BSON types both count."""
    return json_util.dumps(value, json_options=CANONICAL_JSON_OPTIONS)


def short(value, limit=400):
    text = canonical(value)
    return text if len(text) <= limit else text[:limit] + "..."


def same(what, policy, plain):
    if canonical(policy) != canonical(plain):
        raise AssertionError(f"{what}: policy gave {short(policy)}, plain gave {short(plain)}")


def expect(what, got, wanted):
    if canonical(got) != canonical(wanted):
        raise AssertionError(f"{what}: got {short(got)}, expected {short(wanted)}")


def ids(documents):
    return [document["_id"] for document in documents]


class Pair:
    """A collection with the outlier policy on FIELD and a plain one, the same writes in both."""

    # Set by --control: no collection gets the policy.
    control = False

    def __init__(self, db, name, documents, threshold=THRESHOLD, capacity=CAPACITY, policy=True):
        self.db = db
        self.policy_name = f"{name}_policy"
        self.policy = db[self.policy_name]
        self.plain = db[f"{name}_plain"]
        if policy and not Pair.control:
            db.command(
                {
                    "setPattern": self.policy_name,
                    "outlier": FIELD,
                    "threshold": threshold,
                    "bucketCapacity": capacity,
                }
            )
        for collection in self.both():
            collection.insert_many([dict(document) for document in documents])

    def both(self):
        return (self.policy, self.plain)

    def stored(self):
        """The stored view of the policy collection, through the ordinary helpers."""
        return self.db[f"system.stored.{self.policy_name}"]

    def logical_array(self, _id):
        """The policy collection's logical array through the explicit `arrayPage` command,
        which reads the layout itself and so does not depend on what a default read returns.
        Under --control there is no layout: the array is the plain document's."""
        if Pair.control:
            return self.policy.find_one({"_id": _id})[FIELD]
        page = self.db.command(
            {"arrayPage": self.policy_name, "_id": _id, "field": FIELD, "skip": 0, "limit": 100000}
        )
        return page["elements"]


class Runner:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def run(self, name, check):
        try:
            check()
        except AssertionError as error:
            self.failed += 1
            print(f"FAIL {name}: {error}", flush=True)
        except PyMongoError as error:
            self.failed += 1
            print(f"FAIL {name}: {type(error).__name__}: {error}", flush=True)
        except Exception:  # noqa: BLE001 - a broken check is a failed check, with its trace
            self.failed += 1
            trace = traceback.format_exc().strip().replace("\n", " | ")
            print(f"FAIL {name}: {trace}", flush=True)
        else:
            self.passed += 1
            print(f"PASS {name}", flush=True)


# ---- the plain collection against MongoDB's documented answers (harness sanity) ----


def plain_checks(db, runner):
    def find_one_whole():
        pair = Pair(db, "plain_find_one", books(), policy=False)
        expect("find_one({_id: 4})", pair.plain.find_one({"_id": 4}), books()[3])

    def sort_keys():
        pair = Pair(db, "plain_sort", books()[:3], policy=False)
        expect("sort ascending", ids(pair.plain.find().sort(FIELD, 1)), [1, 2, 3])
        expect("sort descending", ids(pair.plain.find().sort(FIELD, -1)), [3, 1, 2])
        expect(
            "aggregate $sort ascending",
            ids(pair.plain.aggregate([{"$sort": {FIELD: 1}}])),
            [1, 2, 3],
        )
        expect(
            "aggregate $sort descending",
            ids(pair.plain.aggregate([{"$sort": {FIELD: -1}}])),
            [3, 1, 2],
        )

    def slice_window():
        pair = Pair(db, "plain_slice", books(), policy=False)
        got = pair.plain.find_one({"_id": 4}, {FIELD: {"$slice": [2, 3]}})
        expect("$slice [2, 3]", got[FIELD], users(2, 5))

    def find_and_modify():
        pair = Pair(db, "plain_fam", books(), policy=False)
        before = pair.plain.find_one_and_update(
            {"_id": 1}, {"$push": {FIELD: "p"}}, return_document=ReturnDocument.BEFORE
        )
        expect("before", before[FIELD], ["m", "n", "o", "b"])
        after = pair.plain.find_one_and_update(
            {"_id": 1}, {"$push": {FIELD: "q"}}, return_document=ReturnDocument.AFTER
        )
        expect("after", after[FIELD], ["m", "n", "o", "b", "p", "q"])

    def round_trip():
        whole = users(0, ROUND_TRIP_LENGTH)
        pair = Pair(db, "plain_round_trip", [{"_id": 1, FIELD: whole}], policy=False)
        pair.plain.replace_one({"_id": 1}, pair.plain.find_one({"_id": 1}))
        expect("array after replace_one(find_one)", pair.plain.find_one({"_id": 1})[FIELD], whole)

    for name, check in [
        ("plain: find_one returns the whole document", find_one_whole),
        ("plain: array sort keys (min ascending, max descending), find and aggregate", sort_keys),
        ("plain: $slice [skip, n] window", slice_window),
        ("plain: find_one_and_update before and after", find_and_modify),
        ("plain: replace_one(find_one) keeps 120 elements", round_trip),
    ]:
        runner.run(name, check)


# ---- the policy collection against the plain one ----


def policy_checks(db, runner):
    pair = Pair(db, "reads", books())
    for collection in pair.both():
        collection.update_one({"_id": 4}, {"$push": {FIELD: {"$each": users(10, 12)}}})

    def find_one_logical():
        policy = pair.policy.find_one({"_id": 4})
        assert policy is not None, "find_one({_id: 4}) found nothing"
        assert FLAG not in policy, f"the logical document shows the flag: {short(policy)}"
        same("find_one({_id: 4})", policy, pair.plain.find_one({"_id": 4}))

    def find_all_logical():
        # batch_size 2 makes the cursor fetch most documents with getMore.
        def read(collection):
            return list(collection.find({}).sort("_id", 1).batch_size(2))

        policy = read(pair.policy)
        flagged = [document["_id"] for document in policy if FLAG in document]
        assert not flagged, f"documents {flagged} show the flag {FLAG}"
        same("find({}) with getMore", policy, read(pair.plain))

    def find_by_overflow_element():
        def read(collection):
            return list(collection.find({FIELD: "u11"}))

        same("find({customers_purchased: 'u11'})", read(pair.policy), read(pair.plain))

    def aggregate_logical():
        pipeline = [{"$match": {"year": {"$gte": 1900}}}, {"$sort": {"_id": 1}}]
        same(
            "aggregate($match, $sort _id)",
            list(pair.policy.aggregate(pipeline)),
            list(pair.plain.aggregate(pipeline)),
        )

    def aggregate_size():
        pipeline = [
            {"$match": {FIELD: {"$exists": True}}},
            {"$project": {"n": {"$size": f"${FIELD}"}}},
            {"$sort": {"_id": 1}},
        ]
        same(
            "$size of the managed array",
            list(pair.policy.aggregate(pipeline)),
            list(pair.plain.aggregate(pipeline)),
        )

    def distinct_logical():
        same(
            "distinct(customers_purchased)",
            sorted(pair.policy.distinct(FIELD)),
            sorted(pair.plain.distinct(FIELD)),
        )

    def sort_example():
        example = Pair(db, "sort_example", books()[:3])
        for direction, wanted in [(1, [1, 2, 3]), (-1, [3, 1, 2])]:
            plain = ids(example.plain.find().sort(FIELD, direction))
            policy = ids(example.policy.find().sort(FIELD, direction))
            expect(f"plain find().sort({{a: {direction}}})", plain, wanted)
            same(f"find().sort({{a: {direction}}})", policy, plain)

    def sort_all():
        for direction in (1, -1):
            # _id breaks ties so that both orders are fully determined.
            def read(collection, direction=direction):
                return list(collection.find().sort([(FIELD, direction), ("_id", 1)]))

            same(f"find().sort({{{FIELD}: {direction}, _id: 1}})", read(pair.policy), read(pair.plain))

    def sort_aggregate():
        example = Pair(db, "sort_aggregate", books()[:3])
        for direction, wanted in [(1, [1, 2, 3]), (-1, [3, 1, 2])]:
            pipeline = [{"$sort": {FIELD: direction}}]
            plain = list(example.plain.aggregate(pipeline))
            expect(f"plain aggregate $sort {direction}", ids(plain), wanted)
            same(f"aggregate([{{$sort: {{a: {direction}}}}}])", list(example.policy.aggregate(pipeline)), plain)

    def projection(spec):
        def check():
            def read(collection):
                return list(collection.find({}, spec).sort("_id", 1))

            policy = read(pair.policy)
            # Both problems are told: a window can be wrong besides the flag showing.
            problems = []
            flagged = [document["_id"] for document in policy if FLAG in document]
            if flagged:
                problems.append(f"documents {flagged} show the flag {FLAG}")
                policy = [{k: v for k, v in document.items() if k != FLAG} for document in policy]
            try:
                same(f"find({{}}, {canonical(spec)}) without the flag", policy, read(pair.plain))
            except AssertionError as error:
                problems.append(str(error))
            assert not problems, "; ".join(problems)

        return check

    # ReturnDocument.BEFORE and AFTER are plain booleans: the names are spelt out.
    modes = {False: "BEFORE", True: "AFTER"}

    def find_one_and_update(mode, update):
        def check():
            fam = Pair(db, f"fou_{modes[mode].lower()}", books())
            answers = [
                collection.find_one_and_update({"_id": 4}, update, return_document=mode)
                for collection in fam.both()
            ]
            assert answers[0] is not None and FLAG not in answers[0], (
                f"the returned document shows the flag or is missing: {short(answers[0])}"
            )
            same(f"find_one_and_update(return_document={modes[mode]})", *answers)
            same("find_one afterwards", *[c.find_one({"_id": 4}) for c in fam.both()])

        return check

    def find_one_and_replace(mode):
        def check():
            fam = Pair(db, f"for_{modes[mode].lower()}", books())
            replacement = {"title": "Replaced", FIELD: users(20, 27), "year": 1999}
            answers = [
                collection.find_one_and_replace({"_id": 4}, replacement, return_document=mode)
                for collection in fam.both()
            ]
            same(f"find_one_and_replace(return_document={modes[mode]})", *answers)
            same("find_one afterwards", *[c.find_one({"_id": 4}) for c in fam.both()])

        return check

    def find_one_and_delete():
        fam = Pair(db, "fod", books())
        same(
            "find_one_and_delete({_id: 4})",
            *[collection.find_one_and_delete({"_id": 4}) for collection in fam.both()],
        )

    def round_trip(write_back):
        def check():
            whole = users(0, ROUND_TRIP_LENGTH)
            trip = Pair(
                db,
                f"round_trip_{write_back}",
                [{"_id": 1, "title": "Viral", FIELD: whole}],
                threshold=ROUND_TRIP_THRESHOLD,
                capacity=20,
            )
            for collection in trip.both():
                read = collection.find_one({"_id": 1})
                if write_back == "replace_one":
                    collection.replace_one({"_id": 1}, read)
                else:
                    collection.find_one_and_replace({"_id": 1}, read)
            logical = trip.logical_array(1)
            assert logical == whole, (
                f"the logical array after {write_back}(find_one) has {len(logical)} elements "
                f"(first {logical[:2]}, last {logical[-2:]}), expected {len(whole)} in order"
            )
            same("find_one afterwards", *[c.find_one({"_id": 1}) for c in trip.both()])

        return check

    def stored_view_read():
        stored = pair.stored().find_one({"_id": 4})
        assert stored is not None, "system.stored.reads_policy has no document 4"
        expect(f"the stored {FIELD}", stored.get(FIELD), users(0, THRESHOLD))
        expect(f"the stored {FLAG}", stored.get(FLAG), True)
        expect("the stored title", stored.get("title"), "Viral")

    def stored_view_read_only():
        view = Pair(db, "read_only", books())
        stored = view.stored()
        before = list(stored.find().sort("_id", 1))
        assert before, "the stored view is empty"
        attempts = {
            "insert_one": lambda: stored.insert_one({"_id": 100, FIELD: []}),
            "update_one": lambda: stored.update_one({"_id": 4}, {"$set": {"title": "x"}}),
            "replace_one": lambda: stored.replace_one({"_id": 4}, {"title": "x"}),
            "delete_one": lambda: stored.delete_one({"_id": 4}),
        }
        problems = []
        for what, attempt in attempts.items():
            try:
                attempt()
                problems.append(f"{what} succeeded")
            except PyMongoError as error:
                code = getattr(error, "code", None)
                if code != READ_ONLY_CODE:
                    problems.append(f"{what} failed with code {code}, not {READ_ONLY_CODE}: {error}")
        assert not problems, "; ".join(problems)
        same("the stored view afterwards", list(stored.find().sort("_id", 1)), before)
        same("the logical document afterwards", *[c.find_one({"_id": 4}) for c in view.both()])

    def flag_write_refused():
        refused = Pair(db, "flag_write", books())
        stored = refused.stored().find_one({"_id": 4})
        assert stored is not None and stored.get(FLAG) is True, (
            f"the stored view of document 4 is not the flagged layout: {short(stored)}"
        )
        problems = []
        for what, attempt in {
            "replace_one(stored view)": lambda: refused.policy.replace_one({"_id": 4}, stored),
            "insert_one(with the flag)": lambda: refused.policy.insert_one(
                {"_id": 100, FIELD: ["a"], FLAG: True}
            ),
        }.items():
            try:
                attempt()
                problems.append(f"{what} succeeded")
            except PyMongoError as error:
                text = str(error)
                if "system.stored." not in text and "stored view" not in text.lower():
                    problems.append(f"{what} was refused without naming the stored view: {text}")
        assert not problems, "; ".join(problems)
        assert refused.policy.count_documents({"_id": 100}) == 0, "document 100 was inserted"
        logical = refused.logical_array(4)
        expect("the logical array afterwards", logical, users(0, 10))

    txn = Pair(db, "txn", books())

    def transaction_commits_or_aborts_as_one():
        # A transaction pushing to both collections and writing a third: all or nothing.
        orders = db["txn_orders"]

        def push(session):
            for collection in txn.both():
                collection.update_one(
                    {"_id": 4}, {"$push": {FIELD: {"$each": ["t1", "t2"]}}}, session=session
                )
            orders.insert_one({"book": 4}, session=session)
            inside = txn.policy.find_one({"_id": 4}, session=session)
            expect("the logical array inside the transaction", inside[FIELD][-2:], ["t1", "t2"])

        with db.client.start_session() as session:
            session.with_transaction(push)
        same("after the commit", txn.policy.find_one({"_id": 4}), txn.plain.find_one({"_id": 4}))
        expect("orders after the commit", orders.count_documents({}), 1)
        with db.client.start_session() as session:
            session.start_transaction()
            for collection in txn.both():
                collection.update_one({"_id": 4}, {"$push": {FIELD: "aborted"}}, session=session)
            orders.insert_one({"book": 4}, session=session)
            session.abort_transaction()
        policy = txn.policy.find_one({"_id": 4})
        assert "aborted" not in policy[FIELD], "the aborted push is there"
        same("after the abort", policy, txn.plain.find_one({"_id": 4}))
        expect("orders after the abort", orders.count_documents({}), 1)

    checks = [
        ("find_one returns the logical document, no flag", find_one_logical),
        ("a transaction over both collections commits or aborts as one", transaction_commits_or_aborts_as_one),
        ("find (with getMore) returns logical documents", find_all_logical),
        ("find by an overflow element", find_by_overflow_element),
        ("aggregate returns logical documents", aggregate_logical),
        ("aggregate $size of the managed array", aggregate_size),
        ("distinct of the managed array", distinct_logical),
        ("sort on the managed array: issue 27's example", sort_example),
        ("sort on the managed array, both directions, all documents", sort_all),
        ("aggregate with a leading $sort on the managed array", sort_aggregate),
        ("projection {$slice: 2}", projection({FIELD: {"$slice": 2}})),
        ("projection {$slice: -2}", projection({FIELD: {"$slice": -2}})),
        ("projection {$slice: [5, 3]}", projection({FIELD: {"$slice": [5, 3]}})),
        ("projection {$slice: [2, 100]}", projection({FIELD: {"$slice": [2, 100]}})),
        ("projection {field: 0}", projection({FIELD: 0})),
        ("projection {field: 1, title: 1}", projection({FIELD: 1, "title": 1})),
        (
            "find_one_and_update $push, return_document BEFORE",
            find_one_and_update(ReturnDocument.BEFORE, {"$push": {FIELD: "new"}}),
        ),
        (
            "find_one_and_update $set, return_document AFTER",
            find_one_and_update(ReturnDocument.AFTER, {"$set": {"title": "Renamed"}}),
        ),
        ("find_one_and_replace, return_document BEFORE", find_one_and_replace(ReturnDocument.BEFORE)),
        ("find_one_and_replace, return_document AFTER", find_one_and_replace(ReturnDocument.AFTER)),
        ("find_one_and_delete returns the logical document", find_one_and_delete),
        ("replace_one(find_one) keeps all 120 elements in order", round_trip("replace_one")),
        ("find_one_and_replace(find_one) keeps all 120 elements", round_trip("find_one_and_replace")),
    ]
    # These need the policy itself (the stored view, the flag): --control leaves them out.
    policy_only = [
        ("stored view: system.stored.<collection> shows the layout", stored_view_read),
        ("stored view: writes fail with code 166", stored_view_read_only),
        ("writing the flag into the main collection is refused", flag_write_refused),
    ]
    for name, check in checks + ([] if Pair.control else policy_only):
        runner.run(name, check)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", required=True)
    modes = parser.add_mutually_exclusive_group()
    modes.add_argument("--plain-only", action="store_true", help="only the plain: checks")
    modes.add_argument("--control", action="store_true", help="no policy: check the harness")
    args = parser.parse_args()
    Pair.control = args.control
    runner = Runner()
    try:
        client = MongoClient(args.uri, serverSelectionTimeoutMS=10000, directConnection=True)
        client.drop_database(DATABASE)
        db = client[DATABASE]
        plain_checks(db, runner)
        if not args.plain_only:
            policy_checks(db, runner)
        client.close()
    except Exception:  # noqa: BLE001 - the harness itself broke: one more failure, said plainly
        runner.failed += 1
        trace = traceback.format_exc().strip().replace("\n", " | ")
        print(f"FAIL the harness: {trace}", flush=True)
    print(f"{runner.passed} passed, {runner.failed} failed", flush=True)
    return 0 if runner.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
