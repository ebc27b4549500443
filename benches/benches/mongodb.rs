//! A `$push` through the MongoDB backend (`spillway-mongodb`: one transaction touching the
//! main document, its last bucket and its write stamp) against a book of 1,000 and of 100,000
//! buyers, beside the naive design through the plain driver (one document holding the whole
//! array, `$push` as one `update`), all against an in-process `spillway serve` (in-memory
//! database) over loopback, through the official driver's blocking API.
//!
//! Each measured `$push` is undone by an unmeasured `$pop`, so the array keeps its length
//! across the run. The bar (issue 12): the backend's `$push` within 2x between 1,000 and
//! 100,000 elements, where the naive one grows with the array (the server rewrites the whole
//! document). Figures in docs/benchmarks.md.
//!
//! The `proxy` group measures `spillway serve --upstream` (issue 32) in front of the same
//! server: a `$push` through the proxy to a book with a policy at 10 and at 100,000 buyers
//! beside the plain upstream's `$push` at the same lengths (the bar: the proxy's within 2x
//! between the two, where the plain one grows with the array), and a `find_one` by `_id` of a
//! collection without a policy through the proxy beside the same read on the upstream directly
//! (the bar: within 1.5x), and beside the same read through a TCP relay that moves bytes
//! and reads none (what one more hop costs on this machine: the floor of any proxy). The
//! proxy and the relay serve on a tokio runtime of their own, as a proxy runs in a process of
//! its own beside the deployment.
//!
//! This bench must never bind or connect anywhere but 127.0.0.1.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bson::{Document, doc};
use criterion::Criterion;
use mongodb::sync::{Client, Collection};
use spillway::Database;
use spillway::command::Commands;
use spillway_mongodb::{Pattern, PatternedCollection, PatternedDatabase};
use spillway_server::{Server, ServerOptions};

const LENGTHS: [usize; 2] = [1_000, 100_000];

/// The array lengths of the proxy's `$push` group.
const PROXY_LENGTHS: [usize; 2] = [10, 100_000];

fn buyers(length: usize) -> Vec<String> {
    (0..length).map(|n| format!("user{n:06}")).collect()
}

/// Times `iterations` pushes, each followed by an untimed pop.
fn pushes(iterations: u64, mut push: impl FnMut(), mut pop: impl FnMut()) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iterations {
        let started = Instant::now();
        push();
        total += started.elapsed();
        pop();
    }
    total
}

fn patterned_push(sales: &PatternedCollection) {
    sales
        .update_one(
            doc! { "_id": 1 },
            doc! { "$push": { "customers_purchased": "newcomer" } },
        )
        .run()
        .expect("push");
}

fn patterned_pop(sales: &PatternedCollection) {
    sales
        .update_one(
            doc! { "_id": 1 },
            doc! { "$pop": { "customers_purchased": 1 } },
        )
        .run()
        .expect("pop");
}

fn naive_push(sales: &Collection<Document>) {
    sales
        .update_one(
            doc! { "_id": 1 },
            doc! { "$push": { "customers_purchased": "newcomer" } },
        )
        .run()
        .expect("push");
}

fn naive_pop(sales: &Collection<Document>) {
    sales
        .update_one(
            doc! { "_id": 1 },
            doc! { "$pop": { "customers_purchased": 1 } },
        )
        .run()
        .expect("pop");
}

/// Serves `executor` on a free loopback port on `runtime`, until the bench exits.
fn serve(
    runtime: &tokio::runtime::Runtime,
    executor: impl spillway_server::Executor,
) -> std::net::SocketAddr {
    let server = runtime
        .block_on(Server::bind(
            executor,
            ServerOptions {
                port: 0,
                ..ServerOptions::default()
            },
        ))
        .expect("bind the server");
    let address = server.local_addr();
    runtime.spawn(server.run_until(std::future::pending::<()>()));
    address
}

/// A TCP relay to `upstream` on a free loopback port of `runtime`, moving bytes and reading
/// none: what one more hop costs on this machine, whatever the proxy does on it (the floor of
/// the proxy's `find_one` row).
fn relay(
    runtime: &tokio::runtime::Runtime,
    upstream: std::net::SocketAddr,
) -> std::net::SocketAddr {
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind the relay");
    let address = listener.local_addr().expect("the relay's address");
    runtime.spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            tokio::spawn(async move {
                let _ = client.set_nodelay(true);
                let Ok(mut server) = tokio::net::TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = server.set_nodelay(true);
                let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
            });
        }
    });
    address
}

fn proxy_group(criterion: &mut Criterion, upstream: std::net::SocketAddr) {
    // The proxy is a process of its own beside the upstream (`spillway serve --upstream`):
    // here a runtime of its own, so that its workers do not take turns with the upstream's.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("proxy")
        .enable_all()
        .build()
        .expect("the proxy's tokio runtime");
    let executor =
        spillway_proxy::ProxyExecutor::new(&format!("mongodb://{upstream}/")).expect("a proxy");
    let proxy = serve(&runtime, executor);
    let through_proxy = Client::with_uri_str(format!("mongodb://{proxy}/?directConnection=true"))
        .expect("a client of the proxy");
    let direct = Client::with_uri_str(format!("mongodb://{upstream}/?directConnection=true"))
        .expect("a client of the upstream");
    let relayed = Client::with_uri_str(format!(
        "mongodb://{}/?directConnection=true",
        relay(&runtime, upstream)
    ))
    .expect("a client of the relay");
    let mut group = criterion.benchmark_group("proxy");
    for length in PROXY_LENGTHS {
        let database = through_proxy.database(&format!("proxy_{length}"));
        database
            .run_command(
                doc! { "setPattern": "sales", "outlier": "customers_purchased", "threshold": 50 },
            )
            .run()
            .expect("the policy");
        let sales = database.collection::<Document>("sales");
        sales
            .insert_one(doc! { "_id": 1, "customers_purchased": buyers(length) })
            .run()
            .expect("the book");
        group.bench_function(format!("push_through_proxy_{length}"), |b| {
            b.iter_custom(|iterations| {
                pushes(iterations, || naive_push(&sales), || naive_pop(&sales))
            });
        });
        let stored = database
            .collection::<Document>("system.stored.sales")
            .find_one(doc! { "_id": 1 })
            .run()
            .expect("the stored book")
            .expect("book 1");
        assert!(
            stored
                .get_array("customers_purchased")
                .expect("the array")
                .len()
                <= 50,
            "the main document stays small"
        );
        let plain = direct
            .database(&format!("plain_{length}"))
            .collection::<Document>("sales");
        plain
            .insert_one(doc! { "_id": 1, "customers_purchased": buyers(length) })
            .run()
            .expect("the plain book");
        group.bench_function(format!("push_upstream_plain_{length}"), |b| {
            b.iter_custom(|iterations| {
                pushes(iterations, || naive_push(&plain), || naive_pop(&plain))
            });
        });
    }
    let users = direct.database("find_one").collection::<Document>("users");
    users
        .insert_many(
            (0..1_000).map(|id| doc! { "_id": id, "name": format!("user{id}"), "age": id % 90 }),
        )
        .run()
        .expect("the users");
    for (name, client) in [
        ("find_one_upstream_direct", &direct),
        ("find_one_through_tcp_relay", &relayed),
        ("find_one_through_proxy", &through_proxy),
    ] {
        let users = client.database("find_one").collection::<Document>("users");
        let mut id = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                id = (id + 7) % 1_000;
                users
                    .find_one(doc! { "_id": id })
                    .run()
                    .expect("find_one")
                    .expect("the user")
            });
        });
    }
    group.finish();
    through_proxy.shutdown().immediate(true).run();
    relayed.shutdown().immediate(true).run();
    direct.shutdown().immediate(true).run();
}

fn main() {
    let target_dir = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"),
        PathBuf::from,
    );
    let mut criterion = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(4))
        .output_directory(&target_dir.join("criterion-mongodb"))
        .configure_from_args();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("upstream")
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let server = runtime
        .block_on(Server::bind(
            Commands::new(Database::open_in_memory().expect("an in-memory database")),
            ServerOptions {
                port: 0,
                ..ServerOptions::default()
            },
        ))
        .expect("bind the server");
    let address = server.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = runtime.spawn(server.run_until(async {
        let _ = stopped.await;
    }));

    let client = Client::with_uri_str(format!("mongodb://{address}/?directConnection=true"))
        .expect("a client");
    let mut group = criterion.benchmark_group("mongodb_push");
    for length in LENGTHS {
        let name = format!("patterned_{length}");
        let shop = PatternedDatabase::new(
            &client,
            &name,
            [Pattern::outlier("sales", "customers_purchased").link_field("book_id")],
        )
        .expect("the policy");
        let sales = shop.collection("sales");
        sales
            .insert_one(doc! { "_id": 1, "customers_purchased": buyers(length) })
            .run()
            .expect("the book");
        group.bench_function(format!("spillway_mongodb_{length}"), |b| {
            b.iter_custom(|iterations| {
                pushes(
                    iterations,
                    || patterned_push(&sales),
                    || patterned_pop(&sales),
                )
            });
        });
        assert_eq!(
            sales
                .array_len(1, "customers_purchased")
                .expect("array_len"),
            Some(length as u64),
            "every push was popped"
        );
        assert!(shop.verify().expect("verify").is_empty());

        let naive = client
            .database(&format!("naive_{length}"))
            .collection::<Document>("sales");
        naive
            .insert_one(doc! { "_id": 1, "customers_purchased": buyers(length) })
            .run()
            .expect("the naive book");
        group.bench_function(format!("naive_driver_{length}"), |b| {
            b.iter_custom(|iterations| {
                pushes(iterations, || naive_push(&naive), || naive_pop(&naive))
            });
        });
    }
    group.finish();

    proxy_group(&mut criterion, address);

    client.shutdown().immediate(true).run();
    let _ = stop.send(());
    runtime
        .block_on(serving)
        .expect("the server task")
        .expect("the server stops cleanly");
}
