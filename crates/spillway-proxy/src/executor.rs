//! [`ProxyExecutor`]: what `spillway serve --upstream` runs each command on. A command on a
//! collection with a policy goes through the pattern layer (`patterned`); a policy command
//! too; every other command goes to the upstream unchanged ([`Upstream`]), and its reply
//! comes back unchanged: cursors, sessions, transactions, errors and codes are the
//! upstream's own.
//!
//! Which collections have a policy is read from the upstream (the policy document of each
//! database, [`spillway_mongodb::POLICY_COLLECTION`]) and kept for at most
//! [`POLICY_REFRESH`], so that a policy another proxy declares is followed here within that
//! time; this proxy's own declarations are followed at once. The same document records a
//! rename in progress (`rename`): commands on its two names are refused until it is done.
//!
//! The pattern layer's own collections ([`spillway_mongodb::POLICY_COLLECTION`],
//! [`spillway_mongodb::STAMP_COLLECTION`]) are bookkeeping, which the embedded database
//! keeps in its catalog: `listCollections` and `dbStats` leave them out (see
//! [`without_bookkeeping`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bson::{Bson, Document, doc};
use spillway::Database;
use spillway::command::{CommandError, Commands, Privilege, name_first};
use spillway_mongodb::mongodb::options::ReadConcern;
use spillway_mongodb::mongodb::sync::Client;
use spillway_mongodb::{
    POLICY_COLLECTION, POLICY_DOCUMENT_ID, Pattern, PatternedDatabase, RETRY_COLLECTION,
    RenameIntent, RetryKey, STAMP_COLLECTION, TRANSACTION_TIME_LIMIT, Transaction,
    declared_patterns, pending_rename,
};
use spillway_server::{Executor, HandedOn};

use crate::cursors::Cursors;
use crate::patterned::{self, PATTERNED_COMMANDS, POLICY_COMMANDS};
use crate::rename;
use crate::transactions::{self, Statement, Transactions};
use crate::upstream::{Upstream, UpstreamError};

/// How long the policies read from the upstream are trusted before they are read again.
pub const POLICY_REFRESH: Duration = Duration::from_secs(1);

/// The namespace prefix that reads a collection's stored layout (as `spillway serve` has it).
const STORED_VIEW_PREFIX: &str = "system.stored.";

/// The collections the pattern layer keeps for itself in each database it manages: not
/// the application's, so not listed (the embedded database keeps the same records in its
/// catalog, which lists nothing of them).
const BOOKKEEPING: [&str; 3] = [POLICY_COLLECTION, STAMP_COLLECTION, RETRY_COLLECTION];

/// What the commands of one database are routed by: its policies, and the rename in
/// progress its policy document records.
#[derive(Debug, Default)]
struct Catalog {
    patterns: Vec<Pattern>,
    renaming: Option<RenameIntent>,
}

impl Catalog {
    /// Whether `collection` has a policy (is a policy's main collection).
    fn has_policy(&self, collection: &str) -> bool {
        self.patterns
            .iter()
            .any(|pattern| pattern.collection() == collection)
    }

    /// Refuses a command on `collection` of `database` while a rename of it (or onto it) is
    /// in progress: 117 ConflictingOperationInProgress, which says how to finish it.
    fn refuse_while_renaming(&self, database: &str, collection: &str) -> Result<(), CommandError> {
        match &self.renaming {
            Some(intent) if intent.from == collection || intent.to == collection => {
                Err(CommandError::new(
                    117,
                    format!(
                        "{database}.{} is being renamed to {database}.{}: commands on either name \
                         wait until it is done (if the client that renamed it stopped, send its \
                         renameCollection again to finish it)",
                        intent.from, intent.to
                    ),
                ))
            }
            _ => Ok(()),
        }
    }

    /// Whether `collection` is named by a policy, as its main or its side collection.
    fn involves(&self, collection: &str) -> bool {
        self.patterns.iter().any(|pattern| {
            pattern.collection() == collection || pattern.side_collection() == collection
        })
    }
}

/// Where [`ProxyExecutor::routing`] sends a command.
enum Routing {
    /// A statement of a client's transaction the proxy holds, or the one that starts it.
    HeldTransaction(Statement),
    /// `setPattern` and the other policy commands.
    PolicyCommand,
    /// `listCollections`, without the bookkeeping collections.
    ListCollections,
    /// `dbStats`, without the bookkeeping collections.
    DbStats,
    /// `renameCollection`, whose policies follow the collection.
    Rename,
    /// A `getMore`: of one of the proxy's own cursors, or else the upstream's.
    GetMore,
    /// `killCursors`: the proxy's cursors here, the others upstream.
    KillCursors,
    /// `endSessions`: the proxy's transactions of those sessions end, then the upstream's.
    EndSessions,
    /// A command on `system.stored.<base>`, the stored layout of a collection with a policy.
    StoredLayout(String),
    /// A command on a collection with a policy, through the pattern layer.
    Patterned(String),
    /// `drop` of a collection with a policy: its side documents go first.
    DropPatterned(String),
    /// Everything else: the upstream's, as it came.
    Upstream,
}

/// How [`ProxyExecutor::routing`] learns a database's policies.
#[derive(Clone, Copy)]
enum Lookup {
    /// Read from the upstream when those kept are stale (finishing a rename a stopped proxy
    /// left): may block.
    Read,
    /// Only those kept fresh, with no rename pending: never blocks.
    Kept,
}

/// The newest `$clusterTime` and `operationTime` the upstream gave, gossiped in the replies
/// the proxy gives itself (`hello`, the commands on collections with a policy), as a replica
/// set member gossips them in every reply.
#[derive(Debug, Default)]
struct ClusterTime(Mutex<Option<(Bson, Bson)>>);

impl ClusterTime {
    /// Keeps the cluster time of an upstream reply when it is newer than the one kept.
    fn observe(&self, reply: &Document) {
        let (Some(Bson::Document(cluster)), Some(operation)) =
            (reply.get("$clusterTime"), reply.get("operationTime"))
        else {
            return;
        };
        let Ok(time) = cluster.get_timestamp("clusterTime") else {
            return;
        };
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
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

    /// Adds the kept cluster time to `reply`.
    fn stamp(&self, reply: &mut Document) {
        let kept = self
            .0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some((cluster_time, operation_time)) = kept {
            reply.insert("operationTime", operation_time);
            reply.insert("$clusterTime", cluster_time);
        }
    }

    /// Adds the kept cluster time to a reply that has none (the proxy's own).
    fn stamp_unless_there(&self, reply: &mut Document) {
        if !reply.contains_key("$clusterTime") {
            self.stamp(reply);
        }
    }
}

/// The reply of `command` forwarded to the upstream, its cluster time kept: the upstream's
/// own, or for a lost connection error 6, which drivers retry when the operation allows it.
fn forwarded(
    cluster_time: &ClusterTime,
    command: &Document,
    reply: Result<Document, UpstreamError>,
) -> Result<Document, CommandError> {
    if let Ok(reply) = &reply {
        cluster_time.observe(reply);
    }
    reply.or_else(|error| {
        if let UpstreamError::Authentication(_) = error {
            // Nothing was sent; a retry would be refused the same way.
            return Err(CommandError::new(18, error.to_string()));
        }
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

/// The catalog of one database, and when it was read from the upstream.
type ReadPolicies = (Instant, Arc<Catalog>);

/// The executor of `spillway serve --upstream`.
pub struct ProxyExecutor {
    upstream: Arc<Upstream>,
    client: Client,
    databases: Mutex<HashMap<String, PatternedDatabase>>,
    policies: Mutex<HashMap<String, ReadPolicies>>,
    cursors: Cursors,
    /// The clients' transactions the proxy holds (those that start in a database with
    /// policies), each one upstream transaction.
    transactions: Transactions,
    /// Shared with the replies of the commands handed on ([`Executor::hand_on`]).
    cluster_time: Arc<ClusterTime>,
    /// With `--auth`: the proxy's own users and roles, kept in an embedded database of the
    /// proxy's (the upstream's users are the upstream's: the proxy logs in to it as one user
    /// of its own), and the command layer that says what each command needs.
    users: Option<Commands>,
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
        let upstream = Arc::new(Upstream::new(uri)?);
        let client =
            Client::with_uri_str(uri).map_err(|error| UpstreamError::Uri(error.to_string()))?;
        Ok(ProxyExecutor {
            upstream,
            client,
            databases: Mutex::new(HashMap::new()),
            policies: Mutex::new(HashMap::new()),
            cursors: Cursors::default(),
            transactions: Transactions::default(),
            cluster_time: Arc::default(),
            users: None,
        })
        .inspect(|executor| {
            // The first `hello` of a client gets the upstream's cluster time too, when the
            // upstream is there to give it.
            let _ = executor.forward(&doc! { "ping": 1, "$db": "admin" });
        })
    }

    /// The executor with the proxy's own users and roles in `users` (an embedded database
    /// that holds nothing else): the server then authenticates clients against them under
    /// `--auth` and checks every command against their roles before it is routed, as
    /// `spillway serve --auth` does, so that a client reaches through the proxy only what
    /// its own user may reach, whatever the proxy's upstream user may.
    #[must_use]
    pub fn with_users(mut self, users: Database) -> ProxyExecutor {
        self.users = Some(Commands::new(users));
        self
    }

    fn route(&self, command: Document) -> Result<Document, CommandError> {
        // pymongo writes a top-level `_id` first (`arrayPage`, `arrayLength`); the upstream
        // gets the command with its name first too.
        let command = name_first(command);
        let Some(name) = command.keys().next().cloned() else {
            return Err(CommandError::new(59, "an empty document is no command"));
        };
        let database = command.get_str("$db").unwrap_or("admin").to_owned();
        let Some(routing) = self.routing(&name, &database, &command, Lookup::Read)? else {
            return Err(CommandError::new(
                1,
                format!(
                    "the proxy could not route '{name}': the policies of '{database}' are unknown"
                ),
            ));
        };
        match routing {
            Routing::HeldTransaction(statement) => {
                self.held_transaction_statement(&statement, &name, &database, &command)
            }
            Routing::PolicyCommand => {
                let patterned = self.patterned(&database)?;
                let reply = patterned::policy_command(&name, &patterned, &command);
                self.forget_policies(&database);
                reply
            }
            Routing::ListCollections => self.forward(&without_bookkeeping(command)),
            Routing::DbStats => self.db_stats(&database, &command),
            Routing::Rename => self.rename_collection(&command),
            Routing::GetMore => match self.proxy_get_more(&command) {
                Some(reply) => Ok(reply),
                None => self.forward(&command),
            },
            Routing::KillCursors => self.kill_cursors(command),
            Routing::EndSessions => {
                self.transactions.end_sessions(&command);
                self.forward(&command)
            }
            Routing::StoredLayout(base) => {
                self.forward(&stored_layout(&name, &database, &base, command)?)
            }
            Routing::Patterned(collection) => {
                self.patterned_command(&name, &database, &collection, &command)
            }
            Routing::DropPatterned(collection) => {
                // The side documents go with the main ones, through the layer, first.
                let patterned = self.patterned(&database)?;
                patterned
                    .collection(&collection)
                    .delete_many(Document::new())
                    .run()
                    .map_err(|failure| patterned::error(&failure))?;
                self.forward(&command)
            }
            Routing::Upstream => self.forward(&command),
        }
    }

    /// Where command `name` of `database` goes: decided once, here, from the command and
    /// the database's policies. `None` only with [`Lookup::Kept`], when the policies it
    /// needs are not kept fresh.
    ///
    /// # Errors
    /// 117 on a collection being renamed; the policies could not be read.
    fn routing(
        &self,
        name: &str,
        database: &str,
        command: &Document,
        lookup: Lookup,
    ) -> Result<Option<Routing>, CommandError> {
        let collection = command.get_str(name).ok();
        let statement = Statement::of(command);
        let catalog = if collection.is_some() || statement.as_ref().is_some_and(Statement::starts) {
            match self.catalog(database, lookup)? {
                Some(catalog) => catalog,
                None => return Ok(None),
            }
        } else {
            Arc::default()
        };
        if let Some(collection) = collection
            && name != "renameCollection"
        {
            let collection = collection
                .strip_prefix(STORED_VIEW_PREFIX)
                .unwrap_or(collection);
            catalog.refuse_while_renaming(database, collection)?;
        }
        if let Some(statement) = statement {
            let held = if statement.starts() {
                !catalog.patterns.is_empty()
            } else {
                self.transactions.holds(&statement)
            };
            if held {
                return Ok(Some(Routing::HeldTransaction(statement)));
            }
        }
        if POLICY_COMMANDS.contains(&name) {
            return Ok(Some(Routing::PolicyCommand));
        }
        let by_name = match name {
            "listCollections" => Some(Routing::ListCollections),
            "dbStats" | "dbstats" => Some(Routing::DbStats),
            "renameCollection" => Some(Routing::Rename),
            "getMore" => Some(Routing::GetMore),
            "killCursors" => Some(Routing::KillCursors),
            "endSessions" => Some(Routing::EndSessions),
            _ => None,
        };
        if by_name.is_some() {
            return Ok(by_name);
        }
        let Some(collection) = collection else {
            return Ok(Some(Routing::Upstream));
        };
        if let Some(base) = collection.strip_prefix(STORED_VIEW_PREFIX)
            && catalog.has_policy(base)
        {
            return Ok(Some(Routing::StoredLayout(base.to_owned())));
        }
        let routing = if !catalog.has_policy(collection) {
            Routing::Upstream
        } else if PATTERNED_COMMANDS.contains(&name) {
            Routing::Patterned(collection.to_owned())
        } else if name == "drop" {
            Routing::DropPatterned(collection.to_owned())
        } else {
            Routing::Upstream
        };
        Ok(Some(routing))
    }

    /// The policies of `database` as `lookup` may learn them: none for `admin`, `config` and
    /// `local`, which hold no policy; `None` when [`Lookup::Kept`] has none fresh.
    fn catalog(
        &self,
        database: &str,
        lookup: Lookup,
    ) -> Result<Option<Arc<Catalog>>, CommandError> {
        if matches!(database, "admin" | "config" | "local") {
            return Ok(Some(Arc::default()));
        }
        match lookup {
            Lookup::Read => self.policies(database).map(Some),
            Lookup::Kept => Ok(self
                .kept_policies(database)
                .filter(|catalog| catalog.renaming.is_none())),
        }
    }

    /// Refuses a command on `collection` of `database` while a rename of it (or onto it) is
    /// in progress (see [`Catalog::refuse_while_renaming`]).
    fn refuse_while_renaming(&self, database: &str, collection: &str) -> Result<(), CommandError> {
        self.catalog(database, Lookup::Read)?
            .unwrap_or_default()
            .refuse_while_renaming(database, collection)
    }

    /// `renameCollection`. A rename that involves no policy (neither name is a main or a
    /// side collection of one) is the upstream's. One in a database with policies on either
    /// name goes in the steps of [`rename`], so that the policies follow the collection.
    /// What the embedded database refuses is refused alike: a side collection renamed, or
    /// taken as the new name (code 2, naming the policy). A rename across databases that
    /// involves a policy is refused (20 IllegalOperation): the policies of a database live in
    /// its own policy document, and moving a policy, its side collections and the collection
    /// between two documents is not built yet.
    fn rename_collection(&self, command: &Document) -> Result<Document, CommandError> {
        let Some(rename::Namespaces {
            from_database,
            from,
            to_database,
            to,
            drop_target,
        }) = rename::Namespaces::of(command)
        else {
            return self.forward(command);
        };
        let catalog_of = |database: &str| {
            if matches!(database, "admin" | "config" | "local") {
                Ok(Arc::new(Catalog::default()))
            } else {
                self.policies(database)
            }
        };
        let source = catalog_of(&from_database)?;
        let target = catalog_of(&to_database)?;
        for (catalog, database, name) in [
            (&source, &from_database, &from),
            (&target, &to_database, &to),
        ] {
            if let Some(pattern) = catalog
                .patterns
                .iter()
                .find(|pattern| pattern.side_collection() == name)
            {
                return Err(CommandError::new(
                    2,
                    format!(
                        "write refused by the policy on {database}.{}.{}: '{database}.{name}' is the \
                             policy's side collection and cannot be renamed, nor be renamed to, \
                             while the policy exists",
                        pattern.collection(),
                        pattern.field()
                    ),
                ));
            }
        }
        if from_database != to_database {
            if !source.involves(&from) && !target.involves(&to) {
                self.refuse_while_renaming(&from_database, &from)?;
                self.refuse_while_renaming(&to_database, &to)?;
                return self.forward(command);
            }
            return Err(CommandError::new(
                20,
                format!(
                    "renaming {from_database}.{from} to {to_database}.{to} through the proxy: a \
                     collection with a pattern policy can be renamed within its database only \
                     (remove the policy, rename, then declare it again in the other database)"
                ),
            ));
        }
        let database = from_database;
        let intent = RenameIntent {
            from,
            to,
            drop_target,
        };
        let forward = |command: &Document| self.forward(command);
        if source.renaming.as_ref() != Some(&intent) {
            if !source.involves(&intent.from) && !source.involves(&intent.to) {
                self.refuse_while_renaming(&database, &intent.from)?;
                self.refuse_while_renaming(&database, &intent.to)?;
                return self.forward(command);
            }
            rename::check(&forward, &database, &intent)?;
            let patterned = self.patterned(&database)?;
            patterned
                .begin_rename(&intent)
                .map_err(|failure| patterned::error(&failure))?;
            self.forget_policies(&database);
            // Every other proxy reads the intent before its cache of the policies expires:
            // after this wait none routes the two names by the policies of before.
            std::thread::sleep(POLICY_REFRESH);
        }
        let patterned = self.patterned(&database)?;
        let reply = rename::carry_out(&patterned, &forward, &database, &intent, command);
        self.forget_policies(&database);
        reply
    }

    /// `dbStats`, its `collections` without the pattern layer's bookkeeping collections,
    /// so that it counts what `listCollections` lists. The sizes (`objects`, `dataSize`,
    /// `storageSize`, `indexes`...) are left as the upstream measured them: they are the
    /// cost of the stored layout, side collections and bookkeeping included, which a policy
    /// changes by design.
    fn db_stats(&self, database: &str, command: &Document) -> Result<Document, CommandError> {
        let mut reply = self.forward(command)?;
        if !patterned::is_ok(&reply) {
            return Ok(reply);
        }
        let listed = self.forward(&doc! {
            "listCollections": 1,
            "filter": { "name": { "$in": BOOKKEEPING.to_vec() } },
            "nameOnly": true,
            "$db": database,
        })?;
        let Some(bookkeeping) = listed
            .get_document("cursor")
            .ok()
            .and_then(|cursor| cursor.get_array("firstBatch").ok())
            .map(Vec::len)
        else {
            return Ok(reply);
        };
        let bookkeeping = bookkeeping as i64;
        match reply.get("collections").cloned() {
            Some(Bson::Int64(collections)) => {
                reply.insert("collections", (collections - bookkeeping).max(0));
            }
            Some(Bson::Int32(collections)) => {
                let fewer = (i64::from(collections) - bookkeeping).max(0);
                reply.insert("collections", i32::try_from(fewer).unwrap_or(collections));
            }
            Some(Bson::Double(collections)) => {
                reply.insert("collections", (collections - bookkeeping as f64).max(0.0));
            }
            _ => {}
        }
        Ok(reply)
    }

    /// A getMore of one of the proxy's own cursors (those of commands on collections with a
    /// policy), answered here; `None` for the upstream's cursors.
    fn proxy_get_more(&self, command: &Document) -> Option<Document> {
        let batch_size = command
            .get("batchSize")
            .and_then(Bson::as_i64)
            .or_else(|| command.get_i32("batchSize").ok().map(i64::from))
            .and_then(|size| usize::try_from(size).ok());
        self.cursors
            .get_more(command.get_i64("getMore").ok()?, batch_size)
    }

    /// A command of a client's transaction the proxy holds: those that start in a database
    /// with policies, so that the logical writes there and the commands around them are one
    /// upstream transaction (see [`transactions`]). The others are the upstream's own
    /// transactions, forwarded as they come.
    fn held_transaction_statement(
        &self,
        statement: &Statement,
        name: &str,
        database: &str,
        command: &Document,
    ) -> Result<Document, CommandError> {
        if statement.starts() {
            let transaction = Transaction::start(
                &self.patterned(database)?,
                transactions::read_concern(command)?,
            )
            .map_err(|failure| patterned::error(&failure))?;
            self.transactions.begin(statement, transaction)?;
        }
        self.transactions.run(statement, name, |transaction| {
            self.in_transaction(transaction, name, database, command)
        })
    }

    /// Runs command `name` in the upstream `transaction`: on a collection with a policy
    /// of the transaction's database through the pattern layer, any other command as the
    /// client sent it.
    fn in_transaction(
        &self,
        transaction: &Transaction,
        name: &str,
        database: &str,
        command: &Document,
    ) -> Result<Document, CommandError> {
        if name == "getMore"
            && let Some(reply) = self.proxy_get_more(command)
        {
            return Ok(reply);
        }
        if POLICY_COMMANDS.contains(&name) {
            return Err(CommandError::new(
                263,
                format!("{name} cannot run in a multi-document transaction: run it outside one"),
            ));
        }
        let mut command = command.clone();
        if let Ok(collection) = command.get_str(name) {
            let collection = collection.to_owned();
            if let Some(base) = collection.strip_prefix(STORED_VIEW_PREFIX)
                && self.has_policy(database, base)?
            {
                command = stored_layout(name, database, base, command)?;
            } else if PATTERNED_COMMANDS.contains(&name)
                && self.has_policy(database, &collection)?
            {
                let home = transaction.database().name();
                if home != database {
                    return Err(CommandError::new(
                        263,
                        format!(
                            "{database}.{collection} has a pattern policy, and this transaction \
                             started in database '{home}': through the proxy, a transaction \
                             writes collections with a policy of the database it started in only"
                        ),
                    ));
                }
                return patterned::run(
                    name,
                    &transaction.collection(&collection),
                    &format!("{database}.{collection}"),
                    &command,
                    &self.cursors,
                );
            }
        }
        match transaction.run_command(database, transactions::without_session_fields(command)) {
            Ok(reply) => {
                self.cluster_time.observe(&reply);
                Ok(reply)
            }
            Err(failure) => Ok(transactions::upstream_error(&failure)),
        }
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
            // A transaction the proxy holds never gets here: this one started in a
            // database without policies, and is the upstream's own.
            return Err(CommandError::new(
                263,
                format!(
                    "{database}.{collection} has a pattern policy, and this transaction started \
                     in a database without policies: through the proxy, a transaction writes \
                     collections with a policy when it starts in their database (start it with \
                     a command on database '{database}')"
                ),
            ));
        }
        let patterned = self.patterned(database)?;
        let namespace = format!("{database}.{collection}");
        if matches!(name, "findAndModify" | "findandmodify")
            && let Some((session, txn_number)) = patterned::retryable_write(command)
        {
            let key = RetryKey {
                session,
                stmt: 0,
                txn_number,
            };
            return self
                .retryable_find_and_modify(&patterned, collection, &namespace, command, &key);
        }
        patterned::run(
            name,
            &patterned.collection(collection),
            &namespace,
            command,
            &self.cursors,
        )
    }

    /// A retryable `findAndModify` on a collection with a policy: its read, its write and
    /// the record of its reply in one upstream transaction, so that a retry, through any
    /// proxy or after a restart, reads the record and answers from it without writing
    /// (inserts, updates and deletes record their statements the same way, inside
    /// spillway-mongodb). Run again from the start after a transient error, within the
    /// driver's transaction time limit, as `withTransaction` does.
    fn retryable_find_and_modify(
        &self,
        patterned: &PatternedDatabase,
        collection: &str,
        namespace: &str,
        command: &Document,
        key: &RetryKey,
    ) -> Result<Document, CommandError> {
        const OPERATION: &str = "findAndModify";
        let started = Instant::now();
        let transient = |failure: &CommandError| {
            failure.labels.contains(&"TransientTransactionError")
                && started.elapsed() < TRANSACTION_TIME_LIMIT
        };
        loop {
            let transaction =
                Transaction::start_for_retryable_write(patterned, ReadConcern::snapshot())
                    .map_err(|failure| patterned::error(&failure))?;
            let outcome = match transaction.recorded_outcome(key, OPERATION) {
                Err(failure) => Err(patterned::error(&failure)),
                Ok(Some(recorded)) => return Ok(recorded),
                Ok(None) => patterned::run(
                    OPERATION,
                    &transaction.collection(collection),
                    namespace,
                    command,
                    &self.cursors,
                )
                .and_then(|reply| {
                    transaction
                        .record_outcome(key, OPERATION, reply.clone())
                        .map_err(|failure| patterned::error(&failure))?;
                    Ok(reply)
                }),
            };
            let reply = match outcome {
                Ok(reply) => reply,
                Err(failure) if transient(&failure) => continue,
                Err(failure) => return Err(failure),
            };
            loop {
                match transaction.commit() {
                    Ok(()) => return Ok(reply),
                    // The commit's outcome is unknown (the transaction stays open): send it
                    // again.
                    Err(_)
                        if transaction.is_open() && started.elapsed() < TRANSACTION_TIME_LIMIT => {}
                    Err(failure) => {
                        let failure = patterned::error(&failure);
                        if transient(&failure) {
                            break;
                        }
                        return Err(failure);
                    }
                }
            }
        }
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
        forwarded(&self.cluster_time, command, self.upstream.run(command))
    }

    /// Whether `collection` of `database` has a policy.
    fn has_policy(&self, database: &str, collection: &str) -> Result<bool, CommandError> {
        Ok(self
            .catalog(database, Lookup::Read)?
            .is_some_and(|catalog| catalog.has_policy(collection)))
    }

    /// The policies of `database` and its rename in progress, read from the upstream at
    /// most [`POLICY_REFRESH`] ago. A rename in progress whose collection the upstream has
    /// renamed already (the old name is gone, the new one is there: its proxy stopped
    /// between the two steps) is finished here, by the first proxy that reads it.
    fn policies(&self, database: &str) -> Result<Arc<Catalog>, CommandError> {
        let catalog = self.read_policies(database)?;
        let Some(intent) = catalog.renaming.clone() else {
            return Ok(catalog);
        };
        let forward = |command: &Document| self.forward(command);
        if rename::exists(&forward, database, &intent.from)?
            || !rename::exists(&forward, database, &intent.to)?
        {
            return Ok(catalog);
        }
        self.patterned(database)?
            .finish_rename(&intent)
            .map_err(|failure| patterned::error(&failure))?;
        self.forget_policies(database);
        self.read_policies(database)
    }

    /// The catalog of `database`, read from the upstream at most [`POLICY_REFRESH`] ago.
    fn read_policies(&self, database: &str) -> Result<Arc<Catalog>, CommandError> {
        if let Some(catalog) = self.kept_policies(database) {
            return Ok(catalog);
        }
        let read = Instant::now();
        let reply = self.forward(&doc! {
            "find": POLICY_COLLECTION,
            "filter": { "_id": POLICY_DOCUMENT_ID },
            "limit": 1,
            "singleBatch": true,
            "$db": database,
        })?;
        if !patterned::is_ok(&reply) {
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
        let catalog = declared_patterns(found)
            .and_then(|patterns| {
                Ok(Catalog {
                    patterns,
                    renaming: pending_rename(found)?,
                })
            })
            .map_err(|error| {
                CommandError::new(
                    2,
                    format!("the policy document of database '{database}': {error}"),
                )
            })?;
        let catalog = Arc::new(catalog);
        self.policies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(database.to_owned(), (read, Arc::clone(&catalog)));
        Ok(catalog)
    }

    /// The catalog of `database` read from the upstream at most [`POLICY_REFRESH`] ago, if
    /// one is kept.
    fn kept_policies(&self, database: &str) -> Option<Arc<Catalog>> {
        self.policies
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(database)
            .filter(|(read, _)| read.elapsed() < POLICY_REFRESH)
            .map(|(_, catalog)| Arc::clone(catalog))
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

/// `listCollections` with the pattern layer's bookkeeping collections left out by the
/// upstream: the client's filter, if any, becomes `{ $and: [<filter>, { name: { $nin: [...] } }] }`.
/// Filtering upstream keeps the cursor the upstream's (`batchSize`, `getMore`, `nameOnly`,
/// `authorizedCollections` as the client asked). Side collections stay listed: they are
/// collections of the application's (the seeds name them), with documents a client may read.
///
/// `listDatabases` is left as the upstream answers it: a database that holds nothing but
/// the bookkeeping (every collection of a database with policies dropped) is still listed,
/// as a database whose last collection was dropped is not in MongoDB; hiding it would cost
/// a `listCollections` per database on every `listDatabases`.
fn without_bookkeeping(mut command: Document) -> Document {
    let hidden = doc! { "name": { "$nin": BOOKKEEPING.to_vec() } };
    let filter = match command.get("filter") {
        None | Some(Bson::Null) => hidden,
        Some(Bson::Document(filter)) if filter.is_empty() => hidden,
        Some(Bson::Document(filter)) => doc! { "$and": [filter.clone(), hidden] },
        // Not a document: the upstream refuses it with its own message.
        Some(_) => return command,
    };
    command.insert("filter", filter);
    command
}

/// A read of `system.stored.<base>`, as the upstream reads it: the command on `<base>`,
/// whose own documents are the stored layout. Writes there are refused, as `spillway serve`
/// refuses them.
fn stored_layout(
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
    Ok(command)
}

impl Executor for ProxyExecutor {
    fn execute(&self, command: Document) -> Document {
        let mut reply = self.route(command).unwrap_or_else(|error| error.to_reply());
        self.cluster_time.stamp_unless_there(&mut reply);
        reply
    }

    fn hand_on(&self, command: Document) -> Result<HandedOn, Document> {
        // What `route` does with it, decided from what is kept; a policy read, a
        // transaction the proxy holds or any step of the proxy's own goes to `execute`.
        let command = name_first(command);
        let Some(name) = command.keys().next() else {
            return Err(command);
        };
        let database = command.get_str("$db").unwrap_or("admin");
        let Ok(Some(Routing::Upstream)) = self.routing(name, database, &command, Lookup::Kept)
        else {
            return Err(command);
        };
        let upstream = Arc::clone(&self.upstream);
        let cluster_time = Arc::clone(&self.cluster_time);
        Ok(Box::pin(async move {
            let reply = upstream.run_async(&command).await;
            let mut reply =
                forwarded(&cluster_time, &command, reply).unwrap_or_else(|error| error.to_reply());
            cluster_time.stamp_unless_there(&mut reply);
            reply
        }))
    }

    fn stamp(&self, reply: &mut Document) {
        self.cluster_time.stamp(reply);
    }

    fn reap_expired(&self) {
        self.cursors.reap_expired();
        self.transactions.reap_expired();
    }

    fn command_names(&self) -> &'static [&'static str] {
        Commands::command_names()
    }

    fn database(&self) -> Option<Database> {
        self.users.as_ref().map(|users| users.database().clone())
    }

    fn required_privileges(&self, command: &Document) -> Option<Vec<Privilege>> {
        // The commands are MongoDB's (and the policy commands), as the command layer knows
        // them; what they need does not depend on where the data lives.
        self.users.as_ref()?.required_privileges(command)
    }
}
