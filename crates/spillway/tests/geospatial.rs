//! `2d` and `2dsphere` indexes and geospatial queries through the facade and the command
//! layer: creation and listing, refused writes that store nothing, `$near` ordering and
//! bounds, and the error of a `$near` without an index.

use spillway::bson::{Bson, Document};
use spillway::command::Commands;
use spillway::{Database, GeoIndexOptions, IndexModel, IndexOptions, doc};

fn geo_index(keys: Document) -> IndexModel {
    IndexModel {
        keys,
        options: None,
    }
}

fn point(lng: f64, lat: f64) -> Document {
    doc! { "type": "Point", "coordinates": [lng, lat] }
}

fn ids(cursor: impl Iterator<Item = spillway::Result<Document>>) -> Vec<i32> {
    cursor
        .map(|document| document.unwrap().get_i32("_id").unwrap())
        .collect()
}

/// Places along the equator, one degree (111 km) apart, inserted out of distance order.
fn places() -> (Database, spillway::Collection<Document>) {
    let db = Database::open_in_memory().unwrap();
    let places = db.collection::<Document>("places");
    places
        .create_index(geo_index(doc! { "geo": "2dsphere" }))
        .run()
        .unwrap();
    places
        .insert_many([
            doc! { "_id": 3, "geo": point(3.0, 0.0) },
            doc! { "_id": 1, "geo": point(1.0, 0.0) },
            doc! { "_id": 4, "geo": point(-4.0, 0.0) },
            doc! { "_id": 2, "geo": [2.0, 0.0] },
            doc! { "_id": 5, "name": "nowhere" },
        ])
        .run()
        .unwrap();
    (db, places)
}

#[test]
fn near_returns_the_nearest_first_within_max_distance() {
    let (_db, places) = places();
    let near = |extra: Document| {
        let mut spec = doc! { "$geometry": point(0.0, 0.0) };
        spec.extend(extra);
        doc! { "geo": { "$near": spec } }
    };
    assert_eq!(ids(places.find(near(doc! {})).run().unwrap()), [1, 2, 3, 4]);
    assert_eq!(
        ids(places
            .find(near(doc! { "$maxDistance": 250_000 }))
            .run()
            .unwrap()),
        [1, 2]
    );
    assert_eq!(
        ids(places
            .find(near(
                doc! { "$minDistance": 150_000, "$maxDistance": 400_000 }
            ))
            .run()
            .unwrap()),
        [2, 3]
    );
    // Skip and limit apply after the order by distance.
    assert_eq!(
        ids(places.find(near(doc! {})).skip(1).limit(2).run().unwrap()),
        [2, 3]
    );
    // `$nearSphere` with a legacy point measures radians; a sort replaces the distance order.
    let radians = doc! { "geo": { "$nearSphere": [0, 0], "$maxDistance": 0.06 } };
    assert_eq!(ids(places.find(radians.clone()).run().unwrap()), [1, 2, 3]);
    assert_eq!(
        ids(places.find(radians).sort(doc! { "_id": -1 }).run().unwrap()),
        [3, 2, 1]
    );
}

#[test]
fn near_without_a_geospatial_index_is_refused() {
    let db = Database::open_in_memory().unwrap();
    let places = db.collection::<Document>("places");
    places
        .insert_one(doc! { "_id": 1, "geo": [1, 0] })
        .run()
        .unwrap();
    let error = places
        .find(doc! { "geo": { "$near": { "$geometry": point(0.0, 0.0) } } })
        .run()
        .unwrap_err();
    assert_eq!(error.code(), Some(291));
    assert!(
        error
            .to_string()
            .contains("unable to find index for $geoNear query"),
        "{error}"
    );
    // A GeoJSON point needs a 2dsphere index; a 2d index holds and serves legacy pairs only.
    places
        .create_index(geo_index(doc! { "geo": "2d" }))
        .run()
        .unwrap();
    let error = places
        .find(doc! { "geo": { "$near": { "$geometry": point(0.0, 0.0) } } })
        .run()
        .unwrap_err();
    assert_eq!(error.code(), Some(291));
    // `$geoWithin` needs no index.
    let within = doc! { "geo": { "$geoWithin": { "$centerSphere": [[0, 0], 0.1] } } };
    assert_eq!(ids(places.find(within).run().unwrap()), [1]);
}

#[test]
fn flat_near_on_a_2d_index_measures_coordinates() {
    let db = Database::open_in_memory().unwrap();
    let grid = db.collection::<Document>("grid");
    grid.create_index(IndexModel {
        keys: doc! { "loc": "2d" },
        options: Some(IndexOptions {
            geo: Some(GeoIndexOptions {
                min: Some(0.0),
                max: Some(100.0),
                bits: Some(20),
                ..Default::default()
            }),
            ..Default::default()
        }),
    })
    .run()
    .unwrap();
    grid.insert_many([
        doc! { "_id": 1, "loc": [10, 10] },
        doc! { "_id": 2, "loc": { "x": 3, "y": 4 } },
        doc! { "_id": 3, "loc": [[90, 90], [1, 1]] },
        doc! { "_id": 4 },
    ])
    .run()
    .unwrap();
    let found = ids(grid
        .find(doc! { "loc": { "$near": [0, 0], "$maxDistance": 15 } })
        .run()
        .unwrap());
    // Document 3's nearest location, (1, 1), counts.
    assert_eq!(found, [3, 2, 1]);
    let boxed = doc! { "loc": { "$geoWithin": { "$box": [[0, 0], [5, 5]] } } };
    assert_eq!(ids(grid.find(boxed).run().unwrap()), [2, 3]);
    // Out of the index's bounds: refused, nothing stored.
    let error = grid
        .insert_one(doc! { "_id": 9, "loc": [101, 5] })
        .run()
        .unwrap_err();
    assert_eq!(error.code(), Some(13027));
    let error = grid
        .insert_one(doc! { "_id": 9, "loc": [5, "a"] })
        .run()
        .unwrap_err();
    assert_eq!(error.code(), Some(13026));
    assert!(grid.find_one(doc! { "_id": 9 }).run().unwrap().is_none());
}

#[test]
fn invalid_geometry_is_refused_and_nothing_changes() {
    let (_db, places) = places();
    for bad in [
        Bson::String("Paris".into()),
        Bson::Document(doc! { "type": "Point" }),
        Bson::Document(point(200.0, 0.0)),
        Bson::Document(
            doc! { "type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 2]]] },
        ),
        Bson::Array(vec![Bson::String("x".into()), 1.into()]),
    ] {
        let error = places
            .insert_one(doc! { "_id": 10, "geo": bad.clone() })
            .run()
            .unwrap_err();
        assert_eq!(error.code(), Some(16755), "{bad}: {error}");
        assert!(
            error.to_string().contains("Can't extract geo keys"),
            "{error}"
        );
        let error = places
            .update_one(doc! { "_id": 1 }, doc! { "$set": { "geo": bad.clone() } })
            .run()
            .unwrap_err();
        assert_eq!(error.code(), Some(16755), "{bad}: {error}");
    }
    assert!(places.find_one(doc! { "_id": 10 }).run().unwrap().is_none());
    assert_eq!(
        places.find_one(doc! { "_id": 1 }).run().unwrap().unwrap(),
        doc! { "_id": 1, "geo": point(1.0, 0.0) }
    );
    // null and missing are fine: no location, no entry.
    places
        .insert_one(doc! { "_id": 11, "geo": Bson::Null })
        .run()
        .unwrap();
    // An index on a collection holding invalid geometry cannot be built.
    let db = Database::open_in_memory().unwrap();
    let raw = db.collection::<Document>("raw");
    raw.insert_one(doc! { "_id": 1, "geo": "nowhere" })
        .run()
        .unwrap();
    let error = raw
        .create_index(geo_index(doc! { "geo": "2dsphere" }))
        .run()
        .unwrap_err();
    assert_eq!(error.code(), Some(16755));
    assert_eq!(raw.list_index_names().run().unwrap(), ["_id_"]);
}

#[test]
fn index_options_are_checked_and_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path()).unwrap();
        let places = db.collection::<Document>("places");
        let refuse = |keys: Document, geo: Option<GeoIndexOptions>| {
            places
                .create_index(IndexModel {
                    keys,
                    options: Some(IndexOptions {
                        geo,
                        ..Default::default()
                    }),
                })
                .run()
                .unwrap_err()
        };
        assert_eq!(
            refuse(doc! { "a": 1, "loc": "2d" }, None).code(),
            Some(13023)
        );
        let bits = GeoIndexOptions {
            bits: Some(40),
            ..Default::default()
        };
        assert_eq!(refuse(doc! { "loc": "2d" }, Some(bits)).code(), Some(13028));
        let version = GeoIndexOptions {
            sphere_version: Some(1),
            ..Default::default()
        };
        refuse(doc! { "loc": "2dsphere" }, Some(version));
        refuse(doc! { "a": "2dsphere", "b": "2dsphere" }, None);
        places
            .create_index(geo_index(doc! { "geo": "2dsphere", "kind": 1 }))
            .run()
            .unwrap();
        places
            .insert_one(doc! { "_id": 1, "geo": point(1.0, 1.0), "kind": "cafe" })
            .run()
            .unwrap();
    }
    let db = Database::open(dir.path()).unwrap();
    let places = db.collection::<Document>("places");
    let listed = places
        .list_indexes()
        .run()
        .unwrap()
        .collect::<spillway::Result<Vec<_>>>()
        .unwrap();
    let options = listed[1].options.clone().unwrap();
    assert_eq!(options.name.as_deref(), Some("geo_2dsphere_kind_1"));
    assert_eq!(options.geo.unwrap().sphere_version, Some(3));
    let error = places
        .insert_one(doc! { "_id": 2, "geo": 5, "kind": "bar" })
        .run()
        .unwrap_err();
    assert_eq!(error.code(), Some(16755));
    assert!(db.verify().unwrap().is_clean());
}

#[test]
fn commands_list_geo_indexes_as_mongodb_does_and_refuse_near_in_pipelines() {
    let db = Database::open_in_memory().unwrap();
    let commands = Commands::new(db);
    let run = |mut command: Document| {
        command.insert("$db", "test");
        commands.execute(command)
    };
    let reply = run(doc! { "createIndexes": "places", "indexes": [
        { "key": { "loc": "2d" }, "name": "loc_2d", "bits": 20 },
        { "key": { "geo": "2dsphere" }, "name": "geo_2dsphere" },
    ] });
    assert_eq!(reply.get_f64("ok").ok(), Some(1.0), "{reply}");
    let reply = run(doc! { "listIndexes": "places" });
    let listed = reply
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap();
    assert_eq!(
        listed[1],
        Bson::Document(doc! { "v": 2, "key": { "loc": "2d" }, "name": "loc_2d", "bits": 20 })
    );
    assert_eq!(
        listed[2],
        Bson::Document(
            doc! { "v": 2, "key": { "geo": "2dsphere" }, "name": "geo_2dsphere", "2dsphereIndexVersion": 3 }
        )
    );
    run(doc! { "insert": "places", "documents": [
        { "_id": 1, "geo": point(1.0, 0.0) },
        { "_id": 2, "geo": point(0.5, 0.0) },
    ] });
    let reply = run(
        doc! { "find": "places", "filter": { "geo": { "$near": { "$geometry": point(0.0, 0.0) } } } },
    );
    let batch = reply
        .get_document("cursor")
        .unwrap()
        .get_array("firstBatch")
        .unwrap();
    let found: Vec<i32> = batch
        .iter()
        .map(|document| document.as_document().unwrap().get_i32("_id").unwrap())
        .collect();
    assert_eq!(found, [2, 1]);
    let reply = run(doc! { "insert": "places", "documents": [{ "_id": 3, "geo": "x" }] });
    let error = reply.get_array("writeErrors").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(error.get_i32("code").ok(), Some(16755), "{reply}");
    let reply = run(doc! {
        "aggregate": "places",
        "pipeline": [{ "$match": { "geo": { "$near": [0, 0] } } }],
        "cursor": {},
    });
    assert_eq!(reply.get_i32("code").ok(), Some(5_626_500), "{reply}");
}
