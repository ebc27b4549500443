//! Geospatial indexes (`2d` and `2dsphere`): the keys their field gives a document.
//!
//! A geospatial index validates and marks its field: every document written must hold valid
//! locations there (or nothing, or `null`: such a document gets no entry, as in MongoDB), or
//! the write is refused with MongoDB's code (16755 "Can't extract geo keys" for `2dsphere`;
//! 13026, 13027, 13068 and 16804 for `2d`) and nothing is stored. Its entries hold, for each
//! location, a Z-order cell of its point (`2d`: quantized over `[min, max]` with `bits` bits
//! per coordinate; `2dsphere`: of the centre of the shape's bounding box, over longitude and
//! latitude). The planner never chooses a geospatial index: geospatial predicates are
//! evaluated on every document a plan fetches (`spillway_doc::geospatial`), a collection scan
//! when nothing else narrows the query. A query with `$near` or `$nearSphere` needs such an
//! index on its field (MongoDB's error otherwise), fetches every match and orders them by
//! distance, nearest first, before its skip and limit (the `near` module, above this one).
//!
//! This module must never read or write the store: it computes keys.

use bson::{Bson, Document};
use spillway_doc::error::{MAX_SHOWN_CHARS, abbreviate};
use spillway_doc::geospatial::{self, Shape};
use spillway_doc::path::FieldPath;

use crate::catalog::IndexMeta;
use crate::catalog::geo::{GeoIndex, GeoKind, SPHERE_BITS};
use crate::error::{Error, ErrorKind, Result};

/// The keys the geospatial field `path` of `index` gives `document`: one Z-order cell per
/// location, sorted and deduplicated. Empty when the field is missing or `null` (the
/// document then gets no entry); an error with MongoDB's code when a value is no valid
/// location.
pub(crate) fn keys(
    collection: &str,
    index: &IndexMeta,
    geo: &GeoIndex,
    path: &FieldPath,
    document: &Document,
) -> Result<Vec<Bson>> {
    let mut values = Vec::new();
    if let Some((first, rest)) = path.parts().split_first()
        && let Some(child) = document.get(first)
    {
        along_path(child, rest, &mut values);
    }
    let refuse = |code: i32, reason: String| {
        let shown = Bson::Document(document.clone()).to_string();
        let message = match code {
            16755 => format!(
                "Can't extract geo keys: {}  {reason}",
                abbreviate(&shown, MAX_SHOWN_CHARS)
            ),
            _ => format!(
                "index '{}': {reason} (document {})",
                index.name,
                abbreviate(&shown, MAX_SHOWN_CHARS)
            ),
        };
        Error::new(ErrorKind::InvalidIndex {
            collection: collection.to_string(),
            message,
        })
        .with_code(code)
    };
    let mut cells = Vec::new();
    for value in values {
        match geo.kind {
            GeoKind::Sphere => {
                for shape in sphere_locations(value).map_err(|reason| refuse(16755, reason))? {
                    if let Some(anchor) = shape.anchor() {
                        cells.push(cell(
                            (anchor.x(), anchor.y()),
                            ((-180.0, 180.0), (-90.0, 90.0)),
                            SPHERE_BITS,
                        ));
                    }
                }
            }
            GeoKind::Flat { min, max, bits, .. } => {
                for (x, y) in flat_locations(value, min, max)
                    .map_err(|(code, reason)| refuse(code, reason))?
                {
                    cells.push(cell((x, y), ((min, max), (min, max)), bits));
                }
            }
        }
    }
    cells.sort_unstable();
    cells.dedup();
    Ok(cells.into_iter().map(Bson::Int64).collect())
}

/// The values at the end of `parts`, through arrays of documents on the way; an array at the
/// end is one value (a legacy pair is an array), as MongoDB's geospatial key generation reads.
fn along_path<'a>(value: &'a Bson, parts: &[String], found: &mut Vec<&'a Bson>) {
    let Some((first, rest)) = parts.split_first() else {
        found.push(value);
        return;
    };
    match value {
        Bson::Document(document) => {
            if let Some(child) = document.get(first) {
                along_path(child, rest, found);
            }
        }
        Bson::Array(items) => {
            for item in items {
                if matches!(item, Bson::Document(_)) {
                    along_path(item, parts, found);
                }
            }
        }
        _ => {}
    }
}

/// The locations of a `2dsphere` field's value: a GeoJSON object, a legacy pair (longitude,
/// latitude), or an array of either; none for `null` and `[]`.
fn sphere_locations(value: &Bson) -> std::result::Result<Vec<Shape>, String> {
    let one = |value: &Bson| -> std::result::Result<Shape, String> {
        match value {
            Bson::Document(document) if document.contains_key("type") => {
                geospatial::geojson(document).map(Shape::GeoJson)
            }
            Bson::Document(_) | Bson::Array(_) => {
                let point = geospatial::legacy_point(value).ok_or_else(|| {
                    format!("Point must only contain numeric elements, found {value}")
                })?;
                if !(-180.0..=180.0).contains(&point.x()) || !(-90.0..=90.0).contains(&point.y()) {
                    return Err(format!(
                        "longitude/latitude is out of bounds, lng: {} lat: {}",
                        point.x(),
                        point.y()
                    ));
                }
                Ok(Shape::Legacy(point))
            }
            other => Err(format!(
                "Point must be an array or object, instead got type {}",
                type_name(other)
            )),
        }
    };
    match value {
        Bson::Null => Ok(Vec::new()),
        Bson::Array(items) if items.is_empty() => Ok(Vec::new()),
        // An array of locations, not a pair of numbers.
        Bson::Array(items) if matches!(items[0], Bson::Document(_) | Bson::Array(_)) => {
            items.iter().map(one).collect()
        }
        other => Ok(vec![one(other)?]),
    }
}

/// The points of a `2d` field's value, MongoDB's grammar: a pair `[x, y]` or `{ a: x, b: y }`,
/// or an array (or document) of pairs; nothing for other types and empty values. Errors carry
/// MongoDB's codes.
fn flat_locations(
    value: &Bson,
    min: f64,
    max: f64,
) -> std::result::Result<Vec<(f64, f64)>, (i32, String)> {
    let items: Vec<&Bson> = match value {
        Bson::Array(items) => items.iter().collect(),
        Bson::Document(document) => document.values().collect(),
        _ => return Ok(Vec::new()),
    };
    let Some(first) = items.first() else {
        return Ok(Vec::new());
    };
    let pair = |items: &[&Bson]| -> std::result::Result<(f64, f64), (i32, String)> {
        let [x, y, ..] = items else {
            return Err((13068, "geo field only has 1 element".to_string()));
        };
        let (Some(x), Some(y)) = (number(x), number(y)) else {
            return Err((
                13026,
                "geo values must be 'legacy coordinate pairs' for 2d indexes".to_string(),
            ));
        };
        if !(x >= min && x <= max && y >= min && y <= max) {
            return Err((13027, format!("point not in interval of [ {min}, {max} ]")));
        }
        Ok((x, y))
    };
    if matches!(
        first,
        Bson::Int32(_) | Bson::Int64(_) | Bson::Double(_) | Bson::Decimal128(_)
    ) {
        return Ok(vec![pair(&items)?]);
    }
    let mut points = Vec::with_capacity(items.len());
    for item in items {
        let coordinates: Vec<&Bson> = match item {
            Bson::Array(inner) => inner.iter().collect(),
            Bson::Document(inner) => inner.values().collect(),
            _ => {
                return Err((
                    16804,
                    "location object expected, location array not in correct format".to_string(),
                ));
            }
        };
        points.push(pair(&coordinates)?);
    }
    Ok(points)
}

/// A coordinate: an int, long or double.
fn number(value: &Bson) -> Option<f64> {
    match value {
        Bson::Int32(int) => Some(f64::from(*int)),
        Bson::Int64(long) => Some(*long as f64),
        Bson::Double(double) => Some(*double),
        _ => None,
    }
}

/// MongoDB's name of a value's type, for messages.
fn type_name(value: &Bson) -> &'static str {
    match value {
        Bson::Double(_) => "double",
        Bson::String(_) => "string",
        Bson::Boolean(_) => "bool",
        Bson::Int32(_) => "int",
        Bson::Int64(_) => "long",
        Bson::Decimal128(_) => "decimal",
        Bson::DateTime(_) => "date",
        Bson::ObjectId(_) => "objectId",
        _ => "other",
    }
}

/// The Z-order (bit-interleaved) cell of `(x, y)` on a grid of `2^bits` cells per axis over
/// the bounds, as an int64.
fn cell(
    (x, y): (f64, f64),
    ((min_x, max_x), (min_y, max_y)): ((f64, f64), (f64, f64)),
    bits: u32,
) -> i64 {
    let cells = (1u64 << bits) - 1;
    let quantize = |value: f64, min: f64, max: f64| {
        let scaled = ((value - min) / (max - min)).clamp(0.0, 1.0) * cells as f64;
        scaled as u64
    };
    let (qx, qy) = (quantize(x, min_x, max_x), quantize(y, min_y, max_y));
    let mut interleaved = 0u64;
    for bit in (0..bits).rev() {
        interleaved = (interleaved << 2) | (((qx >> bit) & 1) << 1) | ((qy >> bit) & 1);
    }
    i64::from_ne_bytes(interleaved.to_ne_bytes())
}
