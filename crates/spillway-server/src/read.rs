//! Reading one message off a connection within the limits: the header within the idle
//! timeout; its length and opcode checked before anything is allocated; then the body within
//! the message timeout, into a buffer that grows only as bytes arrive (never past the
//! declared length), each growth beyond the first [`UNCOUNTED_BYTES`] taken from the shared
//! [`MemoryBudget`] first, waiting for it when others hold it.
//!
//! Decoding is not done here: the caller decodes (`wire::decode_message_with_depth`), so
//! that it can answer a message that is well framed but refused (too deep) and go on.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::sync::OwnedSemaphorePermit;

use crate::error::WireError;
use crate::limits::{MemoryBudget, UNCOUNTED_BYTES};
use crate::wire::{self, HEADER_LEN, Header};

/// The limits one read works within (the connection picks them: tighter before
/// authentication).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadLimits {
    /// Nothing may arrive for at most this long between messages (`None`: no limit).
    pub(crate) idle: Option<Duration>,
    /// The largest message, header included.
    pub(crate) max_message_size: usize,
    /// The rest of a message must arrive within this time of its header.
    pub(crate) message_timeout: Duration,
}

/// Why a connection stops reading.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The client closed the connection between messages.
    Closed,
    /// Nothing arrived for the idle timeout.
    Idle(Duration),
    /// The body did not arrive within the message timeout; `waiting_for_budget` when the
    /// connection was waiting for the shared budget rather than for the client.
    Stalled {
        timeout: Duration,
        waiting_for_budget: bool,
    },
    /// The message could never fit the shared budget.
    OverBudget { length: usize, budget: usize },
    /// A socket error.
    Io(std::io::Error),
    /// The bytes are not a message this server reads.
    Wire(WireError),
}

/// One message's bytes, with its share of the budget (given back when dropped).
#[derive(Debug)]
pub(crate) struct Received {
    /// The checked header.
    pub(crate) header: Header,
    /// The whole message, header included.
    pub(crate) bytes: Vec<u8>,
    /// The budget its buffer holds.
    pub(crate) budget: Option<OwnedSemaphorePermit>,
}

/// Reads one whole message within `limits`, its buffer counted in `budget`.
pub(crate) async fn read_message<S>(
    stream: &mut S,
    limits: ReadLimits,
    budget: &MemoryBudget,
) -> Result<Received, ReadError>
where
    S: AsyncRead + Unpin,
{
    let mut header_bytes = [0u8; HEADER_LEN];
    let read_header = read_header(stream, &mut header_bytes);
    match limits.idle {
        Some(timeout) => tokio::time::timeout(timeout, read_header)
            .await
            .map_err(|_| ReadError::Idle(timeout))??,
        None => read_header.await?,
    }
    let header = Header::parse(&header_bytes, limits.max_message_size).map_err(ReadError::Wire)?;
    if !wire::is_request_opcode(header.op_code) {
        // Its body is never read: OP_COMPRESSED's announced sizes are never believed.
        return Err(ReadError::Wire(WireError::UnsupportedOpcode {
            op_code: header.op_code,
        }));
    }
    if header.length.saturating_sub(UNCOUNTED_BYTES) > budget.total() {
        return Err(ReadError::OverBudget {
            length: header.length,
            budget: budget.total(),
        });
    }
    let mut waiting_for_budget = false;
    let mut received = Received {
        header,
        bytes: Vec::new(),
        budget: None,
    };
    let body = read_body(stream, &mut received, budget, &mut waiting_for_budget);
    match tokio::time::timeout(limits.message_timeout, body).await {
        Ok(result) => result?,
        Err(_) => {
            return Err(ReadError::Stalled {
                timeout: limits.message_timeout,
                waiting_for_budget,
            });
        }
    }
    received.bytes[..HEADER_LEN].copy_from_slice(&header_bytes);
    Ok(received)
}

/// Reads the body into `received.bytes` (whose first [`HEADER_LEN`] bytes are left for the
/// header), growing the buffer by doubling up to the declared length, and only when the
/// bytes so far have filled it.
async fn read_body<S>(
    stream: &mut S,
    received: &mut Received,
    budget: &MemoryBudget,
    waiting_for_budget: &mut bool,
) -> Result<(), ReadError>
where
    S: AsyncRead + Unpin,
{
    let length = received.header.length;
    let message = &mut received.bytes;
    message.reserve_exact(length.min(UNCOUNTED_BYTES));
    message.resize(HEADER_LEN, 0);
    let mut counted = 0;
    while message.len() < length {
        if message.len() == message.capacity() {
            let capacity = (message.capacity() * 2).max(UNCOUNTED_BYTES).min(length);
            let to_count = capacity.saturating_sub(UNCOUNTED_BYTES);
            if to_count > counted {
                *waiting_for_budget = true;
                budget
                    .reserve(to_count - counted, &mut received.budget)
                    .await;
                *waiting_for_budget = false;
                counted = to_count;
            }
            message.reserve_exact(capacity - message.len());
        }
        // Never past this message's end: the next message's bytes stay in the socket.
        let room = (message.capacity() - message.len()).min(length - message.len());
        let read = (&mut *stream)
            .take(room as u64)
            .read_buf(message)
            .await
            .map_err(ReadError::Io)?;
        if read == 0 {
            return Err(ReadError::Wire(WireError::Truncated {
                what: "the body (the client closed the connection)",
            }));
        }
    }
    Ok(())
}

/// Fills `header`; a close before its first byte is a clean close, inside it a truncation.
async fn read_header<S>(stream: &mut S, header: &mut [u8; HEADER_LEN]) -> Result<(), ReadError>
where
    S: AsyncRead + Unpin,
{
    let mut filled = 0;
    while filled < HEADER_LEN {
        let read = stream
            .read(&mut header[filled..])
            .await
            .map_err(ReadError::Io)?;
        if read == 0 {
            return Err(if filled == 0 {
                ReadError::Closed
            } else {
                ReadError::Wire(WireError::Truncated {
                    what: "the header (the client closed the connection)",
                })
            });
        }
        filled += read;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_message_size: usize) -> ReadLimits {
        ReadLimits {
            idle: None,
            max_message_size,
            message_timeout: Duration::from_secs(5),
        }
    }

    fn ping(request_id: i32) -> Vec<u8> {
        let body = bson::doc! { "ping": 1, "$db": "admin" };
        wire::OpMsg::new(body).encode(request_id, 0).unwrap()
    }

    #[tokio::test]
    async fn reads_messages_one_at_a_time_and_never_past_one() {
        let mut bytes = ping(1);
        bytes.extend(ping(2));
        let budget = MemoryBudget::new(1 << 20);
        let mut stream = &bytes[..];
        let first = read_message(&mut stream, limits(1 << 20), &budget)
            .await
            .unwrap();
        assert_eq!(first.header.request_id, 1);
        assert_eq!(first.bytes, ping(1));
        let second = read_message(&mut stream, limits(1 << 20), &budget)
            .await
            .unwrap();
        assert_eq!(second.header.request_id, 2);
        assert!(matches!(
            read_message(&mut stream, limits(1 << 20), &budget).await,
            Err(ReadError::Closed)
        ));
    }

    #[tokio::test]
    async fn a_large_message_is_counted_in_the_budget_until_dropped() {
        let filler = "x".repeat(300_000);
        let bytes = wire::OpMsg::new(bson::doc! { "s": filler })
            .encode(1, 0)
            .unwrap();
        let budget = MemoryBudget::new(1 << 20);
        let received = read_message(&mut &bytes[..], limits(1 << 20), &budget)
            .await
            .unwrap();
        assert_eq!(received.bytes, bytes);
        assert!(received.bytes.capacity() <= bytes.len());
        assert_eq!(budget.in_use(), bytes.len() - UNCOUNTED_BYTES);
        drop(received);
        assert_eq!(budget.in_use(), 0);
    }

    #[tokio::test]
    async fn refusals_from_the_header_alone() {
        let budget = MemoryBudget::new(1 << 20);
        let mut compressed = ping(1);
        compressed[12..16].copy_from_slice(&wire::OP_COMPRESSED.to_le_bytes());
        assert!(matches!(
            read_message(&mut &compressed[..16], limits(1 << 20), &budget).await,
            Err(ReadError::Wire(WireError::UnsupportedOpcode {
                op_code: 2012
            }))
        ));
        let big: i32 = 4 << 20;
        let mut header = ping(1)[..16].to_vec();
        header[..4].copy_from_slice(&big.to_le_bytes());
        assert!(matches!(
            read_message(&mut &header[..], limits(8 << 20), &budget).await,
            Err(ReadError::OverBudget { .. })
        ));
        assert!(matches!(
            read_message(&mut &header[..], limits(1 << 20), &budget).await,
            Err(ReadError::Wire(WireError::TooLarge { .. }))
        ));
    }
}
