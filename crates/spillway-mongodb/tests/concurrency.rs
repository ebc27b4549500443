//! Concurrent clients of the MongoDB backend against `spillway serve`, each with its own
//! client (its own connections and sessions):
//!
//! - 8 threads `$push` to the same managed array of an outlier policy. Their transactions
//!   conflict on the book's write stamp and its last bucket (112 WriteConflict, labelled
//!   `TransientTransactionError`) and are run again; in the end every element is there
//!   exactly once, each thread's elements in the order it pushed them, the layout verifies
//!   clean, and the logical length agrees.
//! - 4 threads adopt the same new policy on a collection of 300 documents at once (as four
//!   processes of one application starting together): all succeed, one policy is stored,
//!   the migration finishes and every logical document is unchanged.

use crate::common;

use std::collections::HashMap;
use std::time::Instant;

use spillway_mongodb::bson::{Bson, doc};
use spillway_mongodb::{Pattern, PatternedDatabase};

const THREADS: usize = 8;
const PUSHES_PER_THREAD: usize = 40;

#[test]
fn eight_clients_pushing_to_one_book_lose_and_duplicate_nothing() {
    let address = common::server();
    let name = common::unique("viral");
    let policy = || {
        Pattern::outlier("books", "buyers")
            .threshold(10)
            .bucket_capacity(8)
            .link_field("book_id")
    };
    let setup = common::client(address, &common::unique("setup"));
    let shop = PatternedDatabase::new(&setup, &name, [policy()]).expect("the policy is declared");
    shop.collection("books")
        .insert_one(doc! { "_id": 1, "title": "Viral", "buyers": [] })
        .run()
        .expect("the book");

    let started = Instant::now();
    let workers: Vec<_> = (0..THREADS)
        .map(|thread| {
            let name = name.clone();
            std::thread::spawn(move || {
                let (client, sent) = common::monitored_client(address);
                // Each writer adopts the database the way an application does: one line,
                // with the same policy, already declared.
                let shop = PatternedDatabase::new(&client, &name, [policy()])
                    .expect("the same policy is accepted");
                let books = shop.collection("books");
                for push in 0..PUSHES_PER_THREAD {
                    let buyer = format!("t{thread}-{push:03}");
                    let result = books
                        .update_one(doc! { "_id": 1 }, doc! { "$push": { "buyers": buyer } })
                        .run()
                        .unwrap_or_else(|error| panic!("thread {thread} push {push}: {error}"));
                    assert_eq!(result.modified_count, 1, "thread {thread} push {push}");
                }
                drop(shop);
                client.shutdown().immediate(true).run();
                let sent = sent.lock().expect("the command log");
                sent.iter()
                    .filter(|(entry, _)| entry.starts_with("failed ") && entry.ends_with(" 112"))
                    .count()
            })
        })
        .collect();
    let write_conflicts: usize = workers
        .into_iter()
        .map(|worker| worker.join().expect("a writer thread"))
        .sum();
    let elapsed = started.elapsed();

    let books = shop.collection("books");
    let book = books
        .find_one(doc! { "_id": 1 })
        .run()
        .expect("the expanded book")
        .expect("the book exists");
    let buyers: Vec<String> = book
        .get_array("buyers")
        .expect("an array")
        .iter()
        .map(|buyer| match buyer {
            Bson::String(buyer) => buyer.clone(),
            other => panic!("a buyer that is not a string: {other}"),
        })
        .collect();
    assert_eq!(
        buyers.len(),
        THREADS * PUSHES_PER_THREAD,
        "every push, once"
    );
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for buyer in &buyers {
        *seen.entry(buyer.as_str()).or_default() += 1;
    }
    assert!(
        seen.values().all(|&count| count == 1),
        "a duplicated element"
    );
    for thread in 0..THREADS {
        let own: Vec<&String> = buyers
            .iter()
            .filter(|buyer| buyer.starts_with(&format!("t{thread}-")))
            .collect();
        let expected: Vec<String> = (0..PUSHES_PER_THREAD)
            .map(|push| format!("t{thread}-{push:03}"))
            .collect();
        assert_eq!(
            own,
            expected.iter().collect::<Vec<_>>(),
            "thread {thread}'s elements, in its order"
        );
    }
    assert_eq!(
        books.array_len(1, "buyers").expect("array_len"),
        Some((THREADS * PUSHES_PER_THREAD) as u64)
    );
    let stored = books
        .find_one(doc! { "_id": 1 })
        .stored(true)
        .run()
        .expect("the stored book")
        .expect("the book exists");
    assert_eq!(stored.get_array("buyers").map(Vec::len).ok(), Some(10));
    assert_eq!(stored.get_bool("has_extras").ok(), Some(true));
    assert_eq!(
        shop.verify().expect("verify"),
        Vec::new(),
        "the flag and buckets hold"
    );
    eprintln!(
        "{} pushes from {THREADS} clients in {elapsed:.1?}, {write_conflicts} write conflicts run again",
        THREADS * PUSHES_PER_THREAD
    );
}

#[test]
fn four_processes_adopting_the_same_policy_at_once_all_succeed() {
    let address = common::server();
    let name = common::unique("adopt");
    let setup = common::client(address, &common::unique("setup"));
    let inserted: Vec<_> = (0..300)
        .map(|id| doc! { "_id": id, "buyers": (0..id % 9).collect::<Vec<i32>>() })
        .collect();
    setup
        .database(&name)
        .collection::<spillway_mongodb::bson::Document>("books")
        .insert_many(inserted.clone())
        .run()
        .expect("plain documents");
    let policy = || {
        Pattern::outlier("books", "buyers")
            .threshold(3)
            .bucket_capacity(2)
    };
    let adopters: Vec<_> = (0..4)
        .map(|_| {
            let name = name.clone();
            std::thread::spawn(move || {
                let client = common::client(address, &common::unique("adopter"));
                let shop = PatternedDatabase::new(&client, &name, [policy()])
                    .unwrap_or_else(|error| panic!("adopting the policy: {error}"));
                drop(shop);
                client.shutdown().immediate(true).run();
            })
        })
        .collect();
    for adopter in adopters {
        adopter.join().expect("an adopting thread");
    }
    let shop = PatternedDatabase::new(&setup, &name, [policy()]).expect("the database");
    assert_eq!(shop.patterns().expect("patterns"), vec![policy().into()]);
    let books = shop.collection("books");
    assert_eq!(
        books.find(doc! {}).run().expect("expanded"),
        inserted,
        "every logical document is the inserted one"
    );
    assert!(
        books
            .find(doc! {})
            .stored(true)
            .run()
            .expect("stored")
            .iter()
            .all(|book| book
                .get_array("buyers")
                .is_ok_and(|buyers| buyers.len() <= 3)),
        "the migration finished"
    );
    assert_eq!(shop.verify().expect("verify"), Vec::new());
}
