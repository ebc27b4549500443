//! Pattern policies as the command line shows them: the options document of the shell's
//! `setPattern` (`{ outlier: 'customers_purchased', threshold: 50, ... }`), the statement
//! that declares a policy, and a one-line description.
//!
//! The shell's `getPatterns`, `show patterns`, `removePattern`, and the `advise`, `stats`
//! subcommands all print policies through here, so that what is listed can be pasted back
//! into `setPattern`. This module only formats: it never touches a database.

use spillway::bson::{Bson, Document, doc};
use spillway::{Pattern, Shape};
use spillway_doc::shell::to_shell_string;

/// Every option of `pattern`, in `setPattern`'s syntax (without the collection).
pub fn options_document(pattern: &Pattern) -> Document {
    pattern.options()
}

/// The policy as a document: `{ collection: 'sales', outlier: 'customers_purchased', ... }`.
pub fn pattern_document(pattern: &Pattern) -> Document {
    let mut described = doc! { "collection": pattern.collection() };
    described.extend(options_document(pattern));
    described
}

/// The shell statement that declares `pattern`:
/// `db.sales.setPattern({ outlier: 'customers_purchased', threshold: 50, ... })`.
pub fn set_pattern_statement(pattern: &Pattern) -> String {
    format!(
        "db.{}.setPattern({})",
        pattern.collection(),
        to_shell_string(&Bson::Document(options_document(pattern)))
    )
}

/// One line: `outlier sales.customers_purchased -> extra_sales (threshold: 50, ...)`.
pub fn describe(pattern: &Pattern) -> String {
    let mut options = options_document(pattern);
    let kind = pattern.kind().to_string();
    options.remove(&kind);
    let side_key = match pattern.shape() {
        Shape::Outlier { .. } => "overflowCollection",
        Shape::Subset { .. } => "archiveCollection",
    };
    options.remove(side_key);
    let rendered = to_shell_string(&Bson::Document(options));
    let inner = rendered
        .strip_prefix("{ ")
        .and_then(|rest| rest.strip_suffix(" }"))
        .unwrap_or(&rendered);
    format!(
        "{kind} {}.{} -> {} ({inner})",
        pattern.collection(),
        pattern.field(),
        pattern.side_collection(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_policy_reads_as_its_declaration() {
        let outlier: Pattern = Pattern::outlier("sales", "customers_purchased")
            .link_field("book_id")
            .unbounded_buckets()
            .into();
        assert_eq!(
            set_pattern_statement(&outlier),
            "db.sales.setPattern({ outlier: 'customers_purchased', threshold: 50, \
             overflowCollection: 'extra_sales', linkField: 'book_id', flagField: 'has_extras', \
             overflowField: 'customers_purchased_extra', unboundedBuckets: true })"
        );
        assert_eq!(
            describe(&outlier),
            "outlier sales.customers_purchased -> extra_sales (threshold: 50, linkField: \
             'book_id', flagField: 'has_extras', overflowField: 'customers_purchased_extra', \
             unboundedBuckets: true)"
        );
        let subset: Pattern = Pattern::subset("products", "reviews")
            .sort_by(doc! { "published_date": -1 })
            .identity("review_id")
            .into();
        assert_eq!(
            describe(&subset),
            "subset products.reviews -> reviews (keep: 10, sortBy: { published_date: -1 }, \
             linkField: 'products_id', identity: 'review_id')"
        );
    }
}
