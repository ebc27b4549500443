//! `spillway serve --upstream` end to end: an upstream (`spillway serve` over an in-memory
//! database, in this process), proxies in front of it, and the official driver as the
//! client. A collection with a policy must answer as the same collection without one does;
//! everything else must be the upstream's own answer.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use spillway::Database;
use spillway::command::Commands;
use spillway_mongodb::mongodb::bson::spec::BinarySubtype;
use spillway_mongodb::mongodb::bson::{Binary, Bson, Document, doc};
use spillway_mongodb::mongodb::error::{Error, ErrorKind, WriteFailure};
use spillway_mongodb::mongodb::options::ReturnDocument;
use spillway_mongodb::mongodb::sync::{Client, Collection, Database as MongoDatabase};
use spillway_mongodb::{POLICY_COLLECTION, POLICY_DOCUMENT_ID, RETRY_COLLECTION, STAMP_COLLECTION};
use spillway_proxy::{POLICY_REFRESH, ProxyExecutor, Upstream};
use spillway_server::{Executor, Server, ServerOptions};

fn options() -> ServerOptions {
    ServerOptions {
        port: 0,
        ..ServerOptions::default()
    }
}

#[path = "proxy/auth.rs"]
mod auth;
#[path = "proxy/transactions.rs"]
mod transactions;

/// Serves `executor` on a free loopback port, on a thread with its own runtime, for the rest
/// of the test binary.
fn serve(executor: impl Executor) -> SocketAddr {
    serve_with(executor, options())
}

/// [`serve`] with other options (`--auth`, TLS).
fn serve_with(executor: impl Executor, options: ServerOptions) -> SocketAddr {
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let server = Server::bind(executor, options).await.expect("binds");
            sender.send(server.local_addr()).expect("the test waits");
            server
                .run_until(std::future::pending::<()>())
                .await
                .expect("serves");
        });
    });
    receiver
        .recv_timeout(Duration::from_secs(30))
        .expect("listening within 30 s")
}

/// A new upstream (`spillway serve` on an in-memory database).
fn upstream() -> SocketAddr {
    serve(Commands::new(
        Database::open_in_memory().expect("an in-memory database"),
    ))
}

/// A new proxy in front of `upstream`.
fn proxy(upstream: SocketAddr) -> SocketAddr {
    serve(ProxyExecutor::new(&format!("mongodb://{upstream}/")).expect("a proxy"))
}

fn client(address: SocketAddr) -> Client {
    Client::with_uri_str(format!(
        "mongodb://{address}/?directConnection=true&serverSelectionTimeoutMS=20000"
    ))
    .expect("a client")
}

/// One `find` through `proxy`, by a client that neither waits long nor retries: how a
/// failure of the proxy's upstream reaches clients.
fn one_find(proxy: SocketAddr) -> spillway_mongodb::mongodb::error::Result<Document> {
    Client::with_uri_str(format!(
        "mongodb://{proxy}/?directConnection=true&serverSelectionTimeoutMS=5000&retryReads=false"
    ))
    .expect("a client")
    .database("d")
    .run_command(doc! { "find": "c" })
    .run()
}

fn unique(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!("{prefix}{}", NEXT.fetch_add(1, Ordering::SeqCst))
}

/// The same books in `plain` (no policy) and `patterned` (an outlier policy with a threshold
/// of 3 on `buyers`, and a subset keeping 2 `reviews`).
fn books(client: &Client) -> (Collection<Document>, Collection<Document>) {
    let database = client.database(&unique("shop"));
    database
        .run_command(doc! { "setPattern": "patterned", "outlier": "buyers", "threshold": 3 })
        .run()
        .expect("setPattern outlier");
    database
        .run_command(doc! { "setPattern": "patterned", "subset": "reviews", "keep": 2 })
        .run()
        .expect("setPattern subset");
    let plain = database.collection::<Document>("plain");
    let patterned = database.collection::<Document>("patterned");
    for id in 0..6 {
        let buyers: Vec<Bson> = (0..id * 3).map(|n| Bson::String(format!("u{n}"))).collect();
        let reviews: Vec<Bson> = (0..id)
            .rev()
            .map(|n| Bson::Document(doc! { "stars": n % 5, "by": format!("r{n}") }))
            .collect();
        let book =
            doc! { "_id": id, "title": format!("book {id}"), "buyers": buyers, "reviews": reviews };
        plain.insert_one(book.clone()).run().expect("insert plain");
        patterned.insert_one(book).run().expect("insert patterned");
    }
    (plain, patterned)
}

fn all(collection: &Collection<Document>, filter: Document) -> Vec<Document> {
    collection
        .find(filter)
        .sort(doc! { "_id": 1 })
        .run()
        .expect("find")
        .collect::<Result<Vec<_>, _>>()
        .expect("documents")
}

#[test]
fn a_collection_with_a_policy_answers_as_the_same_collection_without_one() {
    let proxy = proxy(upstream());
    let client = client(proxy);
    let (plain, patterned) = books(&client);
    for (name, collection) in [("plain", &plain), ("patterned", &patterned)] {
        collection
            .update_one(
                doc! { "_id": 2 },
                doc! { "$push": { "buyers": { "$each": ["x", "y", "z"] } } },
            )
            .run()
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        collection
            .update_many(
                doc! { "_id": { "$gte": 4 } },
                doc! { "$set": { "hot": true } },
            )
            .run()
            .expect("update_many");
        collection
            .update_one(doc! { "_id": 9 }, doc! { "$push": { "buyers": "w" } })
            .upsert(true)
            .run()
            .expect("upsert");
        collection
            .delete_one(doc! { "_id": 1 })
            .run()
            .expect("delete_one");
        collection
            // A subset array's logical order is the policy's (here insertion order, newest
            // first): the plain collection's application keeps it so with `$position: 0`.
            .find_one_and_update(
                doc! { "_id": 3 },
                doc! { "$push": { "reviews": { "$each": [{ "stars": 5, "by": "new" }], "$position": 0 } } },
            )
            .return_document(ReturnDocument::After)
            .run()
            .expect("find_one_and_update");
    }
    assert_eq!(all(&patterned, doc! {}), all(&plain, doc! {}));
    for filter in [
        doc! { "buyers": "u13" },
        doc! { "buyers": { "$size": 15 } },
        doc! { "reviews.by": "r4" },
        doc! { "hot": true },
    ] {
        assert_eq!(
            all(&patterned, filter.clone()),
            all(&plain, filter.clone()),
            "{filter}"
        );
        assert_eq!(
            patterned
                .count_documents(filter.clone())
                .run()
                .expect("count"),
            plain.count_documents(filter.clone()).run().expect("count"),
            "{filter}"
        );
    }
    assert_eq!(
        patterned
            .distinct("buyers", doc! {})
            .run()
            .expect("distinct"),
        plain.distinct("buyers", doc! {}).run().expect("distinct"),
    );
    let pipeline = [
        doc! { "$unwind": "$buyers" },
        doc! { "$group": { "_id": "$_id", "n": { "$sum": 1 } } },
        doc! { "$sort": { "_id": 1 } },
    ];
    let aggregated = |collection: &Collection<Document>| {
        collection
            .aggregate(pipeline.clone())
            .run()
            .expect("aggregate")
            .collect::<Result<Vec<_>, _>>()
            .expect("results")
    };
    assert_eq!(aggregated(&patterned), aggregated(&plain));
    let page = |collection: &Collection<Document>| {
        collection
            .find(doc! {})
            .sort(doc! { "title": -1 })
            .skip(1)
            .limit(3)
            .projection(doc! { "buyers": { "$slice": 2 }, "title": 1 })
            .run()
            .expect("find")
            .collect::<Result<Vec<_>, _>>()
            .expect("documents")
    };
    assert_eq!(page(&patterned), page(&plain));
}

#[test]
fn the_stored_layout_is_read_through_its_own_namespace_and_stays_small() {
    let proxy = proxy(upstream());
    let client = client(proxy);
    let (_, patterned) = books(&client);
    let database = client.database(patterned.namespace().db.as_str());
    let stored = database.collection::<Document>("system.stored.patterned");
    let main = stored
        .find_one(doc! { "_id": 5 })
        .run()
        .expect("find")
        .expect("book 5");
    assert_eq!(main.get_array("buyers").expect("buyers").len(), 3);
    assert_eq!(main.get_bool("has_extras").ok(), Some(true));
    assert_eq!(main.get_array("reviews").expect("reviews").len(), 2);
    let refused = stored
        .insert_one(doc! { "_id": 99 })
        .run()
        .expect_err("the stored layout is read-only");
    assert!(refused.to_string().contains("read-only"), "{refused}");
    let verify = database
        .run_command(doc! { "verifyPatterns": 1 })
        .run()
        .expect("verify");
    assert_eq!(verify.get_array("violations").expect("violations").len(), 0);
    // pymongo writes a top-level `_id` before the command's name.
    let page = database
        .run_command(
            doc! { "_id": 5, "arrayPage": "patterned", "field": "buyers", "skip": 10, "limit": 3 },
        )
        .run()
        .expect("arrayPage");
    assert_eq!(
        page.get_array("elements").expect("elements"),
        &vec![Bson::from("u10"), Bson::from("u11"), Bson::from("u12")]
    );
}

#[test]
fn everything_else_is_the_upstreams_own_answer() {
    let upstream = upstream();
    let proxied = client(proxy(upstream));
    let direct = client(upstream);
    let name = unique("plain");
    let collection = proxied.database(&name).collection::<Document>("c");
    collection
        .insert_many((0..300).map(|id| doc! { "_id": id }))
        .run()
        .expect("insert_many");
    let read: Vec<Document> = collection
        .find(doc! {})
        .batch_size(7)
        .run()
        .expect("find")
        .collect::<Result<_, _>>()
        .expect("every batch");
    assert_eq!(read.len(), 300, "getMore goes to the upstream's cursor");
    // A batch that fills a message (the driver packs 100,000 statements into one of at most
    // 48 MB) reaches the upstream whole: in document sequences, as the client sent it, not
    // as one array, whose index keys would push it past the limit.
    let payload = "x".repeat(460);
    let big = proxied.database(&name).collection::<Document>("big");
    big.insert_many((0..100_000).map(|id| doc! { "_id": id, "payload": payload.clone() }))
        .run()
        .expect("a full batch");
    assert_eq!(big.count_documents(doc! {}).run().expect("count"), 100_000);
    let duplicate = collection
        .insert_one(doc! { "_id": 5 })
        .run()
        .expect_err("a duplicate _id");
    assert!(duplicate.to_string().contains("E11000"), "{duplicate}");
    // A transaction is the upstream's: aborted, nothing; committed, everything.
    let mut session = proxied.start_session().run().expect("a session");
    session.start_transaction().run().expect("start");
    collection
        .insert_one(doc! { "_id": 1000 })
        .session(&mut session)
        .run()
        .expect("insert in a transaction");
    session.abort_transaction().run().expect("abort");
    session.start_transaction().run().expect("start");
    collection
        .insert_one(doc! { "_id": 1001 })
        .session(&mut session)
        .run()
        .expect("insert in a transaction");
    session.commit_transaction().run().expect("commit");
    // The proxy gossips the upstream's cluster time, in its own replies too, as a member
    // of a replica set does (drivers send it back, and check causal consistency with it).
    for command in [doc! { "hello": 1 }, doc! { "getPatterns": 1 }] {
        let reply = proxied
            .database(&name)
            .run_command(command.clone())
            .run()
            .expect("a reply");
        assert!(reply.contains_key("$clusterTime"), "{command}: {reply}");
    }
    let upstream_view = direct.database(&name).collection::<Document>("c");
    assert_eq!(
        upstream_view.count_documents(doc! {}).run().expect("count"),
        301
    );
    assert!(
        upstream_view
            .find_one(doc! { "_id": 1001 })
            .run()
            .expect("find")
            .is_some()
    );
}

/// The first batch of a `find` reply.
fn first_batch(reply: &Document) -> Vec<Bson> {
    reply
        .get_document("cursor")
        .and_then(|cursor| cursor.get_array("firstBatch"))
        .unwrap_or_else(|_| panic!("a cursor: {reply}"))
        .clone()
}

#[test]
fn what_goes_upstream_unchanged_is_handed_on_without_a_thread_and_answers_the_same() {
    let upstream = upstream();
    let executor = ProxyExecutor::new(&format!("mongodb://{upstream}/")).expect("a proxy");
    let name = unique("handed");
    let run = |command: Document| {
        let reply = executor.execute(command);
        assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply}");
        reply
    };
    run(doc! { "setPattern": "books", "outlier": "buyers", "threshold": 2, "$db": &name });
    run(doc! { "insert": "plain", "documents": [{ "_id": 1, "n": 1 }], "$db": &name });
    run(
        doc! { "insert": "books", "documents": [{ "_id": 1, "buyers": ["a", "b", "c"] }], "$db": &name },
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let find = |collection: &str| doc! { "find": collection, "filter": { "_id": 1 }, "$db": &name };

    // The policies were just read (the insert into `books` went through the layer): a
    // plain collection's find is routed from what is kept.
    let handed = executor
        .hand_on(find("plain"))
        .unwrap_or_else(|command| panic!("handed on: {command}"));
    let reply = runtime.block_on(handed);
    assert_eq!(
        first_batch(&reply),
        vec![Bson::Document(doc! { "_id": 1, "n": 1 })]
    );
    assert!(reply.contains_key("$clusterTime"), "{reply}");
    assert_eq!(first_batch(&reply), first_batch(&run(find("plain"))));
    // A statement's error is the upstream's, as from `execute`.
    let duplicate = executor
        .hand_on(doc! { "insert": "plain", "documents": [{ "_id": 1 }], "$db": &name })
        .unwrap_or_else(|command| panic!("handed on: {command}"));
    let reply = runtime.block_on(duplicate);
    let errors = reply.get_array("writeErrors").expect("a write error");
    assert_eq!(
        errors[0]
            .as_document()
            .and_then(|error| error.get_i32("code").ok()),
        Some(11000),
        "{reply}"
    );

    // What the proxy answers itself, or must read the upstream to route, is not.
    let mut transaction = find("plain");
    transaction.extend(doc! {
        "lsid": { "id": Binary { subtype: BinarySubtype::Uuid, bytes: vec![7; 16] } },
        "txnNumber": 1_i64, "startTransaction": true, "autocommit": false,
    });
    for command in [
        find("books"),
        doc! { "find": "system.stored.books", "$db": &name },
        doc! { "drop": "books", "$db": &name },
        doc! { "getPatterns": 1, "$db": &name },
        doc! { "listCollections": 1, "$db": &name },
        transaction,
        doc! { "find": "plain", "$db": unique("unread") },
    ] {
        assert!(executor.hand_on(command.clone()).is_err(), "{command}");
    }
    // Nor, once what is kept is stale.
    std::thread::sleep(POLICY_REFRESH + Duration::from_millis(100));
    assert!(executor.hand_on(find("plain")).is_err());
    assert_eq!(first_batch(&run(find("books"))).len(), 1);
}

#[test]
fn a_retried_write_with_the_same_session_and_number_is_applied_once() {
    let proxy = proxy(upstream());
    let client = client(proxy);
    let (_, patterned) = books(&client);
    let database = patterned.namespace().db;
    // Sent as they are, over the wire (the driver would add its own session to a command).
    let wire = Upstream::new(&format!("mongodb://{proxy}/")).expect("a wire client");
    let push = doc! {
        "update": "patterned",
        "updates": [{ "q": { "_id": 0 }, "u": { "$push": { "buyers": "once" } } }],
        "lsid": { "id": Bson::Binary(Binary { subtype: BinarySubtype::Uuid, bytes: vec![7; 16] }) },
        "txnNumber": 1_i64,
        "$db": database,
    };
    for _ in 0..3 {
        let reply = wire.run(&push).expect("update");
        assert_eq!(reply.get_i32("nModified").ok(), Some(1), "{reply}");
    }
    let book = patterned
        .find_one(doc! { "_id": 0 })
        .run()
        .expect("find")
        .expect("book 0");
    assert_eq!(
        book.get_array("buyers").expect("buyers"),
        &vec![Bson::from("once")]
    );
}

/// A retryable write's command: `body` with a session and transaction number.
fn retryable(mut body: Document, session: u8, number: i64, database: &str) -> Document {
    body.insert(
        "lsid",
        doc! { "id": Bson::Binary(Binary { subtype: BinarySubtype::Uuid, bytes: vec![session; 16] }) },
    );
    body.insert("txnNumber", number);
    body.insert("$db", database);
    body
}

#[test]
fn a_retry_through_a_new_proxy_applies_each_statement_once() {
    let upstream = upstream();
    let first = proxy(upstream);
    let client = client(first);
    let (_, patterned) = books(&client);
    let database = patterned.namespace().db;
    let wire = |address: SocketAddr| {
        Upstream::new(&format!("mongodb://{address}/")).expect("a wire client")
    };
    let (before, after) = (wire(first), wire(proxy(upstream)));
    let run = |wire: &Upstream, command: &Document| wire.run(command).expect("a reply");

    // Pushes past the threshold of 3, so that the array spills into side documents.
    let push = retryable(
        doc! {
            "update": "patterned",
            "updates": [{ "q": { "_id": 0 }, "u": { "$push": { "buyers": { "$each": ["a", "b", "c", "d"] } } } }],
        },
        9,
        1,
        &database,
    );
    for wire in [&before, &after, &after] {
        let reply = run(wire, &push);
        assert_eq!(reply.get_i32("nModified").ok(), Some(1), "{reply}");
    }
    let buyers = |id: i32| {
        patterned
            .find_one(doc! { "_id": id })
            .run()
            .expect("find")
            .map(|book| book.get_array("buyers").expect("buyers").len())
    };
    assert_eq!(buyers(0), Some(4), "the push applied once");

    // An insert batch whose first attempt applied only its first statement.
    let partial = retryable(
        doc! { "insert": "patterned", "documents": [{ "_id": 50, "buyers": [] }] },
        9,
        2,
        &database,
    );
    let whole = retryable(
        doc! { "insert": "patterned", "documents": [{ "_id": 50, "buyers": [] }, { "_id": 51, "buyers": [] }] },
        9,
        2,
        &database,
    );
    assert_eq!(run(&before, &partial).get_i32("n").ok(), Some(1));
    for _ in 0..2 {
        let reply = run(&after, &whole);
        assert_eq!(reply.get_i32("n").ok(), Some(2), "{reply}");
        assert!(
            !reply.contains_key("writeErrors"),
            "no duplicate _id: {reply}"
        );
    }
    assert_eq!((buyers(50), buyers(51)), (Some(0), Some(0)));

    // A delete, retried through the other proxy, answers with what it deleted.
    let delete = retryable(
        doc! { "delete": "patterned", "deletes": [{ "q": { "_id": 50 }, "limit": 1 }] },
        9,
        3,
        &database,
    );
    for wire in [&before, &after] {
        assert_eq!(run(wire, &delete).get_i32("n").ok(), Some(1));
    }
    assert_eq!(buyers(50), None);
    // Had the retry run again, it would have deleted nothing (n: 0) and a reinsert of 50
    // would now be gone: it stays.
    let reinsert = retryable(
        doc! { "insert": "patterned", "documents": [{ "_id": 50, "buyers": [] }] },
        9,
        4,
        &database,
    );
    assert_eq!(run(&after, &reinsert).get_i32("n").ok(), Some(1));
    assert_eq!(
        run(&before, &delete).get_i32("code").ok(),
        Some(225),
        "an older number is refused"
    );
    assert_eq!(buyers(50), Some(0));

    // A findAndModify, retried through the other proxy, answers with the document it
    // changed, and changed it once.
    let modify = retryable(
        doc! {
            "findAndModify": "patterned",
            "query": { "_id": 0 },
            "update": { "$push": { "buyers": "f" } },
            "new": true,
        },
        9,
        5,
        &database,
    );
    let answered = run(&before, &modify);
    let value = answered.get_document("value").expect("the new document");
    assert_eq!(
        value.get_array("buyers").expect("buyers").len(),
        5,
        "{answered}"
    );
    for _ in 0..2 {
        let again = run(&after, &modify);
        assert_eq!(again.get("value"), answered.get("value"), "{again}");
        assert_eq!(
            again.get("lastErrorObject"),
            answered.get("lastErrorObject")
        );
    }
    assert_eq!(buyers(0), Some(5), "the findAndModify applied once");

    // Another session has its own records.
    let other = retryable(
        doc! { "update": "patterned", "updates": [{ "q": { "_id": 0 }, "u": { "$push": { "buyers": "e" } } }] },
        10,
        1,
        &database,
    );
    assert_eq!(run(&after, &other).get_i32("nModified").ok(), Some(1));
    assert_eq!(buyers(0), Some(6));
    // One record per (session, statement): session 9 reused statements 0 and 1.
    let records = client
        .database(&database)
        .collection::<Document>(spillway_mongodb::RETRY_COLLECTION)
        .count_documents(
            doc! { "_id.lsid": { "$in": ([9, 10].map(|session| Bson::Binary(Binary { subtype: BinarySubtype::Uuid, bytes: vec![session; 16] }))).to_vec() } },
        )
        .run()
        .expect("count");
    assert_eq!(records, 3);
}

/// Clients of each proxy pushing to one book, and the pushes of each.
const CLIENTS: usize = 8;
const PUSHES: usize = 15;

#[test]
fn two_proxies_on_one_upstream_lose_and_duplicate_nothing() {
    let upstream = upstream();
    let proxies = [proxy(upstream), proxy(upstream)];
    let name = unique("viral");
    let first = client(proxies[0]);
    let database = first.database(&name);
    database
        .collection::<Document>("books")
        .insert_one(doc! { "_id": 1, "buyers": [] })
        .run()
        .expect("insert");
    database
        .run_command(doc! { "setPattern": "books", "outlier": "buyers", "threshold": 20 })
        .run()
        .expect("setPattern");
    // The other proxy follows the declaration within its refresh time.
    std::thread::sleep(POLICY_REFRESH + Duration::from_millis(100));
    std::thread::scope(|scope| {
        for writer in 0..CLIENTS * 2 {
            let address = proxies[writer % 2];
            let name = name.clone();
            scope.spawn(move || {
                let books = client(address)
                    .database(&name)
                    .collection::<Document>("books");
                for push in 0..PUSHES {
                    books
                        .update_one(
                            doc! { "_id": 1 },
                            doc! { "$push": { "buyers": format!("w{writer}-{push}") } },
                        )
                        .run()
                        .expect("push");
                }
            });
        }
    });
    let book = database
        .collection::<Document>("books")
        .find_one(doc! { "_id": 1 })
        .run()
        .expect("find")
        .expect("the book");
    let buyers = book.get_array("buyers").expect("buyers");
    assert_eq!(buyers.len(), CLIENTS * 2 * PUSHES);
    let distinct: std::collections::HashSet<_> = buyers.iter().map(ToString::to_string).collect();
    assert_eq!(distinct.len(), buyers.len(), "no push applied twice");
    let stored = database
        .collection::<Document>("system.stored.books")
        .find_one(doc! { "_id": 1 })
        .run()
        .expect("find")
        .expect("the stored book");
    assert_eq!(stored.get_array("buyers").expect("buyers").len(), 20);
    let verify = database
        .run_command(doc! { "verifyPatterns": 1 })
        .run()
        .expect("verify");
    assert_eq!(verify.get_array("violations").expect("violations").len(), 0);
}

#[test]
fn an_unreachable_upstream_is_a_network_error_that_names_it() {
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let address = closed.local_addr().expect("address");
    drop(closed);
    let error = one_find(proxy(address)).expect_err("no upstream");
    assert!(
        error.to_string().contains("upstream unreachable"),
        "{error}"
    );
}

/// The code of a command's error reply.
fn code(error: &Error) -> Option<i32> {
    match error.kind.as_ref() {
        ErrorKind::Command(command) => Some(command.code),
        ErrorKind::Write(WriteFailure::WriteError(failure)) => Some(failure.code),
        _ => None,
    }
}

/// The collection names of `database`, sorted.
fn names(database: &MongoDatabase) -> Vec<String> {
    let mut names = database.list_collection_names().run().expect("names");
    names.sort();
    names
}

/// The side collections of the policies of `database`, as `getPatterns` names them.
fn side_collections(database: &MongoDatabase) -> Vec<String> {
    let reply = database
        .run_command(doc! { "getPatterns": 1 })
        .run()
        .expect("getPatterns");
    let mut sides: Vec<String> = reply
        .get_array("patterns")
        .expect("patterns")
        .iter()
        .filter_map(Bson::as_document)
        .filter_map(|pattern| {
            pattern
                .get_str("overflowCollection")
                .or_else(|_| pattern.get_str("archiveCollection"))
                .ok()
                .map(str::to_owned)
        })
        .collect();
    sides.sort();
    sides.dedup();
    sides
}

#[test]
fn list_collections_shows_what_the_same_data_without_policies_shows_and_no_bookkeeping() {
    let upstream = upstream();
    let proxied = client(proxy(upstream));
    let direct = client(upstream);
    let (plain, patterned) = books(&proxied);
    let database = proxied.database(patterned.namespace().db.as_str());
    // The same collections, with the same documents, in a database without policies.
    let bare = proxied.database(&unique("bare"));
    for name in ["plain", "patterned", "more0", "more1", "more2"] {
        let documents = all(&plain, doc! {});
        bare.collection::<Document>(name)
            .insert_many(documents.clone())
            .run()
            .expect("insert bare");
        if name.starts_with("more") {
            database
                .collection::<Document>(name)
                .insert_many(documents)
                .run()
                .expect("insert more");
        }
    }
    let sides = side_collections(&database);
    assert_eq!(sides, ["extra_patterned", "reviews"]);
    let listed = names(&database);
    let without_sides: Vec<&String> = listed.iter().filter(|name| !sides.contains(name)).collect();
    assert_eq!(without_sides, names(&bare).iter().collect::<Vec<_>>());
    for side in &sides {
        assert!(
            listed.contains(side),
            "side collections stay listed: {listed:?}"
        );
    }
    // The upstream holds the bookkeeping: the proxy leaves it out.
    let upstream_names = names(&direct.database(patterned.namespace().db.as_str()));
    for bookkeeping in [POLICY_COLLECTION, STAMP_COLLECTION, RETRY_COLLECTION] {
        assert!(upstream_names.iter().any(|name| name == bookkeeping));
        assert!(!listed.iter().any(|name| name == bookkeeping), "{listed:?}");
    }
    assert_eq!(upstream_names.len(), listed.len() + 3);
    // The client's filter still applies, combined with the proxy's.
    let filtered = |database: &MongoDatabase, filter: Document| {
        let mut names = database
            .list_collection_names()
            .filter(filter)
            .run()
            .expect("filtered names");
        names.sort();
        names
    };
    assert_eq!(
        filtered(
            &database,
            doc! { "name": { "$regex": "^(spill|pat|more1)" } }
        ),
        ["more1", "patterned"]
    );
    assert!(filtered(&database, doc! { "name": POLICY_COLLECTION }).is_empty());
    // Whole specifications, one per batch: the upstream's cursor, read with getMore.
    let first_batch = database
        .run_command(doc! { "listCollections": 1, "cursor": { "batchSize": 1 } })
        .run()
        .expect("listCollections");
    let cursor = first_batch.get_document("cursor").expect("a cursor");
    assert_eq!(cursor.get_array("firstBatch").expect("a batch").len(), 1);
    assert_ne!(cursor.get_i64("id").ok(), Some(0), "more to come: {cursor}");
    let mut specified: Vec<String> = database
        .list_collections()
        .batch_size(1)
        .authorized_collections(true)
        .run()
        .expect("list")
        .map(|specification| specification.map(|specification| specification.name))
        .collect::<Result<_, _>>()
        .expect("specifications");
    specified.sort();
    assert_eq!(specified, listed);
    // dbStats counts what listCollections lists.
    let stats = |database: &MongoDatabase| {
        database
            .run_command(doc! { "dbStats": 1 })
            .run()
            .expect("dbStats")
            .get_i64("collections")
            .expect("collections")
    };
    assert_eq!(stats(&database), listed.len() as i64);
    assert_eq!(
        stats(&direct.database(patterned.namespace().db.as_str())),
        listed.len() as i64 + 3
    );
    assert_eq!(stats(&bare), names(&bare).len() as i64);
}

/// Renames collection `from` to `to` of `database` through `client`.
fn rename(
    client: &Client,
    database: &str,
    from: &str,
    to: &str,
    drop_target: bool,
) -> Result<Document, Error> {
    client
        .database("admin")
        .run_command(doc! {
            "renameCollection": format!("{database}.{from}"),
            "to": format!("{database}.{to}"),
            "dropTarget": drop_target,
        })
        .run()
}

fn violations(database: &MongoDatabase) -> Vec<Bson> {
    database
        .run_command(doc! { "verifyPatterns": 1 })
        .run()
        .expect("verify")
        .get_array("violations")
        .expect("violations")
        .clone()
}

#[test]
fn a_collection_with_a_policy_is_renamed_with_its_policies_and_keeps_answering() {
    let upstream = upstream();
    let first = client(proxy(upstream));
    let second = client(proxy(upstream));
    let direct = client(upstream);
    let (plain, patterned) = books(&first);
    let name = patterned.namespace().db;
    let database = first.database(&name);
    let logical = all(&patterned, doc! {});
    assert_eq!(logical, all(&plain, doc! {}));
    // The second proxy routes the old name by the policies before the rename.
    let seen_by_second = second.database(&name).collection::<Document>("patterned");
    assert_eq!(all(&seen_by_second, doc! {}), logical);
    let before = names(&database);

    rename(&first, &name, "patterned", "renamed", false).expect("renamed");

    let renamed = database.collection::<Document>("renamed");
    assert_eq!(
        all(&renamed, doc! {}),
        logical,
        "every spilled element reachable"
    );
    assert!(all(&patterned, doc! {}).is_empty(), "the old name is gone");
    let expected: Vec<String> = before
        .iter()
        .map(|listed| {
            if listed == "patterned" {
                "renamed".to_owned()
            } else {
                listed.clone()
            }
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        names(&database),
        expected,
        "the side collections keep their names"
    );
    let patterns = database
        .run_command(doc! { "getPatterns": 1 })
        .run()
        .expect("getPatterns");
    let collections: Vec<&str> = patterns
        .get_array("patterns")
        .expect("patterns")
        .iter()
        .map(|pattern| {
            pattern
                .as_document()
                .expect("a pattern")
                .get_str("collection")
                .expect("collection")
        })
        .collect();
    assert_eq!(collections, ["renamed", "renamed"]);
    assert_eq!(side_collections(&database), ["extra_patterned", "reviews"]);
    assert!(violations(&database).is_empty());
    // The second proxy follows the rename (its cache of the policies expired while the
    // first waited for it to).
    assert_eq!(
        all(
            &second.database(&name).collection::<Document>("renamed"),
            doc! {}
        ),
        logical
    );
    assert!(all(&seen_by_second, doc! {}).is_empty());
    // No write stamp is left under the old name.
    let stamps = direct
        .database(&name)
        .collection::<Document>(STAMP_COLLECTION);
    assert_eq!(
        stamps
            .count_documents(doc! { "_id.c": "patterned" })
            .run()
            .expect("count"),
        0
    );
    // Writes go on through the policies under the new name, and spill.
    for collection in [&plain, &renamed] {
        collection
            .update_one(
                doc! { "_id": 1 },
                doc! { "$push": { "buyers": { "$each": ["a", "b", "c", "d", "e"] },
                "reviews": { "$each": [{ "stars": 5, "by": "late" }], "$position": 0 } } },
            )
            .run()
            .expect("push");
        collection
            .insert_one(doc! { "_id": 50, "buyers": ["p", "q", "r", "s"], "reviews": [] })
            .run()
            .expect("insert");
    }
    assert_eq!(all(&renamed, doc! {}), all(&plain, doc! {}));
    let stored = database.collection::<Document>("system.stored.renamed");
    for id in [1, 50] {
        let main = stored
            .find_one(doc! { "_id": id })
            .run()
            .expect("find")
            .expect("stored");
        assert_eq!(main.get_array("buyers").expect("buyers").len(), 3, "{main}");
        assert_eq!(main.get_bool("has_extras").ok(), Some(true), "{main}");
    }
    assert_eq!(
        renamed
            .count_documents(doc! { "buyers": "e" })
            .run()
            .expect("count"),
        1
    );
    assert!(violations(&database).is_empty());
}

#[test]
fn what_the_embedded_database_refuses_to_rename_is_refused_and_changes_nothing() {
    let upstream = upstream();
    let client = client(proxy(upstream));
    let (_, patterned) = books(&client);
    let name = patterned.namespace().db;
    let database = client.database(&name);
    let logical = all(&patterned, doc! {});
    let before = names(&database);
    let refused = |from: &str, to: &str, drop_target: bool| {
        rename(&client, &name, from, to, drop_target).expect_err("refused")
    };
    let side = refused("extra_patterned", "overflow", false);
    assert_eq!(code(&side), Some(2), "{side}");
    assert!(side.to_string().contains("side collection"), "{side}");
    for drop_target in [false, true] {
        let onto_side = refused("plain", "reviews", drop_target);
        assert_eq!(code(&onto_side), Some(2), "{onto_side}");
        assert!(
            onto_side.to_string().contains("patterned.reviews")
                && onto_side.to_string().contains("side collection"),
            "{onto_side}"
        );
    }
    let exists = refused("patterned", "plain", false);
    assert_eq!(code(&exists), Some(48), "{exists}");
    let missing = refused("never", "patterned", false);
    assert_eq!(code(&missing), Some(26), "{missing}");
    let itself = refused("patterned", "patterned", false);
    assert_eq!(code(&itself), Some(20), "{itself}");
    let across = client
        .database("admin")
        .run_command(doc! {
            "renameCollection": format!("{name}.patterned"),
            "to": format!("{}.patterned", unique("elsewhere")),
        })
        .run()
        .expect_err("refused across databases");
    assert_eq!(code(&across), Some(20), "{across}");
    assert!(
        across.to_string().contains("within its database"),
        "{across}"
    );
    assert_eq!(names(&database), before);
    assert_eq!(all(&patterned, doc! {}), logical);
    assert_eq!(side_collections(&database), ["extra_patterned", "reviews"]);
    assert!(violations(&database).is_empty());

    // dropTarget onto a collection with a policy of its own: it goes as a drop takes it,
    // its created side collection with it.
    database
        .run_command(doc! { "setPattern": "target", "outlier": "items", "threshold": 1 })
        .run()
        .expect("setPattern");
    database
        .collection::<Document>("target")
        .insert_one(doc! { "_id": 1, "items": [1, 2, 3] })
        .run()
        .expect("insert");
    assert!(names(&database).contains(&"extra_target".to_owned()));
    let exists = refused("patterned", "target", false);
    assert_eq!(code(&exists), Some(48), "{exists}");
    rename(&client, &name, "patterned", "target", true).expect("dropTarget");
    let target = database.collection::<Document>("target");
    assert_eq!(all(&target, doc! {}), logical);
    assert_eq!(side_collections(&database), ["extra_patterned", "reviews"]);
    let listed = names(&database);
    assert!(!listed.contains(&"extra_target".to_owned()), "{listed:?}");
    assert!(!listed.contains(&"patterned".to_owned()), "{listed:?}");
    assert!(violations(&database).is_empty());
    // A plain collection renamed onto it, dropping it: the policies go with the target.
    rename(&client, &name, "plain", "target", true).expect("plain onto patterned");
    assert!(side_collections(&database).is_empty());
    assert_eq!(all(&target, doc! {}), logical, "the plain books, unsplit");
    let listed = names(&database);
    assert!(
        !listed.contains(&"extra_patterned".to_owned()),
        "{listed:?}"
    );
    assert!(!listed.contains(&"plain".to_owned()), "{listed:?}");
}

#[test]
fn a_rename_a_stopped_proxy_left_is_finished_by_the_next_attempt_or_the_next_proxy() {
    let upstream = upstream();
    let direct = client(upstream);
    let first = client(proxy(upstream));
    let (_, patterned) = books(&first);
    let name = patterned.namespace().db;
    let logical = all(&patterned, doc! {});
    let policies = direct
        .database(&name)
        .collection::<Document>(POLICY_COLLECTION);
    let record = |from: &str, to: &str| {
        policies
            .update_one(
                doc! { "_id": POLICY_DOCUMENT_ID },
                doc! { "$set": { "rename": { "from": from, "to": to, "drop_target": false } } },
            )
            .run()
            .expect("the intent, as a proxy stopped after writing it leaves it");
    };
    // Stopped after writing the intent: both names are busy, until the rename is sent again.
    record("patterned", "moved");
    let later = client(proxy(upstream));
    let database = later.database(&name);
    let busy = all_or_error(&database.collection::<Document>("patterned"));
    assert_eq!(busy.as_ref().err().and_then(code), Some(117), "{busy:?}");
    let busy = database
        .collection::<Document>("moved")
        .insert_one(doc! { "_id": 1 })
        .run()
        .expect_err("busy");
    assert_eq!(code(&busy), Some(117), "{busy}");
    let other = rename(&later, &name, "patterned", "elsewhere", false).expect_err("another rename");
    assert_eq!(code(&other), Some(117), "{other}");
    // A policy declared meanwhile on another collection (its migration saves the policies)
    // keeps the intent beside them.
    database
        .collection::<Document>("other")
        .insert_one(doc! { "_id": 1, "tags": [1, 2, 3, 4, 5] })
        .run()
        .expect("insert other");
    database
        .run_command(doc! { "setPattern": "other", "outlier": "tags", "threshold": 2 })
        .run()
        .expect("setPattern on another collection");
    let stored = policies
        .find_one(doc! { "_id": POLICY_DOCUMENT_ID })
        .run()
        .expect("find")
        .expect("the policy document");
    assert!(stored.contains_key("rename"), "{stored}");
    rename(&later, &name, "patterned", "moved", false).expect("sent again, finished");
    assert_eq!(
        all(&database.collection::<Document>("moved"), doc! {}),
        logical
    );
    assert!(violations(&database).is_empty());

    // Stopped after the upstream renamed the collection: the next proxy that reads the
    // policies finishes it.
    record("moved", "again");
    direct
        .database("admin")
        .run_command(
            doc! { "renameCollection": format!("{name}.moved"), "to": format!("{name}.again") },
        )
        .run()
        .expect("the upstream's rename");
    let next = client(proxy(upstream));
    let database = next.database(&name);
    assert_eq!(
        all(&database.collection::<Document>("again"), doc! {}),
        logical
    );
    let stored = policies
        .find_one(doc! { "_id": POLICY_DOCUMENT_ID })
        .run()
        .expect("find")
        .expect("the policy document");
    assert!(!stored.contains_key("rename"), "{stored}");
    assert!(violations(&database).is_empty());
    // The first proxy, which cached the policies long ago, follows too.
    std::thread::sleep(POLICY_REFRESH);
    assert_eq!(
        all(
            &first.database(&name).collection::<Document>("again"),
            doc! {}
        ),
        logical
    );
}

fn all_or_error(collection: &Collection<Document>) -> Result<Vec<Document>, Error> {
    collection
        .find(doc! {})
        .run()
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
}
