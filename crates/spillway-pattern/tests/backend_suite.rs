//! The backend test suite (`spillway_pattern::suite`) on the in-memory reference backend,
//! through [`Layer`]: the same suite the embedded database and the MongoDB backend run.
//!
//! Cases of the central property: 64 by default; `PROPTEST_CASES` overrides.

use spillway_pattern::bson::Document;
use spillway_pattern::suite::Target;
use spillway_pattern::{
    Layer, MemoryBackend, MemoryError, Pattern, Violation, Write, WriteBackend,
};

/// The in-memory backend as the suite drives it.
struct Memory {
    layer: Option<Layer<MemoryBackend>>,
}

impl Memory {
    fn new() -> Memory {
        Memory {
            layer: Some(Layer::open(MemoryBackend::new()).expect("an empty backend opens")),
        }
    }

    fn layer(&mut self) -> &mut Layer<MemoryBackend> {
        self.layer.as_mut().expect("open")
    }
}

impl Target for Memory {
    type Error = MemoryError;

    fn create_collection(&mut self, name: &str) -> Result<(), MemoryError> {
        self.layer().create_collection(name)
    }

    fn set_pattern(&mut self, pattern: Pattern) -> Result<(), MemoryError> {
        self.layer().set_pattern(pattern)
    }

    fn remove_pattern(&mut self, collection: &str, field: &str) -> Result<(), MemoryError> {
        self.layer().remove_pattern(collection, field)
    }

    fn insert_one(&mut self, collection: &str, document: Document) -> Result<(), MemoryError> {
        self.layer().insert_one(collection, document).map(drop)
    }

    fn update(
        &mut self,
        collection: &str,
        filter: &Document,
        update: &Document,
        multi: bool,
    ) -> Result<u64, MemoryError> {
        self.layer()
            .update(collection, filter, update, multi, false)
            .map(|result| result.modified_count)
    }

    fn delete(
        &mut self,
        collection: &str,
        filter: &Document,
        multi: bool,
    ) -> Result<u64, MemoryError> {
        self.layer().delete(collection, filter, multi)
    }

    fn find(
        &mut self,
        collection: &str,
        filter: &Document,
        expand: bool,
    ) -> Result<Vec<Document>, MemoryError> {
        self.layer().find(collection, filter, expand)
    }

    fn verify(&mut self) -> Result<Vec<Violation>, MemoryError> {
        self.layer().verify()
    }

    fn write_behind(&mut self, writes: Vec<Write>) -> Result<(), MemoryError> {
        self.layer().backend_mut().apply(writes)
    }

    fn fail_commits_after(&mut self, commits: u64) {
        self.layer().backend_mut().fail_commits_after(commits);
    }

    fn restart(&mut self) -> Result<(), MemoryError> {
        let backend = self.layer.take().expect("open").into_backend();
        self.layer = Some(Layer::open(backend)?);
        Ok(())
    }
}

spillway_pattern::suite_tests!(Memory::new, 64);
