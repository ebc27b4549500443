//! A statement's one routing decision: what its collection is — a plain collection, the main
//! or a side collection of pattern policies, a view, or a time series collection — resolved
//! once from the statement's catalog into a [`Route`] that the statement then carries.
//! Whatever a statement does differently for a kind of collection follows from its route, so
//! two parts of one statement cannot take a collection for two different things.

use spillway_doc::filter::Filter;
use spillway_doc::sort::SortSpec;
use spillway_pattern::{Engine, Policy, Role};

use crate::catalog::Catalog;
use crate::catalog::timeseries::Timeseries;

/// What a statement's collection is, as its catalog says.
pub(crate) enum Route<'c> {
    /// No policy involves it, and it is neither a view nor a time series collection (or it
    /// does not exist yet).
    Plain,
    /// The main collection of at least one policy: writes go through the [`Engine`]; filters
    /// and sorts on managed fields are answered on logical documents.
    Main(Engine<'c>),
    /// The side collection of these policies: direct writes are checked against their layout,
    /// and the main documents they touch are brought back in step.
    Side(Vec<&'c Policy>),
    /// A read-only view: reads run its pipeline, writes are refused.
    View,
    /// A time series collection: measurements are stored in buckets with this layout.
    TimeSeries(&'c Timeseries),
}

impl<'c> Route<'c> {
    /// The route of `collection` in `catalog`.
    pub(crate) fn of(catalog: &'c Catalog, collection: &'c str) -> Route<'c> {
        if let Some(meta) = catalog.collections.get(collection) {
            if meta.view.is_some() {
                return Route::View;
            }
            if let Some(layout) = &meta.timeseries {
                return Route::TimeSeries(layout);
            }
        }
        match Role::of(collection, &catalog.policies) {
            Role::Plain => Route::Plain,
            Role::Main(engine) => Route::Main(engine),
            Role::Side(policies) => Route::Side(policies),
        }
    }

    /// The pattern engine of a main collection.
    pub(crate) fn engine(&self) -> Option<&Engine<'c>> {
        match self {
            Route::Main(engine) => Some(engine),
            _ => None,
        }
    }

    /// Whether `path` reaches into a field a policy of this main collection manages.
    pub(crate) fn is_managed_path(&self, path: &str) -> bool {
        self.engine()
            .is_some_and(|engine| engine.is_managed_path(path))
    }

    /// Whether `filter` must be answered on logical documents: it touches a managed field.
    pub(crate) fn is_logical_query(&self, filter: &Filter) -> bool {
        self.engine()
            .is_some_and(|engine| spillway_pattern::matching::is_logical_query(engine, filter))
    }

    /// Whether `sort` orders by a managed field: the order then depends on the whole logical
    /// array (MongoDB's array sort key is its smallest element ascending, its largest
    /// descending), which the stored prefix does not hold.
    pub(crate) fn is_logical_sort(&self, sort: Option<&SortSpec>) -> bool {
        sort.is_some_and(|sort| {
            sort.keys()
                .iter()
                .any(|key| self.is_managed_path(key.path.as_str()))
        })
    }
}
