//! `--tls-cert`/`--tls-key`: the Rust driver connects over TLS and verifies the server's
//! certificate; a plain-text client is refused (its connection only); unusable files are an
//! error at start that names the file.

use crate::common;

use bson::doc;
use mongodb::Client;
use mongodb::options::ClientOptions;
use spillway::Database;
use spillway::command::Commands;
use spillway_server::{Server, ServerError, ServerOptions, TlsFiles};

/// A self-signed certificate for localhost and 127.0.0.1, written as PEM files.
fn certificate(directory: &std::path::Path) -> TlsFiles {
    let generated =
        rcgen::generate_simple_self_signed(vec!["localhost".to_owned(), "127.0.0.1".to_owned()])
            .expect("a certificate");
    let certificate = directory.join("server.pem");
    let private_key = directory.join("server.key");
    std::fs::write(&certificate, generated.cert.pem()).unwrap();
    std::fs::write(&private_key, generated.signing_key.serialize_pem()).unwrap();
    TlsFiles {
        certificate,
        private_key,
    }
}

fn commands() -> Commands {
    Commands::new(Database::open_in_memory().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_connects_over_tls_and_plain_text_is_refused() {
    let directory = tempfile::tempdir().unwrap();
    let files = certificate(directory.path());
    let options = ServerOptions {
        tls: Some(files.clone()),
        ..common::options()
    };
    let server = common::start_with(commands(), options).await;

    let uri = format!(
        "mongodb://{}/?tls=true&tlsCAFile={}&serverSelectionTimeoutMS=10000",
        server.address,
        files.certificate.display()
    );
    let client = Client::with_options(ClientOptions::parse(uri).await.unwrap()).unwrap();
    let ping = client
        .database("admin")
        .run_command(doc! { "ping": 1 })
        .await
        .expect("ping over TLS");
    assert_eq!(ping.get_f64("ok").ok(), Some(1.0));

    // A client that skips TLS gets its connection closed; the TLS clients go on.
    let mut plain = common::connect(server.address).await;
    common::send(
        &mut plain,
        &common::op_msg(1, 0, &doc! { "ping": 1, "$db": "admin" }, &[]),
    )
    .await;
    // The server answers with a TLS alert (content type 21), never a reply, and closes.
    let mut answer = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(20),
        tokio::io::AsyncReadExt::read_to_end(&mut plain, &mut answer),
    )
    .await
    .expect("the server closes a plain-text connection")
    .ok();
    assert!(
        answer.is_empty() || answer[0] == 21,
        "a TLS alert or nothing, got {answer:?}"
    );
    let ping = client
        .database("admin")
        .run_command(doc! { "ping": 1 })
        .await
        .expect("ping over TLS after a plain-text client");
    assert_eq!(ping.get_f64("ok").ok(), Some(1.0));
    client.shutdown().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_does_not_trust_the_certificate_cannot_connect() {
    let directory = tempfile::tempdir().unwrap();
    let files = certificate(directory.path());
    let other = tempfile::tempdir().unwrap();
    let stranger = certificate(other.path());
    let options = ServerOptions {
        tls: Some(files),
        ..common::options()
    };
    let server = common::start_with(commands(), options).await;
    let uri = format!(
        "mongodb://{}/?tls=true&tlsCAFile={}&serverSelectionTimeoutMS=2000",
        server.address,
        stranger.certificate.display()
    );
    let client = Client::with_options(ClientOptions::parse(uri).await.unwrap()).unwrap();
    let result = client
        .database("admin")
        .run_command(doc! { "ping": 1 })
        .await;
    assert!(result.is_err(), "an untrusted certificate is rejected");
    client.shutdown().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_tls_files_are_an_error_naming_the_file() {
    let directory = tempfile::tempdir().unwrap();
    let files = certificate(directory.path());
    let missing = TlsFiles {
        certificate: directory.path().join("missing.pem"),
        ..files.clone()
    };
    let not_a_key = TlsFiles {
        private_key: files.certificate.clone(),
        ..files.clone()
    };
    let other = tempfile::tempdir().unwrap();
    let mismatched = TlsFiles {
        private_key: certificate(other.path()).private_key,
        ..files
    };
    for (tls, file) in [
        (missing, "missing.pem"),
        (not_a_key, "server.pem"),
        (mismatched, "server.key"),
    ] {
        let options = ServerOptions {
            tls: Some(tls),
            ..common::options()
        };
        match Server::bind(commands(), options).await {
            Err(error @ ServerError::Tls { .. }) => {
                assert!(error.to_string().contains(file), "{error}");
            }
            other => panic!("expected a TLS error for {file}, got {other:?}"),
        }
    }
}
