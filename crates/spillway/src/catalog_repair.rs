//! The catalog half of [`Database::repair`](crate::Database::repair): after the store's
//! salvage, makes the catalog and the keyspaces agree again by rebuilding what damaged catalog
//! records described from what survives, and reports what cannot be rebuilt.
//!
//! Rules, favouring the documents:
//! - A collection record whose documents keyspace is gone keeps the collection, empty; an
//!   index keyspace that is gone is recreated empty (the index rebuild fills it).
//! - A documents keyspace no record names (`docs.<id>.<collection>`) gets its record back,
//!   with the indexes whose keyspaces (`index.<id>.<collection>.<index>`) remain and whose key
//!   pattern the index name spells (MongoDB's default names, `a_1_b_-1`), checked against the
//!   surviving entries; the others are reported lost.
//! - A keyspace whose name was lost (`salvaged-<n>`) holding documents becomes collection
//!   `salvaged-<n>`; one holding catalog records is the catalog.
//! - Unreadable records, and policies whose record was damaged, are reported lost.
//!
//! This module must never drop a keyspace that holds documents, never rewrite an intact and
//! consistent record, and writes nothing when the catalog needs no repair.

use std::collections::{BTreeMap, BTreeSet};

use bson::{Bson, Document, doc};
use spillway_doc::key;
use spillway_store::{KeyspaceId, Snapshot, Store, WriteBatch};

use crate::catalog::{
    CATALOG_KEYSPACE, CATALOG_VERSION, COLLECTION_KEY_PREFIX, CollectionMeta, DOCS_KEYSPACE_PREFIX,
    INDEX_KEYSPACE_PREFIX, IndexMeta, META_KEY, PATTERN_KEY_PREFIX, default_index_name,
    parse_index_keys, policy_from_record, validate_collection_name,
};
use crate::error::{Error, Result};
use crate::index_keys::index_entries;
use crate::storage;

/// Name prefix the store gives a keyspace whose create op was lost.
const SALVAGED_KEYSPACE_PREFIX: &str = "salvaged-";
/// At most this many readings of an index name are tried as key patterns.
const MAX_KEY_PATTERN_READINGS: usize = 8;

/// A collection whose catalog record was rebuilt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RebuiltCollection {
    /// The collection's name now.
    pub name: String,
    /// The keyspace its documents were found in.
    pub keyspace: String,
    /// Its documents.
    pub documents: u64,
}

/// An index to create once the database is open: its definition was recovered.
pub(crate) struct RecoveredIndex {
    pub(crate) collection: String,
    pub(crate) name: String,
    pub(crate) spec: Document,
    pub(crate) unique: bool,
}

/// What [`rebuild`] found and did.
#[derive(Default)]
pub(crate) struct CatalogRepair {
    pub(crate) collections_rebuilt: Vec<RebuiltCollection>,
    pub(crate) collections_emptied: Vec<String>,
    pub(crate) indexes_to_create: Vec<RecoveredIndex>,
    pub(crate) indexes_lost: Vec<(String, String)>,
    pub(crate) records_lost: Vec<String>,
    pub(crate) keyspaces_dropped: Vec<(String, u64)>,
    /// Whether anything was written.
    pub(crate) changed: bool,
}

/// A collection record as read, before its keyspaces are resolved.
struct Record {
    name: String,
    id: u64,
    keyspace: String,
    indexes: Vec<Document>,
}

/// Makes the catalog of `store` agree with its keyspaces (see the module documentation).
pub(crate) fn rebuild(store: &Store) -> Result<CatalogRepair> {
    let mut repair = CatalogRepair::default();
    let snapshot = store.snapshot();
    let keyspaces: BTreeMap<String, KeyspaceId> = snapshot.keyspaces().into_iter().collect();
    let mut batch = WriteBatch::new();

    // The catalog's records: from its keyspace, or from a keyspace that lost its name.
    let (catalog, records) = read_records(store, &snapshot, &keyspaces, &mut batch, &mut repair)?;

    // Collection records, with their keyspaces checked; the other records.
    let CheckedRecords {
        mut next_id,
        meta_found,
        mut collections,
        referenced,
    } = check_records(
        store,
        &keyspaces,
        catalog,
        &records,
        &mut batch,
        &mut repair,
    )?;

    // Documents keyspaces no record names: their records are rebuilt.
    let mut index_keyspaces = Vec::new();
    for (name, &id) in &keyspaces {
        if referenced.contains(name) {
            continue;
        }
        if name.starts_with(INDEX_KEYSPACE_PREFIX) {
            index_keyspaces.push((name.clone(), id));
            continue;
        }
        let documents = snapshot.len(id)? as u64;
        // The collection's name, its number, and the documents keyspace its record names.
        let (collection, number, keyspace) =
            if let Some(rest) = name.strip_prefix(DOCS_KEYSPACE_PREFIX) {
                named_documents_keyspace(name, rest, &mut next_id)
            } else if name.starts_with(SALVAGED_KEYSPACE_PREFIX)
                && holds_documents(&snapshot, id)?
                && documents > 0
            {
                // Documents whose keyspace lost its name: copied into a collection of that name.
                let number = next_id;
                next_id += 1;
                let docs_name = format!("{DOCS_KEYSPACE_PREFIX}{number}.{name}");
                let docs = create_keyspace(store, &docs_name, &mut repair)?;
                for (key, value) in entries(&snapshot, id)? {
                    batch.put(docs, &key, &value);
                }
                batch.drop_keyspace(id);
                (name.clone(), number, docs_name)
            } else if name.starts_with(SALVAGED_KEYSPACE_PREFIX) {
                // Not documents (index entries are built again from the documents) or empty.
                repair.keyspaces_dropped.push((name.clone(), documents));
                batch.drop_keyspace(id);
                continue;
            } else {
                // Not a keyspace of the facade's layout: not ours to judge.
                continue;
            };
        let record = Record {
            name: unique_name(&collection, number, &collections),
            id: number,
            keyspace,
            indexes: Vec::new(),
        };
        put_record(
            &mut batch,
            catalog,
            &CollectionMeta::catalog_key(&record.name),
            &to_record(&record),
        )?;
        repair.collections_rebuilt.push(RebuiltCollection {
            name: record.name.clone(),
            keyspace: name.clone(),
            documents,
        });
        collections.insert(record.name.clone(), record);
    }

    // Index keyspaces no record names: the index is recovered when its name spells its key
    // pattern, then built again from the documents; the old keyspace goes either way.
    for (name, id) in index_keyspaces {
        recover_orphan_index(&snapshot, &collections, name, id, &mut batch, &mut repair)?;
    }

    let needs_meta = !meta_found && (!collections.is_empty() || !records.is_empty());
    let meta_behind = records
        .get(META_KEY)
        .and_then(|meta| meta.get_i64("next_id").ok())
        .is_some_and(|known| u64::try_from(known).unwrap_or(0) < next_id);
    if needs_meta || meta_behind {
        if !meta_found {
            repair.records_lost.push(printable(META_KEY));
        }
        put_record(
            &mut batch,
            catalog,
            META_KEY,
            &doc! { "version": CATALOG_VERSION, "next_id": next_id as i64 },
        )?;
    }
    if !batch.is_empty() {
        repair.changed = true;
        store.commit(batch)?;
    }
    Ok(repair)
}

/// What [`check_records`] kept of the catalog's records.
struct CheckedRecords {
    /// The next collection or index number: past every one in use.
    next_id: u64,
    /// Whether the meta record holds `next_id`.
    meta_found: bool,
    /// The collection records, by name.
    collections: BTreeMap<String, Record>,
    /// The keyspaces the collection records name.
    referenced: BTreeSet<String>,
}

/// Checks the catalog's records, deleting bad ones and repairing collection records.
fn check_records(
    store: &Store,
    keyspaces: &BTreeMap<String, KeyspaceId>,
    catalog: KeyspaceId,
    records: &BTreeMap<Vec<u8>, Document>,
    batch: &mut WriteBatch,
    repair: &mut CatalogRepair,
) -> Result<CheckedRecords> {
    let mut next_id = 1_u64;
    let mut meta_found = false;
    let mut collections: BTreeMap<String, Record> = BTreeMap::new();
    let mut referenced: BTreeSet<String> = BTreeSet::new();
    for (key, record) in records {
        if key == META_KEY {
            let version = record.get_i32("version").unwrap_or(0);
            if version != CATALOG_VERSION {
                return Err(Error::corruption(format!(
                    "catalog format version {version} is not supported (this build reads version {CATALOG_VERSION}); repair leaves it alone"
                )));
            }
            if let Ok(known) = record.get_i64("next_id") {
                meta_found = true;
                next_id = next_id.max(u64::try_from(known).unwrap_or(0));
            }
        } else if key.starts_with(PATTERN_KEY_PREFIX.as_bytes()) {
            if policy_from_record(record).is_err() {
                repair.records_lost.push(printable(key));
                batch.delete(catalog, key);
            }
        } else if key.starts_with(COLLECTION_KEY_PREFIX.as_bytes()) {
            let Some(mut parsed) = read_record(key, record) else {
                repair.records_lost.push(printable(key));
                batch.delete(catalog, key);
                continue;
            };
            if !keyspaces.contains_key(&parsed.keyspace) {
                create_keyspace(store, &parsed.keyspace, repair)?;
                repair.collections_emptied.push(parsed.name.clone());
            }
            let rewrite = keep_valid_indexes(
                store,
                keyspaces,
                &mut parsed,
                repair,
                &mut referenced,
                &mut next_id,
            )?;
            if rewrite {
                put_record(batch, catalog, key, &to_record(&parsed))?;
            }
            referenced.insert(parsed.keyspace.clone());
            next_id = next_id.max(parsed.id + 1);
            collections.insert(parsed.name.clone(), parsed);
        } else {
            repair.records_lost.push(printable(key));
            batch.delete(catalog, key);
        }
    }
    for name in keyspaces.keys() {
        if let Some(number) = keyspace_number(name) {
            next_id = next_id.max(number + 1);
        }
    }
    Ok(CheckedRecords {
        next_id,
        meta_found,
        collections,
        referenced,
    })
}

/// Creates keyspace `name` in `store`, noting that the repair changed something.
fn create_keyspace(store: &Store, name: &str, repair: &mut CatalogRepair) -> Result<KeyspaceId> {
    repair.changed = true;
    Ok(store.keyspace(name)?)
}

/// Adds to `batch` the write of catalog record `record` at `key`.
fn put_record(
    batch: &mut WriteBatch,
    catalog: KeyspaceId,
    key: &[u8],
    record: &Document,
) -> Result<()> {
    let bytes = storage::encode(record)?;
    batch.put(catalog, key, &bytes);
    Ok(())
}

/// The catalog keyspace and its readable records, recovered from a salvaged keyspace if gone.
fn read_records(
    store: &Store,
    snapshot: &Snapshot,
    keyspaces: &BTreeMap<String, KeyspaceId>,
    batch: &mut WriteBatch,
    repair: &mut CatalogRepair,
) -> Result<(KeyspaceId, BTreeMap<Vec<u8>, Document>)> {
    let mut records: BTreeMap<Vec<u8>, Document> = BTreeMap::new();
    let catalog = if let Some(&catalog) = keyspaces.get(CATALOG_KEYSPACE) {
        for (key, value) in entries(snapshot, catalog)? {
            if let Ok(record) = Document::from_reader(value.as_slice()) {
                records.insert(key, record);
            } else {
                repair.records_lost.push(printable(&key));
                batch.delete(catalog, &key);
            }
        }
        catalog
    } else {
        let catalog = create_keyspace(store, CATALOG_KEYSPACE, repair)?;
        for (name, &id) in keyspaces {
            if !name.starts_with(SALVAGED_KEYSPACE_PREFIX) {
                continue;
            }
            let found = entries(snapshot, id)?;
            let is_catalog = found.iter().any(|(key, _)| {
                key == META_KEY || key.starts_with(COLLECTION_KEY_PREFIX.as_bytes())
            });
            if is_catalog {
                for (key, value) in found {
                    if let Ok(record) = Document::from_reader(value.as_slice()) {
                        batch.put(catalog, &key, &value);
                        records.insert(key, record);
                    }
                }
                batch.drop_keyspace(id);
                break;
            }
        }
        catalog
    };
    Ok((catalog, records))
}

/// Keeps the valid index definitions of `parsed`: whether its record must be rewritten.
fn keep_valid_indexes(
    store: &Store,
    keyspaces: &BTreeMap<String, KeyspaceId>,
    parsed: &mut Record,
    repair: &mut CatalogRepair,
    referenced: &mut BTreeSet<String>,
    next_id: &mut u64,
) -> Result<bool> {
    let mut rewrite = false;
    let mut kept = Vec::with_capacity(parsed.indexes.len());
    for index in std::mem::take(&mut parsed.indexes) {
        let (Ok(index_name), Ok(spec), Ok(index_keyspace)) = (
            index.get_str("name"),
            index.get_document("key"),
            index.get_str("keyspace"),
        ) else {
            repair.indexes_lost.push((
                format!("{}.?", parsed.name),
                "its definition in the catalog record is incomplete".into(),
            ));
            rewrite = true;
            continue;
        };
        if parse_index_keys(&parsed.name, spec).is_err() {
            repair.indexes_lost.push((
                format!("{}.{index_name}", parsed.name),
                format!("its key pattern {spec} is not valid"),
            ));
            rewrite = true;
            continue;
        }
        if !keyspaces.contains_key(index_keyspace) {
            create_keyspace(store, index_keyspace, repair)?;
        }
        referenced.insert(index_keyspace.to_string());
        *next_id = (*next_id).max(keyspace_number(index_keyspace).unwrap_or(0) + 1);
        kept.push(index);
    }
    parsed.indexes = kept;
    Ok(rewrite)
}

/// Collection name, number and keyspace for an unnamed `docs.<rest>` keyspace.
fn named_documents_keyspace(name: &str, rest: &str, next_id: &mut u64) -> (String, u64, String) {
    let parsed = rest
        .split_once('.')
        .and_then(|(number, collection)| Some((number.parse::<u64>().ok()?, collection)));
    match parsed {
        Some((number, collection)) if validate_collection_name(collection).is_ok() => {
            (collection.to_string(), number, name.to_string())
        }
        Some((number, _)) => (format!("recovered-{number}"), number, name.to_string()),
        None => {
            let number = *next_id;
            *next_id += 1;
            (format!("recovered-{number}"), number, name.to_string())
        }
    }
}

/// Drops an index keyspace no record names, recovering its index when its name spells the keys.
fn recover_orphan_index(
    snapshot: &Snapshot,
    collections: &BTreeMap<String, Record>,
    name: String,
    id: KeyspaceId,
    batch: &mut WriteBatch,
    repair: &mut CatalogRepair,
) -> Result<()> {
    let values = snapshot.len(id)? as u64;
    batch.drop_keyspace(id);
    let owner = name
        .strip_prefix(INDEX_KEYSPACE_PREFIX)
        .and_then(|rest| rest.split_once('.'))
        .and_then(|(_, rest)| {
            collections
                .values()
                .filter(|c| {
                    rest.strip_prefix(c.name.as_str())
                        .is_some_and(|tail| tail.len() > 1 && tail.starts_with('.'))
                })
                .max_by_key(|c| c.name.len())
                .map(|c| (c, rest[c.name.len() + 1..].to_string()))
        });
    let Some((collection, index_name)) = owner else {
        repair.keyspaces_dropped.push((name, values));
        return Ok(());
    };
    let qualified = format!("{}.{index_name}", collection.name);
    let known = collection
        .indexes
        .iter()
        .any(|index| index.get_str("name").ok() == Some(index_name.as_str()));
    if known {
        repair.keyspaces_dropped.push((name, values));
        return Ok(());
    }
    match recover_index(snapshot, collection, &index_name, id)? {
        Some((spec, unique)) => repair.indexes_to_create.push(RecoveredIndex {
            collection: collection.name.clone(),
            name: index_name,
            spec,
            unique,
        }),
        None => repair.indexes_lost.push((
            qualified,
            "its definition was in a damaged catalog record and its name does not spell a key pattern".into(),
        )),
    }
    Ok(())
}

/// Every entry of a keyspace, copied.
fn entries(snapshot: &Snapshot, keyspace: KeyspaceId) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut all = Vec::new();
    for entry in snapshot.iter(keyspace)? {
        let (key, value) = entry?;
        all.push((key.to_vec(), value.to_vec()));
    }
    Ok(all)
}

fn printable(key: &[u8]) -> String {
    String::from_utf8_lossy(key).replace('\0', "/")
}

/// The number in a keyspace name of the facade's layout (`docs.<n>.…`, `index.<n>.…`).
fn keyspace_number(name: &str) -> Option<u64> {
    let rest = name
        .strip_prefix(DOCS_KEYSPACE_PREFIX)
        .or_else(|| name.strip_prefix(INDEX_KEYSPACE_PREFIX))?;
    rest.split_once('.')?.0.parse().ok()
}

/// A collection record's fields, if they are all there and its key matches its name.
fn read_record(key: &[u8], record: &Document) -> Option<Record> {
    let name = record.get_str("name").ok()?;
    if key != CollectionMeta::catalog_key(name).as_slice() {
        return None;
    }
    let indexes = record
        .get_array("indexes")
        .ok()?
        .iter()
        .map(|index| match index {
            Bson::Document(index) => Some(index.clone()),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some(Record {
        name: name.to_string(),
        id: u64::try_from(record.get_i64("id").ok()?).ok()?,
        keyspace: record.get_str("keyspace").ok()?.to_string(),
        indexes,
    })
}

fn to_record(record: &Record) -> Document {
    doc! {
        "name": &record.name,
        "id": record.id as i64,
        "keyspace": &record.keyspace,
        "indexes": record.indexes.iter().cloned().map(Bson::Document).collect::<Vec<_>>(),
    }
}

/// `name`, or `name-recovered-<number>` if a collection has that name already.
fn unique_name(name: &str, number: u64, collections: &BTreeMap<String, Record>) -> String {
    if collections.contains_key(name) {
        format!("{name}-recovered-{number}")
    } else {
        name.to_string()
    }
}

/// Whether every value of the keyspace is a document stored under the key of its `_id`.
fn holds_documents(snapshot: &Snapshot, keyspace: KeyspaceId) -> Result<bool> {
    for entry in snapshot.iter(keyspace)? {
        let (key, value) = entry?;
        let matches = Document::from_reader(value)
            .ok()
            .and_then(|document| document.get("_id").map(|id| key::to_key(id) == key))
            .unwrap_or(false);
        if !matches {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The ways to read an index name as MongoDB's default name of a key pattern (`a_1_b_-1`):
/// each field ends at a `1` or `-1` part; field names may contain `_`.
fn key_pattern_readings(name: &str) -> Vec<Document> {
    fn split(parts: &[&str], fields: &mut Vec<(String, i32)>, found: &mut Vec<Document>) {
        if found.len() >= MAX_KEY_PATTERN_READINGS {
            return;
        }
        if parts.is_empty() {
            if !fields.is_empty() {
                let mut spec = Document::new();
                for (field, direction) in fields.iter() {
                    spec.insert(field.clone(), *direction);
                }
                found.push(spec);
            }
            return;
        }
        for end in 1..parts.len() {
            let direction = match parts[end] {
                "1" => 1,
                "-1" => -1,
                _ => continue,
            };
            fields.push((parts[..end].join("_"), direction));
            split(&parts[end + 1..], fields, found);
            fields.pop();
        }
    }
    let parts: Vec<&str> = name.split('_').collect();
    let mut found = Vec::new();
    split(&parts, &mut Vec::new(), &mut found);
    found.retain(|spec| default_index_name(spec) == name && parse_index_keys("", spec).is_ok());
    found
}

/// The key pattern and uniqueness of index `index_name` of `collection`, from its name, checked
/// against the entries that survive in its keyspace: the first reading whose entries, built
/// from the documents, are exactly the surviving ones; else the first reading.
fn recover_index(
    snapshot: &Snapshot,
    collection: &Record,
    index_name: &str,
    keyspace: KeyspaceId,
) -> Result<Option<(Document, bool)>> {
    let readings = key_pattern_readings(index_name);
    if readings.is_empty() {
        return Ok(None);
    }
    let surviving = entries(snapshot, keyspace)?;
    // Entries of a non-unique index end with the `_id` key they hold as value.
    let looks_unique = !surviving.is_empty()
        && !surviving
            .iter()
            .all(|(key, value)| key.len() > value.len() && key.ends_with(value));
    let surviving: BTreeSet<Vec<u8>> = surviving.into_iter().map(|(key, _)| key).collect();
    let documents = match snapshot.keyspace(&collection.keyspace) {
        Some(docs) => entries(snapshot, docs)?,
        None => Vec::new(),
    };
    for spec in &readings {
        for unique in [looks_unique, !looks_unique] {
            let index = IndexMeta {
                name: index_name.to_string(),
                fields: parse_index_keys(&collection.name, spec)?,
                spec: spec.clone(),
                unique,
                keyspace_name: String::new(),
                keyspace,
                multikey: false,
                hashed: crate::catalog::hashed_field(spec),
                settings: crate::catalog::IndexSettings::default(),
            };
            let mut expected = BTreeSet::new();
            let mut buildable = true;
            for (id_key, bytes) in &documents {
                let Ok(document) = storage::decode(bytes) else {
                    continue;
                };
                match index_entries(&collection.name, &index, &document, id_key) {
                    Ok((found, _)) => expected.extend(found.into_iter().map(|entry| entry.key)),
                    Err(_) => buildable = false,
                }
            }
            if buildable && expected == surviving {
                return Ok(Some((spec.clone(), unique)));
            }
        }
    }
    Ok(Some((readings[0].clone(), looks_unique)))
}
