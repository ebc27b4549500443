//! What the catalog records of a geospatial index (`2d`, `2dsphere`): its field's position,
//! kind and options ([`GeoIndex`]), checked when the index is created. Computing keys and
//! ordering `$near` matches is the `geo_index` module's, above the catalog.

use bson::{Bson, Document};

use crate::error::{Error, Result};
use crate::results::GeoIndexOptions;

/// The key pattern value of a flat geospatial field.
pub(crate) const FLAT: &str = "2d";
/// The key pattern value of a spherical geospatial field.
pub(crate) const SPHERE: &str = "2dsphere";
/// The `2dsphereIndexVersion` Spillway implements and lists.
pub(crate) const SPHERE_INDEX_VERSION: i32 = 3;
/// The bits per coordinate of a `2dsphere` index's cells.
pub(crate) const SPHERE_BITS: u32 = 26;

/// Whether a key pattern value names a geospatial field (`"2d"`, `"2dsphere"`).
pub(crate) fn is_geo_kind(value: &Bson) -> bool {
    matches!(value.as_str(), Some(FLAT | SPHERE))
}

/// The geospatial field of an index.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GeoIndex {
    /// The position of the field in the key pattern.
    pub(crate) position: usize,
    pub(crate) kind: GeoKind,
}

/// How a geospatial field reads its locations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum GeoKind {
    /// `2d`: legacy pairs on a flat plane bounded by `[min, max]` on both axes.
    Flat {
        min: f64,
        max: f64,
        bits: u32,
        /// Whether `min`, `max` and `bits` were given (they are listed then).
        given: [bool; 3],
    },
    /// `2dsphere`: GeoJSON objects and legacy pairs as longitude and latitude.
    Sphere,
}

impl GeoIndex {
    /// The geospatial field of the key pattern `keys`, with its options, checked: one
    /// geospatial field per index, a `2d` field first, no hashed field beside it, `bits`
    /// between 1 and 32, `min` below `max`. `None` for an index without one (which must then
    /// have no geospatial option).
    pub(crate) fn from_spec(
        collection: &str,
        keys: &Document,
        options: Option<&GeoIndexOptions>,
    ) -> Result<Option<GeoIndex>> {
        let invalid = |message: &str| Error::invalid_index(collection, message.to_string());
        let geo_fields: Vec<(usize, &str)> = keys
            .values()
            .enumerate()
            .filter(|(_, value)| is_geo_kind(value))
            .map(|(position, value)| (position, value.as_str().unwrap_or_default()))
            .collect();
        let options = options.cloned().unwrap_or_default();
        let Some(&(position, kind)) = geo_fields.first() else {
            if options != GeoIndexOptions::default() {
                return Err(invalid(
                    "min, max, bits and 2dsphereIndexVersion apply only to 2d and 2dsphere indexes",
                ));
            }
            return Ok(None);
        };
        if geo_fields.len() > 1 {
            return Err(invalid(
                "an index may have only one 2d or 2dsphere field in Spillway",
            ));
        }
        if keys
            .values()
            .any(|value| value.as_str() == Some(crate::catalog::HASHED))
        {
            return Err(invalid(
                "an index cannot have both a hashed and a geospatial field",
            ));
        }
        if kind == SPHERE {
            if options.min.is_some() || options.max.is_some() || options.bits.is_some() {
                return Err(invalid("min, max and bits apply only to 2d indexes"));
            }
            if let Some(version) = options.sphere_version
                && version != SPHERE_INDEX_VERSION
            {
                return Err(Error::invalid_index(
                    collection,
                    format!(
                        "2dsphereIndexVersion {version} is not supported (Spillway implements version {SPHERE_INDEX_VERSION})"
                    ),
                ));
            }
            return Ok(Some(GeoIndex {
                position,
                kind: GeoKind::Sphere,
            }));
        }
        if position != 0 {
            return Err(invalid("2d has to be first in index").with_code(13023));
        }
        if options.sphere_version.is_some() {
            return Err(invalid(
                "2dsphereIndexVersion applies only to 2dsphere indexes",
            ));
        }
        let bits = options.bits.unwrap_or(26);
        if !(1..=32).contains(&bits) {
            return Err(invalid("bits in geo index must be between 1 and 32").with_code(13028));
        }
        let (min, max) = (options.min.unwrap_or(-180.0), options.max.unwrap_or(180.0));
        if !(min.is_finite() && max.is_finite() && min < max) {
            return Err(invalid("a 2d index's min must be below its max").with_code(13022));
        }
        Ok(Some(GeoIndex {
            position,
            kind: GeoKind::Flat {
                min,
                max,
                bits,
                given: [
                    options.min.is_some(),
                    options.max.is_some(),
                    options.bits.is_some(),
                ],
            },
        }))
    }

    /// The options as `list_indexes` shows them: `2dsphereIndexVersion` for `2dsphere`, the
    /// given ones of `min`, `max` and `bits` for `2d` (as MongoDB lists them).
    pub(crate) fn options(&self) -> GeoIndexOptions {
        match self.kind {
            GeoKind::Sphere => GeoIndexOptions {
                sphere_version: Some(SPHERE_INDEX_VERSION),
                ..GeoIndexOptions::default()
            },
            GeoKind::Flat {
                min,
                max,
                bits,
                given,
            } => GeoIndexOptions {
                min: given[0].then_some(min),
                max: given[1].then_some(max),
                bits: given[2].then_some(bits),
                sphere_version: None,
            },
        }
    }

    /// The catalog record of the options (`None` when there is nothing to record).
    pub(crate) fn to_record(&self) -> Option<Document> {
        let options = self.options();
        let mut record = Document::new();
        if let Some(min) = options.min {
            record.insert("min", min);
        }
        if let Some(max) = options.max {
            record.insert("max", max);
        }
        if let Some(bits) = options.bits {
            record.insert("bits", i64::from(bits));
        }
        (!record.is_empty()).then_some(record)
    }

    /// Reads [`GeoIndex::to_record`] back.
    pub(crate) fn from_record(
        collection: &str,
        keys: &Document,
        record: Option<&Document>,
    ) -> Result<Option<GeoIndex>> {
        let options = record.map(|record| GeoIndexOptions {
            min: record.get_f64("min").ok(),
            max: record.get_f64("max").ok(),
            bits: record
                .get_i64("bits")
                .ok()
                .and_then(|bits| u32::try_from(bits).ok()),
            sphere_version: None,
        });
        GeoIndex::from_spec(collection, keys, options.as_ref())
    }
}
