//! The limits that hold before any command runs, so that no client, logged in or not, can
//! crash the server or take its memory or its connections: message size, nesting depth,
//! the time a message may take to arrive, the bytes of partly received messages held across
//! all connections, connections per client address (with slots kept for new addresses), and
//! with `--auth` a small message size and a short deadline until a connection has logged in.
//!
//! [`Limits`] is the configuration (every field is a `spillway serve` flag); the two shared
//! counters live here too: [`ConnectionSlots`] (who holds how many connections) and
//! [`MemoryBudget`] (bytes of message buffers beyond each message's first
//! [`UNCOUNTED_BYTES`]). The reading itself is `read.rs`; the nesting check is
//! `wire::check_nesting`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::wire::{MAX_BSON_DEPTH, MAX_MESSAGE_SIZE};

/// The default idle timeout: a connection that sends nothing for 30 minutes is closed (the
/// same time after which MongoDB forgets an unused logical session). Drivers notice a closed
/// pooled connection and open another.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// The default time a message may take to arrive once its header has (and a reply to be
/// taken by the client).
pub const DEFAULT_MESSAGE_TIMEOUT: Duration = Duration::from_secs(60);
/// The default budget of bytes held in partly received messages across every connection
/// (beyond each message's first [`UNCOUNTED_BYTES`]).
pub const DEFAULT_MAX_BUFFERED_BYTES: usize = 256 * 1024 * 1024;
/// The default size limit of a message before authentication (with `--auth`): the
/// handshake and SASL messages are a few hundred bytes.
pub const DEFAULT_MAX_MESSAGE_SIZE_BEFORE_AUTH: usize = 1024 * 1024;
/// The default deadline before authentication (with `--auth`): an unauthenticated
/// connection idle this long is closed, and each of its messages must arrive within it.
pub const DEFAULT_AUTH_TIMEOUT: Duration = Duration::from_secs(30);
/// The first bytes of every message are not counted in the shared budget, so that small
/// commands never wait for it: at most this much per connection is outside the budget.
pub const UNCOUNTED_BYTES: usize = 64 * 1024;
/// The stack of each thread of `spillway serve`'s runtime, where commands run: room for the
/// command layer's recursion over the deepest command the nesting limit lets through, with a
/// margin (only the pages a thread touches take memory).
pub const WORKER_STACK_SIZE: usize = 16 * 1024 * 1024;
/// Addresses holding fewer connections than this may take one of the reserved slots.
pub const RESERVED_SLOTS_FOR_ADDRESSES_UNDER: usize = 10;

/// The default connections per client address for `max_connections` connections: half.
pub fn default_max_connections_per_address(max_connections: usize) -> usize {
    (max_connections / 2).max(1)
}

/// The default reserved slots for `max_connections` connections: a tenth.
pub fn default_reserved_connections(max_connections: usize) -> usize {
    max_connections / 10
}

/// The default connection limit.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1000;

/// The limits a server enforces before any command runs. `Default` is the safe setting
/// `spillway serve` uses (for the default 1,000 connections).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// The largest message, header included (announced as `maxMessageSizeBytes`); a larger
    /// length closes the connection from the header alone, before anything is allocated.
    pub max_message_size: usize,
    /// Levels of embedded documents and arrays allowed below a message's top-level document
    /// (MongoDB's `maxBSONDepth`); a deeper message is answered with `Overflow` (15).
    pub max_bson_depth: usize,
    /// Once a message's header has arrived, the rest must arrive within this time; a reply
    /// must be taken by the client within it too.
    pub message_timeout: Duration,
    /// Bytes of partly received messages held across all connections, beyond each message's
    /// first [`UNCOUNTED_BYTES`]. A connection that needs more waits (its socket is not read)
    /// until others finish, within its message timeout.
    pub max_buffered_bytes: usize,
    /// Connections one client address may hold at once.
    pub max_connections_per_address: usize,
    /// The last slots of `max_connections`, given only to addresses that hold fewer than
    /// [`RESERVED_SLOTS_FOR_ADDRESSES_UNDER`] connections: room for new clients when a few
    /// addresses hold everything else.
    pub reserved_connections: usize,
    /// With `auth`: the largest message of a connection that has not logged in.
    pub max_message_size_before_auth: usize,
    /// With `auth`: a connection that has not logged in is closed when idle this long, and
    /// each of its messages must arrive within it.
    pub auth_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        let connections = DEFAULT_MAX_CONNECTIONS;
        Limits {
            max_message_size: MAX_MESSAGE_SIZE,
            max_bson_depth: MAX_BSON_DEPTH,
            message_timeout: DEFAULT_MESSAGE_TIMEOUT,
            max_buffered_bytes: DEFAULT_MAX_BUFFERED_BYTES,
            max_connections_per_address: default_max_connections_per_address(connections),
            reserved_connections: default_reserved_connections(connections),
            max_message_size_before_auth: DEFAULT_MAX_MESSAGE_SIZE_BEFORE_AUTH,
            auth_timeout: DEFAULT_AUTH_TIMEOUT,
        }
    }
}

/// Why a connection is refused at accept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// `max_connections` are open.
    Full { max: usize },
    /// The address holds `max_connections_per_address`.
    PerAddress { max: usize },
    /// Only reserved slots are left, and the address holds too many for one of them.
    Reserved { reserved: usize },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Full { max } => write!(
                f,
                "the limit of {max} connections is reached (--max-connections)"
            ),
            Refusal::PerAddress { max } => write!(
                f,
                "this address holds {max} connections, its limit (--max-connections-per-address)"
            ),
            Refusal::Reserved { reserved } => write!(
                f,
                "only the {reserved} reserved slots are left, kept for addresses holding fewer than \
                 {RESERVED_SLOTS_FOR_ADDRESSES_UNDER} connections (--reserved-connections)"
            ),
        }
    }
}

/// The open connections, in all and per client address.
#[derive(Debug)]
pub(crate) struct ConnectionSlots {
    max: usize,
    per_address: usize,
    reserved: usize,
    held: Mutex<Held>,
}

#[derive(Debug, Default)]
struct Held {
    total: usize,
    by_address: HashMap<IpAddr, usize>,
}

impl ConnectionSlots {
    pub(crate) fn new(max: usize, limits: &Limits) -> ConnectionSlots {
        ConnectionSlots {
            max,
            per_address: limits.max_connections_per_address.clamp(1, max.max(1)),
            reserved: limits.reserved_connections.min(max),
            held: Mutex::new(Held::default()),
        }
    }

    /// Takes a slot for a connection from `address`, or says why not. The slot is given back
    /// when the returned [`Slot`] is dropped.
    pub(crate) fn admit(self: &Arc<Self>, address: IpAddr) -> Result<Slot, Refusal> {
        let address = address.to_canonical();
        let mut held = self
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let from_address = held.by_address.get(&address).copied().unwrap_or(0);
        if held.total >= self.max {
            return Err(Refusal::Full { max: self.max });
        }
        if from_address >= self.per_address {
            return Err(Refusal::PerAddress {
                max: self.per_address,
            });
        }
        if held.total >= self.max - self.reserved
            && from_address >= RESERVED_SLOTS_FOR_ADDRESSES_UNDER
        {
            return Err(Refusal::Reserved {
                reserved: self.reserved,
            });
        }
        held.total += 1;
        *held.by_address.entry(address).or_insert(0) += 1;
        Ok(Slot {
            slots: Arc::clone(self),
            address,
        })
    }

    /// Connections open now.
    #[cfg(test)]
    pub(crate) fn total(&self) -> usize {
        self.held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .total
    }
}

/// One connection's slot, given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    slots: Arc<ConnectionSlots>,
    address: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self
            .slots
            .held
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        held.total -= 1;
        if let Some(count) = held.by_address.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                held.by_address.remove(&self.address);
            }
        }
    }
}

/// The bytes every connection's message buffers may hold together (beyond each message's
/// first [`UNCOUNTED_BYTES`]), handed out in the order asked.
#[derive(Debug, Clone)]
pub(crate) struct MemoryBudget {
    permits: Arc<Semaphore>,
    total: usize,
}

impl MemoryBudget {
    pub(crate) fn new(total: usize) -> MemoryBudget {
        let total = total.min(Semaphore::MAX_PERMITS);
        MemoryBudget {
            permits: Arc::new(Semaphore::new(total)),
            total,
        }
    }

    /// The whole budget.
    pub(crate) fn total(&self) -> usize {
        self.total
    }

    /// Bytes held now.
    pub(crate) fn in_use(&self) -> usize {
        self.total - self.permits.available_permits()
    }

    /// Adds `bytes` to `held`, waiting until they are free.
    pub(crate) async fn reserve(&self, bytes: usize, held: &mut Option<OwnedSemaphorePermit>) {
        let mut left = bytes;
        while left > 0 {
            let step = left.min(u32::MAX as usize);
            let Ok(permit) = Arc::clone(&self.permits)
                .acquire_many_owned(step as u32)
                .await
            else {
                // The semaphore is never closed.
                return;
            };
            match held {
                Some(held) => held.merge(permit),
                None => *held = Some(permit),
            }
            left -= step;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(per_address: usize, reserved: usize) -> Limits {
        Limits {
            max_connections_per_address: per_address,
            reserved_connections: reserved,
            ..Limits::default()
        }
    }

    #[test]
    fn one_address_cannot_take_every_slot() {
        let slots = Arc::new(ConnectionSlots::new(20, &limits(12, 4)));
        let hostile: IpAddr = "127.0.0.2".parse().unwrap();
        let held: Vec<Slot> = (0..12).map(|_| slots.admit(hostile).unwrap()).collect();
        assert_eq!(
            slots.admit(hostile).unwrap_err(),
            Refusal::PerAddress { max: 12 }
        );
        // Another address fills up to the reserve and into it while it holds fewer than 10.
        let second: IpAddr = "127.0.0.3".parse().unwrap();
        let mut more: Vec<Slot> = (0..5).map(|_| slots.admit(second).unwrap()).collect();
        let good: IpAddr = "127.0.0.1".parse().unwrap();
        more.push(slots.admit(good).unwrap());
        assert_eq!(slots.total(), 18);
        drop(held);
        assert_eq!(slots.total(), 6);
        // Every slot given back frees its address's count: the first address gets 10 again,
        // then meets the reserve (16 held of 20, 4 reserved) holding 10.
        let again: Vec<Slot> = (0..10).map(|_| slots.admit(hostile).unwrap()).collect();
        assert_eq!(
            slots.admit(hostile).unwrap_err(),
            Refusal::Reserved { reserved: 4 }
        );
        drop(again);
        drop(more);
        assert_eq!(slots.total(), 0);
    }

    #[test]
    fn reserved_slots_go_to_addresses_with_few_connections() {
        let slots = Arc::new(ConnectionSlots::new(40, &limits(40, 20)));
        let heavy: IpAddr = "10.0.0.1".parse().unwrap();
        let _held: Vec<Slot> = (0..20).map(|_| slots.admit(heavy).unwrap()).collect();
        assert_eq!(
            slots.admit(heavy).unwrap_err(),
            Refusal::Reserved { reserved: 20 }
        );
        let light: IpAddr = "10.0.0.2".parse().unwrap();
        let _light: Vec<Slot> = (0..RESERVED_SLOTS_FOR_ADDRESSES_UNDER)
            .map(|_| slots.admit(light).unwrap())
            .collect();
        assert_eq!(
            slots.admit(light).unwrap_err(),
            Refusal::Reserved { reserved: 20 }
        );
        let _others: Vec<Slot> = (3..13)
            .map(|n| slots.admit(IpAddr::from([10, 0, 0, n])).unwrap())
            .collect();
        assert_eq!(
            slots.admit("10.0.0.99".parse().unwrap()).unwrap_err(),
            Refusal::Full { max: 40 }
        );
    }

    #[test]
    fn ipv4_mapped_addresses_count_as_their_ipv4_address() {
        let slots = Arc::new(ConnectionSlots::new(10, &limits(1, 0)));
        let _v4 = slots.admit("127.0.0.2".parse().unwrap()).unwrap();
        assert!(slots.admit("::ffff:127.0.0.2".parse().unwrap()).is_err());
    }

    #[tokio::test]
    async fn the_budget_waits_until_bytes_are_given_back() {
        let budget = MemoryBudget::new(100);
        let mut first = None;
        budget.reserve(70, &mut first).await;
        assert_eq!(budget.in_use(), 70);
        let mut second = None;
        let waiting =
            tokio::time::timeout(Duration::from_millis(50), budget.reserve(40, &mut second)).await;
        assert!(waiting.is_err(), "40 more bytes do not fit");
        drop(first);
        budget.reserve(40, &mut second).await;
        assert_eq!(budget.in_use(), 40);
        drop(second);
        assert_eq!(budget.in_use(), 0);
    }
}
