//! Geospatial query operators in a build without the `geo` feature: refused when parsed.
//!
//! The `geo` feature brings GeoJSON and legacy shapes, regions and distances (the `geo`
//! crate) for `$geoWithin`, `$geoIntersects`, `$near` and `$nearSphere`.

use bson::{Bson, Document, RawBsonRef};

use crate::disabled::{NotBuilt, needs_feature};

/// A location in a document; this build reads none ([`Shape::from_raw`] is always `None`).
#[derive(Debug, Clone, PartialEq)]
pub struct Shape(NotBuilt);

/// A `$geoWithin` or `$geoIntersects` region (no value exists in this build).
#[derive(Debug, Clone, PartialEq)]
pub struct GeoRegion(NotBuilt);

/// A `$near` or `$nearSphere` query (no value exists in this build).
#[derive(Debug, Clone, PartialEq)]
pub struct NearQuery(NotBuilt);

impl Shape {
    /// No location: this build reads none.
    pub fn from_raw(_value: RawBsonRef<'_>) -> Option<Shape> {
        None
    }
}

impl GeoRegion {
    /// Whether the region contains `shape` (never called: no value exists).
    pub fn contains(&self, _shape: &Shape) -> bool {
        match self.0 {}
    }

    /// Whether the region intersects `shape` (never called: no value exists).
    pub fn intersects(&self, _shape: &Shape) -> bool {
        match self.0 {}
    }
}

impl NearQuery {
    /// `$near` or `$nearSphere` (never called: no value exists).
    pub fn operator(&self) -> &'static str {
        match self.0 {}
    }

    /// The distance to `shape` (never called: no value exists).
    pub fn distance(&self, _shape: &Shape) -> Option<f64> {
        match self.0 {}
    }

    /// Whether `distance` is within the bounds (never called: no value exists).
    pub fn in_range(&self, _distance: f64) -> bool {
        match self.0 {}
    }

    /// Whether `shape` is within the bounds (never called: no value exists).
    pub fn matches(&self, _shape: &Shape) -> bool {
        match self.0 {}
    }
}

/// Refuses `$geoWithin` (and `$within`): it needs the `geo` feature.
pub(crate) fn parse_within(_value: &Bson) -> Result<GeoRegion, String> {
    Err(needs_feature("$geoWithin", "geo"))
}

/// Refuses `$geoIntersects`: it needs the `geo` feature.
pub(crate) fn parse_intersects(_value: &Bson) -> Result<GeoRegion, String> {
    Err(needs_feature("$geoIntersects", "geo"))
}

/// Refuses `$near` and `$nearSphere`: they need the `geo` feature.
pub(crate) fn parse_near(operators: &Document) -> Result<NearQuery, String> {
    let operator = if operators.contains_key("$nearSphere") {
        "$nearSphere"
    } else {
        "$near"
    };
    Err(needs_feature(operator, "geo"))
}
