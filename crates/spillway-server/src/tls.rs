//! TLS for `spillway serve --tls-cert FILE --tls-key FILE`: the certificate chain and private
//! key read from PEM files into a rustls server configuration (ring as the crypto provider),
//! and the handshake of each accepted connection.
//!
//! When TLS is configured every connection must speak it (MongoDB's `requireTLS`); this module
//! must never fall back to plain text.
//!
//! Most clients close a connection without TLS's `close_notify` alert, which rustls reports
//! as an `UnexpectedEof` error; [`ClosedIsEof`] reads that as the end of the stream, so that a
//! normal disconnect is not logged as a failure. (TLS's truncation attack does not matter
//! here: the wire protocol's messages carry their length, and a message cut short is still
//! an error.)

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
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

/// A TLS stream whose peer closing without `close_notify` reads as the end of the stream.
#[derive(Debug)]
pub(crate) struct ClosedIsEof<S>(pub(crate) S);

impl<S: AsyncRead + Unpin> AsyncRead for ClosedIsEof<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        buffer: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match Pin::new(&mut self.0).poll_read(context, buffer) {
            Poll::Ready(Err(error)) if error.kind() == io::ErrorKind::UnexpectedEof => {
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for ClosedIsEof<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        context: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(context, bytes)
    }

    fn poll_flush(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(context)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(context)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    /// A stream that yields `bytes`, then fails with `error`.
    struct Failing {
        bytes: Vec<u8>,
        error: Option<io::ErrorKind>,
    }

    impl AsyncRead for Failing {
        fn poll_read(
            mut self: Pin<&mut Self>,
            _context: &mut Context<'_>,
            buffer: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            if !self.bytes.is_empty() {
                let bytes = std::mem::take(&mut self.bytes);
                buffer.put_slice(&bytes);
                return Poll::Ready(Ok(()));
            }
            match self.error.take() {
                Some(kind) => Poll::Ready(Err(io::Error::new(kind, "from the test"))),
                None => Poll::Ready(Ok(())),
            }
        }
    }

    #[tokio::test]
    async fn a_close_without_close_notify_is_the_end_of_the_stream_and_other_errors_stay() {
        // rustls's error when the peer closes without close_notify.
        let mut closed = ClosedIsEof(Failing {
            bytes: b"abc".to_vec(),
            error: Some(io::ErrorKind::UnexpectedEof),
        });
        let mut read = Vec::new();
        closed
            .read_to_end(&mut read)
            .await
            .expect("an ordinary end");
        assert_eq!(read, b"abc");
        let mut reset = ClosedIsEof(Failing {
            bytes: Vec::new(),
            error: Some(io::ErrorKind::InvalidData),
        });
        let error = reset.read_to_end(&mut read).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
    }
}
