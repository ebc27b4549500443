//! A database written with the embedded API, served over the wire: its collections (stored
//! without a database prefix) are one database named after the directory, or the name
//! `ServerOptions::embedded_database` gives; collections already stored under that name's
//! prefix stay served instead, with a notice naming what is left out.

use std::path::Path;
use std::time::Duration;

use bson::{Document, doc};
use mongodb::Client;
use mongodb::options::ClientOptions;
use spillway::command::{Commands, Namespaces};
use spillway::{Database, Pattern};
use spillway_server::{ServerError, ServerOptions, naming};

use crate::common;

async fn connect(address: std::net::SocketAddr) -> Client {
    let uri = format!("mongodb://{address}/?serverSelectionTimeoutMS=10000&directConnection=true");
    Client::with_options(ClientOptions::parse(uri).await.expect("a valid URI")).expect("a client")
}

/// Options of a test server over the directory `directory`.
fn options_for(directory: &Path, embedded_database: Option<&str>) -> ServerOptions {
    ServerOptions {
        database_path: Some(directory.display().to_string()),
        embedded_database: embedded_database.map(str::to_owned),
        ..common::options()
    }
}

/// What the embedded API writes: `books`, and `sales` under an outlier policy whose second
/// book has more buyers than the threshold (its extras are in `extra_sales`).
fn write_embedded(directory: &Path) {
    let db = Database::open(directory).expect("open");
    db.collection::<Document>("books")
        .insert_many([
            doc! { "_id": 1, "title": "Dune" },
            doc! { "_id": 2, "title": "Emma" },
        ])
        .run()
        .expect("insert books");
    db.create_collection("sales").run().expect("create sales");
    db.set_pattern(
        Pattern::outlier("sales", "buyers")
            .threshold(3)
            .overflow_collection("extra_sales")
            .link_field("book_id"),
    )
    .expect("set the pattern");
    let buyers: Vec<String> = (0..10).map(|n| format!("user{n}")).collect();
    db.collection::<Document>("sales")
        .insert_one(doc! { "_id": 7, "buyers": buyers })
        .run()
        .expect("insert a sale");
}

/// Starts a server as `serve_blocking` does: the naming decided at start.
async fn serve(directory: &Path, options: ServerOptions) -> (common::Running, Option<String>) {
    let database = Database::open(directory).expect("reopen");
    let naming = naming(&database, &options).expect("a naming");
    let commands = Commands::with_namespaces(database, naming.namespaces);
    (common::start_with(commands, options).await, naming.notice)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedded_collections_are_the_database_named_after_the_directory() {
    let temporary = tempfile::tempdir().unwrap();
    let directory = temporary.path().join("shelf");
    write_embedded(&directory);
    let (server, notice) = serve(&directory, options_for(&directory, None)).await;
    let notice = notice.expect("a notice says which database serves them");
    assert!(notice.contains("as database 'shelf'"), "{notice}");
    let client = connect(server.address).await;

    let databases = client.list_databases().await.expect("listDatabases");
    let shelf = databases
        .iter()
        .find(|database| database.name == "shelf")
        .unwrap_or_else(|| panic!("shelf is listed: {databases:?}"));
    assert!(shelf.size_on_disk > 0, "{shelf:?}");
    let db = client.database("shelf");
    let mut names = db.list_collection_names().await.expect("listCollections");
    names.sort();
    assert_eq!(names, ["books", "extra_sales", "sales"]);
    let mut cursor = db
        .collection::<Document>("books")
        .find(doc! {})
        .sort(doc! { "_id": 1 })
        .await
        .expect("find");
    let mut titles = Vec::new();
    while cursor.advance().await.expect("getMore") {
        let book = cursor.deserialize_current().expect("a document");
        titles.push(book.get_str("title").unwrap().to_owned());
    }
    drop(cursor);
    assert_eq!(titles, ["Dune", "Emma"]);
    // The logical document whole, and its stored layout under system.stored.<collection>.
    let sale = db
        .collection::<Document>("sales")
        .find_one(doc! { "_id": 7 })
        .await
        .unwrap()
        .expect("the sale");
    assert_eq!(sale.get_array("buyers").unwrap().len(), 10);
    let stored = db
        .collection::<Document>("system.stored.sales")
        .find_one(doc! { "_id": 7 })
        .await
        .unwrap()
        .expect("the stored sale");
    assert_eq!(stored.get_array("buyers").unwrap().len(), 3, "{stored}");
    let stats = db
        .run_command(doc! { "dbStats": 1 })
        .await
        .expect("dbStats");
    assert_eq!(stats.get_str("db").unwrap(), "shelf");
    assert_eq!(stats.get_i64("collections").unwrap(), 3, "{stats}");
    // Stored documents: two books, the sale, and one side bucket of its 7 extra buyers.
    assert_eq!(stats.get_i64("objects").unwrap(), 2 + 1 + 1, "{stats}");

    // Writes over the wire, to the embedded database and to a prefixed one.
    db.collection::<Document>("books")
        .insert_one(doc! { "_id": 3, "title": "Ulysses" })
        .await
        .expect("insert over the wire");
    db.collection::<Document>("books")
        .create_index(
            mongodb::IndexModel::builder()
                .keys(doc! { "title": 1 })
                .build(),
        )
        .await
        .expect("createIndexes");
    db.create_collection("loans").await.expect("create");
    client
        .database("admin")
        .run_command(doc! { "renameCollection": "shelf.loans", "to": "shelf.lent" })
        .await
        .expect("renameCollection");
    db.run_command(doc! {
        "create": "titled",
        "viewOn": "books",
        "pipeline": [{ "$lookup": { "from": "sales", "localField": "_id", "foreignField": "_id", "as": "sold" } }],
    })
    .await
    .expect("a view");
    let view = db
        .run_command(doc! { "listCollections": 1, "filter": { "name": "titled" } })
        .await
        .unwrap();
    let listed = view
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .get_document("options")
        .unwrap()
        .clone();
    assert_eq!(listed.get_str("viewOn").unwrap(), "books", "{listed}");
    let lookup = listed.get_array("pipeline").unwrap()[0]
        .as_document()
        .unwrap();
    assert_eq!(
        lookup
            .get_document("$lookup")
            .unwrap()
            .get_str("from")
            .unwrap(),
        "sales"
    );
    client
        .database("other")
        .collection::<Document>("c")
        .insert_one(doc! { "_id": 1 })
        .await
        .expect("a prefixed database beside it");
    let error = db
        .collection::<Document>("old.books")
        .insert_one(doc! { "_id": 1 })
        .await
        .expect_err("a '.' in an embedded collection name would make it another database");
    match *error.kind {
        mongodb::error::ErrorKind::Command(ref command) => assert_eq!(command.code, 73),
        ref other => panic!("expected InvalidNamespace, got {other:?}"),
    }

    // A database-level change stream reports the embedded database's changes as its own.
    let mut stream = db.watch().await.expect("a database change stream");
    client
        .database("other")
        .collection::<Document>("c")
        .insert_one(doc! { "_id": 2 })
        .await
        .unwrap();
    db.collection::<Document>("books")
        .insert_one(doc! { "_id": 4, "title": "Beloved" })
        .await
        .unwrap();
    let event = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            if let Some(event) = stream.next_if_any().await.expect("a valid event") {
                break event;
            }
        }
    })
    .await
    .expect("an event within 20 s");
    let namespace = event.ns.expect("a namespace");
    assert_eq!(namespace.db, "shelf");
    assert_eq!(namespace.coll.as_deref(), Some("books"));
    drop(stream);

    // The profiler and `aggregate: 1` have the embedded database's `system.` space.
    db.run_command(doc! { "profile": 2 })
        .await
        .expect("profile");
    db.collection::<Document>("books")
        .find_one(doc! { "_id": 1 })
        .await
        .unwrap();
    db.run_command(doc! { "profile": 0 })
        .await
        .expect("profile off");
    let profiled = db
        .collection::<Document>("system.profile")
        .count_documents(doc! { "ns": "shelf.books" })
        .await
        .expect("read system.profile");
    assert!(profiled >= 1, "the find was profiled");
    let mut documents = db
        .aggregate([doc! { "$documents": [{ "x": 1 }] }])
        .await
        .expect("aggregate: 1");
    assert!(documents.advance().await.expect("the document"));
    assert_eq!(documents.deserialize_current().unwrap(), doc! { "x": 1 });
    drop(documents);
    client.shutdown().await;
    server.stop().await;

    // The embedded API sees what was written over the wire, under the names it uses.
    let db = Database::open(&directory).expect("reopen");
    let ulysses = db
        .collection::<Document>("books")
        .find_one(doc! { "_id": 3 })
        .run()
        .unwrap()
        .expect("the book written over the wire");
    assert_eq!(ulysses.get_str("title").unwrap(), "Ulysses");
    let names = db.list_collection_names().run().unwrap();
    for name in ["books", "lent", "titled", "other.c", ".system.profile"] {
        assert!(
            names.iter().any(|known| known == name),
            "{name} in {names:?}"
        );
    }
    assert!(
        !names.iter().any(|known| known.starts_with("shelf.")),
        "{names:?}"
    );
    let indexes = db
        .collection::<Document>("books")
        .list_index_names()
        .run()
        .unwrap();
    assert!(indexes.iter().any(|name| name == "title_1"), "{indexes:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn collections_already_under_the_directory_name_stay_served_and_a_notice_names_the_rest() {
    let temporary = tempfile::tempdir().unwrap();
    let directory = temporary.path().join("shelf");
    write_embedded(&directory);
    {
        // What a server wrote before: database `shelf`, stored under its prefix.
        let commands = Commands::new(Database::open(&directory).unwrap());
        let reply = commands.execute(doc! {
            "insert": "old", "documents": [{ "_id": 1, "kept": true }], "$db": "shelf",
        });
        assert_eq!(reply.get_i32("n").unwrap(), 1, "{reply}");
    }
    let (server, notice) = serve(&directory, options_for(&directory, None)).await;
    let notice = notice.expect("a notice");
    assert!(
        notice.starts_with("not serving the 3 collections stored without a database prefix (books, extra_sales, sales)"),
        "{notice}"
    );
    assert!(notice.contains("shelf.old"), "{notice}");
    assert!(notice.contains("--embedded-database NAME"), "{notice}");
    let client = connect(server.address).await;
    let db = client.database("shelf");
    assert_eq!(db.list_collection_names().await.unwrap(), ["old"]);
    let kept = db
        .collection::<Document>("old")
        .find_one(doc! {})
        .await
        .unwrap()
        .expect("the prefixed document");
    assert_eq!(kept.get_bool("kept").ok(), Some(true));
    client.shutdown().await;
    server.stop().await;

    // The flag serves them under another name, beside the prefixed database.
    let (server, notice) = serve(&directory, options_for(&directory, Some("library"))).await;
    assert!(notice.unwrap().contains("database 'library'"));
    let client = connect(server.address).await;
    let mut names = client.list_database_names().await.unwrap();
    names.sort();
    assert_eq!(names, ["admin", "library", "shelf"]);
    let books = client
        .database("library")
        .collection::<Document>("books")
        .count_documents(doc! {})
        .await
        .unwrap();
    assert_eq!(books, 2);
    assert_eq!(
        client
            .database("shelf")
            .list_collection_names()
            .await
            .unwrap(),
        ["old"]
    );
    client.shutdown().await;
    server.stop().await;

    // The flag cannot merge the two.
    let database = Database::open(&directory).unwrap();
    let error = naming(&database, &options_for(&directory, Some("shelf"))).unwrap_err();
    assert!(
        matches!(error, ServerError::EmbeddedDatabase { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("shelf.old"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_name_that_cannot_name_a_database_serves_them_as_test_as_the_shell_names_it() {
    let temporary = tempfile::tempdir().unwrap();
    let directory = temporary.path().join("my shelf");
    write_embedded(&directory);
    let (server, notice) = serve(&directory, options_for(&directory, None)).await;
    let notice = notice.expect("a notice");
    assert!(notice.contains("as database 'test'"), "{notice}");
    assert!(notice.contains("cannot name a database"), "{notice}");
    let client = connect(server.address).await;
    let db = client.database("test");
    let mut names = db.list_collection_names().await.unwrap();
    names.sort();
    assert_eq!(names, ["books", "extra_sales", "sales"]);
    let sale = db
        .collection::<Document>("sales")
        .find_one(doc! { "_id": 7 })
        .await
        .unwrap()
        .expect("the sale");
    assert_eq!(sale.get_array("buyers").unwrap().len(), 10, "{sale}");
    db.collection::<Document>("books")
        .insert_one(doc! { "_id": 3, "title": "Ulysses" })
        .await
        .unwrap();
    client.shutdown().await;
    server.stop().await;
    let database = Database::open(&directory).unwrap();
    let ulysses = database
        .collection::<Document>("books")
        .find_one(doc! { "_id": 3 })
        .run()
        .unwrap();
    assert!(ulysses.is_some(), "the embedded API sees the wire's write");
    drop(database);

    // A fresh directory of that kind has nothing to serve as `test`: MongoDB's names stay.
    let fresh = temporary.path().join("v1.2");
    let database = Database::open(&fresh).unwrap();
    let chosen = naming(&database, &options_for(&fresh, None)).unwrap();
    assert_eq!(chosen.namespaces, Namespaces::Prefixed);
    assert_eq!(chosen.notice, None);
    // `test` already stored under its prefix stays served; the notice names what is left out.
    drop(database);
    let database = Database::open(&directory).unwrap();
    let reply = Commands::new(database.clone())
        .execute(doc! { "insert": "kept", "documents": [{ "_id": 1 }], "$db": "test" });
    assert_eq!(reply.get_i32("n").unwrap(), 1, "{reply}");
    let chosen = naming(&database, &options_for(&directory, None)).unwrap();
    assert_eq!(chosen.namespaces, Namespaces::Prefixed);
    let notice = chosen.notice.expect("a notice");
    assert!(notice.contains("test.kept"), "{notice}");
    assert!(notice.contains("--embedded-database NAME"), "{notice}");
}

#[test]
fn a_name_that_cannot_serve_is_refused() {
    let temporary = tempfile::tempdir().unwrap();
    let directory = temporary.path().join("shelf");
    write_embedded(&directory);
    let database = Database::open(&directory).unwrap();
    for bad in ["a.b", "", "admin", "system", "has space"] {
        let error = naming(&database, &options_for(&directory, Some(bad))).unwrap_err();
        assert!(
            matches!(error, ServerError::EmbeddedDatabase { .. }),
            "{bad}: {error}"
        );
    }
    let served = naming(&database, &options_for(&directory, Some("shelf"))).unwrap();
    assert!(matches!(served.namespaces, Namespaces::Embedding(ref name) if name.name() == "shelf"));
    // An in-memory database has no directory to name it after, and nothing to leave out.
    let memory = naming(&Database::open_in_memory().unwrap(), &common::options()).unwrap();
    assert_eq!(memory.namespaces, Namespaces::Prefixed);
    assert_eq!(memory.notice, None);
}
