//! Writes the on-disk format test image that `tests/format_image.rs` opens.
//!
//! `cargo run -p spillway --example format_image -- <empty directory>` builds a small database
//! deterministically: two collections (one with a unique index, one under an outlier policy),
//! a compaction (compacted segments and a checkpoint), then commits that seal a log segment and
//! go on in the active one. It is run once per format version and its output committed
//! under `tests/format-images/`; it must never be pointed at a directory holding anything else.

use std::path::PathBuf;

use spillway::bson::Document;
use spillway::{Database, DatabaseOptions, IndexModel, IndexOptions, Pattern, doc};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir: PathBuf = std::env::args_os()
        .nth(1)
        .ok_or("usage: format_image <empty directory>")?
        .into();
    if dir.exists() && std::fs::read_dir(&dir)?.next().is_some() {
        return Err(format!("{} is not empty", dir.display()).into());
    }
    let db = Database::open_with(&dir, &DatabaseOptions::default().segment_size(4096))?;
    let books = db.collection::<Document>("books");
    books
        .create_index(
            IndexModel::builder()
                .keys(doc! { "title": 1 })
                .options(IndexOptions::builder().unique(true).build())
                .build(),
        )
        .run()?;
    for id in 0..12 {
        books
            .insert_one(doc! { "_id": id, "title": format!("book {id}"), "year": 2000 + id })
            .run()?;
    }
    books
        .update_many(
            doc! { "year": { "$lt": 2004 } },
            doc! { "$set": { "old": true } },
        )
        .run()?;
    books.delete_one(doc! { "_id": 11 }).run()?;
    let sales = db.collection::<Document>("sales");
    sales
        .insert_one(doc! { "_id": "quiet", "buyers": ["x"] })
        .run()?;
    db.set_pattern(Pattern::outlier("sales", "buyers").threshold(3))?;
    sales
        .insert_one(doc! { "_id": "viral", "buyers": ["a", "b", "c", "d", "e", "f", "g"] })
        .run()?;
    // Compaction seals the active segment, writes compacted segments and a checkpoint.
    db.compact()?;
    // Enough commits after the checkpoint to seal one more log segment.
    for id in 100..130 {
        books
            .insert_one(
                doc! { "_id": id, "title": format!("after the checkpoint {id}"), "year": 2026 },
            )
            .run()?;
    }
    sales
        .update_one(doc! { "_id": "quiet" }, doc! { "$push": { "buyers": "y" } })
        .run()?;
    drop(db);
    std::fs::remove_file(dir.join("LOCK"))?;
    Ok(())
}
