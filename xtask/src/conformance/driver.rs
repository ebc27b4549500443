//! A MongoDB driver in miniature over the command layer: each CRUD operation of the driver
//! specifications becomes the command a driver sends (`insertOne` -> `insert` with one
//! document, `updateOne` -> `update` with `multi: false`, `countDocuments` -> `aggregate` with
//! `$match`/`$skip`/`$limit`/`$group`, `find` -> `find` and `getMore`s until the cursor id is
//! 0, `bulkWrite` -> `insert`/`update`/`delete` batches, ...), executed by
//! [`spillway::command::Commands`], and the reply becomes the driver's result or error
//! (`writeErrors`, `code`, `codeName`, `errorLabels`). Sessions carry an `lsid`, a
//! `txnNumber` per transaction and per retryable write, and the transaction fields drivers
//! send (`startTransaction`, `autocommit`); `commitTransaction`/`abortTransaction` go to
//! `admin`.
//!
//! Both conformance runners (CRUD v1 and the unified format) use this one mapping. It must
//! never compare results (the runners do) nor reach into the database behind the command
//! layer: everything goes through [`Commands::execute`], and every command sent is logged as
//! the command-monitoring events a driver would publish.

use std::cell::RefCell;
use std::rc::Rc;

use bson::oid::ObjectId;
use bson::spec::BinarySubtype;
use bson::{Binary, Bson, Document, doc};
use spillway::command::Commands;

/// An operation's failure as a driver reports it.
#[derive(Debug, Clone, Default)]
pub(crate) struct OpError {
    pub(crate) message: String,
    pub(crate) code: Option<i32>,
    pub(crate) code_name: Option<String>,
    pub(crate) labels: Vec<String>,
    /// Raised by the driver before (or instead of) sending a command.
    pub(crate) client: bool,
    /// What a bulk write did before it failed (`BulkWriteError`'s result).
    pub(crate) partial: Option<Box<Bson>>,
    /// The server's reply, for a command error.
    pub(crate) reply: Option<Box<Document>>,
}

impl OpError {
    pub(crate) fn client(message: impl Into<String>) -> OpError {
        OpError {
            message: message.into(),
            client: true,
            ..OpError::default()
        }
    }

    fn from_reply(reply: &Document) -> OpError {
        OpError {
            message: reply
                .get_str("errmsg")
                .unwrap_or("command failed")
                .to_string(),
            code: reply.get_i32("code").ok(),
            code_name: reply.get_str("codeName").ok().map(str::to_string),
            labels: labels(reply),
            client: false,
            partial: None,
            reply: Some(Box::new(reply.clone())),
        }
    }
}

impl std::fmt::Display for OpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.code, &self.code_name) {
            (Some(code), Some(name)) => write!(f, "{name} ({code}): {}", self.message),
            _ if self.client => write!(f, "client error: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

fn labels(reply: &Document) -> Vec<String> {
    reply
        .get_array("errorLabels")
        .map(|labels| {
            labels
                .iter()
                .filter_map(Bson::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// An operation's result in the driver specifications' shape, or its error.
pub(crate) type OpResult = Result<Bson, OpError>;

/// A command as command monitoring publishes it: started, then succeeded or failed.
#[derive(Debug, Clone)]
pub(crate) struct Event {
    pub(crate) name: String,
    pub(crate) database: String,
    pub(crate) command: Document,
    pub(crate) reply: Document,
}

impl Event {
    pub(crate) fn succeeded(&self) -> bool {
        ok(&self.reply)
    }
}

fn ok(reply: &Document) -> bool {
    match reply.get("ok") {
        Some(Bson::Double(value)) => (*value - 1.0).abs() < f64::EPSILON,
        Some(Bson::Int32(value)) => *value == 1,
        Some(Bson::Int64(value)) => *value == 1,
        Some(Bson::Boolean(value)) => *value,
        _ => false,
    }
}

/// Where a session's transaction is, named as the unified format names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TxnState {
    None,
    Starting,
    InProgress,
    Committed,
    Aborted,
}

impl TxnState {
    pub(crate) fn name(self) -> &'static str {
        match self {
            TxnState::None => "none",
            TxnState::Starting => "starting",
            TxnState::InProgress => "in_progress",
            TxnState::Committed => "committed",
            TxnState::Aborted => "aborted",
        }
    }
}

/// A logical session: its `lsid`, its transaction number and state.
#[derive(Debug, Clone)]
pub(crate) struct Session {
    pub(crate) lsid: Document,
    txn_number: i64,
    pub(crate) state: TxnState,
    /// The options of the current transaction (`readConcern`, `writeConcern`,
    /// `readPreference`).
    options: Document,
    /// `defaultTransactionOptions` of the session.
    defaults: Document,
    /// Whether the current transaction sent a command.
    ran: bool,
    /// Causal consistency (on unless the session's options turn it off): reads, and the
    /// first command of a transaction, read after the last operation time seen.
    causal: bool,
    /// The `operationTime` of the last reply to a command of the session.
    operation_time: Option<Bson>,
}

impl Session {
    /// A session with a fresh random `lsid` (a UUID, as drivers generate).
    pub(crate) fn new(defaults: Document, causal: bool) -> Session {
        let mut bytes = ObjectId::new().bytes().to_vec();
        bytes.extend_from_slice(&ObjectId::new().bytes()[8..12]);
        bytes[6] = (bytes[6] & 0x0f) | 0x40;
        bytes[8] = (bytes[8] & 0x3f) | 0x80;
        Session {
            lsid: doc! { "id": Binary { subtype: BinarySubtype::Uuid, bytes } },
            txn_number: 0,
            state: TxnState::None,
            options: Document::new(),
            defaults,
            ran: false,
            causal,
            operation_time: None,
        }
    }

    fn in_transaction(&self) -> bool {
        matches!(self.state, TxnState::Starting | TxnState::InProgress)
    }
}

/// A client: the command layer it talks to and the commands it sent.
#[derive(Debug)]
pub(crate) struct Driver {
    commands: Rc<Commands>,
    events: RefCell<Vec<Event>>,
    /// The concerns of the client, database or collection the next operation runs on
    /// (`readConcern`, `writeConcern`, `readPreference`, and `retryWrites: false`).
    concerns: RefCell<Document>,
}

/// Commands that read with a read concern and a read preference.
const READS: &[&str] = &["find", "aggregate", "count", "distinct"];

/// Commands that write with a write concern.
const WRITES: &[&str] = &[
    "insert",
    "update",
    "delete",
    "findAndModify",
    "create",
    "drop",
    "createIndexes",
    "dropIndexes",
    "renameCollection",
    "dropDatabase",
];

/// A collection as a driver names it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Namespace<'a> {
    pub(crate) database: &'a str,
    pub(crate) collection: &'a str,
}

/// Arguments every operation may carry that are not the command's business.
const NOT_SENT: &[&str] = &["session", "readPreference", "timeoutMS"];

impl Driver {
    pub(crate) fn new(commands: Rc<Commands>) -> Driver {
        Driver {
            commands,
            events: RefCell::new(Vec::new()),
            concerns: RefCell::new(Document::new()),
        }
    }

    /// Sets the concerns the next operations run with (see [`Driver::command`]).
    pub(crate) fn set_concerns(&self, concerns: Document) {
        *self.concerns.borrow_mut() = concerns;
    }

    /// The commands sent so far, oldest first.
    pub(crate) fn events(&self) -> Vec<Event> {
        self.events.borrow().clone()
    }

    /// Sends `command` to `database` with the session fields a driver adds, and returns the
    /// reply of a successful command.
    pub(crate) fn command(
        &self,
        database: &str,
        mut command: Document,
        session: Option<&mut Session>,
        retryable_write: bool,
    ) -> Result<Document, OpError> {
        let name = command.keys().next().cloned().unwrap_or_default();
        let in_transaction = session.as_deref().is_some_and(Session::in_transaction);
        let concerns = self.concerns.borrow().clone();
        let unacknowledged = concerns
            .get_document("writeConcern")
            .is_ok_and(|concern| matches!(concern.get("w"), Some(Bson::Int32(0) | Bson::Int64(0))));
        let retryable_write =
            retryable_write && !unacknowledged && concerns.get_bool("retryWrites").unwrap_or(true);
        let writes =
            WRITES.contains(&name.as_str()) || (name == "aggregate" && writes_out(&command));
        // A driver hands back nothing of an unacknowledged write (w: 0): no result, no error.
        let unacknowledged_write = unacknowledged && writes && !in_transaction;
        if !in_transaction {
            if READS.contains(&name.as_str()) {
                if let Ok(concern) = concerns.get_document("readConcern")
                    && !command.contains_key("readConcern")
                {
                    command.insert("readConcern", concern.clone());
                }
                if let Ok(preference) = concerns.get_document("readPreference")
                    && preference.get_str("mode").unwrap_or("primary") != "primary"
                {
                    command.insert("$readPreference", preference.clone());
                }
            }
            if writes
                && let Ok(concern) = concerns.get_document("writeConcern")
                && !command.contains_key("writeConcern")
            {
                command.insert("writeConcern", concern.clone());
            }
        }
        let after = |session: &Session, command: &mut Document| {
            if let (true, Some(time)) = (session.causal, &session.operation_time) {
                let mut concern = command
                    .get_document("readConcern")
                    .cloned()
                    .unwrap_or_default();
                concern.insert("afterClusterTime", time.clone());
                command.insert("readConcern", concern);
            }
        };
        let mut session = session;
        if let Some(session) = session.as_deref_mut() {
            command.insert("lsid", session.lsid.clone());
            if matches!(session.state, TxnState::Committed | TxnState::Aborted) {
                session.state = TxnState::None;
            }
            match session.state {
                TxnState::Starting => {
                    command.insert("txnNumber", session.txn_number);
                    command.insert("startTransaction", true);
                    command.insert("autocommit", false);
                    if let Ok(read_concern) = session.options.get_document("readConcern") {
                        command.insert("readConcern", read_concern.clone());
                    }
                    after(session, &mut command);
                    command.remove("writeConcern");
                    session.state = TxnState::InProgress;
                    session.ran = true;
                }
                TxnState::InProgress => {
                    command.insert("txnNumber", session.txn_number);
                    command.insert("autocommit", false);
                    command.remove("writeConcern");
                    command.remove("readConcern");
                }
                _ => {
                    if retryable_write {
                        session.txn_number += 1;
                        command.insert("txnNumber", session.txn_number);
                    }
                    // pymongo, whose runner these files are written against, reads after
                    // the session's operation time in every command of a causally
                    // consistent session, writes included.
                    if !matches!(name.as_str(), "getMore" | "killCursors") {
                        after(session, &mut command);
                    }
                }
            }
        }
        command.insert("$db", database);
        let reply = self.commands.execute(command.clone());
        if let (Some(session), Some(time)) = (session, reply.get("operationTime")) {
            session.operation_time = Some(time.clone());
        }
        self.events.borrow_mut().push(Event {
            name,
            database: database.to_string(),
            command,
            reply: reply.clone(),
        });
        if unacknowledged_write {
            return Ok(doc! { "ok": 1 });
        }
        if !ok(&reply) {
            return Err(OpError::from_reply(&reply));
        }
        if let Ok(concern_error) = reply.get_document("writeConcernError") {
            let mut error = OpError::from_reply(concern_error);
            error.labels = labels(&reply);
            error.reply = Some(Box::new(reply.clone()));
            return Err(error);
        }
        Ok(reply)
    }

    /// A command whose cursor is read to its end with `getMore`s.
    fn cursor(
        &self,
        database: &str,
        collection: &str,
        command: Document,
        mut session: Option<&mut Session>,
        batch_size: Option<&Bson>,
    ) -> Result<Vec<Bson>, OpError> {
        let comment = command.get("comment").cloned();
        let reply = self.command(database, command, session.as_deref_mut(), false)?;
        let cursor = reply
            .get_document("cursor")
            .map_err(|_| OpError::client(format!("no cursor in the reply {reply}")))?;
        let mut documents = cursor.get_array("firstBatch").cloned().unwrap_or_default();
        let mut id = cursor.get_i64("id").unwrap_or(0);
        let collection = cursor
            .get_str("ns")
            .ok()
            .and_then(|ns| ns.split_once('.'))
            .map_or(collection.to_string(), |(_, name)| name.to_string());
        while id != 0 {
            let mut get_more = doc! { "getMore": id, "collection": collection.as_str() };
            if let Some(size) = batch_size {
                get_more.insert("batchSize", size.clone());
            }
            if let Some(comment) = &comment {
                get_more.insert("comment", comment.clone());
            }
            let reply = self.command(database, get_more, session.as_deref_mut(), false)?;
            let cursor = reply
                .get_document("cursor")
                .map_err(|_| OpError::client(format!("no cursor in the reply {reply}")))?;
            documents.extend(cursor.get_array("nextBatch").cloned().unwrap_or_default());
            id = cursor.get_i64("id").unwrap_or(0);
        }
        Ok(documents)
    }

    /// Runs the collection operation `name` with the driver specifications' `arguments`.
    #[expect(
        clippy::too_many_lines,
        reason = "one arm per operation of the CRUD specification, side by side"
    )]
    pub(crate) fn collection_operation(
        &self,
        namespace: Namespace<'_>,
        name: &str,
        arguments: &Document,
        session: Option<&mut Session>,
    ) -> OpResult {
        let Namespace {
            database,
            collection,
        } = namespace;
        check_read_preference(name, session.as_deref())?;
        let filter = arguments
            .get_document("filter")
            .cloned()
            .unwrap_or_default();
        match name {
            "insertOne" | "insertMany" | "updateOne" | "updateMany" | "replaceOne"
            | "deleteOne" | "deleteMany" | "bulkWrite" => {
                self.write_operation(namespace, name, arguments, session)
            }
            "find" | "findOne" => {
                let mut command = doc! { "find": collection, "filter": filter };
                copy(
                    arguments,
                    &mut command,
                    &[
                        "sort",
                        "projection",
                        "skip",
                        "hint",
                        "comment",
                        "let",
                        "min",
                        "max",
                        "returnKey",
                        "showRecordId",
                        "allowDiskUse",
                        "maxTimeMS",
                        "noCursorTimeout",
                        "collation",
                        "allowPartialResults",
                    ],
                );
                let limit = integer(arguments.get("limit"));
                if name == "findOne" {
                    command.insert("limit", 1_i64);
                    command.insert("singleBatch", true);
                } else if limit < 0 {
                    command.insert("limit", -limit);
                    command.insert("singleBatch", true);
                } else if limit > 0 {
                    command.insert("limit", limit);
                }
                let batch_size = arguments.get("batchSize");
                if let Some(size) = batch_size {
                    // A batch as large as the limit would leave a cursor open for nothing:
                    // drivers ask for one more.
                    if limit > 0 && integer(Some(size)) == limit {
                        command.insert("batchSize", limit + 1);
                    } else {
                        command.insert("batchSize", size.clone());
                    }
                }
                let found = self.cursor(database, collection, command, session, batch_size)?;
                if name == "findOne" {
                    return Ok(found.into_iter().next().unwrap_or(Bson::Null));
                }
                Ok(Bson::Array(found))
            }
            "countDocuments" | "count" if name == "countDocuments" => {
                let mut pipeline = vec![Bson::Document(doc! { "$match": filter })];
                if let Some(skip) = arguments.get("skip") {
                    pipeline.push(Bson::Document(doc! { "$skip": skip.clone() }));
                }
                if let Some(limit) = arguments.get("limit") {
                    pipeline.push(Bson::Document(doc! { "$limit": limit.clone() }));
                }
                pipeline.push(Bson::Document(
                    doc! { "$group": { "_id": 1, "n": { "$sum": 1 } } },
                ));
                let mut command =
                    doc! { "aggregate": collection, "pipeline": pipeline, "cursor": {} };
                copy(
                    arguments,
                    &mut command,
                    &["hint", "comment", "maxTimeMS", "collation"],
                );
                let found = self.cursor(database, collection, command, session, None)?;
                Ok(found
                    .first()
                    .and_then(Bson::as_document)
                    .and_then(|group| group.get("n").cloned())
                    .unwrap_or(Bson::Int32(0)))
            }
            "count" | "estimatedDocumentCount" => {
                let mut command = doc! { "count": collection };
                if name == "count" {
                    command.insert("query", filter);
                    copy(
                        arguments,
                        &mut command,
                        &["skip", "limit", "hint", "collation"],
                    );
                }
                copy(arguments, &mut command, &["comment", "maxTimeMS"]);
                let reply = self.command(database, command, session, false)?;
                Ok(reply.get("n").cloned().unwrap_or(Bson::Int32(0)))
            }
            "distinct" => {
                let field = arguments
                    .get_str("fieldName")
                    .map_err(|_| OpError::client("distinct needs fieldName"))?;
                let mut command = doc! { "distinct": collection, "key": field, "query": filter };
                copy(
                    arguments,
                    &mut command,
                    &["comment", "maxTimeMS", "collation", "hint"],
                );
                let reply = self.command(database, command, session, false)?;
                Ok(reply
                    .get("values")
                    .cloned()
                    .unwrap_or(Bson::Array(Vec::new())))
            }
            "aggregate" => self.aggregate(database, Bson::from(collection), arguments, session),
            "findOneAndUpdate" | "findOneAndReplace" | "findOneAndDelete" => {
                let mut command = doc! { "findAndModify": collection, "query": filter };
                match name {
                    "findOneAndDelete" => {
                        command.insert("remove", true);
                    }
                    "findOneAndUpdate" => {
                        let update = arguments
                            .get("update")
                            .ok_or_else(|| OpError::client("findOneAndUpdate needs update"))?;
                        check_update(update)?;
                        command.insert("update", update.clone());
                    }
                    _ => {
                        let replacement = arguments.get_document("replacement").map_err(|_| {
                            OpError::client("findOneAndReplace needs a replacement")
                        })?;
                        check_replacement(replacement)?;
                        command.insert("update", replacement.clone());
                    }
                }
                if name != "findOneAndDelete" {
                    command.insert(
                        "new",
                        arguments.get_str("returnDocument").ok() == Some("After"),
                    );
                    copy(
                        arguments,
                        &mut command,
                        &["upsert", "arrayFilters", "bypassDocumentValidation"],
                    );
                }
                if let Some(projection) = arguments.get("projection") {
                    command.insert("fields", projection.clone());
                }
                copy(
                    arguments,
                    &mut command,
                    &["sort", "let", "comment", "hint", "collation", "maxTimeMS"],
                );
                let reply = self.command(database, command, session, true)?;
                Ok(reply.get("value").cloned().unwrap_or(Bson::Null))
            }
            "createIndex" => {
                let keys = arguments
                    .get_document("keys")
                    .map_err(|_| OpError::client("createIndex needs keys"))?;
                let mut index = doc! { "key": keys.clone() };
                let name = match arguments.get_str("name") {
                    Ok(name) => name.to_string(),
                    Err(_) => index_name(keys),
                };
                index.insert("name", name.as_str());
                for (key, value) in arguments {
                    if !matches!(key.as_str(), "keys" | "name" | "session" | "commitQuorum") {
                        index.insert(key, value.clone());
                    }
                }
                let command = doc! { "createIndexes": collection, "indexes": [index] };
                self.command(database, command, session, false)?;
                Ok(Bson::String(name))
            }
            "listIndexes" => {
                let command = doc! { "listIndexes": collection, "cursor": {} };
                Ok(Bson::Array(
                    self.cursor(database, collection, command, session, None)?,
                ))
            }
            "dropIndex" => {
                let index = arguments
                    .get("name")
                    .cloned()
                    .ok_or_else(|| OpError::client("dropIndex needs name"))?;
                self.command(
                    database,
                    doc! { "dropIndexes": collection, "index": index },
                    session,
                    false,
                )?;
                Ok(Bson::Null)
            }
            "dropIndexes" => {
                self.command(
                    database,
                    doc! { "dropIndexes": collection, "index": "*" },
                    session,
                    false,
                )?;
                Ok(Bson::Null)
            }
            "drop" => self.database_operation(
                database,
                "dropCollection",
                &doc! { "collection": collection },
                session,
            ),
            "rename" => {
                let to = arguments
                    .get_str("to")
                    .map_err(|_| OpError::client("rename needs to"))?;
                let mut command = doc! {
                    "renameCollection": format!("{database}.{collection}"),
                    "to": format!("{database}.{to}"),
                };
                copy(arguments, &mut command, &["dropTarget"]);
                self.command("admin", command, session, false)?;
                Ok(Bson::Null)
            }
            other => Err(OpError::client(format!(
                "the runner's driver has no collection operation {other}"
            ))),
        }
    }

    fn aggregate(
        &self,
        database: &str,
        target: Bson,
        arguments: &Document,
        session: Option<&mut Session>,
    ) -> OpResult {
        let pipeline = arguments
            .get_array("pipeline")
            .cloned()
            .map_err(|_| OpError::client("aggregate needs a pipeline"))?;
        let writes = writes_out(&doc! { "pipeline": pipeline.clone() });
        let mut cursor = Document::new();
        let batch_size = arguments.get("batchSize");
        if let Some(size) = batch_size
            && !writes
        {
            cursor.insert("batchSize", size.clone());
        }
        let collection = target.as_str().unwrap_or_default().to_string();
        let mut command = doc! { "aggregate": target, "pipeline": pipeline, "cursor": cursor };
        copy(
            arguments,
            &mut command,
            &[
                "let",
                "allowDiskUse",
                "comment",
                "maxTimeMS",
                "bypassDocumentValidation",
                "hint",
                "collation",
                "readConcern",
                "writeConcern",
            ],
        );
        Ok(Bson::Array(self.cursor(
            database,
            &collection,
            command,
            session,
            batch_size.filter(|_| !writes),
        )?))
    }

    /// Runs the database operation `name`.
    pub(crate) fn database_operation(
        &self,
        database: &str,
        name: &str,
        arguments: &Document,
        session: Option<&mut Session>,
    ) -> OpResult {
        check_read_preference(name, session.as_deref())?;
        match name {
            "aggregate" => self.aggregate(database, Bson::Int32(1), arguments, session),
            "runCommand" => {
                if session.as_deref().is_some_and(Session::in_transaction)
                    && arguments
                        .get_document("readPreference")
                        .is_ok_and(|preference| preference.get_str("mode").ok() != Some("primary"))
                {
                    return Err(OpError::client(
                        "read preference in a transaction must be primary",
                    ));
                }
                let command = arguments
                    .get_document("command")
                    .map_err(|_| OpError::client("runCommand needs command"))?;
                self.command(database, command.clone(), session, false)
                    .map(Bson::Document)
            }
            "createCollection" => {
                let collection = arguments
                    .get_str("collection")
                    .map_err(|_| OpError::client("createCollection needs collection"))?;
                let mut command = doc! { "create": collection };
                for (key, value) in arguments {
                    if key != "collection" && !NOT_SENT.contains(&key.as_str()) {
                        command.insert(key, value.clone());
                    }
                }
                self.command(database, command, session, false)?;
                Ok(Bson::Null)
            }
            "dropCollection" => {
                let collection = arguments
                    .get_str("collection")
                    .map_err(|_| OpError::client("dropCollection needs collection"))?;
                match self.command(database, doc! { "drop": collection }, session, false) {
                    // Drivers ignore NamespaceNotFound when dropping.
                    Err(error) if error.code == Some(26) => Ok(Bson::Null),
                    Err(error) => Err(error),
                    Ok(_) => Ok(Bson::Null),
                }
            }
            "listCollections" | "listCollectionNames" => {
                let mut command = doc! { "listCollections": 1, "cursor": {} };
                copy(arguments, &mut command, &["filter", "nameOnly"]);
                let found =
                    self.cursor(database, "$cmd.listCollections", command, session, None)?;
                if name == "listCollectionNames" {
                    return Ok(Bson::Array(
                        found
                            .iter()
                            .filter_map(Bson::as_document)
                            .filter_map(|entry| entry.get("name").cloned())
                            .collect(),
                    ));
                }
                Ok(Bson::Array(found))
            }
            "dropDatabase" => {
                self.command(database, doc! { "dropDatabase": 1 }, session, false)?;
                Ok(Bson::Null)
            }
            other => Err(OpError::client(format!(
                "the runner's driver has no database operation {other}"
            ))),
        }
    }

    /// Every write operation, as the driver splits it into `insert`, `update` and `delete`
    /// batches (consecutive runs of one kind when ordered, one batch per kind when not), and
    /// its result in the shape of the operation.
    fn write_operation(
        &self,
        namespace: Namespace<'_>,
        name: &str,
        arguments: &Document,
        mut session: Option<&mut Session>,
    ) -> OpResult {
        let (requests, ordered) = match name {
            "bulkWrite" => {
                let requests = arguments
                    .get_array("requests")
                    .map_err(|_| OpError::client("bulkWrite needs requests"))?;
                let requests = requests
                    .iter()
                    .map(|request| {
                        let request = request
                            .as_document()
                            .ok_or_else(|| OpError::client("a request is not a document"))?;
                        // The unified format writes `{insertOne: {...}}`, CRUD v1
                        // `{name: "insertOne", arguments: {...}}`.
                        match (request.get_str("name"), request.get_document("arguments")) {
                            (Ok(name), Ok(arguments)) => Ok((name.to_string(), arguments.clone())),
                            _ => request
                                .iter()
                                .next()
                                .and_then(|(name, arguments)| {
                                    Some((name.clone(), arguments.as_document()?.clone()))
                                })
                                .ok_or_else(|| OpError::client("an empty request")),
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                (requests, ordered(arguments))
            }
            "insertMany" => {
                let documents = arguments
                    .get_array("documents")
                    .map_err(|_| OpError::client("insertMany needs documents"))?;
                let requests = documents
                    .iter()
                    .map(|document| {
                        let document = document
                            .as_document()
                            .ok_or_else(|| OpError::client("insertMany: not a document"))?;
                        Ok((
                            "insertOne".to_string(),
                            doc! { "document": document.clone() },
                        ))
                    })
                    .collect::<Result<Vec<_>, OpError>>()?;
                (requests, ordered(arguments))
            }
            _ => (vec![(name.to_string(), arguments.clone())], true),
        };
        if requests.is_empty() {
            return Err(OpError::client(format!(
                "{name} of no documents or requests"
            )));
        }
        let mut statements = Vec::with_capacity(requests.len());
        for (kind, request) in &requests {
            statements.push(statement(kind, request)?);
        }
        let mut tally = Tally::default();
        let mut first_error: Option<OpError> = None;
        for batch in batches(&statements, ordered) {
            let kind = statements[batch[0]].kind;
            let (command_name, field) = match kind {
                Kind::Insert => ("insert", "documents"),
                Kind::Update => ("update", "updates"),
                Kind::Delete => ("delete", "deletes"),
            };
            let mut command = doc! {
                command_name: namespace.collection,
                field: batch.iter().map(|&i| Bson::Document(statements[i].body.clone())).collect::<Vec<_>>(),
                "ordered": ordered,
            };
            copy(
                arguments,
                &mut command,
                &["bypassDocumentValidation", "let", "comment"],
            );
            let retryable = batch.iter().all(|&i| !statements[i].multi);
            let reply = match self.command(
                namespace.database,
                command,
                session.as_deref_mut(),
                retryable,
            ) {
                Ok(reply) => reply,
                Err(error) => {
                    first_error = Some(error);
                    break;
                }
            };
            let failed = tally.add(kind, &batch, &statements, &reply, ordered);
            if let Some(error) = failed {
                first_error = Some(error);
                if ordered {
                    break;
                }
            }
        }
        let result = tally.result(name);
        match first_error {
            Some(mut error) => {
                error.partial = Some(Box::new(result));
                Err(error)
            }
            None => Ok(result),
        }
    }
}

/// A write statement of a batch.
struct Statement {
    kind: Kind,
    body: Document,
    multi: bool,
    /// The `_id` of an inserted document.
    id: Option<Bson>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Insert,
    Update,
    Delete,
}

fn statement(name: &str, arguments: &Document) -> Result<Statement, OpError> {
    let filter = || {
        arguments
            .get_document("filter")
            .cloned()
            .map_err(|_| OpError::client(format!("{name} needs a filter")))
    };
    match name {
        "insertOne" => {
            let mut document = arguments
                .get_document("document")
                .cloned()
                .map_err(|_| OpError::client("insertOne needs a document"))?;
            let id = if let Some(id) = document.get("_id") {
                id.clone()
            } else {
                // Drivers give a document without `_id` an ObjectId, first.
                let id = Bson::ObjectId(ObjectId::new());
                let mut with_id = doc! { "_id": id.clone() };
                with_id.extend(document);
                document = with_id;
                id
            };
            Ok(Statement {
                kind: Kind::Insert,
                body: document,
                multi: false,
                id: Some(id),
            })
        }
        "updateOne" | "updateMany" | "replaceOne" => {
            let change = if name == "replaceOne" {
                let replacement = arguments
                    .get_document("replacement")
                    .map_err(|_| OpError::client("replaceOne needs a replacement"))?;
                check_replacement(replacement)?;
                Bson::Document(replacement.clone())
            } else {
                let update = arguments
                    .get("update")
                    .ok_or_else(|| OpError::client(format!("{name} needs an update")))?;
                check_update(update)?;
                update.clone()
            };
            let multi = name == "updateMany";
            let mut body = doc! { "q": filter()?, "u": change, "multi": multi };
            copy(
                arguments,
                &mut body,
                &["upsert", "arrayFilters", "hint", "collation", "sort"],
            );
            Ok(Statement {
                kind: Kind::Update,
                body,
                multi,
                id: None,
            })
        }
        "deleteOne" | "deleteMany" => {
            let multi = name == "deleteMany";
            let mut body = doc! { "q": filter()?, "limit": i32::from(!multi) };
            copy(arguments, &mut body, &["hint", "collation"]);
            Ok(Statement {
                kind: Kind::Delete,
                body,
                multi,
                id: None,
            })
        }
        other => Err(OpError::client(format!("unknown write request {other}"))),
    }
}

/// Whether an `aggregate` command's pipeline ends with `$out` or `$merge`.
fn writes_out(command: &Document) -> bool {
    command
        .get_array("pipeline")
        .ok()
        .and_then(|pipeline| pipeline.last())
        .and_then(Bson::as_document)
        .is_some_and(|stage| stage.contains_key("$out") || stage.contains_key("$merge"))
}

/// The statements' positions grouped into the commands a driver sends.
fn batches(statements: &[Statement], ordered: bool) -> Vec<Vec<usize>> {
    let mut batches: Vec<Vec<usize>> = Vec::new();
    if ordered {
        for (position, statement) in statements.iter().enumerate() {
            match batches.last_mut() {
                Some(batch) if statements[batch[0]].kind == statement.kind => batch.push(position),
                _ => batches.push(vec![position]),
            }
        }
    } else {
        for kind in [Kind::Insert, Kind::Update, Kind::Delete] {
            let batch: Vec<usize> = (0..statements.len())
                .filter(|&i| statements[i].kind == kind)
                .collect();
            if !batch.is_empty() {
                batches.push(batch);
            }
        }
    }
    batches
}

/// The counters of a bulk write, as drivers report them.
#[derive(Default)]
struct Tally {
    inserted: i64,
    matched: i64,
    modified: i64,
    deleted: i64,
    inserted_ids: Document,
    upserted_ids: Document,
}

impl Tally {
    /// Adds a batch's reply; returns the first write error, if any.
    fn add(
        &mut self,
        kind: Kind,
        batch: &[usize],
        statements: &[Statement],
        reply: &Document,
        ordered: bool,
    ) -> Option<OpError> {
        let n = integer(reply.get("n"));
        let write_errors: Vec<&Document> = reply
            .get_array("writeErrors")
            .map(|errors| errors.iter().filter_map(Bson::as_document).collect())
            .unwrap_or_default();
        let failed: Vec<usize> = write_errors
            .iter()
            .map(|error| usize::try_from(integer(error.get("index"))).unwrap_or(0))
            .collect();
        match kind {
            Kind::Insert => {
                self.inserted += n;
                let stop = failed.iter().copied().min().unwrap_or(batch.len());
                for (index, &position) in batch.iter().enumerate() {
                    let done = if ordered {
                        index < stop
                    } else {
                        !failed.contains(&index)
                    };
                    if done && let Some(id) = &statements[position].id {
                        self.inserted_ids.insert(position.to_string(), id.clone());
                    }
                }
            }
            Kind::Update => {
                let upserted = reply.get_array("upserted").cloned().unwrap_or_default();
                self.matched += n - upserted.len() as i64;
                self.modified += integer(reply.get("nModified"));
                for entry in upserted.iter().filter_map(Bson::as_document) {
                    let index = usize::try_from(integer(entry.get("index"))).unwrap_or(0);
                    if let (Some(position), Some(id)) = (batch.get(index), entry.get("_id")) {
                        self.upserted_ids.insert(position.to_string(), id.clone());
                    }
                }
            }
            Kind::Delete => self.deleted += n,
        }
        let first = write_errors.first()?;
        let index = usize::try_from(integer(first.get("index"))).unwrap_or(0);
        let mut error = OpError::from_reply(first);
        error.message = format!(
            "write error at statement {}: {}",
            batch.get(index).copied().unwrap_or(index),
            error.message
        );
        error.labels = labels(reply);
        error.reply = Some(Box::new(reply.clone()));
        Some(error)
    }

    /// The result of operation `name`.
    fn result(&self, name: &str) -> Bson {
        let document = match name {
            "insertOne" => doc! {
                "insertedId": self.inserted_ids.get("0").cloned().unwrap_or(Bson::Null),
            },
            "updateOne" | "updateMany" | "replaceOne" => {
                let mut result = doc! {
                    "matchedCount": self.matched,
                    "modifiedCount": self.modified,
                    "upsertedCount": self.upserted_ids.len() as i64,
                };
                if let Some(id) = self.upserted_ids.get("0") {
                    result.insert("upsertedId", id.clone());
                }
                result
            }
            "deleteOne" | "deleteMany" => doc! { "deletedCount": self.deleted },
            _ => doc! {
                "deletedCount": self.deleted,
                "insertedCount": self.inserted,
                "insertedIds": self.inserted_ids.clone(),
                "matchedCount": self.matched,
                "modifiedCount": self.modified,
                "upsertedCount": self.upserted_ids.len() as i64,
                "upsertedIds": self.upserted_ids.clone(),
            },
        };
        Bson::Document(document)
    }
}

/// Drivers refuse an update without operators (or an empty one) before sending it.
fn check_update(update: &Bson) -> Result<(), OpError> {
    match update {
        Bson::Document(update) => match update.keys().next() {
            Some(key) if key.starts_with('$') => Ok(()),
            Some(_) => Err(OpError::client(
                "update document must contain only atomic operators",
            )),
            None => Err(OpError::client("update document must not be empty")),
        },
        Bson::Array(_) => Ok(()),
        _ => Err(OpError::client("update must be a document or a pipeline")),
    }
}

/// Drivers refuse a replacement with operators before sending it.
fn check_replacement(replacement: &Document) -> Result<(), OpError> {
    match replacement.keys().next() {
        Some(key) if key.starts_with('$') => Err(OpError::client(
            "replacement document must not contain atomic operators",
        )),
        _ => Ok(()),
    }
}

/// In a transaction, drivers refuse reads with a read preference other than primary.
fn check_read_preference(operation: &str, session: Option<&Session>) -> Result<(), OpError> {
    let Some(session) = session else {
        return Ok(());
    };
    let reads = matches!(
        operation,
        "runCommand"
            | "find"
            | "findOne"
            | "aggregate"
            | "distinct"
            | "countDocuments"
            | "count"
            | "estimatedDocumentCount"
    );
    let mode = session
        .options
        .get_document("readPreference")
        .ok()
        .and_then(|preference| preference.get_str("mode").ok())
        .unwrap_or("primary");
    if reads && session.in_transaction() && mode != "primary" {
        return Err(OpError::client(
            "read preference in a transaction must be primary",
        ));
    }
    Ok(())
}

/// The index name drivers generate: `a_1_b_-1`.
fn index_name(keys: &Document) -> String {
    keys.iter()
        .map(|(key, value)| {
            let value = match value {
                Bson::String(text) => text.clone(),
                other => integer(Some(other)).to_string(),
            };
            format!("{key}_{value}")
        })
        .collect::<Vec<_>>()
        .join("_")
}

fn ordered(arguments: &Document) -> bool {
    arguments
        .get_bool("ordered")
        .or_else(|_| {
            arguments
                .get_document("options")
                .and_then(|options| options.get_bool("ordered"))
        })
        .unwrap_or(true)
}

fn copy(from: &Document, to: &mut Document, keys: &[&str]) {
    for key in keys {
        if let Some(value) = from.get(*key) {
            to.insert(*key, value.clone());
        }
    }
}

/// An integer argument or reply field, whichever numeric type carries it.
pub(crate) fn integer(value: Option<&Bson>) -> i64 {
    match value {
        Some(Bson::Int32(value)) => i64::from(*value),
        Some(Bson::Int64(value)) => *value,
        #[expect(
            clippy::cast_possible_truncation,
            reason = "test files write counts as doubles at times"
        )]
        Some(Bson::Double(value)) => *value as i64,
        _ => 0,
    }
}

/// The session operations: starting, committing and aborting transactions.
impl Driver {
    /// `startTransaction`: no command is sent until the first operation.
    pub(crate) fn start_transaction(
        session: &mut Session,
        options: &Document,
    ) -> Result<(), OpError> {
        if session.in_transaction() {
            return Err(OpError::client("Transaction already in progress"));
        }
        let mut merged = session.defaults.clone();
        merged.extend(options.clone());
        merged.remove("retryWrites");
        if let Ok(concern) = merged.get_document("writeConcern")
            && matches!(concern.get("w"), Some(Bson::Int32(0) | Bson::Int64(0)))
        {
            return Err(OpError::client(
                "transactions do not support unacknowledged write concern",
            ));
        }
        session.options = merged;
        session.ran = false;
        session.txn_number += 1;
        session.state = TxnState::Starting;
        Ok(())
    }

    /// `commitTransaction`, sent to `admin` once the transaction has run an operation.
    pub(crate) fn commit_transaction(&self, session: &mut Session) -> Result<(), OpError> {
        match session.state {
            TxnState::None => return Err(OpError::client("No transaction started")),
            TxnState::Aborted => {
                return Err(OpError::client(
                    "Cannot call commitTransaction after calling abortTransaction",
                ));
            }
            TxnState::Starting => {
                session.state = TxnState::Committed;
                return Ok(());
            }
            TxnState::Committed if !session.ran => return Ok(()),
            TxnState::InProgress | TxnState::Committed => {}
        }
        let mut command = doc! {
            "commitTransaction": 1,
            "lsid": session.lsid.clone(),
            "txnNumber": session.txn_number,
            "autocommit": false,
        };
        let retried = session.state == TxnState::Committed;
        let mut concern = session
            .options
            .get_document("writeConcern")
            .cloned()
            .unwrap_or_default();
        if retried {
            // A commit run again is sent with w: "majority" and a 10 s wtimeout.
            concern.insert("w", "majority");
            concern.insert("wtimeout", 10_000);
        }
        if !concern.is_empty() {
            command.insert("writeConcern", concern);
        }
        if let Some(time) = session.options.get("maxCommitTimeMS") {
            command.insert("maxTimeMS", time.clone());
        }
        session.state = TxnState::Committed;
        self.command("admin", command, None, false).map(|_| ())
    }

    /// `abortTransaction`, sent to `admin` once the transaction has run an operation; its
    /// errors are ignored, as drivers do.
    pub(crate) fn abort_transaction(&self, session: &mut Session) -> Result<(), OpError> {
        match session.state {
            TxnState::None => return Err(OpError::client("No transaction started")),
            TxnState::Committed => {
                return Err(OpError::client(
                    "Cannot call abortTransaction after calling commitTransaction",
                ));
            }
            TxnState::Aborted => {
                return Err(OpError::client("Cannot call abortTransaction twice"));
            }
            TxnState::Starting => {
                session.state = TxnState::Aborted;
                return Ok(());
            }
            TxnState::InProgress => {}
        }
        let mut command = doc! {
            "abortTransaction": 1,
            "lsid": session.lsid.clone(),
            "txnNumber": session.txn_number,
            "autocommit": false,
        };
        if let Ok(concern) = session.options.get_document("writeConcern") {
            command.insert("writeConcern", concern.clone());
        }
        session.state = TxnState::Aborted;
        let _ignored = self.command("admin", command, None, false);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use spillway::Database;

    fn driver() -> Driver {
        Driver::new(Rc::new(Commands::new(
            Database::open_in_memory().expect("in-memory database"),
        )))
    }

    const NS: Namespace<'static> = Namespace {
        database: "db",
        collection: "books",
    };

    /// The commands a driver sends for CRUD operations, and the results read from replies.
    #[test]
    fn operations_become_the_commands_a_driver_sends() {
        let driver = driver();
        let inserted = driver
            .collection_operation(NS, "insertOne", &doc! { "document": { "x": 1 } }, None)
            .unwrap();
        let id = inserted.as_document().unwrap().get("insertedId").unwrap();
        assert!(matches!(id, Bson::ObjectId(_)), "the driver gives an _id");
        driver
            .collection_operation(
                NS,
                "bulkWrite",
                &doc! { "requests": [
                    { "insertOne": { "document": { "_id": 2, "x": 2 } } },
                    { "updateMany": { "filter": {}, "update": { "$inc": { "x": 1 } } } },
                    { "insertOne": { "document": { "_id": 3 } } },
                ], "ordered": false },
                None,
            )
            .unwrap();
        let count = driver
            .collection_operation(NS, "countDocuments", &doc! { "filter": {} }, None)
            .unwrap();
        assert_eq!(integer(Some(&count)), 3);
        let names: Vec<String> = driver.events().into_iter().map(|e| e.name).collect();
        // Unordered: the inserts in one batch, then the update; countDocuments is an aggregate.
        assert_eq!(names, ["insert", "insert", "update", "aggregate"]);
        let events = driver.events();
        assert_eq!(
            events[1].command.get_array("documents").unwrap().len(),
            2,
            "{:?}",
            events[1].command
        );
        let error = driver
            .collection_operation(NS, "insertOne", &doc! { "document": { "_id": 2 } }, None)
            .unwrap_err();
        assert_eq!(error.code, Some(11000), "{error}");
        let error = driver
            .collection_operation(
                NS,
                "updateOne",
                &doc! { "filter": {}, "update": { "x": 1 } },
                None,
            )
            .unwrap_err();
        assert!(
            error.client,
            "a replacement as an update is refused by the driver"
        );
    }

    /// A transaction's commands carry `lsid`, `txnNumber`, `startTransaction` on the first and
    /// `autocommit: false` on all; the commit goes to `admin`; the next transaction has the
    /// next number.
    #[test]
    fn sessions_send_the_transaction_fields() {
        let driver = driver();
        let mut session = Session::new(Document::new(), true);
        Driver::start_transaction(&mut session, &Document::new()).unwrap();
        let _ = driver.collection_operation(
            NS,
            "insertOne",
            &doc! { "document": { "_id": 1 } },
            Some(&mut session),
        );
        let _ = driver.collection_operation(NS, "find", &doc! { "filter": {} }, Some(&mut session));
        let _ = driver.commit_transaction(&mut session);
        assert_eq!(session.state, TxnState::Committed);
        Driver::start_transaction(&mut session, &Document::new()).unwrap();
        assert_eq!(session.state, TxnState::Starting);
        let events = driver.events();
        let first = &events[0].command;
        assert_eq!(first.get_document("lsid").unwrap(), &session.lsid);
        assert_eq!(first.get_i64("txnNumber").unwrap(), 1);
        assert!(first.get_bool("startTransaction").unwrap());
        assert!(!first.get_bool("autocommit").unwrap());
        let commit = events.iter().find(|e| e.name == "commitTransaction");
        if let Some(commit) = commit {
            assert_eq!(commit.database, "admin");
            assert_eq!(commit.command.get_i64("txnNumber").unwrap(), 1);
        }
        assert_eq!(session.txn_number, 2);
        assert!(
            driver.abort_transaction(&mut session).is_ok(),
            "aborting a transaction that sent nothing sends nothing"
        );
        assert!(driver.abort_transaction(&mut session).unwrap_err().client);
    }
}
