//! Clients' multi-document transactions through the proxy: a transaction that writes a
//! collection with a policy and a plain collection is one upstream transaction, committed or
//! aborted as a whole, and answered as MongoDB answers a transaction.

use super::*;

/// The logical `buyers` of book `id`, read outside any transaction.
fn buyers_of(patterned: &Collection<Document>, id: i32) -> Vec<Bson> {
    patterned
        .find_one(doc! { "_id": id })
        .run()
        .expect("find")
        .expect("the book")
        .get_array("buyers")
        .expect("buyers")
        .clone()
}

/// The number of documents of `collection`.
fn count(collection: &Collection<Document>) -> u64 {
    collection
        .count_documents(doc! {})
        .run()
        .expect("countDocuments")
}

#[test]
fn a_transaction_writes_a_collection_with_a_policy_and_a_plain_one_as_one() {
    let upstream = upstream();
    let proxied = client(proxy(upstream));
    let (_, patterned) = books(&proxied);
    let database = proxied.database(patterned.namespace().db.as_str());
    let orders = database.collection::<Document>("orders");
    let extra = proxied
        .database(patterned.namespace().db.as_str())
        .collection::<Document>("extra_patterned");
    let before = buyers_of(&patterned, 1);
    let extra_before = count(&extra);
    let mut session = proxied.start_session().run().expect("a session");
    session.start_transaction().run().expect("start");
    // Book 1 has 3 buyers at a threshold of 3: every push goes to the side collection.
    for n in 0..5 {
        patterned
            .update_one(
                doc! { "_id": 1 },
                doc! { "$push": { "buyers": format!("t{n}") } },
            )
            .session(&mut session)
            .run()
            .expect("push in the transaction");
        orders
            .insert_one(doc! { "book": 1, "buyer": format!("t{n}") })
            .session(&mut session)
            .run()
            .expect("order in the transaction");
    }
    // The transaction reads its own writes, logically.
    let inside = patterned
        .find_one(doc! { "_id": 1 })
        .session(&mut session)
        .run()
        .expect("find in the transaction")
        .expect("the book");
    assert_eq!(inside.get_array("buyers").expect("buyers").len(), 8);
    // Nobody else sees them before the commit.
    assert_eq!(buyers_of(&patterned, 1), before);
    assert_eq!(count(&orders), 0);
    assert_eq!(count(&extra), extra_before);
    session.commit_transaction().run().expect("commit");
    let after = buyers_of(&patterned, 1);
    let mut expected = before.clone();
    expected.extend((0..5).map(|n| Bson::String(format!("t{n}"))));
    assert_eq!(after, expected);
    assert_eq!(count(&orders), 5);
    assert!(count(&extra) > extra_before, "the pushes overflowed");
    assert!(violations(&database).is_empty());
    // A commit sent again (a driver that did not hear the answer) answers ok again.
    session.commit_transaction().run().expect("commit again");
}

#[test]
fn an_aborted_transaction_or_one_whose_statement_failed_leaves_nothing() {
    let proxied = client(proxy(upstream()));
    let (_, patterned) = books(&proxied);
    let database = proxied.database(patterned.namespace().db.as_str());
    let orders = database.collection::<Document>("orders");
    let before = buyers_of(&patterned, 2);
    let mut session = proxied.start_session().run().expect("a session");

    session.start_transaction().run().expect("start");
    patterned
        .update_one(doc! { "_id": 2 }, doc! { "$push": { "buyers": "gone" } })
        .session(&mut session)
        .run()
        .expect("push");
    orders
        .insert_one(doc! { "book": 2 })
        .session(&mut session)
        .run()
        .expect("order");
    session.abort_transaction().run().expect("abort");
    assert_eq!(buyers_of(&patterned, 2), before);
    assert_eq!(count(&orders), 0);

    // A duplicate `_id` fails the statement; MongoDB then aborts the transaction, and its
    // commit is refused with NoSuchTransaction, labelled so that drivers run it again.
    session.start_transaction().run().expect("start again");
    orders
        .insert_one(doc! { "book": 3 })
        .session(&mut session)
        .run()
        .expect("order");
    let duplicate = patterned
        .insert_one(doc! { "_id": 2, "buyers": [] })
        .session(&mut session)
        .run()
        .expect_err("a duplicate _id");
    assert_eq!(code(&duplicate), Some(11000), "{duplicate}");
    let commit = session
        .commit_transaction()
        .run()
        .expect_err("the transaction was aborted");
    assert_eq!(code(&commit), Some(251), "{commit}");
    assert!(
        commit.contains_label("TransientTransactionError"),
        "{commit}"
    );
    assert_eq!(count(&orders), 0);
    assert_eq!(buyers_of(&patterned, 2), before);
    assert!(violations(&database).is_empty());
}

#[test]
fn concurrent_transactions_on_one_book_conflict_and_are_run_again_without_loss() {
    let proxy = proxy(upstream());
    let (_, patterned) = books(&client(proxy));
    let database_name = patterned.namespace().db;
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            let database_name = database_name.clone();
            std::thread::spawn(move || {
                let client = client(proxy);
                let database = client.database(&database_name);
                let patterned = database.collection::<Document>("patterned");
                let orders = database.collection::<Document>("orders");
                let mut session = client.start_session().run().expect("a session");
                for n in 0..5 {
                    let buyer = format!("w{writer}-{n}");
                    session
                        .start_transaction()
                        .and_run(|session| {
                            patterned
                                .update_one(
                                    doc! { "_id": 5 },
                                    doc! { "$push": { "buyers": &buyer } },
                                )
                                .session(&mut *session)
                                .run()?;
                            orders
                                .insert_one(doc! { "buyer": &buyer })
                                .session(&mut *session)
                                .run()?;
                            Ok(())
                        })
                        .expect("the transaction commits, run again after conflicts");
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("a writer");
    }
    let proxied = client(proxy);
    let database = proxied.database(&database_name);
    let buyers = buyers_of(&database.collection("patterned"), 5);
    for writer in 0..4 {
        for n in 0..5 {
            let buyer = Bson::String(format!("w{writer}-{n}"));
            assert_eq!(
                buyers.iter().filter(|known| **known == buyer).count(),
                1,
                "{buyer} once in {buyers:?}"
            );
        }
    }
    assert_eq!(buyers.len(), 15 + 20);
    assert_eq!(count(&database.collection("orders")), 20);
    assert!(violations(&database).is_empty());
}

#[test]
fn a_transaction_the_upstream_holds_cannot_write_a_collection_with_a_policy_and_says_why() {
    let proxied = client(proxy(upstream()));
    let (_, patterned) = books(&proxied);
    // The transaction starts in a database without policies: it is the upstream's own.
    let elsewhere = proxied
        .database(&unique("plain"))
        .collection::<Document>("notes");
    let mut session = proxied.start_session().run().expect("a session");
    session.start_transaction().run().expect("start");
    elsewhere
        .insert_one(doc! { "note": 1 })
        .session(&mut session)
        .run()
        .expect("a plain write");
    let refused = patterned
        .insert_one(doc! { "_id": 100 })
        .session(&mut session)
        .run()
        .expect_err("refused");
    assert_eq!(code(&refused), Some(263), "{refused}");
    assert!(
        refused
            .to_string()
            .contains(patterned.namespace().db.as_str()),
        "names the database to start in: {refused}"
    );
    let _ = session.abort_transaction().run();
    assert!(
        patterned
            .find_one(doc! { "_id": 100 })
            .run()
            .expect("find")
            .is_none()
    );
    assert_eq!(count(&elsewhere), 0);
}
