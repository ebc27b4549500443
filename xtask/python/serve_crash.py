"""Writer and checker for `cargo xtask serve-crash`: kill -9 of `spillway serve` mid-load.

`write PORT LOG TAG SECONDS THREADS`: THREADS writer threads, each with its own MongoClient,
write until the server dies (or SECONDS pass, a bound that the kill normally beats), and append
one line per ACKNOWLEDGED write to LOG, flushed at once (this process is never the one killed,
so a flushed line survives):

    insert ID            insert_one of {_id: ID} into crash_a.docs was acknowledged
    inc KEY N            the N-th $inc of crash_a.counters {_id: KEY} was acknowledged
    txn-try ID           (written BEFORE the attempt) a transaction inserting {_id: ID} into
                         crash_a.pairs and crash_b.pairs (two databases) is about to start
    txn ID               that transaction's commit was acknowledged

`verify PORT LOG...`: reads every log line of every iteration so far and checks the restarted
server: every acknowledged insert is present, every counter is at least its acknowledged value,
every attempted transaction's pair is both present or both absent, and every acknowledged one
both present. Prints one JSON object; exits 1 on any violation.

Must never connect anywhere but the loopback server it is given; every loop is bounded.
"""

import json
import sys
import threading
import time

import pymongo
from pymongo.errors import PyMongoError


def client(port):
    return pymongo.MongoClient(
        f"mongodb://127.0.0.1:{port}/",
        serverSelectionTimeoutMS=1000,
        connectTimeoutMS=1000,
        socketTimeoutMS=5000,
        retryWrites=True,
    )


def writer(port, log, lock, tag, thread, deadline):
    c = client(port)
    docs = c.crash_a.docs
    counters = c.crash_a.counters
    pairs_a = c.crash_a.pairs
    pairs_b = c.crash_b.pairs
    key = f"{tag}-{thread}"
    incs = 0
    seq = 0

    def record(line):
        with lock:
            log.write(line + "\n")
            log.flush()

    try:
        while time.monotonic() < deadline:
            seq += 1
            kind = seq % 3
            if kind == 0:
                doc_id = f"{key}-{seq}"
                docs.insert_one({"_id": doc_id, "payload": "x" * 64})
                record(f"insert {doc_id}")
            elif kind == 1:
                counters.update_one({"_id": key}, {"$inc": {"n": 1}}, upsert=True)
                incs += 1
                record(f"inc {key} {incs}")
            else:
                txn_id = f"{key}-{seq}"
                record(f"txn-try {txn_id}")
                with c.start_session() as session:
                    session.start_transaction()
                    pairs_a.insert_one({"_id": txn_id, "side": "a"}, session=session)
                    pairs_b.insert_one({"_id": txn_id, "side": "b"}, session=session)
                    session.commit_transaction()
                record(f"txn {txn_id}")
    except PyMongoError:
        # The server was killed: this writer's work is over for this iteration.
        pass
    finally:
        c.close()


def write(port, log_path, tag, seconds, threads):
    deadline = time.monotonic() + seconds
    lock = threading.Lock()
    with open(log_path, "a", encoding="utf-8") as log:
        workers = [
            threading.Thread(target=writer, args=(port, log, lock, tag, n, deadline))
            for n in range(threads)
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()


def ids_in(collection, wanted):
    found = set()
    wanted = list(wanted)
    for start in range(0, len(wanted), 1000):
        batch = wanted[start : start + 1000]
        for doc in collection.find({"_id": {"$in": batch}}, {"_id": 1}):
            found.add(doc["_id"])
    return found


def verify(port, log_paths):
    inserts = set()
    counters = {}
    tried = set()
    committed = set()
    for path in log_paths:
        with open(path, encoding="utf-8") as log:
            for line in log:
                parts = line.split()
                if not parts:
                    continue
                if parts[0] == "insert":
                    inserts.add(parts[1])
                elif parts[0] == "inc":
                    counters[parts[1]] = max(counters.get(parts[1], 0), int(parts[2]))
                elif parts[0] == "txn-try":
                    tried.add(parts[1])
                elif parts[0] == "txn":
                    committed.add(parts[1])
    c = client(port)
    problems = []
    present = ids_in(c.crash_a.docs, inserts)
    for missing in sorted(inserts - present)[:20]:
        problems.append(f"acknowledged insert {missing} is missing")
    stored = {
        doc["_id"]: doc.get("n", 0)
        for doc in c.crash_a.counters.find({"_id": {"$in": list(counters)}})
    }
    for key, acknowledged in sorted(counters.items()):
        if stored.get(key, 0) < acknowledged:
            problems.append(
                f"counter {key}: {acknowledged} increments acknowledged, {stored.get(key, 0)} stored"
            )
    in_a = ids_in(c.crash_a.pairs, tried)
    in_b = ids_in(c.crash_b.pairs, tried)
    for txn_id in sorted(tried):
        a, b = txn_id in in_a, txn_id in in_b
        if a != b:
            problems.append(f"transaction {txn_id} is half-applied (a: {a}, b: {b})")
        elif txn_id in committed and not a:
            problems.append(f"acknowledged transaction {txn_id} is missing")
    c.close()
    acknowledged = len(inserts) + sum(counters.values()) + len(committed)
    print(
        json.dumps(
            {
                "acknowledged": acknowledged,
                "inserts": len(inserts),
                "increments": sum(counters.values()),
                "transactions": len(committed),
                "transactions_tried": len(tried),
                "problems": problems[:50],
                "problem_count": len(problems),
            }
        )
    )
    return 0 if not problems else 1


def main(argv):
    if len(argv) >= 6 and argv[0] == "write":
        write(int(argv[1]), argv[2], argv[3], float(argv[4]), int(argv[5]))
        return 0
    if len(argv) >= 3 and argv[0] == "verify":
        return verify(int(argv[1]), argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
