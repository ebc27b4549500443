//! TLS for `spillway serve --tls-cert FILE --tls-key FILE`: the certificate chain and private
//! key read from PEM files into a rustls server configuration (ring as the crypto provider),
//! and the handshake of each accepted connection.
//!
//! When TLS is configured every connection must speak it (MongoDB's `requireTLS`); this module
//! must never fall back to plain text.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use crate::error::ServerError;

/// The PEM files of a TLS server: its certificate chain (leaf first) and its private key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, PEM.
    pub certificate: PathBuf,
    /// The private key (PKCS#8, PKCS#1 or SEC1), PEM.
    pub private_key: PathBuf,
}

/// Reads the files and builds the acceptor; a missing, unreadable or mismatched file is an
/// error that names it.
pub(crate) fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor, ServerError> {
    let certificates = CertificateDer::pem_file_iter(&files.certificate)
        .and_then(Iterator::collect::<Result<Vec<_>, _>>)
        .map_err(|error| tls_error(&files.certificate, &error.to_string()))?;
    if certificates.is_empty() {
        return Err(tls_error(&files.certificate, "no certificate in the file"));
    }
    let key = PrivateKeyDer::from_pem_file(&files.private_key)
        .map_err(|error| tls_error(&files.private_key, &error.to_string()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| tls_error(&files.certificate, &error.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certificates, key)
        .map_err(|error| {
            tls_error(
                &files.private_key,
                &format!("does not go with the certificate: {error}"),
            )
        })?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn tls_error(path: &Path, message: &str) -> ServerError {
    ServerError::Tls {
        path: path.to_path_buf(),
        message: message.to_owned(),
    }
}
