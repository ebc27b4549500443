//! `$near` and `$nearSphere` queries: the geospatial index they need and the order of their
//! matches, nearest first (keys of geospatial indexes are [`crate::geo_index`]'s).
//!
//! This module must never read or write the store: it checks the catalog and orders matches
//! already fetched.

use bson::RawDocument;
use spillway_doc::geospatial::NearQuery;
use spillway_doc::path::FieldPath;

use crate::catalog::Catalog;
use crate::catalog::geo::GeoKind;
use crate::error::{Error, ErrorKind, Result};
use crate::exec::Match;

/// Checks that a `$near` query on `path` has the index it needs: a `2dsphere` index on the
/// field for a GeoJSON point, a `2d` or `2dsphere` one for a legacy pair (MongoDB's error 291
/// otherwise).
pub(crate) fn check_near_index(
    catalog: &Catalog,
    collection: &str,
    path: &FieldPath,
    near: &NearQuery,
) -> Result<()> {
    let indexed = catalog.collections.get(collection).is_some_and(|meta| {
        meta.indexes.iter().any(|index| {
            index.settings.geo.as_ref().is_some_and(|geo| {
                index.fields[geo.position].0.as_str() == path.as_str()
                    && (!near.is_geojson() || geo.kind == GeoKind::Sphere)
            })
        })
    });
    if indexed {
        return Ok(());
    }
    let wanted = if near.is_geojson() {
        "a 2dsphere index"
    } else {
        "a 2d or 2dsphere index"
    };
    Err(Error::new(ErrorKind::InvalidFilter(
        spillway_doc::DocError::InvalidFilter {
            path: path.as_str().to_string(),
            message: format!(
                "unable to find index for $geoNear query: {} on '{path}' needs {wanted} on the field",
                near.operator
            ),
        },
    ))
    .with_code(291))
}

/// Orders matches by their distance to the `$near` point, nearest first (ties in the order
/// they came, `_id` order for a scan).
pub(crate) fn order_by_distance(
    matches: &mut Vec<Match>,
    path: &FieldPath,
    near: &NearQuery,
) -> Result<()> {
    let mut measured = Vec::with_capacity(matches.len());
    for found in matches.drain(..) {
        let document = RawDocument::from_bytes(&found.bytes).map_err(|error| {
            Error::corruption(format!("a stored document is not BSON: {error}"))
        })?;
        let distance = near
            .distance_in(path, document)
            .map_err(Error::filter)?
            .unwrap_or(f64::INFINITY);
        measured.push((distance, found));
    }
    measured.sort_by(|a, b| a.0.total_cmp(&b.0));
    matches.extend(measured.into_iter().map(|(_, found)| found));
    Ok(())
}
