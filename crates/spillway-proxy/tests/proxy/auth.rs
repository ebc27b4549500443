//! Logins on both sides of the proxy: the proxy to an upstream that requires SCRAM (over TLS
//! too), and clients to a proxy with `--auth`, whose own roles hold whatever the proxy's
//! upstream user may do.

use spillway_server::TlsFiles;

use super::*;

const PROXY_PASSWORD: &str = "pw-proxy";

/// A user's client of `address`, logged in with the `admin` database as its source.
fn client_as(address: SocketAddr, user: &str, password: &str, extra: &str) -> Client {
    Client::with_uri_str(format!(
        "mongodb://{user}:{password}@{address}/?authSource=admin&directConnection=true\
         &serverSelectionTimeoutMS=20000{extra}"
    ))
    .expect("a client")
}

/// An upstream with `--auth` (and TLS with `tls`) whose first user, `proxy`, has the root
/// role, created through the localhost exception, and a second, `legacy`, with SCRAM-SHA-1
/// credentials only. `extra` is what a client's URI needs for TLS.
fn guarded_upstream(tls: Option<TlsFiles>, extra: &str) -> SocketAddr {
    let address = serve_with(
        Commands::new(Database::open_in_memory().expect("an in-memory database")),
        ServerOptions {
            auth: true,
            tls,
            ..options()
        },
    );
    let anonymous = Client::with_uri_str(format!(
        "mongodb://{address}/?directConnection=true&serverSelectionTimeoutMS=20000{extra}"
    ))
    .expect("a client");
    anonymous
        .database("admin")
        .run_command(doc! { "createUser": "proxy", "pwd": PROXY_PASSWORD, "roles": ["root"] })
        .run()
        .expect("the first user, from loopback");
    client_as(address, "proxy", PROXY_PASSWORD, extra)
        .database("admin")
        .run_command(doc! {
            "createUser": "legacy", "pwd": "pw-legacy", "roles": ["root"],
            "mechanisms": ["SCRAM-SHA-1"],
        })
        .run()
        .expect("a SCRAM-SHA-1 user");
    address
}

/// Pushes past the threshold through `proxy` and reads the logical and the stored book back.
fn pushes_spill_through(proxy: SocketAddr) {
    let client = client(proxy);
    let (plain, patterned) = books(&client);
    for collection in [&plain, &patterned] {
        for buyer in ["b1", "b2", "b3", "b4", "b5"] {
            collection
                .update_one(doc! { "_id": 100 }, doc! { "$push": { "buyers": buyer } })
                .upsert(true)
                .run()
                .expect("push");
        }
    }
    let logical = |collection: &Collection<Document>| {
        collection
            .find_one(doc! { "_id": 100 })
            .run()
            .expect("find")
            .expect("book 100")
    };
    assert_eq!(logical(&plain), logical(&patterned));
    let stored = client
        .database(&patterned.namespace().db)
        .collection::<Document>("system.stored.patterned")
        .find_one(doc! { "_id": 100 })
        .run()
        .expect("find")
        .expect("the stored book");
    assert_eq!(stored.get_array("buyers").expect("buyers").len(), 3);
}

#[test]
fn the_proxy_logs_in_to_an_upstream_that_requires_it_with_either_mechanism() {
    let upstream = guarded_upstream(None, "");
    for (user, password, mechanism) in [
        ("proxy", PROXY_PASSWORD, ""),
        ("proxy", PROXY_PASSWORD, "&authMechanism=SCRAM-SHA-256"),
        // Negotiated from saslSupportedMechs: the user has SCRAM-SHA-1 credentials only.
        ("legacy", "pw-legacy", ""),
    ] {
        let uri = format!("mongodb://{user}:{password}@{upstream}/?authSource=admin{mechanism}");
        pushes_spill_through(serve(ProxyExecutor::new(&uri).expect("a proxy")));
    }
}

#[test]
fn refused_upstream_credentials_reach_the_client_as_an_authentication_failure() {
    let upstream = guarded_upstream(None, "");
    let uri = format!("mongodb://proxy:wrong@{upstream}/?authSource=admin");
    let proxy = serve(ProxyExecutor::new(&uri).expect("a proxy: nothing is connected yet"));
    let error = one_find(proxy).expect_err("the upstream refuses the proxy");
    let message = error.to_string();
    assert!(
        message.contains("could not log in to the upstream") && message.contains("proxy@admin"),
        "{message}"
    );
    assert!(
        !message.contains("wrong"),
        "the password is never shown: {message}"
    );
    assert_eq!(code_of(&error), Some(18), "AuthenticationFailed: {message}");
    // The proxy with the right password serves the same upstream.
    let uri = format!("mongodb://proxy:{PROXY_PASSWORD}@{upstream}/?authSource=admin");
    pushes_spill_through(serve(ProxyExecutor::new(&uri).expect("a proxy")));
}

#[test]
fn the_proxy_speaks_tls_to_an_upstream_whose_certificate_it_checks() {
    let directory = tempfile::tempdir().expect("a directory");
    let generated =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).expect("a certificate");
    let certificate = directory.path().join("upstream.pem");
    let private_key = directory.path().join("upstream.key");
    std::fs::write(&certificate, generated.cert.pem()).expect("write");
    std::fs::write(&private_key, generated.signing_key.serialize_pem()).expect("write");
    let ca = format!("&tls=true&tlsCAFile={}", certificate.display());
    let upstream = guarded_upstream(
        Some(TlsFiles {
            certificate,
            private_key,
        }),
        &ca,
    );
    let login = format!("proxy:{PROXY_PASSWORD}@{upstream}");
    let uri = format!("mongodb://{login}/?authSource=admin{ca}");
    pushes_spill_through(serve(ProxyExecutor::new(&uri).expect("a proxy")));

    // Without the CA, the upstream's certificate is not trusted: nothing is sent.
    let untrusted = format!("mongodb://{login}/?authSource=admin&tls=true");
    let proxy = serve(ProxyExecutor::new(&untrusted).expect("a proxy"));
    let error = one_find(proxy).expect_err("an untrusted certificate");
    assert!(error.to_string().contains("TLS"), "{error}");
    let refused = ProxyExecutor::new(&format!("{untrusted}&tlsAllowInvalidCertificates=true"))
        .expect_err("certificate checks stay on");
    assert!(
        refused.to_string().contains("tlsAllowInvalidCertificates"),
        "{refused}"
    );
}

/// The code of a command failure.
fn code_of(error: &spillway_mongodb::mongodb::error::Error) -> Option<i32> {
    match *error.kind {
        spillway_mongodb::mongodb::error::ErrorKind::Command(ref failure) => Some(failure.code),
        _ => None,
    }
}

#[test]
fn clients_of_a_proxy_with_auth_reach_only_what_their_own_roles_allow() {
    let upstream = upstream();
    let proxy = serve_with(
        ProxyExecutor::new(&format!("mongodb://{upstream}/"))
            .expect("a proxy")
            .with_users(Database::open_in_memory().expect("the proxy's users")),
        ServerOptions {
            auth: true,
            ..options()
        },
    );
    let anonymous = client(proxy);
    let shop = unique("shop");
    let refused = anonymous
        .database(&shop)
        .run_command(doc! { "find": "books" })
        .run()
        .expect_err("nobody is logged in");
    assert_eq!(code_of(&refused), Some(13), "{refused}");
    anonymous
        .database("admin")
        .run_command(doc! { "createUser": "boss", "pwd": "pw-boss", "roles": ["root"] })
        .run()
        .expect("the first user, from loopback");

    let boss = client_as(proxy, "boss", "pw-boss", "");
    let database = boss.database(&shop);
    database
        .run_command(doc! { "setPattern": "books", "outlier": "buyers", "threshold": 2 })
        .run()
        .expect("setPattern");
    let books = database.collection::<Document>("books");
    books
        .insert_one(doc! { "_id": 1, "buyers": ["a", "b", "c", "d"] })
        .run()
        .expect("insert");
    boss.database("admin")
        .run_command(doc! {
            "createUser": "reader", "pwd": "pw-reader",
            "roles": [{ "role": "read", "db": shop.as_str() }],
        })
        .run()
        .expect("a reader of the shop");

    let reader = client_as(proxy, "reader", "pw-reader", "");
    let read = reader
        .database(&shop)
        .collection::<Document>("books")
        .find_one(doc! { "_id": 1 })
        .run()
        .expect("the reader reads the logical book")
        .expect("book 1");
    assert_eq!(read.get_array("buyers").expect("buyers").len(), 4);
    let write = reader
        .database(&shop)
        .collection::<Document>("books")
        .update_one(doc! { "_id": 1 }, doc! { "$push": { "buyers": "e" } })
        .run()
        .expect_err("a reader cannot write, though the proxy's upstream user can");
    assert_eq!(code_of(&write), Some(13), "{write}");
    let elsewhere = reader
        .database(&unique("other"))
        .run_command(doc! { "find": "books" })
        .run()
        .expect_err("nor read another database");
    assert_eq!(code_of(&elsewhere), Some(13), "{elsewhere}");
    let policy = reader
        .database(&shop)
        .run_command(doc! { "removePattern": "books", "field": "buyers" })
        .run()
        .expect_err("nor change a policy");
    assert_eq!(code_of(&policy), Some(13), "{policy}");

    // The proxy's users are its own: the upstream has none.
    let users = client(upstream)
        .database("admin")
        .run_command(doc! { "usersInfo": 1 })
        .run()
        .expect("usersInfo upstream");
    assert!(
        users.get_array("users").expect("users").is_empty(),
        "{users}"
    );
    let book = client(upstream)
        .database(&shop)
        .collection::<Document>("books")
        .find_one(doc! { "_id": 1 })
        .run()
        .expect("find upstream")
        .expect("the stored book");
    assert_eq!(
        book.get_array("buyers").expect("buyers").len(),
        2,
        "the reader wrote nothing"
    );
}
