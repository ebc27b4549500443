"""Load driver for `cargo xtask serve-load`: CLIENTS concurrent pymongo clients, mixed work.

`serve_load.py PORT SECONDS CLIENTS MODE`, MODE `process` (one OS process per client, so that
Python's GIL does not serialise the clients) or `thread` (one thread per client, one process).

Each client is its own MongoClient and loops until SECONDS pass, picking by weight:
50% find_one by _id, 20% update_one ($inc and $push, alternating), 20% insert_one, 10% a small
transaction that inserts into two collections (started, written and committed by hand; a
TransientTransactionError is retried at most 3 times and then counted as an error). Prints one
JSON object: per kind the count, errors and p50/p99 latency in milliseconds, and the totals.

Must never connect anywhere but the loopback server it is given; every loop is bounded by the
deadline.
"""

import json
import multiprocessing
import random
import sys
import threading
import time

import pymongo
from pymongo.errors import PyMongoError

KINDS = ["find_one", "update_one", "insert_one", "transaction"]
WEIGHTS = [50, 20, 20, 10]
PRELOADED = 1000


def connect(port):
    return pymongo.MongoClient(
        f"mongodb://127.0.0.1:{port}/",
        serverSelectionTimeoutMS=5000,
        socketTimeoutMS=30000,
        maxPoolSize=1,
    )


def preload(port):
    c = connect(port)
    c.load.docs.drop()
    c.load.other.drop()
    c.load.docs.insert_many(
        [{"_id": n, "n": 0, "tags": [], "payload": "x" * 100} for n in range(PRELOADED)]
    )
    # Create the transaction's collections up front: creating one inside a transaction is
    # not what this measures.
    c.load.txn_a.insert_one({"_id": "seed"})
    c.load.txn_b.insert_one({"_id": "seed"})
    c.close()


def client_loop(port, seconds, client_id, start_at):
    rng = random.Random(client_id)
    c = connect(port)
    c.admin.command("ping")
    docs = c.load.docs
    other = c.load.other
    txn_a = c.load.txn_a
    txn_b = c.load.txn_b
    latencies = {kind: [] for kind in KINDS}
    errors = {kind: 0 for kind in KINDS}
    # Every client starts at the same moment, after all have connected.
    delay = start_at - time.time()
    if delay > 0:
        time.sleep(delay)
    deadline = time.monotonic() + seconds
    seq = 0
    while time.monotonic() < deadline:
        kind = rng.choices(KINDS, WEIGHTS)[0]
        seq += 1
        started = time.perf_counter()
        try:
            if kind == "find_one":
                docs.find_one({"_id": rng.randrange(PRELOADED)})
            elif kind == "update_one":
                target = {"_id": rng.randrange(PRELOADED)}
                if seq % 2:
                    docs.update_one(target, {"$inc": {"n": 1}})
                else:
                    docs.update_one(target, {"$push": {"tags": seq % 16}})
            elif kind == "insert_one":
                other.insert_one({"_id": f"{client_id}-{seq}", "payload": "y" * 100})
            else:
                for attempt in range(4):
                    try:
                        with c.start_session() as session:
                            session.start_transaction()
                            key = f"{client_id}-{seq}-{attempt}"
                            txn_a.insert_one({"_id": key}, session=session)
                            txn_b.insert_one({"_id": key}, session=session)
                            session.commit_transaction()
                        break
                    except PyMongoError as error:
                        if attempt == 3 or not error.has_error_label("TransientTransactionError"):
                            raise
        except PyMongoError:
            errors[kind] += 1
            continue
        latencies[kind].append(time.perf_counter() - started)
    c.close()
    return latencies, errors


def process_entry(args):
    return client_loop(*args)


def percentile(sorted_values, fraction):
    if not sorted_values:
        return 0.0
    index = min(len(sorted_values) - 1, int(round(fraction * (len(sorted_values) - 1))))
    return sorted_values[index]


def main(argv):
    if len(argv) != 4 or argv[3] not in ("process", "thread"):
        print(__doc__, file=sys.stderr)
        return 2
    port, seconds, clients, mode = int(argv[0]), float(argv[1]), int(argv[2]), argv[3]
    preload(port)
    start_at = time.time() + 2.0 + clients * 0.05
    jobs = [(port, seconds, n, start_at) for n in range(clients)]
    if mode == "process":
        with multiprocessing.get_context("fork").Pool(clients) as pool:
            results = pool.map(process_entry, jobs)
    else:
        results = [None] * clients

        def run(n):
            results[n] = client_loop(*jobs[n])

        workers = [threading.Thread(target=run, args=(n,)) for n in range(clients)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    report = {"seconds": seconds, "clients": clients, "mode": mode, "kinds": {}}
    everything = []
    total_errors = 0
    for kind in KINDS:
        values = sorted(v for latencies, _ in results for v in latencies[kind])
        kind_errors = sum(errors[kind] for _, errors in results)
        everything.extend(values)
        total_errors += kind_errors
        report["kinds"][kind] = {
            "ops": len(values),
            "ops_per_s": len(values) / seconds,
            "errors": kind_errors,
            "p50_ms": percentile(values, 0.50) * 1000,
            "p99_ms": percentile(values, 0.99) * 1000,
        }
    everything.sort()
    report["total"] = {
        "ops": len(everything),
        "ops_per_s": len(everything) / seconds,
        "errors": total_errors,
        "p50_ms": percentile(everything, 0.50) * 1000,
        "p99_ms": percentile(everything, 0.99) * 1000,
    }
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
