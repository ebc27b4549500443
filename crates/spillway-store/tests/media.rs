//! The medium under the store: a full disk, the lock when its `LOCK` file is deleted, and
//! read-only media. A full disk must give a clear error on the write that hits it (never a
//! SIGBUS from a mapped hole) and leave reads and `verify` working; a deleted `LOCK` file must
//! not let a second writer in; a read-only open must read without writing a byte.
//!
//! The real-file-system cases mount a small tmpfs when the test runs as root on Linux; when it
//! cannot, it says so on stderr and checks only the in-memory model of the same case.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use spillway_store::backend::{Backend, FaultPlan, MemoryBackend};
use spillway_store::{Error, Store, StoreOptions, WriteBatch};

const DIR: &str = "/media";

fn small_segments() -> StoreOptions {
    StoreOptions {
        segment_size: 8192,
        ..StoreOptions::default()
    }
}

fn put(store: &Store, key: &str, len: usize) -> Result<u64, Error> {
    let ks = store.keyspace("k")?;
    let mut batch = WriteBatch::new();
    batch.put(ks, key.as_bytes(), &vec![b'v'; len]);
    store.commit(batch)
}

fn n_keys(store: &Store) -> usize {
    let ks = store.keyspace_id("k").unwrap();
    let snapshot = store.snapshot();
    for entry in snapshot.iter(ks).unwrap() {
        entry.unwrap();
    }
    snapshot.len(ks).unwrap()
}

// ---------------------------------------------------------------------------------------------
// Full disk

/// Writes into `store` until a commit fails; checks the failure is a clear disk-full error and
/// that the store still reads and verifies. Returns how many commits succeeded.
fn fill_until_disk_full(store: &Store) -> usize {
    let before = store.keyspace_id("k").map_or(0, |_| n_keys(store));
    let mut written = 0;
    let error = loop {
        match put(store, &format!("key{written:06}"), 1000) {
            Ok(_) => written += 1,
            Err(error) => break error,
        }
        assert!(written < 1_000_000, "the disk never filled");
    };
    assert!(error.is_disk_full(), "not a disk-full error: {error}");
    let message = error.to_string();
    assert!(
        message.starts_with("disk full: allocate new segment failed on ")
            && message.contains("seg-"),
        "{message}"
    );
    assert!(
        !store.is_poisoned(),
        "a segment that could not be created poisons nothing"
    );
    assert_eq!(n_keys(store), before + written);
    assert!(store.verify().unwrap().is_clean());
    written
}

#[test]
fn disk_full_in_memory_fails_the_write_clearly_and_reads_go_on() {
    check_disk_full_in_memory();
}

fn check_disk_full_in_memory() {
    let backend = MemoryBackend::new();
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, small_segments()).unwrap();
    put(&store, "first", 10).unwrap();
    backend.set_faults(FaultPlan {
        no_space_after_bytes: Some(backend.counters().space_used + 40_000),
        ..FaultPlan::default()
    });
    let written = fill_until_disk_full(&store);
    assert!(written > 10, "{written}");
    // The failed segment file is gone, not left as a sparse orphan.
    let names = backend.list_dir(Path::new(DIR)).unwrap();
    let n_segments = names.iter().filter(|n| n.starts_with("seg-")).count();
    assert_eq!(n_segments, store.stats().segments.len(), "{names:?}");
    // With space again, the same handle writes on.
    backend.set_faults(FaultPlan::default());
    put(&store, "after", 10).unwrap();
    drop(store);
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, small_segments()).unwrap();
    assert_eq!(n_keys(&store), 1 + written + 1);
}

/// Writes `megabytes` MiB in 64 KiB values with default options (64 MiB segments) on a small
/// disk, reopens and verifies: segments are sized to the free space.
fn check_default_options_on_small_disk(backend: Arc<dyn Backend>, dir: &Path, megabytes: usize) {
    let store = Store::open_with_backend(Arc::clone(&backend), dir, StoreOptions::default())
        .expect("a small disk holds a store with default options");
    for n in 0..megabytes * 16 {
        put(&store, &format!("key{n:05}"), 64 << 10)
            .unwrap_or_else(|error| panic!("value {n} of {}: {error}", megabytes * 16));
    }
    drop(store);
    let store = Store::open_with_backend(backend, dir, StoreOptions::default()).unwrap();
    assert_eq!(n_keys(&store), megabytes * 16);
    assert!(store.verify().unwrap().is_clean());
}

#[test]
fn segments_are_sized_to_the_free_space_of_a_small_disk() {
    for (space, expected) in [
        (None, 64 << 20),
        (Some(1 << 30), 64 << 20),
        (Some(16 << 20), 4 << 20),
        (Some(1 << 20), 256 << 10),
        (
            Some(10 << 10),
            spillway_store::SMALL_DISK_SEGMENT_SIZE as usize,
        ),
    ] {
        let backend = MemoryBackend::new();
        if let Some(space) = space {
            backend.set_faults(FaultPlan {
                no_space_after_bytes: Some(space),
                ..FaultPlan::default()
            });
        }
        let outcome =
            Store::open_with_backend(Arc::new(backend.clone()), DIR, StoreOptions::default());
        if space == Some(10 << 10) {
            // Not even the smallest segment fits: a clear error at creation.
            let error = outcome.unwrap_err();
            assert!(error.is_disk_full(), "{error}");
            continue;
        }
        outcome.unwrap_or_else(|error| panic!("{space:?}: {error}"));
        let segment = backend
            .list_dir(Path::new(DIR))
            .unwrap()
            .into_iter()
            .find(|name| name.starts_with("seg-"))
            .expect("a segment");
        let len = backend
            .open_file_read_only(&Path::new(DIR).join(&segment))
            .unwrap()
            .len()
            .unwrap();
        assert_eq!(len, expected as u64, "{space:?}");
    }
    // The allocated-space model of a 4 MiB disk holds 2 MiB of data across several segments
    // (the model copies bytes one at a time: the real 16 MiB case is the tmpfs test's).
    let backend = MemoryBackend::new();
    backend.set_faults(FaultPlan {
        no_space_after_bytes: Some(4 << 20),
        ..FaultPlan::default()
    });
    check_default_options_on_small_disk(Arc::new(backend), Path::new(DIR), 2);
}

#[test]
fn a_database_with_default_options_works_on_a_real_16_mib_tmpfs() {
    let mount = match Mount::tmpfs("size=16m") {
        Ok(mount) => mount,
        Err(why) => {
            eprintln!(
                "a_database_with_default_options_works_on_a_real_16_mib_tmpfs: CHECKED NOTHING on a real file system ({why}; needs root on Linux); segments_are_sized_to_the_free_space_of_a_small_disk checks the in-memory model"
            );
            return;
        }
    };
    check_default_options_on_small_disk(
        Arc::new(spillway_store::backend::FileBackend),
        &mount.path.join("db"),
        8,
    );
}

/// A tmpfs mounted for the duration of a test (root on Linux only); unmounted on drop.
struct Mount {
    _dir: tempfile::TempDir,
    path: PathBuf,
    /// Held for the whole life of a mount (see [`MOUNTS`]).
    _serial: std::sync::MutexGuard<'static, ()>,
}

/// Tests that mount run one at a time. They spawn `mount`/`umount`, and a child process
/// shares the parent's open files from `fork` until its `exec` closes them: a store directory
/// that a parallel test closes just then stays `flock`ed by that child for a moment, and the
/// test's next open is refused with `Locked` (seen as a flaky failure of the disk-full test).
static MOUNTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

impl Mount {
    fn tmpfs(options: &str) -> Result<Mount, String> {
        let serial = MOUNTS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = dir.path().to_path_buf();
        let output = Command::new("mount")
            .args(["-t", "tmpfs", "-o", options, "spillway-test"])
            .arg(&path)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "mount -t tmpfs -o {options} failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        Ok(Mount {
            _dir: dir,
            path,
            _serial: serial,
        })
    }

    fn remount(&self, options: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,{options}")])
            .arg(&self.path)
            .status()
            .unwrap();
        assert!(status.success(), "remount {options} failed");
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.path).status();
    }
}

#[test]
fn disk_full_on_a_real_4_mib_tmpfs_fails_the_write_clearly_and_reads_go_on() {
    let mount = match Mount::tmpfs("size=4m") {
        Ok(mount) => mount,
        Err(why) => {
            eprintln!(
                "disk_full_on_a_real_4_mib_tmpfs: CHECKED NOTHING on a real file system ({why}; needs root on Linux); checking the in-memory model only"
            );
            check_disk_full_in_memory();
            return;
        }
    };
    let db = mount.path.join("db");
    // The default 64 MiB segment is shrunk to a quarter of the 4 MiB free: the store opens.
    drop(Store::open(&db, StoreOptions::default()).unwrap());
    std::fs::remove_dir_all(&db).unwrap();

    let options = StoreOptions {
        segment_size: 512 * 1024,
        ..StoreOptions::default()
    };
    let store = Store::open(&db, options.clone()).unwrap();
    let written = fill_until_disk_full(&store);
    assert!(written > 1000, "{written}");
    drop(store);
    // Another process (here: handle) on the full disk reads and verifies.
    let store = Store::open(&db, options.clone()).unwrap();
    assert_eq!(n_keys(&store), written);
    assert!(store.verify().unwrap().is_clean());
    drop(store);
    let store = Store::open_read_only(&db).unwrap();
    assert_eq!(n_keys(&store), written);
    assert!(store.verify().unwrap().is_clean());
}

// ---------------------------------------------------------------------------------------------
// Lock

#[test]
fn deleting_the_lock_file_does_not_let_a_second_writer_in() {
    let dir = tempfile::tempdir().unwrap();
    let first = Store::open(dir.path(), small_segments()).unwrap();
    put(&first, "acknowledged", 10).unwrap();
    std::fs::remove_file(dir.path().join("LOCK")).unwrap();
    // flock is per open file description: a second open in this process conflicts as a second
    // process would.
    let second = Store::open(dir.path(), small_segments()).unwrap_err();
    assert!(matches!(second, Error::Locked { .. }), "{second}");
    let reader = Store::open_read_only(dir.path()).unwrap_err();
    assert!(matches!(reader, Error::Locked { .. }), "{reader}");
    put(&first, "still the only writer", 10).unwrap();
    drop(first);

    // Readers share the lock, and keep a writer out.
    let reader = Store::open_read_only(dir.path()).unwrap();
    let other_reader = Store::open_read_only(dir.path()).unwrap();
    assert_eq!(n_keys(&reader), 2);
    assert_eq!(n_keys(&other_reader), 2);
    let writer = Store::open(dir.path(), small_segments()).unwrap_err();
    assert!(matches!(writer, Error::Locked { .. }), "{writer}");
    drop((reader, other_reader));
    let store = Store::open(dir.path(), small_segments()).unwrap();
    assert_eq!(n_keys(&store), 2);
}

// ---------------------------------------------------------------------------------------------
// Read-only

fn assert_read_only_refusals(store: &Store) {
    assert!(store.is_read_only());
    let refused = [
        ("commit", put(store, "new", 10).map(|_| ())),
        ("create keyspace", store.keyspace("other").map(|_| ())),
        ("checkpoint", store.checkpoint()),
        ("compact", store.compact().map(|_| ())),
    ];
    for (operation, result) in refused {
        let error = result.unwrap_err();
        assert!(
            matches!(error, Error::ReadOnly { operation: o, .. } if o == operation),
            "{operation}: {error}"
        );
        assert!(
            error
                .to_string()
                .starts_with(&format!("{operation} refused: the database in "))
                && error.to_string().ends_with(" was opened read-only"),
            "{error}"
        );
    }
    store.sync().unwrap();
}

#[test]
fn read_only_media_open_read_only_reads_and_refuses_writes() {
    let backend = MemoryBackend::new();
    let store = Store::open_with_backend(Arc::new(backend.clone()), DIR, small_segments()).unwrap();
    for i in 0..30 {
        put(&store, &format!("key{i:03}"), 500).unwrap();
    }
    store.checkpoint().unwrap();
    put(&store, "after checkpoint", 10).unwrap();
    let stats = store.stats();
    drop(store);
    // A torn tail: garbage after the log's end, which a writable open would zero.
    let active = stats.segments.iter().find(|s| s.active).unwrap();
    let path = Path::new(DIR).join(format!("seg-{:08x}.spw", active.id));
    let mut bytes = backend.file_contents(&path).unwrap();
    let log_end = 32 + active.written_bytes as usize;
    bytes[log_end..log_end + 20].fill(0xAB);
    backend.overwrite_file(&path, &bytes).unwrap();
    // And an orphan that a writable open would delete.
    let orphan = Path::new(DIR).join("seg-000000ff.spw");
    backend.create_file(&orphan).unwrap();

    backend.set_read_only(true);
    let error =
        Store::open_with_backend(Arc::new(backend.clone()), DIR, small_segments()).unwrap_err();
    assert!(
        error.to_string().contains("read-only file system"),
        "{error}"
    );
    let store = Store::open_read_only_with_backend(Arc::new(backend.clone()), DIR).unwrap();
    assert_eq!(n_keys(&store), 31);
    let torn = store.recovery_report().torn_tail.clone().unwrap();
    assert_eq!((torn.offset as usize, torn.bytes_dropped), (log_end, 20));
    assert!(store.recovery_report().orphans_removed.is_empty());
    assert!(store.verify().unwrap().is_clean());
    assert_read_only_refusals(&store);
    drop(store);
    assert_eq!(
        backend.file_contents(&path).unwrap(),
        bytes,
        "nothing written"
    );
    assert!(backend.file_contents(&orphan).is_ok(), "nothing deleted");

    // No database at all: a read-only open creates none.
    let error =
        Store::open_read_only_with_backend(Arc::new(backend.clone()), "/nothing").unwrap_err();
    assert!(
        error.to_string().contains("lock store directory"),
        "{error}"
    );
}

#[test]
fn read_only_mount_open_read_only_reads_and_refuses_writes() {
    let mount = match Mount::tmpfs("size=16m") {
        Ok(mount) => mount,
        Err(why) => {
            eprintln!(
                "read_only_mount: CHECKED NOTHING on a real read-only file system ({why}; needs root on Linux); the in-memory model is checked by read_only_media_open_read_only_reads_and_refuses_writes"
            );
            return;
        }
    };
    let db = mount.path.join("db");
    let store = Store::open(&db, small_segments()).unwrap();
    for i in 0..30 {
        put(&store, &format!("key{i:03}"), 500).unwrap();
    }
    drop(store);
    std::fs::remove_file(db.join("LOCK")).unwrap();
    mount.remount("ro");
    let error = Store::open(&db, small_segments()).unwrap_err();
    assert!(
        error.to_string().contains("Read-only file system"),
        "{error}"
    );
    let store = Store::open_read_only(&db).unwrap();
    assert_eq!(n_keys(&store), 30);
    assert!(store.verify().unwrap().is_clean());
    assert_read_only_refusals(&store);
    drop(store);
    mount.remount("rw");
}
