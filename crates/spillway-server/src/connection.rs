//! One client connection: read a message within the limits (`read.rs`: header first, its
//! length checked before the body is allocated, tighter limits before authentication),
//! decode it (its nesting checked before anything recursive reads it), answer it
//! (server-level commands here, every other command on the blocking pool through the command
//! layer), write the reply unless `moreToCome` said not to.
//!
//! A message that cannot be decoded, a stalled or idle client, closes this connection with one
//! log line on stderr naming the peer and the problem; a message nested too deep is answered
//! with `Overflow` (15) and the connection goes on; nothing here may panic or stop the
//! server. The command layer's own panics come back as an InternalError reply.

use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use bson::{Bson, Document, doc};
use spillway::command::Commands;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::watch;

use crate::auth::{self, AuthState};
use crate::error::WireError;
use crate::executor::{Executor, HandedOn};
use crate::failpoint::Action;
use crate::read::{ReadError, ReadLimits, Received, read_message};
use crate::state::{ConnectionInfo, ServerState};
use crate::wire::{self, Request};
use crate::{admin, handshake};
use crate::{authorization, users};

/// Serves one connection until the client closes it, a message is malformed, or the server
/// stops (`stop` becomes true; a command in flight finishes and its reply goes out first).
pub(crate) async fn serve<S>(
    mut stream: S,
    connection: ConnectionInfo,
    state: &ServerState,
    commands: &Arc<dyn Executor>,
    stop: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    serve_messages(&mut stream, connection, state, commands, stop).await;
    // A clean end: TLS's close_notify, or TCP's FIN, rather than a bare drop.
    let _ = tokio::time::timeout(Duration::from_secs(1), stream.shutdown()).await;
}

async fn serve_messages<S>(
    stream: &mut S,
    connection: ConnectionInfo,
    state: &ServerState,
    commands: &Arc<dyn Executor>,
    mut stop: watch::Receiver<bool>,
) where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let served = Served {
        state,
        connection: &connection,
        commands,
        write_timeout: state.options.limits.message_timeout,
    };
    let peer = connection.peer;
    let mut client = ClientState::default();
    loop {
        let before_auth = !client.authenticated(state.options.auth);
        let limits = read_limits(state, before_auth);
        let read = tokio::select! {
            read = read_message(stream, limits, &state.budget) => read,
            _ = stop.wait_for(|stopped| *stopped) => return,
        };
        let Received {
            header,
            bytes,
            budget: _held_until_answered,
        } = match read {
            Ok(received) => received,
            Err(error) => {
                log_read_error(&peer, &error, before_auth);
                return;
            }
        };
        state.counters.count_request(bytes.len());
        let decoded = wire::decode_message_with_depth(&bytes, state.options.limits.max_bson_depth);
        let outcome = match decoded {
            Ok(Request::Msg(message)) => {
                drop(bytes);
                served
                    .answer_msg(stream, message, header.request_id, &mut stop, &mut client)
                    .await
            }
            Ok(Request::Query(query)) => {
                drop(bytes);
                served
                    .answer_query(&query, header.request_id, &mut stop, &mut client)
                    .await
            }
            Err(error @ WireError::TooDeep { .. }) => {
                refuse_too_deep(state, &header, &bytes, &error)
            }
            Err(error) => {
                eprintln!("spillway serve: {peer}: closing the connection: {error}");
                Outcome::Close
            }
        };
        match outcome {
            Outcome::Reply(reply) => {
                state.counters.count_reply(reply.len());
                if let Err(error) = write_reply(stream, &reply, served.write_timeout).await {
                    log_write_error(&peer, &error);
                    return;
                }
            }
            Outcome::Answered => {}
            Outcome::Close => return,
        }
    }
}

/// What answering one message leaves to do.
enum Outcome {
    /// Send this encoded reply.
    Reply(Vec<u8>),
    /// Nothing to send: the client asked for no reply (`moreToCome`), or the replies went out
    /// already (an exhaust cursor's stream).
    Answered,
    /// Close the connection.
    Close,
}

/// A message well framed but nested deeper than `maxBSONDepth`: refused with `Overflow`, and
/// the connection goes on.
fn refuse_too_deep(
    state: &ServerState,
    header: &wire::Header,
    bytes: &[u8],
    error: &WireError,
) -> Outcome {
    let more_to_come =
        wire::op_msg_flags(bytes).is_some_and(|flags| flags & wire::FLAG_MORE_TO_COME != 0);
    if more_to_come {
        return Outcome::Answered;
    }
    let refusal = too_deep(error);
    Outcome::Reply(if header.op_code == wire::OP_QUERY {
        wire::encode_op_reply(state.next_request_id(), header.request_id, &refusal)
    } else {
        wire::encode_reply(state.next_request_id(), header.request_id, &refusal)
    })
}

/// What answering any message of a connection needs.
struct Served<'a> {
    state: &'a ServerState,
    connection: &'a ConnectionInfo,
    commands: &'a Arc<dyn Executor>,
    /// How long one reply may take to send.
    write_timeout: Duration,
}

impl Served<'_> {
    /// An OP_MSG: its command run; a `getMore` of a client that allows exhaust streams every
    /// batch that follows.
    async fn answer_msg<S>(
        &self,
        stream: &mut S,
        message: wire::OpMsg,
        request_id: i32,
        stop: &mut watch::Receiver<bool>,
        client: &mut ClientState,
    ) -> Outcome
    where
        S: AsyncWrite + Unpin,
    {
        let more_to_come = message.more_to_come();
        let exhaust_allowed = message.flags & wire::FLAG_EXHAUST_ALLOWED != 0;
        let command = match message.into_command() {
            Ok(command) => command,
            Err(error) => {
                let peer = self.connection.peer;
                eprintln!("spillway serve: {peer}: closing the connection: {error}");
                return Outcome::Close;
            }
        };
        // A getMore of a client that allows exhaust is kept, to be run again for each batch
        // the server then streams.
        let exhaust_get_more = (exhaust_allowed
            && command.keys().next().is_some_and(|name| name == "getMore"))
        .then(|| command.clone());
        let Some(reply) = self.run_command(command, stop, client).await else {
            // A fail point closes the connection without a reply.
            return Outcome::Close;
        };
        if more_to_come {
            return Outcome::Answered;
        }
        if let Some(get_more) = exhaust_get_more {
            return match self
                .stream_exhaust(stream, get_more, request_id, reply, stop, client)
                .await
            {
                Ok(()) => Outcome::Answered,
                Err(()) => Outcome::Close,
            };
        }
        Outcome::Reply(wire::encode_reply(
            self.state.next_request_id(),
            request_id,
            &reply,
        ))
    }

    /// An OP_QUERY: only a driver's first `hello`/`isMaster` is answered; every other legacy
    /// message gets MongoDB's refusal.
    async fn answer_query(
        &self,
        query: &wire::OpQuery,
        request_id: i32,
        stop: &mut watch::Receiver<bool>,
        client: &mut ClientState,
    ) -> Outcome {
        let reply = match query.command_database() {
            Some(database) => {
                let mut command = query.command();
                let name = command.keys().next().cloned().unwrap_or_default();
                if matches!(name.as_str(), "hello" | "isMaster" | "ismaster") {
                    command.insert("$db", database);
                    let Some(reply) = self.run_command(command, stop, client).await else {
                        return Outcome::Close;
                    };
                    reply
                } else {
                    unsupported_op_query(&format!(
                        "Unsupported OP_QUERY command: {name}. The client driver may require an upgrade. \
                         OP_QUERY only carries the first hello/isMaster; use OP_MSG"
                    ))
                }
            }
            None => unsupported_op_query(&format!(
                "OP_QUERY on {} is not supported: legacy reads were removed in MongoDB 6.0; use OP_MSG",
                query.full_collection_name
            )),
        };
        Outcome::Reply(wire::encode_op_reply(
            self.state.next_request_id(),
            request_id,
            &reply,
        ))
    }

    /// [`run_command`] for this connection.
    async fn run_command(
        &self,
        command: Document,
        stop: &mut watch::Receiver<bool>,
        client: &mut ClientState,
    ) -> Option<Document> {
        run_command(
            command,
            self.state,
            self.connection,
            self.commands,
            stop,
            client,
        )
        .await
    }

    /// An exhaust cursor's stream: after a `getMore` whose message allowed exhaust
    /// (`exhaustAllowed`), the server sends `first` and every following batch unasked, each
    /// reply flagged `moreToCome` and answering the previous reply, until the cursor is
    /// exhausted or fails. An error means the connection must close.
    async fn stream_exhaust<S>(
        &self,
        stream: &mut S,
        get_more: Document,
        request_id: i32,
        first: Document,
        stop: &mut watch::Receiver<bool>,
        client: &mut ClientState,
    ) -> Result<(), ()>
    where
        S: AsyncWrite + Unpin,
    {
        let mut reply = first;
        let mut response_to = request_id;
        loop {
            let open = reply
                .get_document("cursor")
                .and_then(|cursor| cursor.get_i64("id"))
                .is_ok_and(|id| id != 0);
            let id = self.state.next_request_id();
            let flags = if open { wire::FLAG_MORE_TO_COME } else { 0 };
            let bytes = wire::encode_reply_with_flags(id, response_to, flags, &reply);
            self.state.counters.count_reply(bytes.len());
            if let Err(error) = write_reply(stream, &bytes, self.write_timeout).await {
                log_write_error(&self.connection.peer, &error);
                return Err(());
            }
            if !open {
                return Ok(());
            }
            response_to = id;
            let Some(next) = self.run_command(get_more.clone(), stop, client).await else {
                return Err(());
            };
            reply = next;
        }
    }
}

/// The limits of the next read: the server's, or with `--auth` before the connection has
/// logged in, the smaller message size and the auth timeout as idle and message timeouts.
fn read_limits(state: &ServerState, before_auth: bool) -> ReadLimits {
    let limits = &state.options.limits;
    let mut read = ReadLimits {
        idle: state.options.idle_timeout,
        max_message_size: limits.max_message_size,
        message_timeout: limits.message_timeout,
    };
    if before_auth {
        read.idle = Some(
            read.idle
                .map_or(limits.auth_timeout, |idle| idle.min(limits.auth_timeout)),
        );
        read.max_message_size = read
            .max_message_size
            .min(limits.max_message_size_before_auth);
        read.message_timeout = read.message_timeout.min(limits.auth_timeout);
    }
    read
}

/// The one log line of a connection that stops reading (none for a client that went away).
fn log_read_error(peer: &std::net::SocketAddr, error: &ReadError, before_auth: bool) {
    let unauthenticated = if before_auth {
        " before authentication"
    } else {
        ""
    };
    let why = match error {
        ReadError::Closed => return,
        ReadError::Io(error) if is_disconnect(error) => return,
        ReadError::Idle(timeout) => {
            format!("idle for {} s{unauthenticated}", timeout.as_secs_f64())
        }
        ReadError::Stalled {
            timeout,
            waiting_for_budget: false,
        } => format!(
            "a message did not arrive whole within {} s{unauthenticated}",
            timeout.as_secs_f64()
        ),
        ReadError::Stalled {
            timeout,
            waiting_for_budget: true,
        } => format!(
            "a message waited {} s for room in the buffer budget shared by all connections \
             (--max-buffered-bytes)",
            timeout.as_secs_f64()
        ),
        ReadError::OverBudget { length, budget } => format!(
            "message length {length} can never fit the buffer budget of {budget} bytes \
             (--max-buffered-bytes)"
        ),
        ReadError::Io(error) => error.to_string(),
        ReadError::Wire(error) => format!("{error}{unauthenticated}"),
    };
    eprintln!("spillway serve: {peer}: closing the connection: {why}");
}

fn log_write_error(peer: &std::net::SocketAddr, error: &std::io::Error) {
    if !is_disconnect(error) {
        eprintln!("spillway serve: {peer}: closing the connection: cannot send a reply: {error}");
    }
}

/// MongoDB's answer to a command nested deeper than `maxBSONDepth`.
fn too_deep(error: &WireError) -> Document {
    doc! {
        "ok": 0.0,
        "errmsg": error.to_string(),
        "code": 15,
        "codeName": "Overflow",
    }
}

/// What a connection remembers about its client between commands.
#[derive(Default)]
struct ClientState {
    /// Who logged in.
    auth: AuthState,
    /// `client.application.name` of the handshake, which fail points may match.
    app_name: Option<String>,
}

impl ClientState {
    /// Whether the connection may use the limits of a logged-in client: always without
    /// `--auth`.
    fn authenticated(&self, auth_required: bool) -> bool {
        !auth_required || !self.auth.users.is_empty()
    }
}

/// Answers one command, or `None` when a fail point closes the connection without a reply.
/// With `--enable-test-commands` the fail points act first (see `failpoint.rs`); then
/// [`answer`] runs it.
async fn run_command(
    command: Document,
    state: &ServerState,
    connection: &ConnectionInfo,
    commands: &Arc<dyn Executor>,
    stop: &mut watch::Receiver<bool>,
    client: &mut ClientState,
) -> Option<Document> {
    state.counters.count_command(&command);
    let name = command.keys().next().cloned().unwrap_or_default();
    if client.app_name.is_none() && matches!(name.as_str(), "hello" | "isMaster" | "ismaster") {
        client.app_name = command
            .get_document("client")
            .and_then(|metadata| metadata.get_document("application"))
            .and_then(|application| application.get_str("name"))
            .ok()
            .map(str::to_owned);
    }
    if !state.options.enable_test_commands {
        return Some(answer(command, state, connection, commands, stop, &mut client.auth).await);
    }
    let injection = state
        .fail_points
        .before(&name, &command, client.app_name.as_deref());
    let Some(injection) = injection else {
        let kept = command.clone();
        let reply = answer(command, state, connection, commands, stop, &mut client.auth).await;
        state.fail_points.after(&name, &kept, &reply);
        return Some(reply);
    };
    if let Some(delay) = injection.delay {
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            _ = stop.wait_for(|stopped| *stopped) => {}
        }
    }
    let kept = command.clone();
    let mut reply = match injection.action {
        Action::Close => return None,
        Action::Fail(reply) => reply,
        Action::RunThenClose => {
            let reply = answer(command, state, connection, commands, stop, &mut client.auth).await;
            state.fail_points.after(&name, &kept, &reply);
            return None;
        }
        Action::RunWithWriteConcernError(error) => {
            let mut reply =
                answer(command, state, connection, commands, stop, &mut client.auth).await;
            reply.insert("writeConcernError", error);
            reply
        }
        Action::Run => answer(command, state, connection, commands, stop, &mut client.auth).await,
        Action::FailAfterCheckout(error) => {
            // The checkout: the cursor exists only if killing it finds it; a failed getMore
            // leaves no cursor behind, as in MongoDB.
            let id = kept.get("getMore").cloned().unwrap_or(Bson::Null);
            let kill = doc! {
                "killCursors": kept.get("collection").cloned().unwrap_or(Bson::Null),
                "cursors": [id.clone()],
                "$db": kept.get("$db").cloned().unwrap_or(Bson::Null),
            };
            let killed = answer(kill, state, connection, commands, stop, &mut client.auth).await;
            let checked_out = killed
                .get_array("cursorsKilled")
                .is_ok_and(|killed| killed.contains(&id));
            if checked_out {
                error
            } else {
                answer(command, state, connection, commands, stop, &mut client.auth).await
            }
        }
    };
    state.fail_points.after(&name, &kept, &reply);
    match injection.labels {
        // The fail point's labels replace the ones the server computes, as MongoDB's do.
        Some(labels) if labels.is_empty() => {
            reply.remove("errorLabels");
        }
        Some(labels) => {
            reply.insert("errorLabels", labels);
        }
        None => spillway::command::add_error_labels(&kept, &mut reply),
    }
    Some(reply)
}

/// Answers one command: `--auth`'s gate first, then the user and authentication commands,
/// the server-level ones here (an awaitable `hello` waits first), the rest through the
/// command layer on the blocking pool.
async fn answer(
    command: Document,
    state: &ServerState,
    connection: &ConnectionInfo,
    commands: &Arc<dyn Executor>,
    stop: &mut watch::Receiver<bool>,
    auth_state: &mut AuthState,
) -> Document {
    let name = command.keys().next().cloned().unwrap_or_default();
    if !matches!(command.get("$db"), Some(Bson::String(_))) {
        return doc! {
            "ok": 0.0,
            "errmsg": "OP_MSG requests require a $db argument",
            "code": 40571,
            "codeName": "Location40571",
        };
    }
    if let Some(refusal) = Commands::api_refusal(&command) {
        return refusal;
    }
    let database = commands.database();
    if !auth::allowed(&name, auth_state, state.options.auth) {
        // MongoDB's localhost exception: the first user may be created from loopback.
        let first_user = name == "createUser"
            && connection.peer.ip().is_loopback()
            && match &database {
                Some(database) => {
                    let database = database.clone();
                    !blocking(move || auth::any_user(&database))
                        .await
                        .unwrap_or(true)
                }
                None => false,
            };
        if !first_user {
            return auth::unauthorized(&name);
        }
    }
    if state.options.auth && !auth_state.users.is_empty() {
        if let Some(database) = database
            .clone()
            .filter(|_| authorization::stale(auth_state))
        {
            let users = auth_state.users.clone();
            match blocking(move || authorization::resolve(&database, &users)).await {
                Ok(grants) => auth_state.grants = Some(grants),
                Err(problem) => return internal_error(connection, "resolving roles", &problem),
            }
        }
        if let Some(refused) = authorization::decide(commands.as_ref(), &command, auth_state) {
            return refused;
        }
    }
    let is_auth_command = matches!(name.as_str(), "saslStart" | "saslContinue")
        || users::USER_COMMANDS.contains(&name.as_str());
    if let Some(database) = database.clone().filter(|_| is_auth_command) {
        let mut moved = std::mem::take(auth_state);
        let answered = blocking(move || {
            let reply = match name.as_str() {
                "saslStart" => auth::sasl_start(&database, &command, &mut moved),
                "saslContinue" => auth::sasl_continue(&command, &mut moved),
                _ => users::answer(&database, &name, &command),
            };
            (reply, moved)
        })
        .await;
        return match answered {
            Ok((reply, moved)) => {
                *auth_state = moved;
                reply
            }
            Err(problem) => internal_error(connection, "an authentication command", &problem),
        };
    }
    if name == "logout" {
        auth_state.log_out();
        return doc! { "ok": 1.0 };
    }
    if name == "configureFailPoint" && state.options.enable_test_commands {
        return state.fail_points.configure(&command);
    }
    let is_hello = matches!(name.as_str(), "hello" | "isMaster" | "ismaster");
    if let Some(wait) = is_hello
        .then(|| handshake::await_time(&command, state))
        .flatten()
    {
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            _ = stop.wait_for(|stopped| *stopped) => {}
        }
    }
    if let Some(mut reply) = admin::answer(
        &name,
        &command,
        state,
        connection,
        commands.as_ref(),
        auth_state,
    ) {
        if let (true, Ok(speculative), Some(database)) = (
            is_hello,
            command.get_document("speculativeAuthenticate"),
            database.clone(),
        ) {
            // The first SCRAM step inside the handshake (MongoDB 4.4's speculative
            // authentication): the client continues with `saslContinue` only.
            let speculative = auth::speculative_start(speculative);
            let mut moved = std::mem::take(auth_state);
            if let Ok((started, moved)) = blocking(move || {
                let started =
                    speculative.map(|start| auth::sasl_start(&database, &start, &mut moved));
                (started, moved)
            })
            .await
            {
                *auth_state = moved;
                if let Some(mut started) =
                    started.filter(|reply| reply.get_f64("ok").is_ok_and(|ok| ok > 0.5))
                {
                    started.remove("ok");
                    reply.insert("speculativeAuthenticate", started);
                }
            }
        }
        if let (true, Ok(qualified), Some(database)) =
            (is_hello, command.get_str("saslSupportedMechs"), database)
        {
            let qualified = qualified.to_owned();
            if let Ok(Some(mechanisms)) =
                blocking(move || auth::supported_mechanisms(&database, &qualified)).await
            {
                reply.insert("saslSupportedMechs", mechanisms);
            }
        }
        // A replica set member gossips the cluster time in every reply, its own commands'
        // (`hello`, `ping`, `buildInfo`...) included.
        commands.stamp(&mut reply);
        return reply;
    }
    let list_databases = (state.options.auth && name == "listDatabases").then(|| command.clone());
    let answered = match commands.hand_on(command) {
        Ok(reply) => handed_on(reply).await,
        Err(command) => {
            let layer = Arc::clone(commands);
            blocking(move || layer.execute(command)).await
        }
    };
    match answered {
        Ok(mut reply) => {
            if let Some(command) = list_databases {
                authorization::filter_databases(&command, auth_state, &mut reply);
            }
            reply
        }
        Err(problem) => internal_error(connection, &format!("command '{name}'"), &problem),
    }
}

/// Runs `work`, which may block, without stalling the runtime: on a multi-threaded runtime
/// in place on this worker thread (`block_in_place` hands the worker's other tasks to another
/// thread first), which saves the two thread switches of a round trip through the blocking
/// pool, the largest part of a short command's cost; on a current-thread runtime (tests) on
/// the blocking pool. A panic comes back as its message.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    use tokio::runtime::{Handle, RuntimeFlavor};
    if Handle::current().runtime_flavor() == RuntimeFlavor::MultiThread {
        tokio::task::block_in_place(|| std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)))
            .map_err(|payload| panic_payload_message(payload.as_ref()))
    } else {
        tokio::task::spawn_blocking(work)
            .await
            .map_err(panic_message)
    }
}

/// Awaits the reply of a command the executor handed on; a panic comes back as its message,
/// as from [`blocking`].
async fn handed_on(mut reply: HandedOn) -> Result<Document, String> {
    std::future::poll_fn(|context| {
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            reply.as_mut().poll(context)
        })) {
            Ok(Poll::Ready(reply)) => Poll::Ready(Ok(reply)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(payload) => Poll::Ready(Err(panic_payload_message(payload.as_ref()))),
        }
    })
    .await
}

fn internal_error(connection: &ConnectionInfo, what: &str, problem: &str) -> Document {
    eprintln!(
        "spillway serve: {}: {what} failed inside the command layer: {problem}",
        connection.peer
    );
    doc! {
        "ok": 0.0,
        "errmsg": format!("internal error in {what}: {problem}"),
        "code": 1,
        "codeName": "InternalError",
    }
}

fn unsupported_op_query(message: &str) -> Document {
    doc! {
        "$err": message,
        "errmsg": message,
        "code": 352,
        "codeName": "UnsupportedOpQueryCommand",
        "ok": 0.0,
    }
}

fn panic_message(error: tokio::task::JoinError) -> String {
    if !error.is_panic() {
        return error.to_string();
    }
    panic_payload_message(error.into_panic().as_ref())
}

fn panic_payload_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<&str>() {
        format!("panic: {message}")
    } else if let Some(message) = payload.downcast_ref::<String>() {
        format!("panic: {message}")
    } else {
        "panic".to_owned()
    }
}

/// Writes a reply, which the client must take within `timeout`.
async fn write_reply<S>(stream: &mut S, reply: &[u8], timeout: Duration) -> std::io::Result<()>
where
    S: AsyncWrite + Unpin,
{
    let write = async {
        stream.write_all(reply).await?;
        stream.flush().await
    };
    tokio::time::timeout(timeout, write).await.map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            format!(
                "the client took no reply within {} s",
                timeout.as_secs_f64()
            ),
        )
    })?
}

/// The client went away: not worth a log line.
fn is_disconnect(error: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::ConnectionReset | ErrorKind::BrokenPipe | ErrorKind::ConnectionAborted
    )
}
