//! MongoDB's geospatial values and queries: locations read from documents (GeoJSON objects
//! and legacy coordinate pairs), the regions of `$geoWithin` and `$geoIntersects`, and the
//! distances of `$near` and `$nearSphere`.
//!
//! The geometry itself is georust's `geo` crate: point in polygon, covers, intersections,
//! closest points and haversine distances. This module only reads MongoDB's spellings into
//! `geo` values, with MongoDB's validation rules, and says which test each operator is:
//!
//! - `$geoWithin` with `$box`, `$polygon` and `$center` is flat (Euclidean) and matches points
//!   only (legacy pairs and GeoJSON points), boundary included;
//! - `$geoWithin` with `$centerSphere` (radius in radians) and with `$geometry` (a GeoJSON
//!   `Polygon` or `MultiPolygon`), and `$geoIntersects` with `$geometry`, read coordinates as
//!   longitude and latitude and match any geometry. A polygon's edges are straight lines in
//!   longitude and latitude, not great circles as in MongoDB: results differ only near the
//!   edges of polygons many degrees wide. Polygons that cross the antimeridian (180°) are not
//!   supported: they read as the polygon that goes the other way round the globe, and
//!   MongoDB's "big polygon" `crs` is refused;
//! - `$near` with a legacy point measures flat distances in the units of the coordinates;
//!   `$nearSphere` with a legacy point measures radians on the sphere; either with a GeoJSON
//!   point (`$geometry`) measures meters on a sphere of radius [`EARTH_RADIUS_METERS`], as
//!   MongoDB does. The distance to a line or polygon is to its closest point (zero inside).
//!
//! This module knows nothing about indexes: a `$near` filter here only bounds distances
//! (`$minDistance`, `$maxDistance`); ordering the results by distance is the caller's job
//! ([`NearQuery::distance_in`]).

use bson::{Bson, Document, RawBsonRef};
use geo::line_measures::{Distance, Euclidean, HaversineMeasure};
use geo::{
    BoundingRect, Closest, Coord, Covers, Geometry, GeometryCollection, HaversineClosestPoint,
    Intersects, LineString, MultiLineString, MultiPoint, MultiPolygon, Point, Polygon, Rect,
};

/// The radius of the Earth MongoDB converts radians to meters with (6378.1 km).
pub const EARTH_RADIUS_METERS: f64 = 6_378_100.0;

/// A location stored in a document.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A legacy coordinate pair, `[x, y]` or `{ x: .., y: .. }` (any two first fields):
    /// flat coordinates, or longitude and latitude for spherical queries.
    Legacy(Point<f64>),
    /// A GeoJSON object (longitude, latitude).
    GeoJson(Geometry<f64>),
}

impl Shape {
    /// The location a value holds, if any: a GeoJSON object (a document with a `type`) that
    /// is valid, or a legacy pair. Anything else (a number, a string, an invalid GeoJSON
    /// object) is no location, which no geospatial query matches.
    pub fn from_value(value: &Bson) -> Option<Shape> {
        match value {
            Bson::Document(document) if document.contains_key("type") => {
                geojson(document).ok().map(Shape::GeoJson)
            }
            other => legacy_point(other).map(Shape::Legacy),
        }
    }

    /// [`Shape::from_value`] on a raw value (decoding only that value, and only when it is a
    /// document or an array).
    pub fn from_raw(value: RawBsonRef<'_>) -> Option<Shape> {
        match value {
            RawBsonRef::Document(_) | RawBsonRef::Array(_) => {
                let decoded = Bson::try_from(value).ok()?;
                Shape::from_value(&decoded)
            }
            _ => None,
        }
    }

    /// The shape as a `geo` geometry, coordinates as they are.
    pub fn geometry(&self) -> Geometry<f64> {
        match self {
            Shape::Legacy(point) => Geometry::Point(*point),
            Shape::GeoJson(geometry) => geometry.clone(),
        }
    }

    /// One point that stands for the shape: the point itself, or the centre of its bounding
    /// rectangle (what an index entry records of it).
    pub fn anchor(&self) -> Option<Point<f64>> {
        match self {
            Shape::Legacy(point) => Some(*point),
            Shape::GeoJson(geometry) => geometry.bounding_rect().map(|rect| rect.center().into()),
        }
    }

    /// The point, if the shape is one (a legacy pair or a GeoJSON `Point`).
    pub fn point(&self) -> Option<Point<f64>> {
        match self {
            Shape::Legacy(point) | Shape::GeoJson(Geometry::Point(point)) => Some(*point),
            Shape::GeoJson(_) => None,
        }
    }
}

/// A number as MongoDB's geospatial code reads one (int, long or double).
fn number(value: &Bson) -> Option<f64> {
    match value {
        Bson::Int32(int) => Some(f64::from(*int)),
        Bson::Int64(long) => Some(*long as f64),
        Bson::Double(double) => Some(*double),
        _ => None,
    }
}

/// A legacy coordinate pair: an array or document whose first two values are numbers
/// (more values are ignored, as in MongoDB).
pub fn legacy_point(value: &Bson) -> Option<Point<f64>> {
    let mut values: Box<dyn Iterator<Item = &Bson>> = match value {
        Bson::Array(items) => Box::new(items.iter()),
        Bson::Document(document) => Box::new(document.values()),
        _ => return None,
    };
    let x = number(values.next()?)?;
    let y = number(values.next()?)?;
    (x.is_finite() && y.is_finite()).then(|| Point::new(x, y))
}

/// A GeoJSON position `[longitude, latitude, ...]`, within MongoDB's bounds.
fn position(value: &Bson) -> std::result::Result<Coord<f64>, String> {
    let Bson::Array(items) = value else {
        return Err(format!(
            "a position must be an array of numbers, not {value}"
        ));
    };
    if items.len() < 2 {
        return Err(format!("a position needs two numbers, found {value}"));
    }
    let (Some(x), Some(y)) = (number(&items[0]), number(&items[1])) else {
        return Err(format!(
            "a position must only contain numbers, found {value}"
        ));
    };
    if !(-180.0..=180.0).contains(&x) || !(-90.0..=90.0).contains(&y) {
        return Err(format!(
            "longitude/latitude is out of bounds, lng: {x} lat: {y}"
        ));
    }
    Ok(Coord { x, y })
}

fn positions(value: &Bson, what: &str) -> std::result::Result<Vec<Coord<f64>>, String> {
    let Bson::Array(items) = value else {
        return Err(format!("{what} must be an array of positions, not {value}"));
    };
    items.iter().map(position).collect()
}

fn line_string(value: &Bson) -> std::result::Result<LineString<f64>, String> {
    let coords = positions(value, "a LineString's coordinates")?;
    if coords.len() < 2 {
        return Err("a LineString must have at least 2 positions".to_string());
    }
    Ok(LineString::new(coords))
}

fn polygon(value: &Bson) -> std::result::Result<Polygon<f64>, String> {
    let Bson::Array(rings) = value else {
        return Err(format!(
            "a Polygon's coordinates must be an array of rings, not {value}"
        ));
    };
    let mut parsed = Vec::with_capacity(rings.len());
    for ring in rings {
        let coords = positions(ring, "a Polygon's ring")?;
        if coords.len() < 4 {
            return Err("a Polygon's ring must have at least 4 positions".to_string());
        }
        if coords.first() != coords.last() {
            return Err(
                "a Polygon's ring must be closed: its first and last positions must be the same"
                    .to_string(),
            );
        }
        parsed.push(LineString::new(coords));
    }
    let mut rings = parsed.into_iter();
    let Some(exterior) = rings.next() else {
        return Err("a Polygon needs at least one ring".to_string());
    };
    Ok(Polygon::new(exterior, rings.collect()))
}

fn each<T>(
    value: &Bson,
    what: &str,
    parse: impl Fn(&Bson) -> std::result::Result<T, String>,
) -> std::result::Result<Vec<T>, String> {
    let Bson::Array(items) = value else {
        return Err(format!(
            "{what}'s coordinates must be an array, not {value}"
        ));
    };
    items.iter().map(parse).collect()
}

/// Reads a GeoJSON object (`Point`, `LineString`, `Polygon`, `MultiPoint`,
/// `MultiLineString`, `MultiPolygon`, `GeometryCollection`) with MongoDB's rules: positions
/// within longitude [-180, 180] and latitude [-90, 90], closed rings of at least 4
/// positions. The error says what is wrong, for MongoDB's "Can't extract geo keys" (16755)
/// and query errors.
pub fn geojson(document: &Document) -> std::result::Result<Geometry<f64>, String> {
    let kind = match document.get("type") {
        Some(Bson::String(kind)) => kind.as_str(),
        Some(other) => return Err(format!("the GeoJSON type must be a string, not {other}")),
        None => return Err("a GeoJSON object needs a type".to_string()),
    };
    if let Some(crs) = document.get("crs") {
        let is_default = matches!(crs, Bson::Document(crs) if crs
            .get_document("properties")
            .ok()
            .and_then(|properties| properties.get_str("name").ok())
            .is_some_and(|name| matches!(name, "EPSG:4326" | "urn:ogc:def:crs:OGC:1.3:CRS84")));
        if !is_default {
            return Err(format!(
                "the GeoJSON crs {crs} is not supported (big polygons are not)"
            ));
        }
    }
    if kind == "GeometryCollection" {
        let Some(Bson::Array(members)) = document.get("geometries") else {
            return Err("a GeometryCollection needs an array of geometries".to_string());
        };
        let mut geometries = Vec::with_capacity(members.len());
        for member in members {
            let Bson::Document(member) = member else {
                return Err(format!(
                    "a GeometryCollection member must be a document, not {member}"
                ));
            };
            geometries.push(geojson(member)?);
        }
        return Ok(Geometry::GeometryCollection(GeometryCollection::new_from(
            geometries,
        )));
    }
    let Some(coordinates) = document.get("coordinates") else {
        return Err(format!("a GeoJSON {kind} needs coordinates"));
    };
    Ok(match kind {
        "Point" => Geometry::Point(Point::from(position(coordinates)?)),
        "LineString" => Geometry::LineString(line_string(coordinates)?),
        "Polygon" => Geometry::Polygon(polygon(coordinates)?),
        "MultiPoint" => Geometry::MultiPoint(MultiPoint::new(each(
            coordinates,
            "a MultiPoint",
            |value| position(value).map(Point::from),
        )?)),
        "MultiLineString" => Geometry::MultiLineString(MultiLineString::new(each(
            coordinates,
            "a MultiLineString",
            line_string,
        )?)),
        "MultiPolygon" => Geometry::MultiPolygon(MultiPolygon::new(each(
            coordinates,
            "a MultiPolygon",
            polygon,
        )?)),
        other => return Err(format!("unknown GeoJSON type '{other}'")),
    })
}

/// The region of a `$geoWithin` or `$geoIntersects` query.
#[derive(Debug, Clone, PartialEq)]
pub enum GeoRegion {
    /// `$box: [[x1, y1], [x2, y2]]`: a flat rectangle (two opposite corners).
    Box(Rect<f64>),
    /// `$polygon: [[x, y], ...]`: a flat polygon (closed implicitly).
    Polygon(Polygon<f64>),
    /// `$center: [[x, y], radius]`: a flat circle.
    Center {
        /// The centre.
        center: Point<f64>,
        /// The radius, in the units of the coordinates.
        radius: f64,
    },
    /// `$centerSphere: [[lng, lat], radius]`: a spherical cap.
    CenterSphere {
        /// The centre (longitude, latitude).
        center: Point<f64>,
        /// The radius, in radians.
        radius: f64,
    },
    /// `$geometry`: a GeoJSON object (longitude, latitude).
    Geometry(Geometry<f64>),
}

impl GeoRegion {
    /// Whether `shape` lies within the region, boundary included (`$geoWithin`).
    pub fn contains(&self, shape: &Shape) -> bool {
        match self {
            GeoRegion::Box(rect) => shape.point().is_some_and(|point| rect.intersects(&point)),
            GeoRegion::Polygon(polygon) => shape
                .point()
                .is_some_and(|point| polygon.intersects(&point)),
            GeoRegion::Center { center, radius } => shape
                .point()
                .is_some_and(|point| Euclidean.distance(*center, point) <= *radius),
            GeoRegion::CenterSphere { center, radius } => {
                let unit_sphere = HaversineMeasure::new(1.0);
                let mut coords = coordinates(&shape.geometry()).into_iter().peekable();
                coords.peek().is_some()
                    && coords
                        .all(|coord| unit_sphere.distance(*center, Point::from(coord)) <= *radius)
            }
            GeoRegion::Geometry(region) => region.covers(&shape.geometry()),
        }
    }

    /// Whether `shape` and the region have a point in common (`$geoIntersects`).
    pub fn intersects(&self, shape: &Shape) -> bool {
        match self {
            GeoRegion::Geometry(region) => region.intersects(&shape.geometry()),
            // Parsing gives `$geoIntersects` only `$geometry` regions.
            _ => self.contains(shape),
        }
    }
}

/// Every coordinate of a geometry.
fn coordinates(geometry: &Geometry<f64>) -> Vec<Coord<f64>> {
    use geo::CoordsIter;
    geometry.coords_iter().collect()
}

/// Parses the operand of `$geoWithin` (and `$within`): a document with one of `$geometry`
/// (a GeoJSON `Polygon` or `MultiPolygon`), `$box`, `$polygon`, `$center`, `$centerSphere`.
pub(crate) fn parse_within(value: &Bson) -> std::result::Result<GeoRegion, String> {
    let Bson::Document(spec) = value else {
        return Err(format!("$geoWithin needs a document, not {value}"));
    };
    let mut entries = spec.iter();
    let (Some((shape, operand)), None) = (entries.next(), entries.next()) else {
        return Err(
            "$geoWithin needs exactly one of $geometry, $box, $polygon, $center, $centerSphere"
                .to_string(),
        );
    };
    let pair = |value: &Bson, what: &str| {
        legacy_point(value)
            .ok_or_else(|| format!("{what}: a point must be a pair of numbers, not {value}"))
    };
    let circle = |what: &str| -> std::result::Result<(Point<f64>, f64), String> {
        let usage = format!("{what} needs [[x, y], radius], not {operand}");
        let Bson::Array(items) = operand else {
            return Err(usage);
        };
        let [center, radius] = items.as_slice() else {
            return Err(usage);
        };
        let radius = number(radius)
            .filter(|radius| *radius >= 0.0)
            .ok_or_else(|| {
                format!("{what}: the radius must be a non-negative number, not {radius}")
            })?;
        Ok((pair(center, what)?, radius))
    };
    match shape.as_str() {
        "$geometry" => {
            let Bson::Document(object) = operand else {
                return Err(format!("$geometry needs a GeoJSON object, not {operand}"));
            };
            match geojson(object)? {
                geometry @ (Geometry::Polygon(_) | Geometry::MultiPolygon(_)) => {
                    Ok(GeoRegion::Geometry(geometry))
                }
                _ => Err("$geoWithin with $geometry needs a Polygon or MultiPolygon".to_string()),
            }
        }
        "$box" => {
            let usage = format!("$box needs two corners [[x1, y1], [x2, y2]], not {operand}");
            let Bson::Array(corners) = operand else {
                return Err(usage);
            };
            let [first, second] = corners.as_slice() else {
                return Err(usage);
            };
            Ok(GeoRegion::Box(Rect::new(
                pair(first, "$box")?,
                pair(second, "$box")?,
            )))
        }
        "$polygon" => {
            let Bson::Array(points) = operand else {
                return Err(format!("$polygon needs an array of points, not {operand}"));
            };
            if points.len() < 3 {
                return Err("$polygon needs at least 3 points".to_string());
            }
            let coords = points
                .iter()
                .map(|point| pair(point, "$polygon").map(Coord::from))
                .collect::<std::result::Result<Vec<_>, _>>()?;
            Ok(GeoRegion::Polygon(Polygon::new(
                LineString::new(coords),
                Vec::new(),
            )))
        }
        "$center" => {
            let (center, radius) = circle("$center")?;
            Ok(GeoRegion::Center { center, radius })
        }
        "$centerSphere" => {
            let (center, radius) = circle("$centerSphere")?;
            if !(-180.0..=180.0).contains(&center.x()) || !(-90.0..=90.0).contains(&center.y()) {
                return Err(format!(
                    "$centerSphere: longitude/latitude is out of bounds, lng: {} lat: {}",
                    center.x(),
                    center.y()
                ));
            }
            Ok(GeoRegion::CenterSphere { center, radius })
        }
        other => Err(format!(
            "$geoWithin: unknown shape {other} (use $geometry, $box, $polygon, $center or $centerSphere)"
        )),
    }
}

/// Parses the operand of `$geoIntersects`: `{ $geometry: <GeoJSON object> }`.
pub(crate) fn parse_intersects(value: &Bson) -> std::result::Result<GeoRegion, String> {
    let Bson::Document(spec) = value else {
        return Err(format!("$geoIntersects needs a document, not {value}"));
    };
    match (spec.len(), spec.get("$geometry")) {
        (1, Some(Bson::Document(object))) => Ok(GeoRegion::Geometry(geojson(object)?)),
        _ => Err(format!(
            "$geoIntersects needs {{ $geometry: <GeoJSON object> }}, not {value}"
        )),
    }
}

/// How a `$near` query measures distances.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DistanceUnit {
    /// Flat (Euclidean) distance in the units of the coordinates: `$near` with a legacy point.
    Flat,
    /// Radians on the sphere: `$nearSphere` with a legacy point.
    Radians,
    /// Meters on the sphere: `$near` or `$nearSphere` with a GeoJSON point.
    Meters,
}

/// A `$near` or `$nearSphere` query: the point, how distances are measured and their bounds.
#[derive(Debug, Clone, PartialEq)]
pub struct NearQuery {
    /// `$near` or `$nearSphere`.
    pub operator: &'static str,
    /// The point distances are measured from.
    pub point: Point<f64>,
    /// How distances are measured.
    pub unit: DistanceUnit,
    /// `$minDistance`, in [`NearQuery::unit`]s.
    pub min_distance: Option<f64>,
    /// `$maxDistance`, in [`NearQuery::unit`]s.
    pub max_distance: Option<f64>,
}

impl NearQuery {
    /// `$near` or `$nearSphere` (the field, for code that also builds without the `geo`
    /// feature, where `NearQuery` has no fields).
    pub fn operator(&self) -> &'static str {
        self.operator
    }

    /// Whether the point was given as GeoJSON (`$geometry`): such a query needs a `2dsphere`
    /// index, a legacy one either kind.
    pub fn is_geojson(&self) -> bool {
        self.unit == DistanceUnit::Meters
    }

    /// The distance from the query's point to `shape`, in the query's unit (`None` when the
    /// query cannot measure it: a flat distance to a shape that is not a point).
    pub fn distance(&self, shape: &Shape) -> Option<f64> {
        let radius = match self.unit {
            DistanceUnit::Flat => {
                return match shape {
                    Shape::Legacy(point) => Some(Euclidean.distance(self.point, *point)),
                    Shape::GeoJson(geometry) => Some(Euclidean.distance(geometry, &self.point)),
                };
            }
            DistanceUnit::Radians => 1.0,
            DistanceUnit::Meters => EARTH_RADIUS_METERS,
        };
        let closest = match shape {
            Shape::Legacy(point) => Closest::SinglePoint(*point),
            Shape::GeoJson(geometry) => geometry.haversine_closest_point(&self.point),
        };
        match closest {
            Closest::Intersection(_) => Some(0.0),
            Closest::SinglePoint(point) => {
                Some(HaversineMeasure::new(radius).distance(self.point, point))
            }
            Closest::Indeterminate => None,
        }
    }

    /// Whether a distance is within `$minDistance` and `$maxDistance`.
    pub fn in_range(&self, distance: f64) -> bool {
        self.min_distance.is_none_or(|min| distance >= min)
            && self.max_distance.is_none_or(|max| distance <= max)
    }

    /// Whether `shape` is within the bounds (what `$near` matches as a filter).
    pub fn matches(&self, shape: &Shape) -> bool {
        self.distance(shape)
            .is_some_and(|distance| self.in_range(distance))
    }
}

/// Parses `{ $near | $nearSphere: <point>, $maxDistance?, $minDistance? }`, the point a
/// legacy pair or `{ $geometry: <GeoJSON Point>, $maxDistance?, $minDistance? }`.
pub(crate) fn parse_near(operators: &Document) -> std::result::Result<NearQuery, String> {
    let mut near: Option<(&'static str, &Bson)> = None;
    let mut min_distance = None;
    let mut max_distance = None;
    let distance = |name: &str, value: &Bson| {
        number(value)
            .filter(|distance| *distance >= 0.0 && !distance.is_nan())
            .ok_or_else(|| format!("{name} must be a non-negative number, not {value}"))
    };
    for (operator, value) in operators {
        match operator.as_str() {
            "$near" | "$nearSphere" if near.is_some() => {
                return Err("only one $near or $nearSphere is allowed".to_string());
            }
            "$near" => near = Some(("$near", value)),
            "$nearSphere" => near = Some(("$nearSphere", value)),
            "$maxDistance" => max_distance = Some(distance("$maxDistance", value)?),
            "$minDistance" => min_distance = Some(distance("$minDistance", value)?),
            other => {
                return Err(format!(
                    "{other} cannot be combined with $near or $nearSphere on the same field"
                ));
            }
        }
    }
    let Some((operator, operand)) = near else {
        return Err("$maxDistance and $minDistance need a $near or $nearSphere".to_string());
    };
    let (point, unit) = match operand {
        Bson::Document(spec) if spec.contains_key("$geometry") => {
            for (key, value) in spec {
                match key.as_str() {
                    "$geometry" => {}
                    "$maxDistance" => max_distance = Some(distance("$maxDistance", value)?),
                    "$minDistance" => min_distance = Some(distance("$minDistance", value)?),
                    other => return Err(format!("{operator}: unknown field {other}")),
                }
            }
            let Some(Bson::Document(object)) = spec.get("$geometry") else {
                return Err(format!("{operator}: $geometry needs a GeoJSON Point"));
            };
            match geojson(object)? {
                Geometry::Point(point) => (point, DistanceUnit::Meters),
                _ => return Err(format!("{operator}: $geometry needs a GeoJSON Point")),
            }
        }
        other => {
            let point = legacy_point(other).ok_or_else(|| {
                format!("{operator} needs a point ([x, y] or {{ $geometry: <GeoJSON Point> }}), not {other}")
            })?;
            let unit = if operator == "$near" {
                DistanceUnit::Flat
            } else {
                DistanceUnit::Radians
            };
            (point, unit)
        }
    };
    Ok(NearQuery {
        operator,
        point,
        unit,
        min_distance,
        max_distance,
    })
}
