//! The advisor on synthetic collections with known shapes, its percentiles against a
//! sort-based reference, snapshots of what the CLI prints, and real data from `../shared`
//! when it is there. Update snapshots with
//! `INSTA_UPDATE=always cargo test -p spillway-advisor --test advisor`, then review them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use spillway_advisor::{
    AdviceError, AdviceReport, Advisor, AdvisorOptions, Histogram, ProposalKind, SortDirection,
    SortKey, SortKeyEvidence, ValueCounts, is_date_like_name, outlier_threshold,
    round_up_one_significant_digit,
};
use spillway_doc::bson::{Bson, DateTime, Document, RawDocument, RawDocumentBuf, doc};

fn advise(collection: &str, documents: impl IntoIterator<Item = Document>) -> AdviceReport {
    let mut advisor = Advisor::new(collection);
    for document in documents {
        advisor.observe(&document).unwrap();
    }
    advisor.finish()
}

fn strings(n: u64, prefix: &str) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

/// Documents `{_id, tags}` whose `tags` arrays have the given lengths.
fn with_lengths(lengths: impl IntoIterator<Item = u64>) -> Vec<Document> {
    lengths
        .into_iter()
        .enumerate()
        .map(|(i, length)| doc! { "_id": i as i64, "tags": strings(length, "t") })
        .collect()
}

#[test]
fn uniform_small_arrays_get_no_proposal() {
    let report = advise("things", with_lengths((0..500).map(|i| i % 21)));
    let tags = report.field("tags").unwrap();
    assert_eq!(tags.distribution.max, 20);
    assert!(tags.proposal.is_none());
    assert_eq!(report.proposals().count(), 0);
    let why = tags.no_proposal.as_deref().unwrap();
    assert!(why.starts_with("arrays stay small"), "{why}");
}

#[test]
fn large_arrays_without_a_tail_get_no_outlier_proposal() {
    // Every document holds 400 to 520 elements: large, but no document is an outlier.
    let report = advise("things", with_lengths((0..300).map(|i| 400 + i % 121)));
    let tags = report.field("tags").unwrap();
    assert!(tags.proposal.is_none());
    let why = tags.no_proposal.as_deref().unwrap();
    assert!(why.starts_with("no tail"), "{why}");
}

#[test]
fn zipf_tail_gets_an_outlier_proposal_at_the_rounded_p99() {
    // Rank-size law: the document of rank r holds 2000 / r elements.
    let lengths: Vec<u64> = (1..=1000).map(|rank| 2000 / rank).collect();
    let report = advise("sales", with_lengths(lengths.iter().copied()));
    let tags = report.field("tags").unwrap();
    // Ascending, rank 990 is the 11th longest (2000 / 11), rank 900 the 101st (2000 / 101).
    assert_eq!(tags.distribution.p99, 181);
    assert_eq!(tags.distribution.p90, 19);
    assert_eq!(tags.distribution.max, 2000);

    let proposal = tags.proposal.as_ref().expect("a tail deserves a proposal");
    assert_eq!(proposal.kind, ProposalKind::Outlier { threshold: 200 });
    assert_eq!(proposal.collection, "sales");
    assert_eq!(proposal.field, "tags");
    let expected_moved: u64 = lengths.iter().map(|&n| n.saturating_sub(200)).sum();
    let total: u64 = lengths.iter().sum();
    assert_eq!(proposal.elements_moved, expected_moved);
    assert_eq!(proposal.total_elements, total);
    assert!((proposal.share_moved - expected_moved as f64 / total as f64).abs() < 1e-12);
    // 2000/9 = 222 > 200, 2000/10 = 200 is kept whole.
    assert_eq!(proposal.documents_affected, 9);
    assert_eq!(proposal.documents_with_field, 1000);

    let outlier_lengths: Vec<u64> = tags.outliers().map(|outlier| outlier.length).collect();
    assert_eq!(
        outlier_lengths,
        [2000, 1000, 666, 500, 400, 333, 285, 250, 222]
    );
    let first = &tags.outliers().next().unwrap().document;
    assert_eq!(first.id, Some(Bson::Int64(0)));
    assert_eq!(first.position, 0);
    let moved = tags.moved_by(200);
    assert_eq!((moved.elements, moved.documents), (expected_moved, 9));
}

#[test]
fn a_small_collection_with_one_huge_document_uses_the_p90() {
    // With 50 documents the 99th percentile is the longest array itself.
    let report = advise(
        "sales",
        with_lengths((0..50).map(|i| if i == 17 { 5_000 } else { i % 6 })),
    );
    let proposal = report.proposals().next().unwrap();
    assert_eq!(proposal.kind, ProposalKind::Outlier { threshold: 10 });
    assert_eq!(proposal.documents_affected, 1);
    assert_eq!(proposal.elements_moved, 4_990);
    assert!(
        proposal.reason.contains("90th percentile"),
        "{}",
        proposal.reason
    );
}

fn product(id: i64, n_reviews: i64, review: impl Fn(i64) -> Document) -> Document {
    let reviews: Vec<Document> = (0..n_reviews).map(review).collect();
    doc! { "_id": id, "name": format!("product {id}"), "reviews": reviews }
}

#[test]
fn dated_reviews_get_a_subset_proposal_sorted_by_the_date() {
    let report = advise(
        "products",
        (0..100).map(|id| {
            product(id, (id * 7) % 120, |i| {
                doc! {
                    "review_id": i,
                    "review_author": format!("author{i}"),
                    "rating": (i % 5) as i32,
                    "published_date": DateTime::from_millis(1_500_000_000_000 + i * 86_400_000),
                }
            })
        }),
    );
    let reviews = report.field("reviews").unwrap();
    let time_field = reviews.time_field.as_ref().unwrap();
    assert_eq!(time_field.field, "published_date");
    assert_eq!(time_field.evidence, SortKeyEvidence::DateValues);
    let proposal = reviews.proposal.as_ref().unwrap();
    let sort_by = SortKey {
        field: "published_date".to_owned(),
        direction: SortDirection::Descending,
    };
    assert_eq!(sort_by.to_document(), doc! { "published_date": -1 });
    assert_eq!(proposal.kind, ProposalKind::Subset { keep: 10, sort_by });
    let lengths: Vec<u64> = (0..100).map(|id| ((id * 7) % 120) as u64).collect();
    assert_eq!(
        proposal.elements_moved,
        lengths.iter().map(|&n| n.saturating_sub(10)).sum::<u64>()
    );
    assert_eq!(
        proposal.documents_affected,
        lengths.iter().filter(|&&n| n > 10).count() as u64
    );
    assert!(
        proposal.reason.contains("published_date"),
        "{}",
        proposal.reason
    );
    assert_eq!(reviews.document_elements, reviews.total_elements());
}

#[test]
fn time_fields_are_recognised_by_type_or_by_name() {
    fn check(element: impl Fn(i64) -> Document, expected: Option<(&str, SortKeyEvidence)>) {
        // One long array: a subset when the elements carry a time, else an outlier.
        let report = advise(
            "p",
            (0..20).map(|id| product(id, if id == 0 { 600 } else { 5 + id % 5 }, &element)),
        );
        let reviews = report.field("reviews").unwrap();
        let found = reviews
            .time_field
            .as_ref()
            .map(|time_field| (time_field.field.as_str(), time_field.evidence));
        assert_eq!(found, expected, "{:?}", element(0));
        match (&reviews.proposal.as_ref().unwrap().kind, expected) {
            (ProposalKind::Subset { sort_by, .. }, Some((field, _))) => {
                assert_eq!(sort_by.field, field);
            }
            (ProposalKind::Outlier { .. }, None) => {}
            (kind, _) => panic!("unexpected {kind:?} for {:?}", element(0)),
        }
    }
    use SortKeyEvidence::{DateValues, IsoStringsWithDateName, NumbersWithDateName};
    check(
        |i| doc! { "at": DateTime::from_millis(i) },
        Some(("at", DateValues)),
    );
    check(
        |i| doc! { "timestamp": 1_400_000_000 + i },
        Some(("timestamp", NumbersWithDateName)),
    );
    check(
        |i| doc! { "created_at": i as f64 },
        Some(("created_at", NumbersWithDateName)),
    );
    check(
        |i| doc! { "createdAt": i as i32 },
        Some(("createdAt", NumbersWithDateName)),
    );
    check(
        |i| doc! { "posted_on": format!("2019-02-{:02}T10:00:00Z", i % 28 + 1) },
        Some(("posted_on", IsoStringsWithDateName)),
    );
    // A real date beats a number that is merely named like one.
    check(
        |i| doc! { "ts": i, "when": DateTime::from_millis(i) },
        Some(("when", DateValues)),
    );
    // Numbers with ordinary names, and date-named fields holding something else, are not times.
    check(|i| doc! { "rating": i, "score": i * 2 }, None);
    check(|i| doc! { "created": format!("by user {i}") }, None);
    // A time field present in only half of the elements does not make a subset.
    check(
        |i| {
            if i % 2 == 0 {
                doc! { "stars": i, "published_date": DateTime::from_millis(i) }
            } else {
                doc! { "stars": i }
            }
        },
        None,
    );
}

#[test]
fn date_like_names() {
    for name in [
        "date",
        "Date",
        "ts",
        "timestamp",
        "created",
        "updated_at",
        "published_date",
        "createdAt",
        "publishedDate",
        "eventTime",
        "posted_on",
        "last_seen_ts",
    ] {
        assert!(is_date_like_name(name), "{name}");
    }
    for name in [
        "data", "at", "_at", "status", "format", "rating", "update", "Date1x",
    ] {
        assert!(!is_date_like_name(name), "{name}");
    }
}

#[test]
fn arrays_of_scalars_always_get_outlier_even_with_dates() {
    // Subset needs sub-document elements with a field to sort by.
    let report = advise(
        "logins",
        (0..200).map(|id| {
            let n = if id < 3 { 900 } else { id % 8 };
            let times: Vec<DateTime> = (0..n).map(DateTime::from_millis).collect();
            doc! { "_id": id, "times": times }
        }),
    );
    let proposal = report.proposals().next().unwrap();
    assert!(matches!(proposal.kind, ProposalKind::Outlier { .. }));
}

#[test]
fn nested_array_paths_go_through_sub_documents_but_not_arrays() {
    let report = advise(
        "accounts",
        (0..10).map(|i| {
            doc! {
                "_id": i,
                "tags": ["a", "b"],
                "stats": { "history": strings(i as u64, "h"), "deep": { "points": [1, 2, 3] } },
                "items": [ { "sub": [1, 2] }, { "sub": [3] } ],
                "matrix": [[1, 2], [3, 4]],
                "name": "x",
            }
        }),
    );
    let paths: Vec<&str> = report
        .fields
        .iter()
        .map(|field| field.path.as_str())
        .collect();
    assert_eq!(
        paths,
        [
            "items",
            "matrix",
            "stats.deep.points",
            "stats.history",
            "tags"
        ]
    );
    let history = report.field("stats.history").unwrap();
    assert_eq!(history.documents(), 10);
    assert_eq!(history.total_elements(), 45);
    assert_eq!(history.distribution.max, 9);
    assert_eq!(report.field("items").unwrap().document_elements, 20);
}

#[test]
fn documents_without_the_array_are_not_samples_of_its_length() {
    let mut documents = with_lengths([3, 4, 5]);
    documents.push(doc! { "_id": 10, "tags": "not an array" });
    documents.push(doc! { "_id": 11 });
    let report = advise("c", documents);
    assert_eq!(report.documents, 5);
    let tags = report.field("tags").unwrap();
    assert_eq!(tags.documents(), 3);
    assert_eq!(tags.distribution.min, 3);
}

#[test]
fn document_sizes_are_exact_bson_sizes() {
    let documents = with_lengths([0, 1, 10, 100]);
    let sizes: Vec<u64> = documents
        .iter()
        .map(|document| spillway_doc::size::document_size(document) as u64)
        .collect();
    let report = advise("c", documents);
    let distribution = report.size_distribution().unwrap();
    assert_eq!(distribution.min, sizes[0]);
    assert_eq!(distribution.max, sizes[3]);
    assert_eq!(distribution.sum, sizes.iter().sum::<u64>());
    let largest: Vec<u64> = report.largest_documents.iter().map(|d| d.size).collect();
    assert_eq!(largest, [sizes[3], sizes[2], sizes[1], sizes[0]]);
}

#[test]
fn top_k_keeps_the_longest_and_the_first_seen_among_equals() {
    let options = AdvisorOptions {
        top_k: 3,
        ..AdvisorOptions::default()
    };
    let mut advisor = Advisor::with_options("c", options);
    for document in with_lengths([5, 9, 7, 9, 1, 9, 8]) {
        advisor.observe(&document).unwrap();
    }
    let report = advisor.finish();
    let kept: Vec<(u64, u64)> = report
        .field("tags")
        .unwrap()
        .largest
        .iter()
        .map(|outlier| (outlier.length, outlier.document.position))
        .collect();
    assert_eq!(kept, [(9, 1), (9, 3), (9, 5)]);
    assert_eq!(report.largest_documents.len(), 3);
}

#[test]
fn a_malformed_raw_document_is_an_error_and_changes_nothing() {
    let mut advisor = Advisor::new("c");
    let good = RawDocumentBuf::try_from(&doc! { "_id": 1, "tags": ["a"] }).unwrap();
    advisor.observe_raw(&good).unwrap();

    // A document whose array claims a string longer than the bytes that follow.
    let mut bytes = RawDocumentBuf::try_from(&doc! { "_id": 2, "tags": ["abc", "d"] })
        .unwrap()
        .into_bytes();
    let string_length_at = bytes.windows(4).position(|w| w == [4, 0, 0, 0]).unwrap();
    bytes[string_length_at] = 200;
    let bad = RawDocument::from_bytes(&bytes).unwrap();
    let error = advisor.observe_raw(bad).unwrap_err();
    assert!(matches!(error, AdviceError::Malformed { position: 1, .. }));
    let message = error.to_string();
    assert!(
        message.starts_with("advisor: document #1 of collection 'c' is not valid BSON"),
        "{message}"
    );
    // The bson error is kept whole in the variant and said once: its text ends the message,
    // so `source()` does not return it again.
    let AdviceError::Malformed { source, .. } = &error else {
        panic!("not Malformed: {error:?}");
    };
    assert!(message.ends_with(&source.to_string()), "{message}");
    assert!(std::error::Error::source(&error).is_none());

    assert_eq!(advisor.documents(), 1);
    let report = advisor.finish();
    assert_eq!(report.field("tags").unwrap().documents(), 1);
    assert_eq!(report.document_sizes.len(), 1);
}

#[test]
fn an_unencodable_document_is_an_error() {
    let mut advisor = Advisor::new("c");
    let error = advisor.observe(&doc! { "bad\0key": 1 }).unwrap_err();
    assert!(
        matches!(error, AdviceError::Unencodable { position: 0, .. }),
        "{error}"
    );
    assert_eq!(advisor.documents(), 0);
}

#[test]
fn rounding_up_to_one_significant_digit() {
    for (value, expected) in [
        (0, 0),
        (7, 7),
        (10, 10),
        (11, 20),
        (13, 20),
        (50, 50),
        (181, 200),
        (285, 300),
        (300, 300),
        (950, 1000),
        (1001, 2000),
        (u64::MAX, u64::MAX),
    ] {
        assert_eq!(round_up_one_significant_digit(value), expected, "{value}");
    }
}

fn reference_percentile(sorted: &[u64], percent: u8) -> u64 {
    let n = sorted.len() as f64;
    let rank = ((f64::from(percent) / 100.0 * n).ceil() as usize).max(1);
    // Guard against floating-point noise in the reference itself: p/100*n is exact for the
    // sizes used here except when it should be an integer and comes out just above it.
    let exact = usize::from(percent) * sorted.len();
    let rank = if exact.is_multiple_of(100) {
        (exact / 100).max(1)
    } else {
        rank
    };
    sorted[rank - 1]
}

proptest! {
    #[test]
    fn percentiles_match_a_sort_based_reference(
        values in prop::collection::vec(prop_oneof![0u64..20, 0u64..5_000], 1..400),
        percent in 0u8..=100,
    ) {
        let counts: ValueCounts = values.iter().copied().collect();
        let mut sorted = values.clone();
        sorted.sort_unstable();
        prop_assert_eq!(counts.percentile(percent), Some(reference_percentile(&sorted, percent)));
        let distribution = counts.distribution().unwrap();
        prop_assert_eq!(distribution.count, values.len() as u64);
        prop_assert_eq!(distribution.min, sorted[0]);
        prop_assert_eq!(distribution.median, reference_percentile(&sorted, 50));
        prop_assert_eq!(distribution.p90, reference_percentile(&sorted, 90));
        prop_assert_eq!(distribution.p99, reference_percentile(&sorted, 99));
        prop_assert_eq!(distribution.max, *sorted.last().unwrap());
        prop_assert_eq!(distribution.sum, values.iter().sum::<u64>());
    }

    #[test]
    fn moved_counts_match_brute_force(
        values in prop::collection::vec(0u64..3_000, 0..300),
        threshold in 0u64..3_000,
    ) {
        let counts: ValueCounts = values.iter().copied().collect();
        prop_assert_eq!(
            counts.count_above(threshold),
            values.iter().filter(|&&v| v > threshold).count() as u64
        );
        prop_assert_eq!(
            counts.excess_above(threshold),
            values.iter().map(|&v| v.saturating_sub(threshold)).sum::<u64>()
        );
    }

    #[test]
    fn histogram_buckets_partition_the_values(values in prop::collection::vec(0u64..100_000, 0..300)) {
        let counts: ValueCounts = values.iter().copied().collect();
        let histogram = Histogram::log2(&counts);
        prop_assert_eq!(histogram.buckets.iter().map(|b| b.count).sum::<u64>(), values.len() as u64);
        for (bucket_idx, bucket) in histogram.buckets.iter().enumerate() {
            let expected_low = if bucket_idx == 0 { 0 } else { 1 << (bucket_idx - 1) };
            prop_assert_eq!(bucket.low, expected_low);
            prop_assert_eq!(bucket.count, values.iter().filter(|&&v| bucket.contains(v)).count() as u64);
        }
        if let Some(&max) = values.iter().max() {
            prop_assert!(histogram.buckets.last().unwrap().contains(max));
        }
    }

    #[test]
    fn the_outlier_threshold_keeps_typical_documents_whole(
        lengths in prop::collection::vec(prop_oneof![9 => 0u64..30, 1 => 0u64..10_000], 1..400),
    ) {
        let counts: ValueCounts = lengths.iter().copied().collect();
        let distribution = counts.distribution().unwrap();
        if let Ok(threshold) = outlier_threshold(&distribution, &AdvisorOptions::default()) {
            prop_assert!(threshold >= 10);
            prop_assert!(threshold >= distribution.p90);
            prop_assert!(threshold < distribution.max);
            prop_assert!(distribution.max >= 2 * distribution.p90);
            prop_assert!(counts.count_above(threshold) >= 1);
            prop_assert!(counts.count_above(threshold) * 10 <= counts.len());
            prop_assert_eq!(round_up_one_significant_digit(threshold), threshold);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn the_advisor_proposes_what_the_rule_says(
        lengths in prop::collection::vec(prop_oneof![9 => 0u64..30, 1 => 0u64..1_500], 1..150),
    ) {
        let documents = lengths
            .iter()
            .enumerate()
            .map(|(i, &n)| doc! { "_id": i as i32, "scores": (0..n as i32).collect::<Vec<_>>() });
        let report = advise("c", documents);
        let scores = report.field("scores").unwrap();
        prop_assert_eq!(scores.proposal.is_some(), scores.no_proposal.is_none());
        let counts: ValueCounts = lengths.iter().copied().collect();
        prop_assert_eq!(&scores.lengths, &counts);
        let distribution = counts.distribution().unwrap();
        let expected = if distribution.max <= 50 {
            None
        } else {
            outlier_threshold(&distribution, &AdvisorOptions::default()).ok()
        };
        let proposed = scores.proposal.as_ref().map(|proposal| proposal.kind.clone());
        prop_assert_eq!(proposed, expected.map(|threshold| ProposalKind::Outlier { threshold }));
        if let Some(proposal) = &scores.proposal {
            let cut = proposal.kind.kept_in_main();
            prop_assert_eq!(proposal.elements_moved, counts.excess_above(cut));
            prop_assert_eq!(proposal.documents_affected, counts.count_above(cut));
            prop_assert_eq!(
                scores.outliers().count() as u64,
                proposal.documents_affected.min(10)
            );
        }
    }
}

/// A fixed collection for the snapshots: books whose buyers follow a steep tail, plus
/// dated reviews and small tags.
fn bookshop() -> AdviceReport {
    advise(
        "books",
        (1..=60i32).map(|id| {
            let n_buyers = (600 / (id * id)).max(1) as u64 + (id % 3) as u64;
            let n_reviews = if id <= 6 { 80 - id * 10 } else { id % 4 };
            let reviews: Vec<Document> = (0..n_reviews)
                .map(|i| {
                    doc! {
                        "stars": i % 5,
                        "published_date": DateTime::from_millis(1_550_000_000_000 + i64::from(i) * 3_600_000),
                    }
                })
                .collect();
            doc! {
                "_id": id,
                "title": format!("Book {id}"),
                "customers_purchased": strings(n_buyers, "user"),
                "reviews": reviews,
                "meta": { "tags": strings((id % 4) as u64, "tag") },
            }
        }),
    )
}

#[test]
fn snapshot_of_the_text_report() {
    insta::assert_snapshot!("report", bookshop().to_string());
}

#[test]
fn snapshot_of_a_histogram() {
    let report = bookshop();
    let buyers = report.field("customers_purchased").unwrap();
    insta::assert_snapshot!("histogram", format!("{:20}", buyers.histogram()));
}

#[test]
fn snapshot_of_the_svg_plot() {
    let svg = bookshop().to_svg();
    assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
    assert_eq!(
        svg.matches("<g ").count(),
        4,
        "one chart for sizes, one per field"
    );
    insta::assert_snapshot!("svg", svg);
}

#[test]
fn an_empty_collection_reports_nothing() {
    let report = advise("empty", []);
    assert_eq!(report.documents, 0);
    assert!(report.fields.is_empty());
    assert!(report.size_distribution().is_none());
    assert_eq!(
        report.to_string(),
        "collection empty: 0 documents, 0 array fields\n"
    );
    assert!(Histogram::log2(&ValueCounts::new()).buckets.is_empty());
}

// Real data: read from ../shared (or $SPILLWAY_SHARED), never copied into the repository.

fn shared_dir() -> Option<PathBuf> {
    let candidate = match std::env::var_os("SPILLWAY_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    };
    candidate.is_dir().then_some(candidate)
}

fn shared_file(relative: &str) -> Option<PathBuf> {
    let Some(path) = shared_dir()
        .map(|dir| dir.join(relative))
        .filter(|path| path.is_file())
    else {
        println!("SKIPPED: ../shared missing ({relative} not found; set SPILLWAY_SHARED)");
        return None;
    };
    Some(path)
}

#[test]
fn openflights_routes_per_airport_get_an_outlier_proposal() {
    let Some(path) = shared_file("data/openflights/routes.dat") else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let mut airports: BTreeMap<&str, Vec<Document>> = BTreeMap::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split(',').collect();
        let [
            airline,
            _airline_id,
            src,
            _src_id,
            dst,
            _dst_id,
            codeshare,
            stops,
            equipment,
        ] = fields[..]
        else {
            panic!("routes.dat line with {} fields: {line}", fields.len());
        };
        airports.entry(src).or_default().push(doc! {
            "airline": airline,
            "dst": dst,
            "codeshare": codeshare == "Y",
            "stops": stops.parse::<i32>().unwrap_or(0),
            "equipment": equipment.split(' ').collect::<Vec<_>>(),
        });
    }
    let report = advise(
        "airports",
        airports
            .into_iter()
            .map(|(code, routes)| doc! { "_id": code, "routes": routes }),
    );
    println!("{report}");
    let routes = report.field("routes").unwrap();
    // The figures of ../shared/data/README.md.
    assert_eq!(routes.total_elements(), 67_663);
    assert_eq!(routes.distribution.median, 4);
    assert_eq!(routes.distribution.p99, 285);
    assert_eq!(routes.distribution.max, 915);
    assert_eq!(
        routes.largest[0].document.id,
        Some(Bson::String("ATL".into()))
    );

    let proposal = routes
        .proposal
        .as_ref()
        .expect("busy airports are outliers");
    assert_eq!(proposal.kind, ProposalKind::Outlier { threshold: 300 });
    assert!(proposal.documents_affected > 0);
    assert!(proposal.documents_affected * 100 <= routes.documents());
    assert!(proposal.share_moved > 0.0 && proposal.share_moved < 0.2);
    println!(
        "openflights: {} over {} documents: {} of {} elements moved ({:.2}%) from {} documents",
        proposal.summary(),
        routes.documents(),
        proposal.elements_moved,
        proposal.total_elements,
        proposal.share_moved * 100.0,
        proposal.documents_affected
    );
    // `equipment` is an array inside the elements of an array: not a field of its own.
    assert!(report.field("routes.equipment").is_none());
}

#[test]
fn movielens_ratings_per_movie_get_a_subset_proposal_by_timestamp() {
    let Some(path) = shared_file("data/movielens/ratings.csv") else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let mut movies: BTreeMap<i64, Vec<Document>> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        let [user_id, movie_id, rating, timestamp] = fields[..] else {
            panic!("ratings.csv line with {} fields: {line}", fields.len());
        };
        movies
            .entry(movie_id.parse().unwrap())
            .or_default()
            .push(doc! {
                "userId": user_id.parse::<i64>().unwrap(),
                "rating": rating.parse::<f64>().unwrap(),
                "timestamp": timestamp.parse::<i64>().unwrap(),
            });
    }
    let report = advise(
        "movies",
        movies
            .into_iter()
            .map(|(movie_id, ratings)| doc! { "_id": movie_id, "ratings": ratings }),
    );
    let ratings = report.field("ratings").unwrap();
    assert_eq!(ratings.total_elements(), 100_004);
    assert_eq!(ratings.distribution.median, 3);
    assert_eq!(ratings.distribution.p99, 123);
    assert_eq!(ratings.distribution.max, 341);
    let proposal = ratings
        .proposal
        .as_ref()
        .expect("ratings carry a timestamp");
    let ProposalKind::Subset { keep, sort_by } = &proposal.kind else {
        panic!("expected a subset, got {:?}", proposal.kind);
    };
    assert_eq!(
        (*keep, sort_by.to_document()),
        (10, doc! { "timestamp": -1 })
    );
    println!(
        "movielens: {} over {} documents: {} of {} elements moved ({:.2}%) from {} documents",
        proposal.summary(),
        ratings.documents(),
        proposal.elements_moved,
        proposal.total_elements,
        proposal.share_moved * 100.0,
        proposal.documents_affected
    );
}
