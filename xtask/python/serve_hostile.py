"""Hostile and careless clients for `cargo xtask serve-hostile`, beside one well-behaved client.

`serve_hostile.py PORT PID SECONDS IDLE SLOW TRICKLERS TRICKLE_MB MAX_BSON_DEPTH`

For SECONDS, all at once, each kind from its own loopback address (so that the server's
per-address limit applies to each as it would to one remote host):

- 127.0.0.5, malformed messages, round after round: nesting past the limit at every place of a
  message (the OP_MSG body, a kind-1 document, an OP_QUERY query and its field selector; the
  deep field first, in the middle or last; documents, arrays or both), which must be answered
  with Overflow (15) on a connection that then answers a ping, and the same at the limit, which
  must be answered without it; lengths negative, huge and shorter than a header, unknown
  opcodes, bad checksums, OP_COMPRESSED with lying sizes, each of which must close its
  connection without a reply;
- 127.0.0.2, IDLE connections that never send a byte;
- 127.0.0.3, SLOW senders: a 2 KB message one byte every 0.2 s, reconnecting when closed;
- 127.0.0.4, TRICKLERS: a TRICKLE_MB message, header first, then 64 KiB every 25 ms, never
  finished, reconnecting when closed.

Meanwhile a well-behaved pymongo client (127.0.0.1, its own process, so that the attackers'
work never delays it) inserts and finds one document every 10 ms and times each call, and the
server's VmRSS and VmHWM are read from /proc/PID/status every 100 ms. Prints one JSON object.

Must never connect anywhere but the loopback server it is given; every loop ends at the
deadline.
"""

import asyncio
import json
import multiprocessing
import os
import resource
import struct
import sys
import threading
import time

import bson
import pymongo
from pymongo.errors import PyMongoError

OP_REPLY, OP_QUERY, OP_COMPRESSED, OP_MSG = 1, 2004, 2012, 2013
# How long a malformed message's answer may take: more than the server's message timeout.
REPLY_WAIT = 90


# --- BSON and messages as bytes, built with loops (any depth) --------------------------------


def cstring(text):
    return text.encode() + b"\0"


def element(kind, key, value):
    return bytes([kind]) + cstring(key) + value


def document(elements):
    body = b"".join(elements)
    return struct.pack("<i", len(body) + 5) + body + b"\0"


def string(text):
    data = text.encode() + b"\0"
    return struct.pack("<i", len(data)) + data


def int32(value):
    return struct.pack("<i", value)


def deep(levels, arrays, leaf=None):
    """A value nesting `levels` containers around `leaf` (default {x: 1}); level i is an array
    when `arrays(i)`. Returns (element type, bytes)."""
    if leaf is None:
        leaf = document([element(0x10, "x", int32(1))])
    kind = lambda step: 0x04 if arrays(step) else 0x03
    out = bytearray()
    for step in reversed(range(levels)):
        out += struct.pack("<i", len(leaf) + 8 * (step + 1))
        out.append(0x03 if step == 0 else kind(step - 1))
        out += b"0\0" if arrays(step) else b"n\0"
    out += leaf
    out += b"\0" * levels
    return (kind(levels - 1) if levels else 0x03), bytes(out)


def message(request_id, op_code, body):
    return struct.pack("<iiii", 16 + len(body), request_id, 0, op_code) + body


def op_msg(request_id, body_document, flags=0, sequence=None):
    body = struct.pack("<I", flags) + b"\0" + body_document
    if sequence is not None:
        identifier, documents = sequence
        payload = cstring(identifier) + b"".join(documents)
        body += b"\1" + struct.pack("<i", 4 + len(payload)) + payload
    return message(request_id, OP_MSG, body)


def op_query(request_id, query, selector=None):
    body = int32(0) + cstring("admin.$cmd") + int32(0) + int32(-1) + query
    if selector is not None:
        body += selector
    return message(request_id, OP_QUERY, body)


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


PING = op_msg(99, document([element(0x10, "ping", int32(1)), element(0x02, "$db", string("admin"))]))


def nesting_cases(limit):
    """(name, message bytes, levels of the command) at every place, position and container."""
    containers = {
        "documents": lambda step: False,
        "arrays": lambda step: True,
        "both": lambda step: step % 2 == 1,
    }
    cases = []
    made = {}

    def deep_once(levels, container_name):
        if (levels, container_name) not in made:
            made[(levels, container_name)] = deep(levels, containers[container_name])
        return made[(levels, container_name)]

    for command_levels in (limit, limit + 1, 2000, 100_000):
        for container_name in containers:
            for position in ("first", "middle", "last"):

                def ordered(named, deep_field):
                    fields = list(named)
                    at = {"first": 0, "middle": len(fields) // 2, "last": len(fields)}[position]
                    fields.insert(min(at, len(fields)), deep_field)
                    return document(fields)

                kind, value = deep_once(command_levels - 1, container_name)
                body = ordered(
                    [element(0x02, "find", string("c")), element(0x02, "$db", string("test"))],
                    element(kind, "filter", value),
                )
                cases.append((f"body/{container_name}/{position}", op_msg(1, body), command_levels))
                kind, value = deep_once(command_levels - 3, container_name)
                inserted = ordered(
                    [element(0x10, "_id", int32(1)), element(0x10, "y", int32(2))],
                    element(kind, "d", value),
                )
                insert = document(
                    [element(0x02, "insert", string("hostile")), element(0x02, "$db", string("test"))]
                )
                cases.append(
                    (
                        f"sequence/{container_name}/{position}",
                        op_msg(1, insert, sequence=("documents", [inserted])),
                        command_levels,
                    )
                )
                kind, value = deep_once(command_levels - 1, container_name)
                query = ordered(
                    [element(0x10, "isMaster", int32(1)), element(0x08, "helloOk", b"\1")],
                    element(kind, "client", value),
                )
                cases.append((f"query/{container_name}/{position}", op_query(1, query), command_levels))
                selector = ordered([element(0x10, "a", int32(1))], element(kind, "q", value))
                hello = document([element(0x10, "isMaster", int32(1))])
                cases.append(
                    (f"selector/{container_name}/{position}", op_query(1, hello, selector), command_levels)
                )
    # As deep as allowed around a large value: decoded in one pass, never copied per level.
    large = document([element(0x02, "s", string("x" * 20_000_000))])
    kind, value = deep(limit - 1, containers["both"], large)
    body = document(
        [
            element(0x02, "find", string("c")),
            element(kind, "filter", value),
            element(0x02, "$db", string("test")),
        ]
    )
    cases.append(("body/both/20 MB at the bottom", op_msg(1, body), limit))
    return cases


def closing_cases():
    """(name, bytes) of messages that must close their connection without a reply."""
    ping_body = document([element(0x10, "ping", int32(1)), element(0x02, "$db", string("admin"))])
    sections = struct.pack("<I", 0) + b"\0" + ping_body

    def header(length, op_code=OP_MSG):
        return struct.pack("<iiii", length, 1, 0, op_code)

    cases = []
    for length in (-1, -(2**31), 0, 1, 15, 48_000_001, 2**31 - 1):
        cases.append((f"length {length}", header(length) + sections))
    cases.append(("length shorter than the sections", header(20) + sections))
    for op_code in (0, OP_REPLY, 2001, 2002, 2005, 2010, 2011, 4242, -1):
        cases.append((f"opcode {op_code}", message(1, op_code, sections)))
    checked = bytearray(message(1, OP_MSG, struct.pack("<I", 1) + b"\0" + ping_body + b"\0\0\0\0"))
    good = crc32c(bytes(checked[:-4]))
    for wrong in (good ^ 1, 0, 0xFFFFFFFF):
        checked[-4:] = struct.pack("<I", wrong)
        cases.append((f"checksum {wrong:#x}", bytes(checked)))
    for size in (2**31 - 1, -1, 0, 100, len(sections)):
        for compressor in (0, 1, 2, 3, 200):
            payload = sections if compressor == 0 else b"\x78\x9c" + os.urandom(32)
            body = struct.pack("<iiB", OP_MSG, size, compressor) + payload
            cases.append((f"OP_COMPRESSED size {size} compressor {compressor}", message(1, OP_COMPRESSED, body)))
    return cases


# --- the attackers ----------------------------------------------------------------------------


async def open_from(source, port):
    return await asyncio.wait_for(
        asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0)), timeout=10
    )


async def read_reply(reader):
    header = await reader.readexactly(16)
    length, _request, _response_to, op_code = struct.unpack("<iiii", header)
    body = await reader.readexactly(length - 16)
    if op_code == OP_REPLY:
        return bson.decode(body[20:])
    return bson.decode(body[5:])


async def malformed(port, deadline, limit, stats):
    deep_cases = nesting_cases(limit)
    closing = closing_cases()
    stats.update(rounds=0, answered=0, overflow=0, closed=0, failures=[])

    def fail(text):
        if len(stats["failures"]) < 20:
            stats["failures"].append(text)

    while time.monotonic() < deadline:
        for name, data, levels in deep_cases:
            if time.monotonic() >= deadline:
                return
            try:
                reader, writer = await open_from("127.0.0.5", port)
                writer.write(data)
                # A message over 64 KiB may wait for the shared buffer budget while the
                # tricklers hold it: up to the server's message timeout (60 s by default).
                reply = await asyncio.wait_for(read_reply(reader), timeout=REPLY_WAIT)
                code = reply.get("code")
                if levels > limit:
                    if code != 15:
                        fail(f"{name} at {levels} levels: expected Overflow (15), got {reply}")
                    else:
                        stats["overflow"] += 1
                elif code == 15:
                    fail(f"{name} at {levels} levels (the limit): refused with {reply}")
                else:
                    stats["answered"] += 1
                writer.write(PING)
                ping = await asyncio.wait_for(read_reply(reader), timeout=20)
                if ping.get("ok") != 1:
                    fail(f"{name}: the connection did not go on: {ping}")
                writer.close()
            except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError) as error:
                fail(f"{name} at {levels} levels: {type(error).__name__}: {error}")
        for name, data in closing:
            if time.monotonic() >= deadline:
                return
            try:
                reader, writer = await open_from("127.0.0.5", port)
                writer.write(data)
                rest = await asyncio.wait_for(reader.read(65536), timeout=20)
                if rest:
                    fail(f"{name}: expected the connection closed, got {len(rest)} bytes")
                else:
                    stats["closed"] += 1
                writer.close()
            except ConnectionResetError:
                stats["closed"] += 1
            except (OSError, asyncio.TimeoutError) as error:
                fail(f"{name}: {type(error).__name__}: {error}")
        stats["rounds"] += 1


async def idle(port, count, deadline, stats):
    """`count` connections that never send; counts those the server closed at once."""
    stats.update(opened=0, closed_by_server=0, failed_to_open=0)
    gate = asyncio.Semaphore(200)
    held = []

    async def one():
        async with gate:
            try:
                reader, writer = await open_from("127.0.0.2", port)
            except (OSError, asyncio.TimeoutError):
                stats["failed_to_open"] += 1
                return
        stats["opened"] += 1
        held.append(writer)
        try:
            left = deadline - time.monotonic()
            if left > 0 and await asyncio.wait_for(reader.read(1), timeout=left) == b"":
                stats["closed_by_server"] += 1
        except (asyncio.TimeoutError, OSError):
            pass

    await asyncio.gather(*(one() for _ in range(count)))
    for writer in held:
        writer.close()


async def slow_senders(port, count, deadline, stats):
    stats.update(connections=0, closed_by_server=0, bytes_sent=0)
    padding = document([element(0x02, "ping", string("x" * 2000)), element(0x02, "$db", string("admin"))])
    data = op_msg(7, padding)

    async def one():
        while time.monotonic() < deadline:
            try:
                reader, writer = await open_from("127.0.0.3", port)
            except (OSError, asyncio.TimeoutError):
                await asyncio.sleep(0.5)
                continue
            stats["connections"] += 1
            try:
                for at in range(len(data)):
                    if time.monotonic() >= deadline:
                        break
                    writer.write(data[at : at + 1])
                    await writer.drain()
                    stats["bytes_sent"] += 1
                    await asyncio.sleep(0.2)
                    if reader.at_eof():
                        raise ConnectionResetError
            except (OSError, ConnectionResetError):
                stats["closed_by_server"] += 1
            writer.close()

    async def watch():
        await asyncio.gather(*(one() for _ in range(count)))

    await watch()


async def tricklers(port, count, megabytes, deadline, stats):
    stats.update(connections=0, closed_by_server=0, bytes_sent=0)
    length = megabytes * 1_000_000
    chunk = b"\0" * 65536
    body_document = document([element(0x02, "insert", string("trickled")), element(0x02, "$db", string("test"))])
    head = struct.pack("<iiii", length, 3, 0, OP_MSG) + struct.pack("<I", 0) + b"\0" + body_document
    # A kind-1 section announced to fill the message; its documents never arrive whole.
    head += b"\1" + struct.pack("<i", length - len(head) - 1) + cstring("documents")

    async def one():
        while time.monotonic() < deadline:
            try:
                reader, writer = await open_from("127.0.0.4", port)
            except (OSError, asyncio.TimeoutError):
                await asyncio.sleep(0.5)
                continue
            stats["connections"] += 1
            try:
                writer.write(head)
                sent = len(head)
                while time.monotonic() < deadline and sent + len(chunk) < length - 1000:
                    writer.write(chunk)
                    await asyncio.wait_for(writer.drain(), timeout=max(0.1, deadline - time.monotonic()))
                    sent += len(chunk)
                    stats["bytes_sent"] += len(chunk)
                    await asyncio.sleep(0.025)
                    if reader.at_eof():
                        raise ConnectionResetError
                # Never finished: hold it until the server closes it or the run ends.
                left = deadline - time.monotonic()
                if left > 0 and await asyncio.wait_for(reader.read(1), timeout=left) == b"":
                    raise ConnectionResetError
            except (OSError, ConnectionResetError):
                stats["closed_by_server"] += 1
            except asyncio.TimeoutError:
                pass
            writer.close()

    await asyncio.gather(*(one() for _ in range(count)))


async def attack(port, seconds, counts, limit):
    deadline = time.monotonic() + seconds
    stats = {"malformed": {}, "idle": {}, "slow": {}, "tricklers": {}}
    await asyncio.gather(
        malformed(port, deadline, limit, stats["malformed"]),
        idle(port, counts["idle"], deadline, stats["idle"]),
        slow_senders(port, counts["slow"], deadline, stats["slow"]),
        tricklers(port, counts["tricklers"], counts["trickle_mb"], deadline, stats["tricklers"]),
    )
    return stats


# --- the well-behaved client and the memory sampler -------------------------------------------


def good_client(port, seconds, results):
    client = pymongo.MongoClient(
        f"mongodb://127.0.0.1:{port}/?directConnection=true",
        serverSelectionTimeoutMS=10_000,
        socketTimeoutMS=30_000,
        maxPoolSize=2,
    )
    collection = client.hostile.good
    latencies, errors, error_texts = [], 0, []
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        n += 1
        started = time.perf_counter()
        try:
            if n % 2:
                collection.insert_one({"_id": n, "payload": "x" * 100})
            else:
                collection.find_one({"_id": n - 1})
            latencies.append(time.perf_counter() - started)
        except PyMongoError as error:
            errors += 1
            if len(error_texts) < 10:
                error_texts.append(f"{type(error).__name__}: {error}")
        time.sleep(0.01)
    try:
        status = client.admin.command("serverStatus")
        connections = status.get("connections", {})
        network = status.get("network", {})
    except PyMongoError:
        connections, network = {}, {}
    client.close()
    results.put(
        {
            "latencies": latencies,
            "errors": errors,
            "error_texts": error_texts,
            "connections": {k: int(v) for k, v in connections.items()},
            "network": {k: int(v) for k, v in network.items()},
        }
    )


def sample_memory(pid, stop, memory):
    while not stop.is_set():
        try:
            with open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith(("VmRSS:", "VmHWM:")):
                        name, value = line.split(":")
                        kib = int(value.split()[0])
                        key = "max_rss_kib" if name == "VmRSS" else "hwm_kib"
                        memory[key] = max(memory.get(key, 0), kib)
        except OSError:
            memory["server_gone"] = True
            return
        stop.wait(0.1)


def percentile(values, fraction):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main():
    port, pid, seconds, idle_count, slow_count, trickler_count, trickle_mb, limit = map(int, sys.argv[1:9])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = idle_count + slow_count + trickler_count + 200
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(wanted, hard), hard))
    memory = {}
    stop = threading.Event()
    sampler = threading.Thread(target=sample_memory, args=(pid, stop, memory), daemon=True)
    sampler.start()
    results = multiprocessing.Queue()
    # The good client runs 2 s before and after the attack as well.
    client = multiprocessing.Process(target=good_client, args=(port, seconds + 4, results))
    client.start()
    time.sleep(2)
    baseline_kib = memory.get("max_rss_kib", 0)
    counts = {"idle": idle_count, "slow": slow_count, "tricklers": trickler_count, "trickle_mb": trickle_mb}
    started = time.monotonic()
    stats = asyncio.run(attack(port, seconds, counts, limit))
    attack_seconds = time.monotonic() - started
    good = results.get(timeout=seconds + 120)
    client.join(timeout=30)
    stop.set()
    sampler.join()
    latencies = good["latencies"]
    report = {
        "attack_seconds": round(attack_seconds, 1),
        "good_client": {
            "ops": len(latencies),
            "errors": good["errors"],
            "error_texts": good["error_texts"],
            "p50_ms": round(1000 * (percentile(latencies, 0.50) or 0), 2),
            "p99_ms": round(1000 * (percentile(latencies, 0.99) or 0), 2),
            "max_ms": round(1000 * max(latencies, default=0), 2),
        },
        "server_status": {"connections": good["connections"], "network": good["network"]},
        "memory": {
            "baseline_rss_mib": round(baseline_kib / 1024, 1),
            "max_rss_mib": round(memory.get("max_rss_kib", 0) / 1024, 1),
            "hwm_mib": round(memory.get("hwm_kib", 0) / 1024, 1),
            "server_gone": memory.get("server_gone", False),
        },
        "attacks": stats,
        "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
    }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
