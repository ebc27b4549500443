//! Kill -9 loop over the TTL reaper (the `spillway-crash` harness): a child process (this
//! binary, re-executed with `SPILLWAY_TTL_CRASH_CHILD` set) opens an on-disk database that
//! fsyncs every commit and reaps every 5 ms, with a TTL index on `expires` and a second index
//! on `n`, and inserts document after document, printing `ack N` after each: even `n` expired
//! an hour ago, odd `n` expire in a day. The reaper deletes the expired ones in the
//! background while the inserts go on, so kills land inside reaper passes as well as inserts.
//! The parent kills the child at a random moment, reopens the database and checks that:
//!
//! - every acknowledged odd document is there: the reaper never deletes early;
//! - `verify` is clean: no index entry left behind by a reaped document, none missing;
//! - a `remove_expired` pass after the reopen leaves exactly the odd documents, and `verify`
//!   is still clean.
//!
//! Then the next child continues on the same database. Iterations: `SPILLWAY_CRASH_ITERATIONS`
//! (default 8).

use std::path::Path;
use std::time::{Duration, Instant};

use spillway::bson::{DateTime, Document, doc};
use spillway::{Database, DatabaseOptions, Durability, IndexModel, IndexOptions};
use spillway_crash::{Acks, Child, Random, child_directory, iterations, last_ack};

const CHILD_ENV: &str = "SPILLWAY_TTL_CRASH_CHILD";
const HOUR_MS: i64 = 3_600_000;

fn options() -> DatabaseOptions {
    DatabaseOptions::default()
        .durability(Durability::SyncEveryCommit)
        .ttl_interval(Duration::from_millis(5))
}

fn child(dir: &Path) -> ! {
    let db = Database::open_with(dir, &options()).expect("child: open");
    let sessions = db.collection::<Document>("sessions");
    sessions
        .create_index(
            IndexModel::builder()
                .keys(doc! { "expires": 1 })
                .options(IndexOptions::builder().expire_after(Duration::ZERO).build())
                .build(),
        )
        .run()
        .expect("child: TTL index");
    sessions
        .create_index(IndexModel::builder().keys(doc! { "n": 1 }).build())
        .run()
        .expect("child: index on n");
    // Continue after the largest n stored (the one in flight at the last kill may be there).
    let mut next = sessions
        .find(doc! {})
        .sort(doc! { "n": -1 })
        .limit(1)
        .run()
        .expect("child: find")
        .next()
        .map_or(0, |found| {
            found.expect("child: document").get_i64("n").expect("n") + 1
        });
    let mut acks = Acks::new();
    acks.line("ready");
    loop {
        let now = DateTime::now().timestamp_millis();
        let expires = if next % 2 == 0 {
            now - HOUR_MS
        } else {
            now + 24 * HOUR_MS
        };
        sessions
            .insert_one(doc! { "_id": next, "n": next, "expires": DateTime::from_millis(expires) })
            .run()
            .expect("child: insert");
        acks.ack(next);
        next += 1;
    }
}

fn stored_ns(db: &Database) -> Vec<i64> {
    db.collection::<Document>("sessions")
        .find(doc! {})
        .sort(doc! { "n": 1 })
        .run()
        .unwrap()
        .map(|found| found.unwrap().get_i64("n").unwrap())
        .collect()
}

/// Checks the database after a kill; returns how many unexpired documents it keeps and how
/// many expired ones the child's reaper had already deleted.
fn verify(dir: &Path, last_acked: Option<i64>, iteration: u32) -> (usize, usize) {
    // This handle's own reaper waits an hour: what is missing at the open the children reaped.
    let db = Database::open_with(dir, &options().ttl_interval(Duration::from_secs(3_600))).unwrap();
    let report = db.verify().unwrap();
    assert!(report.is_clean(), "iteration {iteration}: {report:?}");
    let present = stored_ns(&db);
    let reaped = last_acked.map_or(0, |acked| {
        (0..=acked)
            .step_by(2)
            .filter(|even| present.binary_search(even).is_err())
            .count()
    });
    if let Some(acked) = last_acked {
        for odd in (1..=acked).step_by(2) {
            assert!(
                present.binary_search(&odd).is_ok(),
                "iteration {iteration}: document {odd} (not expired, acknowledged) is gone"
            );
        }
    }
    db.remove_expired().unwrap();
    let left = stored_ns(&db);
    assert!(
        left.iter().all(|n| n % 2 == 1),
        "iteration {iteration}: expired documents survived a reaper pass: {left:?}"
    );
    let report = db.verify().unwrap();
    assert!(
        report.is_clean(),
        "iteration {iteration}: after the pass: {report:?}"
    );
    (left.len(), reaped)
}

fn main() {
    if let Some(dir) = child_directory(CHILD_ENV) {
        child(&dir);
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut random = Random::from_clock();
    let started = Instant::now();
    let mut last_acked: Option<i64> = None;
    let mut acks = 0;
    let mut kept = 0;
    let mut reaped_by_children = 0;
    let iterations = iterations(8);
    for iteration in 0..iterations {
        let mut child = Child::spawn(CHILD_ENV, dir.path(), &[]);
        let context = format!("ttl iteration {iteration}");
        if iteration % 4 != 3 {
            child.wait_for("ready", &context);
        }
        child.sleep_alive(Duration::from_millis(random.below(300)), &context);
        let lines = child.kill();
        acks += lines.iter().filter(|line| line.starts_with("ack ")).count();
        if let Some(acked) = last_ack::<i64>(&lines) {
            last_acked = Some(last_acked.map_or(acked, |known: i64| known.max(acked)));
        }
        let (left, reaped) = verify(dir.path(), last_acked, iteration);
        kept = left;
        reaped_by_children = reaped_by_children.max(reaped);
    }
    assert!(
        reaped_by_children > 0,
        "the children's reaper never ran: the loop tested nothing of it"
    );
    println!(
        "ttl crash loop: {iterations} kills, {acks} acknowledged inserts, {kept} unexpired documents kept, none deleted early, {reaped_by_children} expired ones reaped by a child at most; {:.1}s",
        started.elapsed().as_secs_f64()
    );
}
