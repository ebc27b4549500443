//! The server-level commands the server answers itself (the handshake, `ping`, `buildInfo`,
//! `serverStatus`, `getParameter`, `getCmdLineOpts`, `connectionStatus`, `hostInfo`,
//! `whatsmyuri`, `listCommands`, `getLog`, and the one-member replica set's
//! `replSetGetStatus` and `replSetGetConfig`); every other command goes to the command layer.
//!
//! These describe the process, not the data: this module must never touch the database, so
//! that drivers' connection setup and monitoring never wait for a writer.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use bson::{Bson, DateTime, Document, doc};

use crate::auth::AuthState;
use crate::command_option::truthy;
use crate::executor::Executor;
use crate::handshake::{
    self, MAX_BSON_OBJECT_SIZE, MAX_WIRE_VERSION, MONGODB_VERSION, MONGODB_VERSION_ARRAY,
};
use crate::state::{ConnectionInfo, ServerState};

/// The commands answered here, for `listCommands` and the dispatch.
pub const SERVER_COMMANDS: &[&str] = &[
    "hello",
    "isMaster",
    "ismaster",
    "ping",
    "buildInfo",
    "buildinfo",
    "serverStatus",
    "getParameter",
    "getCmdLineOpts",
    "connectionStatus",
    "hostInfo",
    "whatsmyuri",
    "listCommands",
    "getLog",
    "replSetGetStatus",
    "replSetGetConfig",
    "saslStart",
    "saslContinue",
    "logout",
    "createUser",
    "updateUser",
    "dropUser",
    "dropAllUsersFromDatabase",
    "grantRolesToUser",
    "revokeRolesFromUser",
    "usersInfo",
    "createRole",
    "updateRole",
    "dropRole",
    "dropAllRolesFromDatabase",
    "rolesInfo",
    "grantRolesToRole",
    "revokeRolesFromRole",
    "grantPrivilegesToRole",
    "revokePrivilegesFromRole",
];

/// The storage engine's name in `serverStatus` and `buildInfo`.
const STORAGE_ENGINE: &str = "spillway";

/// The reply to a server-level command, or `None` when `name` is not one (the command layer
/// answers it).
pub(crate) fn answer(
    name: &str,
    command: &Document,
    state: &ServerState,
    connection: &ConnectionInfo,
    executor: &dyn Executor,
    auth: &AuthState,
) -> Option<Document> {
    let reply = match name {
        "hello" => handshake::hello(command, false, state, connection),
        "isMaster" | "ismaster" => handshake::hello(command, true, state, connection),
        "ping" => doc! { "ok": 1.0 },
        "buildInfo" | "buildinfo" => build_info(),
        "serverStatus" => server_status(state),
        "getParameter" => get_parameter(command, state),
        "getCmdLineOpts" => command_line(state),
        "connectionStatus" => connection_status(command, auth),
        "hostInfo" => host_info(),
        "whatsmyuri" => doc! { "you": connection.peer.to_string(), "ok": 1.0 },
        "listCommands" => list_commands(executor, state),
        "getLog" => get_log(command),
        "replSetGetStatus" => replica_set_status(state),
        "replSetGetConfig" => replica_set_config(state),
        // MongoDB's commands for testing the Stable API, which do nothing: where they sit in
        // API versions is `spillway::command`'s API check's business.
        name if state.options.enable_test_commands && STABLE_API_TEST_COMMANDS.contains(&name) => {
            doc! { "ok": 1.0 }
        }
        _ => return None,
    };
    Some(reply)
}

fn build_info() -> Document {
    doc! {
        "version": MONGODB_VERSION,
        "gitVersion": concat!("spillway-", env!("CARGO_PKG_VERSION")),
        "versionArray": MONGODB_VERSION_ARRAY.to_vec(),
        "bits": 64,
        "debug": cfg!(debug_assertions),
        "maxBsonObjectSize": MAX_BSON_OBJECT_SIZE,
        "storageEngines": [STORAGE_ENGINE],
        "javascriptEngine": "none",
        "allocator": "system",
        "sysInfo": "deprecated",
        "modules": [],
        "openssl": { "running": "disabled" },
        "buildEnvironment": { "target_os": std::env::consts::OS, "target_arch": std::env::consts::ARCH },
        "spillwayVersion": env!("CARGO_PKG_VERSION"),
        "ok": 1.0,
    }
}

fn server_status(state: &ServerState) -> Document {
    let uptime = state.started.elapsed();
    let counters = &state.counters;
    let counter = |value: &AtomicU64| value.load(Ordering::Relaxed) as i64;
    let current = state.connections_current.load(Ordering::Relaxed);
    let available = state.options.max_connections.saturating_sub(current);
    doc! {
        "host": state.advertised_host.clone(),
        "version": MONGODB_VERSION,
        "process": "spillway",
        "pid": i64::from(std::process::id()),
        "uptime": uptime.as_secs_f64().floor(),
        "uptimeMillis": uptime.as_millis() as i64,
        "uptimeEstimate": uptime.as_secs() as i64,
        "localTime": DateTime::now(),
        "connections": {
            "current": current as i32,
            "available": available as i32,
            "totalCreated": state.connections_created.load(Ordering::Relaxed) as i64,
        },
        // Bytes of partly received messages counted in the shared budget (--max-buffered-bytes).
        "network": {
            "bytesIn": counter(&counters.bytes_in),
            "bytesOut": counter(&counters.bytes_out),
            "physicalBytesIn": counter(&counters.bytes_in),
            "physicalBytesOut": counter(&counters.bytes_out),
            "numRequests": counter(&counters.requests),
            "bufferedBytes": state.budget.in_use() as i64,
            "maxBufferedBytes": state.budget.total() as i64,
        },
        "opcounters": {
            "insert": counter(&counters.inserts),
            "query": counter(&counters.queries),
            "update": counter(&counters.updates),
            "delete": counter(&counters.deletes),
            "getmore": counter(&counters.get_mores),
            "command": counter(&counters.commands),
        },
        // Spillway has no global lock: readers never wait, one writer at a time.
        "globalLock": {
            "totalTime": uptime.as_micros() as i64,
            "currentQueue": { "total": 0, "readers": 0, "writers": 0 },
            "activeClients": { "total": 0, "readers": 0, "writers": 0 },
        },
        "mem": memory(),
        "storageEngine": {
            "name": STORAGE_ENGINE,
            "supportsCommittedReads": true,
            "persistent": true,
            "readOnly": false,
        },
        "repl": {
            "setName": handshake::REPLICA_SET_NAME,
            "isWritablePrimary": true,
            "primary": state.advertised_host.clone(),
            "hosts": [state.advertised_host.clone()],
        },
        "ok": 1.0,
    }
}

/// `replSetGetStatus` (mongosh's `rs.status()`): the one-member replica set `hello`
/// announces, its member the primary since the server started.
fn replica_set_status(state: &ServerState) -> Document {
    let now = DateTime::now();
    let op_time = handshake::op_time();
    let uptime = state.started.elapsed().as_secs() as i64;
    doc! {
        "set": handshake::REPLICA_SET_NAME,
        "date": now,
        "myState": 1,
        "term": 1_i64,
        "heartbeatIntervalMillis": 2000_i64,
        "majorityVoteCount": 1,
        "writeMajorityCount": 1,
        "votingMembersCount": 1,
        "writableVotingMembersCount": 1,
        "optimes": {
            "lastCommittedOpTime": op_time.clone(),
            "appliedOpTime": op_time.clone(),
            "durableOpTime": op_time.clone(),
        },
        "members": [{
            "_id": 0,
            "name": state.advertised_host.clone(),
            "health": 1.0,
            "state": 1,
            "stateStr": "PRIMARY",
            "uptime": uptime,
            "optime": op_time,
            "optimeDate": now,
            "electionDate": DateTime::from_system_time(SystemTime::now() - state.started.elapsed()),
            "configVersion": 1,
            "configTerm": 1,
            "self": true,
        }],
        "ok": 1.0,
    }
}

/// `replSetGetConfig` (mongosh's `rs.conf()`): the configuration of the one-member replica set.
fn replica_set_config(state: &ServerState) -> Document {
    doc! {
        "config": {
            "_id": handshake::REPLICA_SET_NAME,
            "version": 1,
            "term": 1,
            "members": [{
                "_id": 0,
                "host": state.advertised_host.clone(),
                "arbiterOnly": false,
                "buildIndexes": true,
                "hidden": false,
                "priority": 1.0,
                "tags": {},
                "secondaryDelaySecs": 0_i64,
                "votes": 1,
            }],
            "protocolVersion": 1_i64,
            "writeConcernMajorityJournalDefault": true,
            "settings": {
                "chainingAllowed": true,
                "heartbeatIntervalMillis": 2000,
                "heartbeatTimeoutSecs": 10,
                "electionTimeoutMillis": 10000,
                "catchUpTimeoutMillis": -1,
                "getLastErrorDefaults": { "w": 1, "wtimeout": 0 },
            },
        },
        "ok": 1.0,
    }
}

/// `serverStatus`' `mem`: the process's resident and virtual memory in MiB, as the kernel
/// reports them (`/proc/self/status`); `supported: false` where it does not.
fn memory() -> Document {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let mebibytes = |field: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(field))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<i64>()
                    .ok()
            })
            .map(|kibibytes| kibibytes / 1024)
    };
    if let (Some(resident), Some(virtual_size)) = (mebibytes("VmRSS:"), mebibytes("VmSize:")) {
        doc! { "bits": 64, "resident": resident, "virtual": virtual_size, "supported": true }
    } else {
        doc! { "bits": 64, "supported": false }
    }
}

/// The parameters `getParameter` knows, with their values.
fn parameters(state: &ServerState) -> Document {
    doc! {
        "featureCompatibilityVersion": { "version": "8.1" },
        "enableTestCommands": state.options.enable_test_commands,
        "authenticationMechanisms": ["SCRAM-SHA-1", "SCRAM-SHA-256"],
        "transactionLifetimeLimitSeconds": 60,
        "cursorTimeoutMillis": 600_000_i64,
        "maxBSONDepth": 100,
        "requireApiVersion": false,
    }
}

/// `{ getParameter: "*" }` returns every parameter; `{ getParameter: 1, name: 1, ... }` the
/// ones named, and an error for a name it does not know (as MongoDB does).
fn get_parameter(command: &Document, state: &ServerState) -> Document {
    let all = parameters(state);
    if command.get("getParameter") == Some(&Bson::String("*".to_owned())) {
        let mut reply = all;
        reply.insert("ok", 1.0);
        return reply;
    }
    let mut reply = Document::new();
    for (name, _) in command.iter().skip(1) {
        if name.starts_with('$') || name == "lsid" || name == "comment" {
            continue;
        }
        match all.get(name) {
            Some(value) => {
                reply.insert(name.clone(), value.clone());
            }
            None => {
                return doc! {
                    "ok": 0.0,
                    "errmsg": format!("no option found to get: {name}"),
                    "code": 72,
                    "codeName": "InvalidOptions",
                };
            }
        }
    }
    if reply.is_empty() {
        return doc! {
            "ok": 0.0,
            "errmsg": "no option found to get",
            "code": 72,
            "codeName": "InvalidOptions",
        };
    }
    reply.insert("ok", 1.0);
    reply
}

fn command_line(state: &ServerState) -> Document {
    let mut net = doc! {
        "bindIp": state.options.bind.clone(),
        "port": i32::from(state.local_address.port()),
        "maxIncomingConnections": state.options.max_connections as i64,
    };
    if let Some(tls) = &state.options.tls {
        net.insert(
            "tls",
            doc! {
                "mode": "requireTLS",
                "certificateKeyFile": tls.certificate.display().to_string(),
            },
        );
    }
    let mut parsed = doc! { "net": net };
    if state.options.auth {
        parsed.insert("security", doc! { "authorization": "enabled" });
    }
    if state.options.enable_test_commands {
        parsed.insert("setParameter", doc! { "enableTestCommands": "1" });
    }
    if let Some(path) = &state.options.database_path {
        parsed.insert("storage", doc! { "dbPath": path.clone() });
    }
    doc! {
        "argv": state.options.argv.clone(),
        "parsed": parsed,
        "ok": 1.0,
    }
}

/// `connectionStatus`: who logged in, their roles (direct and inherited) and, with
/// `showPrivileges`, what those allow, from the grants the connection resolved.
fn connection_status(command: &Document, auth: &AuthState) -> Document {
    let users: Vec<Bson> = auth
        .users
        .iter()
        .map(|(user, db)| Bson::Document(doc! { "user": user.clone(), "db": db.clone() }))
        .collect();
    let grants = auth.grants.as_ref().map(|(_, grants)| grants);
    let roles: Vec<Bson> = grants
        .map(|grants| {
            grants
                .roles
                .iter()
                .map(|(role, db)| Bson::Document(doc! { "role": role.clone(), "db": db.clone() }))
                .collect()
        })
        .unwrap_or_default();
    let mut auth_info = doc! {
        "authenticatedUsers": users,
        "authenticatedUserRoles": roles,
    };
    if command.get("showPrivileges").is_some_and(truthy) {
        let privileges = grants
            .map(|grants| grants.to_documents())
            .unwrap_or_default();
        auth_info.insert("authenticatedUserPrivileges", Bson::Array(privileges));
    }
    doc! { "authInfo": auth_info, "ok": 1.0 }
}

fn host_info() -> Document {
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_owned());
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let os_type = match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "Darwin",
        "windows" => "Windows",
        other => other,
    };
    doc! {
        "system": {
            "currentTime": DateTime::from_system_time(SystemTime::now()),
            "hostname": hostname,
            "cpuAddrSize": 64,
            "numCores": cores as i32,
            "cpuArch": std::env::consts::ARCH,
            "numaEnabled": false,
        },
        "os": { "type": os_type, "name": std::env::consts::OS },
        "extra": {},
        "ok": 1.0,
    }
}

/// The test commands of MongoDB's Stable API tests (with test commands only): `testVersion2`
/// is in API Version 2 only, `testDeprecation` deprecated in Version 1,
/// `testDeprecationInVersion2` in Version 1 and deprecated in 2, `testRemoval` in Version 1
/// only, `testVersions1And2` in both.
const STABLE_API_TEST_COMMANDS: &[&str] = &[
    "testVersion2",
    "testDeprecation",
    "testDeprecationInVersion2",
    "testRemoval",
    "testVersions1And2",
];

fn list_commands(executor: &dyn Executor, state: &ServerState) -> Document {
    let mut commands = Document::new();
    let test_commands: &[&str] = if state.options.enable_test_commands {
        &["configureFailPoint"]
    } else {
        &[]
    };
    let api_test_commands: &[&str] = if state.options.enable_test_commands {
        STABLE_API_TEST_COMMANDS
    } else {
        &[]
    };
    let names = SERVER_COMMANDS
        .iter()
        .chain(executor.command_names())
        .chain(test_commands)
        .chain(api_test_commands);
    for name in names {
        commands.insert(
            (*name).to_owned(),
            doc! {
                "help": "",
                "requiresAuth": false,
                "secondaryOk": true,
                "adminOnly": false,
            },
        );
    }
    doc! { "commands": commands, "ok": 1.0 }
}

/// `getLog`: the log lives on stderr, so the in-memory logs MongoDB keeps are empty here.
fn get_log(command: &Document) -> Document {
    match command.get("getLog") {
        Some(Bson::String(name)) if name == "*" => {
            doc! { "names": ["global", "startupWarnings"], "ok": 1.0 }
        }
        Some(Bson::String(name)) if name == "global" || name == "startupWarnings" => {
            doc! { "totalLinesWritten": 0, "log": [], "ok": 1.0 }
        }
        Some(Bson::String(name)) => doc! {
            "ok": 0.0,
            "errmsg": format!("no RamLog named: {name}"),
            "code": 0,
        },
        _ => doc! {
            "ok": 0.0,
            "errmsg": "Argument to getLog must be of type String",
            "code": 14,
            "codeName": "TypeMismatch",
        },
    }
}

/// The wire version is part of the contract with drivers: keep it in one place.
const _: () = assert!(
    MAX_WIRE_VERSION >= 9,
    "pymongo 4.x needs wire version 9 or newer"
);
