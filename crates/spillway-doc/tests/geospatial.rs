//! Geospatial query operators: which stored locations `$geoWithin`, `$geoIntersects`, `$near`
//! and `$nearSphere` match, and what they refuse. Polygons crossing the antimeridian are not
//! supported (see `spillway_doc::geospatial`), so no case here crosses it.
//! Without the `geo` feature these operators are refused (see `filter_errors.rs`).

#![cfg(feature = "geo")]

use bson::{Bson, Document, RawDocumentBuf, doc};
use spillway_doc::filter::Filter;
use spillway_doc::geospatial::{DistanceUnit, EARTH_RADIUS_METERS};

/// Whether `filter` matches a document holding `location` at `loc`.
fn matches(filter: &Document, location: &Bson) -> bool {
    let filter = Filter::parse(filter).unwrap();
    let document = RawDocumentBuf::try_from(&doc! { "_id": 1, "loc": location.clone() }).unwrap();
    filter.matches(&document).unwrap()
}

/// `check(filter, [(location, expected)])`: each location matched or not as expected.
fn check(filter: &Document, cases: &[(Bson, bool)]) {
    for (location, expected) in cases {
        assert_eq!(
            matches(filter, location),
            *expected,
            "{filter} on {location}"
        );
    }
}

fn point(lng: f64, lat: f64) -> Bson {
    Bson::Document(doc! { "type": "Point", "coordinates": [lng, lat] })
}

fn square() -> Document {
    doc! { "type": "Polygon", "coordinates": [[[0.0, 0.0], [4.0, 0.0], [4.0, 4.0], [0.0, 4.0], [0.0, 0.0]]] }
}

#[test]
fn geo_within_a_geojson_polygon() {
    let filter = doc! { "loc": { "$geoWithin": { "$geometry": square() } } };
    check(
        &filter,
        &[
            (point(2.0, 2.0), true),
            (point(5.0, 2.0), false),
            (point(-1.0, -1.0), false),
            // On the boundary: within, as a vertex or an edge.
            (point(4.0, 2.0), true),
            (point(0.0, 0.0), true),
            // Legacy pairs read as longitude, latitude; a pair as a document too.
            (Bson::Array(vec![1.into(), 1.into()]), true),
            (Bson::Document(doc! { "lng": 3, "lat": 3 }), true),
            (Bson::Array(vec![10.into(), 1.into()]), false),
            // A line wholly inside, one that leaves.
            (
                Bson::Document(doc! { "type": "LineString", "coordinates": [[1, 1], [3, 3]] }),
                true,
            ),
            (
                Bson::Document(doc! { "type": "LineString", "coordinates": [[1, 1], [6, 3]] }),
                false,
            ),
            // Not a location at all.
            (Bson::String("here".into()), false),
            (Bson::Null, false),
        ],
    );
    // `$within` is the old name.
    check(
        &doc! { "loc": { "$within": { "$geometry": square() } } },
        &[(point(2.0, 2.0), true), (point(5.0, 5.0), false)],
    );
}

#[test]
fn geo_within_a_polygon_with_a_hole_and_a_multipolygon() {
    let with_hole = doc! { "type": "Polygon", "coordinates": [
        [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]],
        [[4, 4], [6, 4], [6, 6], [4, 6], [4, 4]],
    ] };
    check(
        &doc! { "loc": { "$geoWithin": { "$geometry": with_hole } } },
        &[(point(1.0, 1.0), true), (point(5.0, 5.0), false)],
    );
    let two = doc! { "type": "MultiPolygon", "coordinates": [
        [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]],
        [[[10, 10], [11, 10], [11, 11], [10, 11], [10, 10]]],
    ] };
    check(
        &doc! { "loc": { "$geoWithin": { "$geometry": two } } },
        &[
            (point(0.5, 0.5), true),
            (point(10.5, 10.5), true),
            (point(5.0, 5.0), false),
        ],
    );
}

#[test]
fn legacy_shapes_are_flat_and_match_points() {
    check(
        &doc! { "loc": { "$geoWithin": { "$box": [[0, 0], [10, 5]] } } },
        &[
            (Bson::Array(vec![5.into(), 5.into()]), true),
            (Bson::Array(vec![5.into(), 6.into()]), false),
            (point(1.0, 1.0), true),
            // An array of points: one inside is enough.
            (
                Bson::Array(vec![
                    Bson::Array(vec![50.into(), 50.into()]),
                    Bson::Array(vec![1.into(), 1.into()]),
                ]),
                true,
            ),
        ],
    );
    check(
        &doc! { "loc": { "$geoWithin": { "$polygon": [[0, 0], [10, 0], [0, 10]] } } },
        &[
            (Bson::Array(vec![2.into(), 2.into()]), true),
            (Bson::Array(vec![6.into(), 6.into()]), false),
        ],
    );
    check(
        &doc! { "loc": { "$geoWithin": { "$center": [[0, 0], 5] } } },
        &[
            (Bson::Array(vec![3.into(), 4.into()]), true),
            (Bson::Array(vec![4.into(), 4.into()]), false),
        ],
    );
}

#[test]
fn center_sphere_measures_radians() {
    // One degree of arc is 0.01745 radians: a cap of 0.02 radians around (0, 0).
    let filter = doc! { "loc": { "$geoWithin": { "$centerSphere": [[0, 0], 0.02] } } };
    check(
        &filter,
        &[
            (point(1.0, 0.0), true),
            (Bson::Array(vec![0.into(), 1.into()]), true),
            (point(1.2, 0.0), false),
            // Near the pole, longitude degrees are short: 10 degrees of longitude at 89.9N.
            (point(0.0, 89.9), false),
        ],
    );
    check(
        &doc! { "loc": { "$geoWithin": { "$centerSphere": [[0, 89.9], 0.01] } } },
        &[(point(10.0, 89.9), true)],
    );
}

#[test]
fn geo_intersects_any_geometry() {
    let line = doc! { "type": "LineString", "coordinates": [[0, 0], [10, 10]] };
    check(
        &doc! { "loc": { "$geoIntersects": { "$geometry": line } } },
        &[
            (point(5.0, 5.0), true),
            (point(5.0, 6.0), false),
            (Bson::Document(square()), true),
            (
                Bson::Document(
                    doc! { "type": "Polygon", "coordinates": [[[20, 0], [30, 0], [30, 5], [20, 0]]] },
                ),
                false,
            ),
        ],
    );
}

#[test]
fn near_bounds_distances_in_the_units_of_its_form() {
    // Legacy `$near`: flat distance.
    check(
        &doc! { "loc": { "$near": [0, 0], "$maxDistance": 5 } },
        &[
            (Bson::Array(vec![3.into(), 4.into()]), true),
            (Bson::Array(vec![3.into(), 4.1.into()]), false),
        ],
    );
    // `$nearSphere` with a legacy point: radians.
    check(
        &doc! { "loc": { "$nearSphere": [0, 0], "$maxDistance": 0.02 } },
        &[(point(1.0, 0.0), true), (point(2.0, 0.0), false)],
    );
    // GeoJSON: meters. One degree of longitude at the equator is 111,318 m on MongoDB's sphere.
    let near = |max: f64, min: f64| {
        doc! { "loc": { "$near": {
            "$geometry": { "type": "Point", "coordinates": [0, 0] },
            "$maxDistance": max, "$minDistance": min,
        } } }
    };
    check(&near(112_000.0, 0.0), &[(point(1.0, 0.0), true)]);
    check(&near(111_000.0, 0.0), &[(point(1.0, 0.0), false)]);
    check(&near(200_000.0, 112_000.0), &[(point(1.0, 0.0), false)]);
}

#[test]
fn near_distance_orders_and_uses_the_closest_location() {
    let filter =
        Filter::parse(&doc! { "loc": { "$near": { "$geometry": point(0.0, 0.0) } } }).unwrap();
    let (path, near) = filter.near().unwrap();
    assert_eq!(near.unit, DistanceUnit::Meters);
    let document = RawDocumentBuf::try_from(&doc! {
        "loc": [point(3.0, 0.0), point(1.0, 0.0)],
    })
    .unwrap();
    let distance = near.distance_in(path, &document).unwrap().unwrap();
    let one_degree = EARTH_RADIUS_METERS * 1f64.to_radians();
    assert!((distance - one_degree).abs() < 1.0, "{distance}");
    // Inside a polygon, the distance is zero.
    let inside = RawDocumentBuf::try_from(&doc! { "loc": square() }).unwrap();
    let filter =
        Filter::parse(&doc! { "loc": { "$near": { "$geometry": point(2.0, 2.0) } } }).unwrap();
    let (path, near) = filter.near().unwrap();
    assert_eq!(near.distance_in(path, &inside).unwrap(), Some(0.0));
}

#[test]
fn malformed_geospatial_operands_are_refused() {
    for filter in [
        doc! { "loc": { "$geoWithin": { "$geometry": { "type": "Point", "coordinates": [0, 0] } } } },
        doc! { "loc": { "$geoWithin": { "$geometry": { "type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1]]] } } } },
        doc! { "loc": { "$geoWithin": { "$geometry": { "type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 2]]] } } } },
        doc! { "loc": { "$geoWithin": { "$geometry": { "type": "Polygon", "coordinates": [[[0, 0], [200, 0], [1, 1], [0, 0]]] } } } },
        doc! { "loc": { "$geoWithin": { "$box": [[0, 0]] } } },
        doc! { "loc": { "$geoWithin": { "$polygon": [[0, 0], [1, 1]] } } },
        doc! { "loc": { "$geoWithin": { "$center": [[0, 0], -1] } } },
        doc! { "loc": { "$geoWithin": { "$box": [[0, 0], [1, 1]], "$center": [[0, 0], 1] } } },
        doc! { "loc": { "$geoWithin": { "$sphere": 1 } } },
        doc! { "loc": { "$geoIntersects": { "$box": [[0, 0], [1, 1]] } } },
        doc! { "loc": { "$near": "here" } },
        doc! { "loc": { "$near": [0, 0], "$maxDistance": -1 } },
        doc! { "loc": { "$maxDistance": 1 } },
        doc! { "loc": { "$near": [0, 0], "$gt": 1 } },
        doc! { "loc": { "$near": { "$geometry": { "type": "LineString", "coordinates": [[0, 0], [1, 1]] } } } },
        // `$near` decides the order of the results: once, at the top level.
        doc! { "$or": [{ "loc": { "$near": [0, 0] } }, { "a": 1 }] },
        doc! { "loc": { "$near": [0, 0] }, "other": { "$nearSphere": [0, 0] } },
        doc! { "loc": { "$not": { "$near": [0, 0] } } },
    ] {
        assert!(Filter::parse(&filter).is_err(), "{filter} parsed");
    }
    // In a top-level `$and` it is still at the top level.
    let and = Filter::parse(&doc! { "$and": [{ "loc": { "$near": [0, 0] } }] }).unwrap();
    assert!(and.near().is_some());
}
