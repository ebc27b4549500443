//! `cargo xtask realdata`: the outlier and subset policies on two real data sets from
//! `../shared/data`, checked for logical equality and invariants, with the stored sizes they
//! give.
//!
//! - OpenFlights `routes.dat` becomes `airports` documents `{_id: <src>, routes: [{airline,
//!   dst, stops, equipment}, ...]}` (file order), with an outlier policy (threshold 50) on
//!   `routes`.
//! - MovieLens `ratings.csv` becomes `movies` documents `{_id: <movieId>, ratings: [{user,
//!   rating, timestamp}, ...]}`, once with a subset policy (keep the 10 newest by
//!   `timestamp`, archive `ratings`) and once, in a second database, with an outlier policy
//!   (threshold 50).
//!
//! Every layout is compared with a database holding the same documents without a policy (the
//! "before" sizes): expanded documents must equal the source rows grouped (in file order for
//! the outlier; for the subset, as a multiset and in `timestamp`-descending order, equal
//! timestamps in any order), a subset's main array must be the first 10 of its logical
//! array, and `verify_patterns` must find nothing. Any mismatch fails the task. The data are
//! read in place, never copied; everything runs in memory, in a few seconds.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use bson::{Bson, Document, doc};
use spillway::{Database, Pattern};
use spillway_doc::key::to_key;

use crate::shared::{repo_root, shared_dir};
use crate::step::{cargo, step};

/// Documents inserted per `insert_many` (one commit each).
const LOAD_CHUNK: usize = 500;

/// `cargo xtask realdata [--unoptimised]`.
#[derive(clap::Args, Default)]
pub(crate) struct Options {
    /// Run in this build even when it is unoptimised (about a minute instead of a few
    /// seconds), rather than building xtask in release first (several minutes on 2 cores,
    /// which `cargo xtask ci` saves: no later step uses that build)
    #[arg(long)]
    pub(crate) unoptimised: bool,
}

/// Runs the task and fails on any mismatch.
pub(crate) fn run(options: &Options) -> Result<()> {
    let Some(shared) = shared_dir() else {
        bail!(
            "the shared material is missing: expected ../shared beside the repository (or \
             $SPILLWAY_SHARED) with data/openflights/routes.dat and data/movielens/ratings.csv"
        );
    };
    if cfg!(debug_assertions) && !options.unoptimised {
        // Unoptimised, the loads take over a minute; optimised, a few seconds.
        let mut command = cargo(
            &repo_root(),
            &[
                "run",
                "--release",
                "--quiet",
                "--package",
                "xtask",
                "--",
                "realdata",
            ],
        );
        command.env("SPILLWAY_SHARED", &shared);
        return step("realdata (release build)", command);
    }
    let started = Instant::now();
    println!(
        "\n== realdata: patterns on the real data sets in {}/data",
        shared.display()
    );
    let mut rows = Vec::new();
    rows.extend(airports(&shared.join("data/openflights/routes.dat"))?);
    rows.extend(movies(&shared.join("data/movielens/ratings.csv"))?);
    println!();
    println!(
        "| data set | layout | main documents | side documents | largest main document | largest side document |"
    );
    println!("|---|---|---|---|---|---|");
    for row in &rows {
        println!(
            "| {} | {} | {} | {} | {} B | {} |",
            row.data_set,
            row.layout,
            row.main_count,
            row.side_count
                .map_or_else(|| "-".to_string(), |count| count.to_string()),
            row.largest_main,
            row.largest_side
                .map_or_else(|| "-".to_string(), |size| format!("{size} B")),
        );
    }
    println!(
        "\nrealdata: every expanded document equals its source rows, verify_patterns is clean ({:.1?})",
        started.elapsed()
    );
    Ok(())
}

/// One line of the report.
struct Row {
    data_set: &'static str,
    layout: String,
    main_count: usize,
    side_count: Option<usize>,
    largest_main: usize,
    largest_side: Option<usize>,
}

/// The logical documents of one data set: `_id` and array, by the `_id`'s index key.
type Grouped = BTreeMap<Vec<u8>, (Bson, Vec<Bson>)>;

fn group_push(grouped: &mut Grouped, id: Bson, element: Bson) {
    grouped
        .entry(to_key(&id))
        .or_insert_with(|| (id, Vec::new()))
        .1
        .push(element);
}

fn read_lines(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

fn field<'a>(fields: &[&'a str], index: usize, path: &Path, line: usize) -> Result<&'a str> {
    fields
        .get(index)
        .copied()
        .with_context(|| format!("{}:{line}: missing column {}", path.display(), index + 1))
}

/// `routes.dat` grouped by source airport, in file order.
fn load_routes(path: &Path) -> Result<Grouped> {
    let text = read_lines(path)?;
    let mut grouped = Grouped::new();
    for (number, line) in text.lines().enumerate() {
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').collect();
        let at = number + 1;
        let stops: i32 = field(&fields, 7, path, at)?
            .parse()
            .with_context(|| format!("{}:{at}: stops is not a number", path.display()))?;
        let route = doc! {
            "airline": field(&fields, 0, path, at)?,
            "dst": field(&fields, 4, path, at)?,
            "stops": stops,
            "equipment": field(&fields, 8, path, at)?,
        };
        let source = Bson::String(field(&fields, 2, path, at)?.to_string());
        group_push(&mut grouped, source, Bson::Document(route));
    }
    Ok(grouped)
}

/// `ratings.csv` grouped by movie, in file order.
fn load_ratings(path: &Path) -> Result<Grouped> {
    let text = read_lines(path)?;
    let mut grouped = Grouped::new();
    for (number, line) in text.lines().enumerate().skip(1) {
        if line.is_empty() {
            continue;
        }
        let at = number + 1;
        let fields: Vec<&str> = line.split(',').collect();
        let parse_error = |name: &str| format!("{}:{at}: {name} is not a number", path.display());
        let user: i32 = field(&fields, 0, path, at)?
            .parse()
            .with_context(|| parse_error("userId"))?;
        let movie: i32 = field(&fields, 1, path, at)?
            .parse()
            .with_context(|| parse_error("movieId"))?;
        let rating: f64 = field(&fields, 2, path, at)?
            .parse()
            .with_context(|| parse_error("rating"))?;
        let timestamp: i64 = field(&fields, 3, path, at)?
            .parse()
            .with_context(|| parse_error("timestamp"))?;
        let rating = doc! { "user": user, "rating": rating, "timestamp": timestamp };
        group_push(&mut grouped, Bson::Int32(movie), Bson::Document(rating));
    }
    Ok(grouped)
}

fn bson_size(document: &Document) -> Result<usize> {
    Ok(bson::serialize_to_vec(document)
        .context("encoding a stored document")?
        .len())
}

/// Inserts the logical documents `{_id, <field>: [...]}`.
fn load(db: &Database, collection: &str, field: &str, grouped: &Grouped) -> Result<()> {
    db.create_collection(collection).run()?;
    let documents: Vec<Document> = grouped
        .values()
        .map(|(id, items)| doc! { "_id": id.clone(), field: items.clone() })
        .collect();
    let coll = db.collection::<Document>(collection);
    for chunk in documents.chunks(LOAD_CHUNK) {
        coll.insert_many(chunk)
            .run()
            .with_context(|| format!("loading {collection}"))?;
    }
    Ok(())
}

/// The stored documents of a collection: their count and the largest one's BSON size.
fn stored_sizes(db: &Database, collection: &str) -> Result<(usize, usize)> {
    let mut count = 0;
    let mut largest = 0;
    for document in db
        .collection::<Document>(collection)
        .find(doc! {})
        .stored(true)
        .run()?
    {
        count += 1;
        largest = largest.max(bson_size(&document?)?);
    }
    Ok((count, largest))
}

/// The expanded documents of `collection`, by `_id`.
fn expanded(db: &Database, collection: &str, field: &str) -> Result<Grouped> {
    let mut logical = Grouped::new();
    for document in db.collection::<Document>(collection).find(doc! {}).run()? {
        let document = document?;
        let id = document.get("_id").cloned().unwrap_or(Bson::Null);
        let items = match document.get(field) {
            Some(Bson::Array(items)) => items.clone(),
            other => bail!("{collection} _id {id}: '{field}' is {other:?}, not an array"),
        };
        ensure!(
            document.len() == 2,
            "{collection} _id {id}: expanded document has extra fields: {document}"
        );
        logical.insert(to_key(&id), (id, items));
    }
    Ok(logical)
}

fn check_verify(db: &Database, what: &str) -> Result<()> {
    let violations = db.verify_patterns()?;
    if !violations.is_empty() {
        let list: Vec<String> = violations
            .iter()
            .take(20)
            .map(|violation| format!("  {violation}"))
            .collect();
        bail!(
            "{what}: verify_patterns found {} violation(s):\n{}",
            violations.len(),
            list.join("\n")
        );
    }
    Ok(())
}

/// The naive layout: the same documents without a policy.
fn naive_row(data_set: &'static str, field: &str, grouped: &Grouped) -> Result<Row> {
    let db = Database::open_in_memory()?;
    load(&db, data_set, field, grouped)?;
    let (main_count, largest_main) = stored_sizes(&db, data_set)?;
    Ok(Row {
        data_set,
        layout: "no policy (before)".to_string(),
        main_count,
        side_count: None,
        largest_main,
        largest_side: None,
    })
}

/// Loads `grouped` under `pattern` and measures it; the caller checks the logical content.
fn patterned_db(
    data_set: &'static str,
    field: &str,
    side: &str,
    layout: String,
    pattern: Pattern,
    grouped: &Grouped,
) -> Result<(Database, Row)> {
    let db = Database::open_in_memory()?;
    db.create_collection(data_set).run()?;
    db.set_pattern(pattern)?;
    load(&db, data_set, field, grouped)?;
    let (main_count, largest_main) = stored_sizes(&db, data_set)?;
    let (side_count, largest_side) = stored_sizes(&db, side)?;
    check_verify(&db, &layout)?;
    let row = Row {
        data_set,
        layout,
        main_count,
        side_count: Some(side_count),
        largest_main,
        largest_side: Some(largest_side),
    };
    Ok((db, row))
}

fn check_same_ids(what: &str, source: &Grouped, logical: &Grouped) -> Result<()> {
    ensure!(
        source.len() == logical.len(),
        "{what}: {} documents expected, {} found",
        source.len(),
        logical.len()
    );
    if let Some((_, (missing, _))) = source.iter().find(|(key, _)| !logical.contains_key(*key)) {
        bail!("{what}: document _id {missing} is missing");
    }
    Ok(())
}

/// Outlier layouts keep the logical order: the expanded array must equal the source's.
fn check_exact(what: &str, source: &Grouped, logical: &Grouped) -> Result<()> {
    check_same_ids(what, source, logical)?;
    for (key, (id, items)) in source {
        let found = &logical[key].1;
        if found != items {
            let first_difference = items
                .iter()
                .zip(found)
                .position(|(a, b)| a != b)
                .unwrap_or(items.len().min(found.len()));
            bail!(
                "{what}: _id {id}: expanded array ({} elements) differs from the source ({} elements) at position {first_difference}",
                found.len(),
                items.len()
            );
        }
    }
    Ok(())
}

fn timestamp_of(element: &Bson) -> i64 {
    match element {
        Bson::Document(element) => element.get_i64("timestamp").unwrap_or(i64::MIN),
        _ => i64::MIN,
    }
}

/// A group's elements sorted into a canonical order (timestamp descending, then the
/// element's Extended JSON), so that two arrays equal as multisets compare equal.
fn canonical(items: &[Bson]) -> Vec<(i64, String)> {
    let mut keyed: Vec<(i64, String)> = items
        .iter()
        .map(|item| {
            (
                timestamp_of(item),
                item.clone().into_relaxed_extjson().to_string(),
            )
        })
        .collect();
    keyed.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    keyed
}

/// Subset layouts order the logical array by the policy: timestamp descending, equal
/// timestamps in any order. Also checks each stored main array is the first `keep`.
fn check_subset(
    db: &Database,
    what: &str,
    keep: usize,
    source: &Grouped,
    logical: &Grouped,
) -> Result<()> {
    check_same_ids(what, source, logical)?;
    for (key, (id, items)) in source {
        let found = &logical[key].1;
        if let Some(position) = found
            .windows(2)
            .position(|pair| timestamp_of(&pair[0]) < timestamp_of(&pair[1]))
        {
            bail!("{what}: _id {id}: expanded array is not newest first at position {position}");
        }
        if canonical(found) != canonical(items) {
            bail!(
                "{what}: _id {id}: expanded array ({} elements) is not the source's {} elements",
                found.len(),
                items.len()
            );
        }
    }
    for stored in db
        .collection::<Document>("movies")
        .find(doc! {})
        .stored(true)
        .run()?
    {
        let stored = stored?;
        let id = stored.get("_id").cloned().unwrap_or(Bson::Null);
        let main = stored
            .get_array("ratings")
            .with_context(|| format!("{what}: _id {id} has no stored ratings array"))?;
        let all = &logical
            .get(&to_key(&id))
            .with_context(|| format!("{what}: _id {id} was not expanded"))?
            .1;
        let wanted = &all[..keep.min(all.len())];
        ensure!(
            main.as_slice() == wanted,
            "{what}: _id {id}: the stored main array is not the first {keep} of the logical array"
        );
    }
    Ok(())
}

fn airports(routes: &Path) -> Result<Vec<Row>> {
    let grouped = load_routes(routes)?;
    let naive = naive_row("airports", "routes", &grouped)?;
    let layout = "outlier, threshold 50, buckets of 100".to_string();
    let (db, row) = patterned_db(
        "airports",
        "routes",
        "extra_airports",
        layout.clone(),
        Pattern::outlier("airports", "routes")
            .threshold(50)
            .link_field("airport_id")
            .into(),
        &grouped,
    )?;
    check_exact(
        &format!("airports ({layout})"),
        &grouped,
        &expanded(&db, "airports", "routes")?,
    )?;
    Ok(vec![naive, row])
}

fn movies(ratings: &Path) -> Result<Vec<Row>> {
    let grouped = load_ratings(ratings)?;
    let naive = naive_row("movies", "ratings", &grouped)?;

    let keep = 10;
    let subset_layout = format!("subset, keep {keep} newest by timestamp");
    let (subset_db, subset_row) = patterned_db(
        "movies",
        "ratings",
        "ratings",
        subset_layout.clone(),
        Pattern::subset("movies", "ratings")
            .keep(keep)
            .sort_by(doc! { "timestamp": -1 })
            .archive_collection("ratings")
            .link_field("movie_id")
            .into(),
        &grouped,
    )?;
    check_subset(
        &subset_db,
        &format!("movies ({subset_layout})"),
        keep,
        &grouped,
        &expanded(&subset_db, "movies", "ratings")?,
    )?;

    let outlier_layout = "outlier, threshold 50, buckets of 100".to_string();
    let (outlier_db, outlier_row) = patterned_db(
        "movies",
        "ratings",
        "extra_movies",
        outlier_layout.clone(),
        Pattern::outlier("movies", "ratings")
            .threshold(50)
            .link_field("movie_id")
            .into(),
        &grouped,
    )?;
    check_exact(
        &format!("movies ({outlier_layout})"),
        &grouped,
        &expanded(&outlier_db, "movies", "ratings")?,
    )?;
    Ok(vec![naive, subset_row, outlier_row])
}
