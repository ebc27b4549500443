//! The server: the listening socket and its accept loop, the connection limit, the ticker that
//! reaps idle cursors and transactions, and the clean shutdown (stop accepting, let in-flight
//! commands finish, then drop the command layer so that the store closes and checkpoints).
//!
//! This module must never decode messages or run commands itself: connections do
//! (`connection.rs`).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use spillway::Database;
use spillway::command::Commands;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;

use crate::connection;
use crate::error::ServerError;
use crate::executor::Executor;
use crate::state::{ConnectionInfo, ServerOptions, ServerState};
use crate::tls;

/// A client must finish its TLS handshake within this time.
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A bound server, ready to run.
pub struct Server {
    listener: TcpListener,
    state: Arc<ServerState>,
    commands: Arc<dyn Executor>,
    tls: Option<TlsAcceptor>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("local_address", &self.state.local_address)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Binds the listening socket (the caller is inside a tokio runtime); commands run on
    /// `commands` (the product's is [`Commands`]).
    pub async fn bind(
        commands: impl Executor,
        options: ServerOptions,
    ) -> Result<Server, ServerError> {
        let tls = options.tls.as_ref().map(tls::acceptor).transpose()?;
        if options.auth && commands.database().is_none() {
            return Err(ServerError::AuthWithoutDatabase);
        }
        let address = format!("{}:{}", options.bind, options.port);
        let listener = TcpListener::bind((options.bind.as_str(), options.port))
            .await
            .map_err(|source| ServerError::Bind {
                address: address.clone(),
                source,
            })?;
        let local_address = listener
            .local_addr()
            .map_err(|source| ServerError::Bind { address, source })?;
        // As clients reach it: a host name as given (`localhost`), an address as bound, and
        // `localhost` for "every interface".
        let advertised_host = options.advertised_host.clone().unwrap_or_else(|| {
            if options.bind.parse::<std::net::IpAddr>().is_err() {
                format!("{}:{}", options.bind, local_address.port())
            } else if local_address.ip().is_unspecified() {
                format!("localhost:{}", local_address.port())
            } else {
                local_address.to_string()
            }
        });
        let state = ServerState::new(options, local_address, advertised_host);
        Ok(Server {
            listener,
            state: Arc::new(state),
            commands: Arc::new(commands),
            tls,
        })
    }

    /// The address the server listens on (with the port picked when 0 was asked).
    pub fn local_addr(&self) -> SocketAddr {
        self.state.local_address
    }

    /// Serves until `shutdown` completes; then stops accepting, lets every in-flight command
    /// finish and its reply go out, closes the connections, and drops the command layer (the
    /// store closes and checkpoints once nothing else holds the database).
    pub async fn run_until(self, shutdown: impl Future<Output = ()>) -> Result<(), ServerError> {
        let Server {
            listener,
            state,
            commands,
            tls,
        } = self;
        let (stop_sender, stop) = watch::channel(false);
        let mut connections = JoinSet::new();
        let reaper = tokio::spawn(reap_every_second(Arc::clone(&commands), stop.clone()));
        tokio::pin!(shutdown);
        let result = loop {
            tokio::select! {
                () = &mut shutdown => break Ok(()),
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
                accepted = listener.accept() => {
                    let (stream, peer) = match accepted {
                        Ok(accepted) => accepted,
                        Err(error) if is_transient_accept_error(&error) => {
                            eprintln!("spillway serve: accept failed: {error}");
                            // Out of file descriptors and the like: give it a moment.
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            continue;
                        }
                        Err(source) => break Err(ServerError::Accept {
                            address: state.local_address,
                            source,
                        }),
                    };
                    let permit = match state.slots.admit(peer.ip()) {
                        Ok(slot) => slot,
                        Err(refusal) => {
                            eprintln!("spillway serve: {peer}: refusing the connection: {refusal}");
                            drop(stream);
                            continue;
                        }
                    };
                    let _ = stream.set_nodelay(true);
                    let info = ConnectionInfo {
                        id: state.next_connection_id(),
                        peer,
                    };
                    state.connections_created.fetch_add(1, Ordering::Relaxed);
                    let counted = Counted::new(Arc::clone(&state));
                    let commands = Arc::clone(&commands);
                    let mut stop = stop.clone();
                    let tls = tls.clone();
                    connections.spawn(async move {
                        let state = &counted.0;
                        match tls {
                            None => connection::serve(stream, info, state, &commands, stop).await,
                            Some(acceptor) => {
                                let handshake = tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(stream));
                                let accepted = tokio::select! {
                                    accepted = handshake => accepted,
                                    _ = stop.wait_for(|stopped| *stopped) => return,
                                };
                                match accepted {
                                    Ok(Ok(stream)) => connection::serve(tls::ClosedIsEof(stream), info, state, &commands, stop).await,
                                    Ok(Err(error)) => eprintln!(
                                        "spillway serve: {peer}: closing the connection: TLS handshake failed: {error}"
                                    ),
                                    Err(_) => eprintln!(
                                        "spillway serve: {peer}: closing the connection: no TLS handshake within {} s",
                                        TLS_HANDSHAKE_TIMEOUT.as_secs()
                                    ),
                                }
                            }
                        }
                        drop(counted);
                        drop(permit);
                    });
                }
            }
        };
        drop(listener);
        let _ = stop_sender.send(true);
        while connections.join_next().await.is_some() {}
        let _ = reaper.await;
        // The last holder of the command layer: dropping it closes the database.
        drop(commands);
        result
    }
}

/// Counts a connection in `connections_current` for as long as it lives (even when its task
/// ends by a panic).
struct Counted(Arc<ServerState>);

impl Counted {
    fn new(state: Arc<ServerState>) -> Counted {
        state.connections_current.fetch_add(1, Ordering::Relaxed);
        Counted(state)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.connections_current.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Calls `reap_expired` once a second (on the blocking pool: it may write) until `stop`.
async fn reap_every_second(commands: Arc<dyn Executor>, mut stop: watch::Receiver<bool>) {
    let mut ticker = tokio::time::interval(Duration::from_secs(1));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            _ = stop.wait_for(|stopped| *stopped) => return,
        }
        let commands = Arc::clone(&commands);
        if let Err(error) = tokio::task::spawn_blocking(move || commands.reap_expired()).await {
            eprintln!("spillway serve: reaping idle cursors and transactions failed: {error}");
        }
    }
}

fn is_transient_accept_error(error: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::ConnectionAborted
            | ErrorKind::ConnectionReset
            | ErrorKind::Interrupted
            | ErrorKind::WouldBlock
            | ErrorKind::OutOfMemory
    ) || error.raw_os_error().is_some_and(|code| {
        // EMFILE, ENFILE, ENOBUFS, ENOMEM: the process or system is out of resources.
        matches!(code, 24 | 23 | 105 | 12)
    })
}

/// Runs a server on `database` until Ctrl-C or SIGTERM, on its own multi-threaded runtime:
/// decides the naming of its collections ([`crate::naming`], whose notice goes to standard
/// error), binds, calls `on_listening` with the bound address, serves, shuts down cleanly.
pub fn serve_blocking(
    database: Database,
    options: ServerOptions,
    on_listening: impl FnOnce(SocketAddr),
) -> Result<(), ServerError> {
    let naming = crate::embedded::naming(&database, &options)?;
    if let Some(notice) = &naming.notice {
        eprintln!("spillway serve: {notice}");
    }
    let commands = Commands::with_namespaces(database, naming.namespaces);
    serve_executor_blocking(commands, options, on_listening)
}

/// Runs a server whose commands run on `commands` until Ctrl-C or SIGTERM, on its own
/// multi-threaded runtime: binds, calls `on_listening` with the bound address, serves, shuts
/// down cleanly. [`serve_blocking`] is this over a database; `spillway serve --upstream`
/// passes its proxy.
pub fn serve_executor_blocking(
    commands: impl Executor,
    options: ServerOptions,
    on_listening: impl FnOnce(SocketAddr),
) -> Result<(), ServerError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("spillway-serve")
        .thread_stack_size(crate::limits::WORKER_STACK_SIZE)
        .build()
        .map_err(ServerError::Runtime)?;
    runtime.block_on(async move {
        let server = Server::bind(commands, options).await?;
        let shutdown = shutdown_signal().map_err(ServerError::Runtime)?;
        on_listening(server.local_addr());
        server.run_until(shutdown).await
    })
}

/// A future that completes at the first Ctrl-C (SIGINT) or SIGTERM. The handlers are
/// installed here, before the server says it listens, so that a signal sent right after is
/// never lost.
fn shutdown_signal() -> std::io::Result<impl Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut terminate = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        Ok(async move {
            tokio::select! {
                _ = terminate.recv() => eprintln!("spillway serve: SIGTERM: shutting down"),
                _ = interrupt.recv() => eprintln!("spillway serve: interrupted: shutting down"),
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
            eprintln!("spillway serve: interrupted: shutting down");
        })
    }
}
