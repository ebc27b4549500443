"""Timings for `cargo xtask serve-bench`: pymongo's single-client costs against one server.

`serve_bench.py PORT REPETITIONS`: one MongoClient, on a fresh database, times
insert_one (N documents), find_one by _id (N lookups), update_one ($inc, N), and
insert_many of 1,000 documents; each is repeated REPETITIONS times and the best repetition
counts (the least disturbed by the rest of the machine). Prints one JSON object: per row the
best microseconds per operation (per call for insert_many).

Must never connect anywhere but the loopback server it is given.
"""

import json
import sys
import time

import pymongo

N = 1000


def best(repetitions, setup, body):
    timings = []
    for repetition in range(repetitions):
        state = setup(repetition)
        started = time.perf_counter()
        calls = body(state)
        timings.append((time.perf_counter() - started) / calls)
    return min(timings) * 1e6


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    port, repetitions = int(argv[0]), int(argv[1])
    c = pymongo.MongoClient(f"mongodb://127.0.0.1:{port}/", serverSelectionTimeoutMS=5000)
    c.admin.command("ping")
    db = c.bench
    payload = "x" * 100

    def fresh(name):
        def setup(repetition):
            collection = db[f"{name}_{repetition}"]
            collection.drop()
            collection.insert_one({"_id": "warm"})
            return collection

        return setup

    def insert_one(collection):
        for n in range(N):
            collection.insert_one({"_id": n, "n": n, "payload": payload})
        return N

    lookup = db.lookup
    lookup.drop()
    lookup.insert_many([{"_id": n, "n": n, "payload": payload} for n in range(N)])

    def find_one(_):
        for n in range(N):
            lookup.find_one({"_id": n})
        return N

    def update_one(_):
        for n in range(N):
            lookup.update_one({"_id": n}, {"$inc": {"n": 1}})
        return N

    def insert_many(collection):
        collection.insert_many(
            [{"_id": n, "n": n, "payload": payload} for n in range(1000)], ordered=True
        )
        return 1

    rows = {
        "insert_one": best(repetitions, fresh("insert_one"), insert_one),
        "find_one by _id": best(repetitions, lambda _: None, find_one),
        "update_one $inc": best(repetitions, lambda _: None, update_one),
        "insert_many(1000)": best(repetitions, fresh("insert_many"), insert_many),
    }
    c.close()
    print(json.dumps({"repetitions": repetitions, "per_op_us": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
