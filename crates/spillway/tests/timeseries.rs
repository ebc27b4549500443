//! Time series collections: measurements written as documents and stored in buckets of
//! `system.buckets.<name>` (MongoDB's bucket format), read back whole and in order, updated
//! and deleted through the buckets, with MongoDB's option checks and TTL; and the same
//! through the command layer as a driver sends it.

use spillway::bson::{Bson, DateTime, Document, doc};
use spillway::command::Commands;
use spillway::{CollectionOptions, Database, TimeseriesOptions};

const HOUR_MS: i64 = 3_600_000;

fn at(millis: i64) -> DateTime {
    DateTime::from_millis(millis)
}

fn weather(db: &Database) {
    let mut options = CollectionOptions::default();
    options.timeseries = Some(TimeseriesOptions::new("time").meta_field("sensor"));
    db.create_collection_with("weather", &options)
        .expect("a time series collection");
}

fn all(db: &Database, name: &str, filter: Document, sort: Document) -> Vec<Document> {
    db.collection::<Document>(name)
        .find(filter)
        .sort(sort)
        .run()
        .expect("a find")
        .collect::<spillway::Result<Vec<_>>>()
        .expect("documents")
}

fn buckets(db: &Database) -> Vec<Document> {
    all(db, "system.buckets.weather", doc! {}, doc! {})
}

#[test]
fn measurements_are_stored_in_buckets_and_read_back_as_documents() {
    let db = Database::open_in_memory().unwrap();
    weather(&db);
    let collection = db.collection::<Document>("weather");
    // Out of time order, two series, and an `_id` twice: a time series has no `_id` index.
    collection
        .insert_many([
            doc! { "_id": 1, "time": at(5_000), "sensor": "a", "temp": 20.5 },
            doc! { "_id": 1, "time": at(1_000), "sensor": "a", "temp": 19.0 },
            doc! { "_id": 2, "time": at(3_000), "sensor": "b", "temp": 7.0, "wind": 3 },
            doc! { "time": at(2_000), "sensor": "a", "temp": 19.5 },
        ])
        .run()
        .unwrap();
    let found = all(&db, "weather", doc! {}, doc! { "time": 1 });
    let times: Vec<i64> = found
        .iter()
        .map(|m| m.get_datetime("time").unwrap().timestamp_millis())
        .collect();
    assert_eq!(times, [1_000, 2_000, 3_000, 5_000]);
    assert!(
        found[1].get_object_id("_id").is_ok(),
        "a missing _id is generated"
    );
    assert_eq!(found[2].get_i32("wind").ok(), Some(3));
    assert_eq!(
        all(
            &db,
            "weather",
            doc! { "sensor": "a", "temp": { "$gt": 19.2 } },
            doc! { "time": 1 }
        )
        .len(),
        2
    );
    assert_eq!(collection.count_documents(doc! {}).run().unwrap(), 4);
    assert_eq!(collection.estimated_document_count().run().unwrap(), 4);

    // One bucket per series, in MongoDB's layout.
    let stored = buckets(&db);
    assert_eq!(stored.len(), 2, "{stored:?}");
    let a = stored
        .iter()
        .find(|bucket| bucket.get_str("meta").ok() == Some("a"))
        .expect("the bucket of sensor a");
    let control = a.get_document("control").unwrap();
    assert_eq!(control.get_i32("version").ok(), Some(1));
    assert_eq!(
        control
            .get_document("min")
            .unwrap()
            .get_datetime("time")
            .ok(),
        Some(&at(0))
    );
    assert_eq!(
        control
            .get_document("max")
            .unwrap()
            .get_datetime("time")
            .ok(),
        Some(&at(5_000))
    );
    assert_eq!(
        control.get_document("max").unwrap().get_f64("temp").ok(),
        Some(20.5)
    );
    let data = a.get_document("data").unwrap();
    assert!(
        !data.contains_key("sensor"),
        "the meta value is stored once"
    );
    assert_eq!(data.get_document("temp").unwrap().len(), 3);

    // A pipeline on the collection sees measurements.
    let grouped: Vec<Document> = collection
        .aggregate([
            doc! { "$group": { "_id": "$sensor", "n": { "$sum": 1 } } },
            doc! { "$sort": { "_id": 1 } },
        ])
        .run()
        .unwrap()
        .collect::<spillway::Result<_>>()
        .unwrap();
    assert_eq!(
        grouped,
        [doc! { "_id": "a", "n": 3 }, doc! { "_id": "b", "n": 1 }]
    );
}

#[test]
fn buckets_are_bounded_by_count_and_by_span() {
    let db = Database::open_in_memory().unwrap();
    weather(&db);
    let collection = db.collection::<Document>("weather");
    let measurements: Vec<Document> = (0..2_500)
        .map(|n| doc! { "time": at(n), "sensor": "a", "n": n })
        .collect();
    collection.insert_many(measurements).run().unwrap();
    // Granularity seconds: a bucket spans an hour; a measurement two hours later opens one.
    collection
        .insert_one(doc! { "time": at(2 * HOUR_MS), "sensor": "a", "n": -1 })
        .run()
        .unwrap();
    let mut counts: Vec<usize> = buckets(&db)
        .iter()
        .map(|bucket| {
            bucket
                .get_document("data")
                .unwrap()
                .get_document("time")
                .unwrap()
                .len()
        })
        .collect();
    counts.sort_unstable();
    assert_eq!(counts, [1, 500, 1_000, 1_000]);
    let found = all(&db, "weather", doc! {}, doc! { "time": 1 });
    assert_eq!(found.len(), 2_501);
    assert!(
        found
            .windows(2)
            .all(|pair| pair[0].get_datetime("time").unwrap()
                <= pair[1].get_datetime("time").unwrap())
    );
}

#[test]
fn a_measurement_without_a_date_is_refused_and_nothing_is_stored() {
    let db = Database::open_in_memory().unwrap();
    weather(&db);
    let collection = db.collection::<Document>("weather");
    for bad in [
        doc! { "sensor": "a" },
        doc! { "time": "yesterday" },
        doc! { "time": 5 },
    ] {
        let error = collection.insert_one(bad).run().unwrap_err();
        assert_eq!(error.code(), Some(2), "{error}");
        assert!(
            error.to_string().contains("'time' must be present"),
            "{error}"
        );
    }
    assert!(buckets(&db).is_empty());
    assert_eq!(collection.count_documents(doc! {}).run().unwrap(), 0);
}

#[test]
fn updates_and_deletes_rewrite_the_buckets() {
    let db = Database::open_in_memory().unwrap();
    weather(&db);
    let collection = db.collection::<Document>("weather");
    let measurements: Vec<Document> = (0..10)
        .map(|n| doc! { "time": at(n * 1_000), "sensor": if n % 2 == 0 { "even" } else { "odd" }, "n": n })
        .collect();
    collection.insert_many(measurements).run().unwrap();

    let updated = collection
        .update_many(
            doc! { "n": { "$gte": 6 } },
            doc! { "$set": { "late": true } },
        )
        .run()
        .unwrap();
    assert_eq!((updated.matched_count, updated.modified_count), (4, 4));
    assert_eq!(
        collection
            .count_documents(doc! { "late": true })
            .run()
            .unwrap(),
        4
    );

    // A measurement moved to another series and hours later lands in a new bucket.
    collection
        .update_one(
            doc! { "n": 0 },
            doc! { "$set": { "sensor": "odd", "time": at(5 * HOUR_MS) } },
        )
        .run()
        .unwrap();
    let moved = all(&db, "weather", doc! { "n": 0 }, doc! {});
    assert_eq!(moved.len(), 1);
    assert_eq!(moved[0].get_str("sensor").ok(), Some("odd"));
    assert_eq!(buckets(&db).len(), 3);

    let deleted = collection
        .delete_many(doc! { "sensor": "even" })
        .run()
        .unwrap();
    assert_eq!(deleted.deleted_count, 4);
    let deleted = collection
        .delete_one(doc! { "sensor": "odd" })
        .run()
        .unwrap();
    assert_eq!(deleted.deleted_count, 1);
    assert_eq!(collection.count_documents(doc! {}).run().unwrap(), 5);
    // The bucket of the even series is gone with its last measurement.
    assert!(
        buckets(&db)
            .iter()
            .all(|bucket| bucket.get_str("meta").ok() != Some("even"))
    );

    let upserted = collection
        .update_one(
            doc! { "sensor": "new", "time": at(42) },
            doc! { "$set": { "n": 100 } },
        )
        .upsert(true)
        .run()
        .unwrap();
    assert!(upserted.upserted_id.is_some());
    assert_eq!(
        collection
            .count_documents(doc! { "sensor": "new" })
            .run()
            .unwrap(),
        1
    );

    for refused in [
        collection
            .find_one_and_delete(doc! { "n": 1 })
            .run()
            .map(drop)
            .unwrap_err(),
        collection
            .create_index(
                spillway::IndexModel::builder()
                    .keys(doc! { "n": 1 })
                    .build(),
            )
            .run()
            .map(drop)
            .unwrap_err(),
    ] {
        if refused.code() == Some(67) {
            assert!(refused.to_string().contains("not 'n'"), "{refused}");
            continue;
        }
        assert_eq!(refused.code(), Some(115), "{refused}");
    }
}

#[test]
fn options_are_checked_as_mongodb_checks_them() {
    let db = Database::open_in_memory().unwrap();
    let create = |timeseries: TimeseriesOptions, expire: Option<i64>| {
        let mut options = CollectionOptions::default();
        options.timeseries = Some(timeseries);
        options.expire_after_seconds = expire;
        db.create_collection_with("t", &options)
    };
    for (options, expire, says) in [
        (TimeseriesOptions::new(""), None, "timeField"),
        (TimeseriesOptions::new("a.b"), None, "timeField"),
        (
            TimeseriesOptions::new("t").meta_field("t"),
            None,
            "must differ",
        ),
        (
            TimeseriesOptions::new("t").meta_field("_id"),
            None,
            "metaField",
        ),
        (
            TimeseriesOptions::new("t").granularity("days"),
            None,
            "granularity",
        ),
        (
            TimeseriesOptions::new("t")
                .granularity("hours")
                .bucketing(60),
            None,
            "not both",
        ),
        (
            TimeseriesOptions::new("t").bucketing(0),
            None,
            "between 1 and",
        ),
        (TimeseriesOptions::new("t"), Some(-1), "expireAfterSeconds"),
    ] {
        let error = create(options, expire).unwrap_err();
        assert_eq!(error.code(), Some(72), "{error}");
        assert!(
            error.to_string().contains(says),
            "{error} should say {says}"
        );
    }
    let mut unequal = TimeseriesOptions::new("t");
    unequal.bucket_max_span_seconds = Some(60);
    unequal.bucket_rounding_seconds = Some(30);
    assert!(
        create(unequal, None)
            .unwrap_err()
            .to_string()
            .contains("must be equal")
    );
    let mut expire_only = CollectionOptions::default();
    expire_only.expire_after_seconds = Some(5);
    assert_eq!(
        db.create_collection_with("plain", &expire_only)
            .unwrap_err()
            .code(),
        Some(72)
    );
    assert!(
        db.list_collection_names().run().unwrap().is_empty(),
        "nothing was created"
    );

    create(TimeseriesOptions::new("t"), None).unwrap();
    let error = create(TimeseriesOptions::new("t"), None).unwrap_err();
    assert_eq!(error.code(), Some(48), "{error}");
    let listed = db.collection_options("t").unwrap().unwrap();
    let timeseries = listed.timeseries.unwrap();
    assert_eq!(timeseries.granularity.as_deref(), Some("seconds"));
    assert_eq!(timeseries.bucket_max_span_seconds, Some(3_600));
    let refused = db
        .set_pattern(spillway::Pattern::outlier("t", "xs").threshold(3))
        .unwrap_err();
    assert_eq!(refused.code(), Some(115), "{refused}");
}

#[test]
fn a_time_series_survives_a_reopen_and_drops_with_its_buckets() {
    let directory = tempfile::tempdir().unwrap();
    {
        let db = Database::open(directory.path()).unwrap();
        weather(&db);
        db.collection::<Document>("weather")
            .insert_one(doc! { "time": at(1), "sensor": "a" })
            .run()
            .unwrap();
    }
    let db = Database::open(directory.path()).unwrap();
    let collection = db.collection::<Document>("weather");
    collection
        .insert_one(doc! { "time": at(2), "sensor": "a" })
        .run()
        .unwrap();
    assert_eq!(collection.count_documents(doc! {}).run().unwrap(), 2);
    assert_eq!(
        buckets(&db).len(),
        1,
        "the reopened layout routes into the same bucket"
    );
    assert!(db.verify().unwrap().is_clean());
    collection.drop().run().unwrap();
    assert!(db.list_collection_names().run().unwrap().is_empty());
}

#[test]
fn expired_buckets_are_removed_by_the_ttl_reaper_path() {
    // The background reaper's first pass is a minute away: the test's own pass deletes.
    let db = Database::open_in_memory().unwrap();
    let mut options = CollectionOptions::default();
    options.timeseries = Some(TimeseriesOptions::new("time"));
    options.expire_after_seconds = Some(60);
    db.create_collection_with("events", &options).unwrap();
    let events = db.collection::<Document>("events");
    let now = DateTime::now().timestamp_millis();
    events
        .insert_many([
            doc! { "time": at(now - 10 * HOUR_MS), "old": true },
            doc! { "time": at(now), "old": false },
        ])
        .run()
        .unwrap();
    assert_eq!(db.remove_expired().unwrap(), 1, "one expired bucket");
    let left = all(&db, "events", doc! {}, doc! {});
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].get_bool("old").ok(), Some(false));
}

/// Runs `command` on database `metrics`.
fn run(commands: &Commands, mut command: Document) -> Document {
    command.insert("$db", "metrics");
    let shown = command.to_string();
    let reply = commands.execute(command);
    assert_eq!(
        reply.get_f64("ok").ok(),
        Some(1.0),
        "{shown} failed: {reply}"
    );
    reply
}

#[test]
fn through_the_command_layer_as_a_driver_sends_it() {
    let commands = Commands::new(Database::open_in_memory().unwrap());
    run(
        &commands,
        doc! { "create": "test", "expireAfterSeconds": 604_800,
        "timeseries": { "timeField": "time", "metaField": "meta", "granularity": "minutes" } },
    );
    run(
        &commands,
        doc! { "insert": "test", "documents": [
            { "_id": 1, "time": at(1_552_949_630_483) },
            { "_id": 1, "time": at(1_552_949_630_482) },
        ] },
    );
    let reply = run(
        &commands,
        doc! { "find": "test", "filter": {}, "sort": { "time": 1 } },
    );
    let batch = reply
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap();
    assert_eq!(
        batch,
        &vec![
            Bson::Document(doc! { "_id": 1, "time": at(1_552_949_630_482) }),
            Bson::Document(doc! { "_id": 1, "time": at(1_552_949_630_483) }),
        ]
    );
    let reply = run(
        &commands,
        doc! { "listCollections": 1, "filter": { "name": "test" } },
    );
    let listed = reply
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(listed.get_str("type").ok(), Some("timeseries"));
    assert_eq!(
        listed.get_document("options").unwrap(),
        &doc! {
            "timeseries": { "timeField": "time", "metaField": "meta", "granularity": "minutes", "bucketMaxSpanSeconds": 86_400 },
            "expireAfterSeconds": 604_800_i64,
        }
    );
    // The buckets are the client's to read, under their MongoDB name.
    let reply = run(&commands, doc! { "count": "system.buckets.test" });
    assert_eq!(
        reply
            .get_i64("n")
            .or_else(|_| reply.get_i32("n").map(i64::from))
            .ok(),
        Some(1)
    );
    let reply = commands
        .execute(doc! { "create": "bad", "timeseries": { "metaField": "m" }, "$db": "metrics" });
    assert_eq!(reply.get_i32("code").ok(), Some(40414), "{reply}");
    let reply = commands.execute(
        doc! { "renameCollection": "metrics.test", "to": "metrics.other", "$db": "admin" },
    );
    assert_eq!(reply.get_i32("code").ok(), Some(72), "{reply}");
    run(&commands, doc! { "drop": "test" });
    let reply = run(&commands, doc! { "listCollections": 1, "nameOnly": true });
    assert!(
        reply
            .get_document("cursor")
            .unwrap()
            .get_array("firstBatch")
            .unwrap()
            .is_empty(),
        "{reply}"
    );
}

#[test]
fn reads_narrow_the_buckets_by_meta_and_time_through_their_index() {
    let db = Database::open_in_memory().unwrap();
    weather(&db);
    let collection = db.collection::<Document>("weather");
    let measurements: Vec<Document> = (0..200)
        .map(|n| {
            doc! {
                "time": at(i64::from(n) * HOUR_MS),
                "sensor": format!("s{}", n % 4),
                "n": n,
            }
        })
        .collect();
    collection.insert_many(measurements).run().unwrap();
    // One bucket per sensor and hour: 200 buckets.
    assert_eq!(buckets(&db).len(), 200);
    let filter =
        doc! { "sensor": "s1", "time": { "$gte": at(40 * HOUR_MS), "$lt": at(80 * HOUR_MS) } };
    let found = all(&db, "weather", filter.clone(), doc! { "n": 1 });
    let expected: Vec<i32> = (40..80).filter(|n| n % 4 == 1).collect();
    let ns: Vec<i32> = found.iter().map(|m| m.get_i32("n").unwrap()).collect();
    assert_eq!(ns, expected);
    // The same filter through a pipeline explains as an index scan of the buckets that
    // examines only the buckets of s1 in those hours, not all 200.
    let explained = collection
        .aggregate([doc! { "$match": filter }])
        .explain()
        .unwrap();
    let shown = explained.to_string();
    assert!(shown.contains("IXSCAN"), "{shown}");
    let examined = explained.get_array("stages").ok().and_then(|stages| {
        let stats = stages
            .first()?
            .as_document()?
            .get_document("$cursor")
            .ok()?
            .get_document("executionStats")
            .ok()?;
        stats
            .get_i64("totalDocsExamined")
            .or_else(|_| stats.get_i32("totalDocsExamined").map(i64::from))
            .ok()
    });
    assert!(
        examined.is_some_and(|n| n < 30),
        "examined {examined:?} buckets: {shown}"
    );
}

#[test]
fn indexes_on_meta_and_time_are_indexes_of_the_buckets() {
    let db = Database::open_in_memory().unwrap();
    weather(&db);
    let collection = db.collection::<Document>("weather");
    let created = collection
        .create_index(
            spillway::IndexModel::builder()
                .keys(doc! { "sensor.site": 1, "time": -1 })
                .build(),
        )
        .run()
        .unwrap();
    assert_eq!(created.index_name, "sensor.site_1_time_-1");
    let on_buckets: Vec<Document> = db
        .collection::<Document>("system.buckets.weather")
        .list_indexes()
        .run()
        .unwrap()
        .map(|model| model.unwrap().keys)
        .collect();
    assert!(
        on_buckets.contains(&doc! { "meta": 1, "control.min.time": 1, "control.max.time": 1 }),
        "the routing index: {on_buckets:?}"
    );
    assert!(
        on_buckets
            .contains(&doc! { "meta.site": 1, "control.max.time": -1, "control.min.time": -1 }),
        "{on_buckets:?}"
    );
    let listed: Vec<(String, Document)> = collection
        .list_indexes()
        .run()
        .unwrap()
        .map(|model| {
            let model = model.unwrap();
            (model.options.unwrap().name.unwrap(), model.keys)
        })
        .collect();
    assert_eq!(
        listed,
        [
            (
                "sensor_1_time_1".to_string(),
                doc! { "sensor": 1, "time": 1 }
            ),
            (
                "sensor.site_1_time_-1".to_string(),
                doc! { "sensor.site": 1, "time": -1 }
            ),
        ],
        "listed in the measurements' terms, as MongoDB lists them"
    );
    collection
        .drop_index("sensor.site_1_time_-1")
        .run()
        .unwrap();
    assert_eq!(
        db.collection::<Document>("system.buckets.weather")
            .list_index_names()
            .run()
            .unwrap()
            .len(),
        2,
        "_id and the routing index are left"
    );
    for refused in [doc! { "temp": 1 }, doc! { "time": "text" }] {
        let error = collection
            .create_index(
                spillway::IndexModel::builder()
                    .keys(refused.clone())
                    .build(),
            )
            .run()
            .unwrap_err();
        assert_eq!(error.code(), Some(67), "{refused}: {error}");
    }
}
