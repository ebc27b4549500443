//! [`ProxyExecutor`]: what `spillway serve --upstream` runs each command on. A command on a
//! collection with a policy goes through the pattern layer (`patterned`); a policy command
//! too; every other command goes to the upstream unchanged ([`Upstream`]), and its reply
//! comes back unchanged: cursors, sessions, transactions, errors and codes are the
//! upstream's own.
//!
//! Which collections have a policy is read from the upstream (the policy document of each
//! database, [`spillway_mongodb::POLICY_COLLECTION`]) and kept for at most
//! [`POLICY_REFRESH`], so that a policy another proxy declares is followed here within that
//! time; this proxy's own declarations are followed at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bson::{Bson, Document, doc};
use spillway::command::{CommandError, Commands, name_first};
use spillway_mongodb::mongodb::sync::Client;
use spillway_mongodb::{
    POLICY_COLLECTION, POLICY_DOCUMENT_ID, Pattern, PatternedDatabase, declared_patterns,
};
use spillway_server::Executor;

use crate::cursors::Cursors;
use crate::patterned::{self, PATTERNED_COMMANDS, POLICY_COMMANDS};
use crate::upstream::{Upstream, UpstreamError};

/// How long the policies read from the upstream are trusted before they are read again.
pub const POLICY_REFRESH: Duration = Duration::from_secs(1);

/// The namespace prefix that reads a collection's stored layout (as `spillway serve` has it).
const STORED_VIEW_PREFIX: &str = "system.stored.";

/// Replies of retryable `findAndModify`s on collections with a policy, kept so that a retry
/// through this proxy is answered without writing again (per session, the last transaction
/// number). Inserts, updates and deletes do not need it: their statements record their
/// outcomes upstream, in their own transactions (`spillway_mongodb::RetryKey`).
const REMEMBERED_SESSIONS: usize = 10_000;

/// The policies of one database, and when they were read from the upstream.
type ReadPolicies = (Instant, Arc<Vec<Pattern>>);

/// The executor of `spillway serve --upstream`.
pub struct ProxyExecutor {
    upstream: Upstream,
    client: Client,
    databases: Mutex<HashMap<String, PatternedDatabase>>,
    policies: Mutex<HashMap<String, ReadPolicies>>,
    cursors: Cursors,
    retried: Mutex<HashMap<Vec<u8>, (i64, Document)>>,
    /// The newest `$clusterTime` and `operationTime` the upstream gave, gossiped in the
    /// replies the proxy gives itself (`hello`, the commands on collections with a policy),
    /// as a replica set member gossips them in every reply.
    cluster_time: Mutex<Option<(Bson, Bson)>>,
}

impl std::fmt::Debug for ProxyExecutor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyExecutor")
            .field("upstream", &self.upstream)
            .finish_non_exhaustive()
    }
}

impl ProxyExecutor {
    /// An executor in front of the deployment `uri` names. Call it outside any async
    /// runtime: the driver starts its own.
    ///
    /// # Errors
    /// A URI the driver refuses or the forwarder cannot use ([`Upstream::new`]).
    pub fn new(uri: &str) -> Result<ProxyExecutor, UpstreamError> {
        let upstream = Upstream::new(uri)?;
        let client =
            Client::with_uri_str(uri).map_err(|error| UpstreamError::Uri(error.to_string()))?;
        Ok(ProxyExecutor {
            upstream,
            client,
            databases: Mutex::new(HashMap::new()),
            policies: Mutex::new(HashMap::new()),
            cursors: Cursors::default(),
            retried: Mutex::new(HashMap::new()),
            cluster_time: Mutex::new(None),
        })
        .inspect(|executor| {
            // The first `hello` of a client gets the upstream's cluster time too, when the
            // upstream is there to give it.
            let _ = executor.forward(&doc! { "ping": 1, "$db": "admin" });
        })
    }

    /// Keeps the cluster time of an upstream reply when it is newer than the one kept.
    fn observe_cluster_time(&self, reply: &Document) {
        let (Some(Bson::Document(cluster)), Some(operation)) =
            (reply.get("$clusterTime"), reply.get("operationTime"))
        else {
            return;
        };
        let Ok(time) = cluster.get_timestamp("clusterTime") else {
            return;
        };
        let mut kept = self
            .cluster_time
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let newer = match kept.as_ref() {
            Some((Bson::Document(known), _)) => known
                .get_timestamp("clusterTime")
                .is_ok_and(|known| (known.time, known.increment) < (time.time, time.increment)),
            _ => true,
        };
        if newer {
            *kept = Some((Bson::Document(cluster.clone()), operation.clone()));
        }
    }

    fn route(&self, command: Document) -> Result<Document, CommandError> {
        // pymongo writes a top-level `_id` first (`arrayPage`, `arrayLength`); the upstream
        // gets the command with its name first too.
        let command = name_first(command);
        let Some(name) = command.keys().next().cloned() else {
            return Err(CommandError::new(59, "an empty document is no command"));
        };
        let database = command.get_str("$db").unwrap_or("admin").to_owned();
        if POLICY_COMMANDS.contains(&name.as_str()) {
            let patterned = self.patterned(&database)?;
            let reply = patterned::policy_command(&name, &patterned, &command);
            self.forget_policies(&database);
            return reply;
        }
        match name.as_str() {
            "getMore" => {
                let batch_size = command
                    .get("batchSize")
                    .and_then(Bson::as_i64)
                    .or_else(|| command.get_i32("batchSize").ok().map(i64::from))
                    .and_then(|size| usize::try_from(size).ok());
                if let Ok(id) = command.get_i64("getMore")
                    && let Some(reply) = self.cursors.get_more(id, batch_size)
                {
                    return Ok(reply);
                }
            }
            "killCursors" => return self.kill_cursors(command),
            _ => {}
        }
        if name == "renameCollection"
            && let Some((from_database, from)) = command
                .get_str("renameCollection")
                .ok()
                .and_then(|namespace| namespace.split_once('.'))
            && self.has_policy(from_database, from)?
        {
            return Err(CommandError::new(
                2,
                format!(
                    "{from_database}.{from} has a pattern policy: through the proxy, remove the \
                     policy (removePattern), rename, then declare it again on the new name"
                ),
            ));
        }
        if let Ok(collection) = command.get_str(&name) {
            let collection = collection.to_owned();
            if let Some(base) = collection.strip_prefix(STORED_VIEW_PREFIX)
                && self.has_policy(&database, base)?
            {
                return self.stored_layout(&name, &database, base, command);
            }
            if PATTERNED_COMMANDS.contains(&name.as_str())
                && self.has_policy(&database, &collection)?
            {
                return self.patterned_command(&name, &database, &collection, &command);
            }
            if name == "drop" && self.has_policy(&database, &collection)? {
                // The side documents go with the main ones, through the layer, first.
                let patterned = self.patterned(&database)?;
                patterned
                    .collection(&collection)
                    .delete_many(Document::new())
                    .run()
                    .map_err(|failure| patterned::error(&failure))?;
            }
        }
        self.forward(&command)
    }

    /// A read of `system.stored.<base>`: the upstream's own documents of `<base>`, which are
    /// the stored layout. Writes there are refused, as `spillway serve` refuses them.
    fn stored_layout(
        &self,
        name: &str,
        database: &str,
        base: &str,
        mut command: Document,
    ) -> Result<Document, CommandError> {
        if !matches!(name, "find" | "aggregate" | "count" | "distinct") {
            return Err(CommandError::new(
                166,
                format!(
                    "Namespace {database}.{STORED_VIEW_PREFIX}{base} is the stored layout of \
                     {database}.{base}, a read-only view: only find, aggregate, count and \
                     distinct read it; write the logical documents to {database}.{base} instead"
                ),
            ));
        }
        command.insert(name, base);
        self.forward(&command)
    }

    fn patterned_command(
        &self,
        name: &str,
        database: &str,
        collection: &str,
        command: &Document,
    ) -> Result<Document, CommandError> {
        if command.get_bool("startTransaction").unwrap_or(false)
            || command
                .get_bool("autocommit")
                .is_ok_and(|autocommit| !autocommit)
        {
            return Err(CommandError::new(
                263,
                format!(
                    "{database}.{collection} has a pattern policy: through the proxy, its commands \
                     run outside multi-document transactions for now (run this one outside the \
                     transaction)"
                ),
            ));
        }
        let retry_key = retryable_write_key(command)
            .filter(|_| matches!(name, "findAndModify" | "findandmodify"));
        if let Some((key, number)) = &retry_key
            && let Some((known, reply)) = self
                .retried
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(key)
            && known == number
        {
            return Ok(reply.clone());
        }
        let patterned = self.patterned(database)?;
        let namespace = format!("{database}.{collection}");
        let reply = patterned::run(
            name,
            &patterned.collection(collection),
            &namespace,
            command,
            &self.cursors,
        )?;
        if let Some((key, number)) = retry_key {
            let mut retried = self.retried.lock().unwrap_or_else(PoisonError::into_inner);
            if retried.len() >= REMEMBERED_SESSIONS && !retried.contains_key(&key) {
                retried.clear();
            }
            retried.insert(key, (number, reply.clone()));
        }
        Ok(reply)
    }

    /// `killCursors`: the proxy's cursors closed here, the others by the upstream.
    fn kill_cursors(&self, mut command: Document) -> Result<Document, CommandError> {
        let ids: Vec<i64> = command
            .get_array("cursors")
            .map(|ids| ids.iter().filter_map(Bson::as_i64).collect())
            .unwrap_or_default();
        let (killed, others) = self.cursors.kill(ids);
        if killed.is_empty() {
            return self.forward(&command);
        }
        let mut killed: Vec<Bson> = killed.into_iter().map(Bson::Int64).collect();
        let mut not_found = Vec::new();
        if !others.is_empty() {
            command.insert(
                "cursors",
                others.into_iter().map(Bson::Int64).collect::<Vec<_>>(),
            );
            let reply = self.forward(&command)?;
            for (field, into) in [
                ("cursorsKilled", &mut killed),
                ("cursorsNotFound", &mut not_found),
            ] {
                if let Ok(ids) = reply.get_array(field) {
                    into.extend(ids.iter().cloned());
                }
            }
        }
        Ok(doc! {
            "cursorsKilled": killed,
            "cursorsNotFound": not_found,
            "cursorsAlive": [],
            "cursorsUnknown": [],
            "ok": 1.0,
        })
    }

    fn forward(&self, command: &Document) -> Result<Document, CommandError> {
        let reply = self.upstream.run(command);
        if let Ok(reply) = &reply {
            self.observe_cluster_time(reply);
        }
        reply.or_else(|error| {
            // The command may or may not have run: a network error, which drivers retry
            // when the operation allows it (the upstream answers a retried write once).
            let mut reply = CommandError::new(6, error.to_string()).to_reply();
            let in_transaction = command.contains_key("txnNumber")
                && command
                    .get_bool("autocommit")
                    .is_ok_and(|autocommit| !autocommit);
            if in_transaction {
                reply.insert("errorLabels", vec!["TransientTransactionError"]);
            } else if command.contains_key("txnNumber") {
                reply.insert("errorLabels", vec!["RetryableWriteError"]);
            }
            Ok(reply)
        })
    }

    /// Whether `collection` of `database` has a policy.
    fn has_policy(&self, database: &str, collection: &str) -> Result<bool, CommandError> {
        if matches!(database, "admin" | "config" | "local") {
            return Ok(false);
        }
        Ok(self
            .policies(database)?
            .iter()
            .any(|pattern| pattern.collection() == collection))
    }

    /// The policies of `database`, read from the upstream at most [`POLICY_REFRESH`] ago.
    fn policies(&self, database: &str) -> Result<Arc<Vec<Pattern>>, CommandError> {
        if let Some((read, patterns)) = self
            .policies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(database)
            && read.elapsed() < POLICY_REFRESH
        {
            return Ok(Arc::clone(patterns));
        }
        let read = Instant::now();
        let reply = self.forward(&doc! {
            "find": POLICY_COLLECTION,
            "filter": { "_id": POLICY_DOCUMENT_ID },
            "limit": 1,
            "singleBatch": true,
            "$db": database,
        })?;
        let ok = reply.get_f64("ok").is_ok_and(|ok| ok > 0.5)
            || reply.get_i32("ok").is_ok_and(|ok| ok == 1);
        if !ok {
            return Err(CommandError::new(
                reply.get_i32("code").unwrap_or(8000),
                format!(
                    "reading the policies of database '{database}' from the upstream: {}",
                    reply.get_str("errmsg").unwrap_or("failed")
                ),
            ));
        }
        let found = reply
            .get_document("cursor")
            .ok()
            .and_then(|cursor| cursor.get_array("firstBatch").ok())
            .and_then(|batch| batch.first())
            .and_then(Bson::as_document);
        let patterns = Arc::new(declared_patterns(found).map_err(|error| {
            CommandError::new(
                2,
                format!("the policy document of database '{database}': {error}"),
            )
        })?);
        self.policies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(database.to_owned(), (read, Arc::clone(&patterns)));
        Ok(patterns)
    }

    fn forget_policies(&self, database: &str) {
        self.policies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(database);
    }

    /// The pattern layer on `database` (opened once: it resumes unfinished migrations).
    fn patterned(&self, database: &str) -> Result<PatternedDatabase, CommandError> {
        if let Some(known) = self
            .databases
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(database)
        {
            return Ok(known.clone());
        }
        let opened = PatternedDatabase::new(&self.client, database, Vec::<Pattern>::new())
            .map_err(|failure| patterned::error(&failure))?;
        self.databases
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(database.to_owned(), opened.clone());
        Ok(opened)
    }
}

/// The session and transaction number of a retryable write (a write with `txnNumber`
/// outside a transaction).
fn retryable_write_key(command: &Document) -> Option<(Vec<u8>, i64)> {
    let number = command.get_i64("txnNumber").ok()?;
    if command.contains_key("autocommit") {
        return None;
    }
    let session = command.get_document("lsid").ok()?;
    Some((session.to_vec().ok()?, number))
}

impl Executor for ProxyExecutor {
    fn execute(&self, command: Document) -> Document {
        let mut reply = self.route(command).unwrap_or_else(|error| error.to_reply());
        if !reply.contains_key("$clusterTime") {
            self.stamp(&mut reply);
        }
        reply
    }

    fn stamp(&self, reply: &mut Document) {
        let kept = self
            .cluster_time
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some((cluster_time, operation_time)) = kept {
            reply.insert("operationTime", operation_time);
            reply.insert("$clusterTime", cluster_time);
        }
    }

    fn reap_expired(&self) {
        self.cursors.reap_expired();
    }

    fn command_names(&self) -> &'static [&'static str] {
        Commands::command_names()
    }
}
