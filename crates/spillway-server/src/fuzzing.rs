//! Entry points for fuzzing the framing decoder on untrusted bytes (not a stable API).
//!
//! Used by the cargo-fuzz target `server_frame` in `fuzz/` and by the proptest in this
//! crate's tests. Every function here must return normally for every input: a panic is a bug.

use crate::wire::{self, HEADER_LEN, Header, MAX_MESSAGE_SIZE, Request};

/// Decodes `bytes` as the server does: the header checked against the size limit, then the
/// whole message. A decoded OP_MSG is encoded again, and must decode to the same bytes, and
/// is turned into its command. Returns whether the message was accepted.
pub fn decode_frame(bytes: &[u8]) -> bool {
    if let Some(header) = bytes.first_chunk::<HEADER_LEN>() {
        // The connection refuses a length over the limit before allocating: so must this.
        if let Ok(header) = Header::parse(header, MAX_MESSAGE_SIZE) {
            assert!(header.length <= MAX_MESSAGE_SIZE);
        }
    }
    match wire::decode_message(bytes) {
        Ok(Request::Msg(message)) => {
            // Compared as bytes, not values: a NaN double is not equal to itself.
            let encoded = message
                .encode(7, 0)
                .expect("a decoded message encodes again");
            let Ok(Request::Msg(decoded)) = wire::decode_message(&encoded) else {
                panic!("an encoded message decodes");
            };
            assert_eq!(decoded.encode(7, 0).expect("encodes"), encoded);
            let _ = message.into_command();
            true
        }
        Ok(Request::Query(query)) => {
            let _ = query.command();
            let _ = query.command_database();
            true
        }
        Err(error) => {
            let _ = error.to_string();
            false
        }
    }
}

/// What [`serve_bytes`] saw: messages accepted, refused as too deep, and how the stream
/// ended.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Served {
    /// Messages decoded into a command.
    pub accepted: usize,
    /// Messages answered with `Overflow` (nested deeper than the limit).
    pub too_deep: usize,
    /// Why reading stopped (`None`: the bytes ended cleanly between messages).
    pub closed_by: Option<String>,
}

/// Feeds `bytes` to the server's read and decode path as one connection's stream, with the
/// default [`Limits`](crate::Limits) (the shared budget at its default): each message is
/// read by the same function a connection uses (header and opcode checks, the growing
/// buffer, the budget), decoded with the nesting limit, and turned into its command, until
/// the bytes end or a message closes the connection. Every decoded command must nest within
/// the limit; a refused one must really nest deeper or be bad BSON.
pub fn serve_bytes(bytes: &[u8]) -> Served {
    thread_local! {
        static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("a current-thread runtime");
        static BUDGET: crate::limits::MemoryBudget =
            crate::limits::MemoryBudget::new(crate::Limits::default().max_buffered_bytes);
    }
    let limits = crate::Limits::default();
    let read_limits = crate::read::ReadLimits {
        idle: None,
        max_message_size: limits.max_message_size,
        message_timeout: limits.message_timeout,
    };
    let mut served = Served::default();
    let mut stream = bytes;
    loop {
        let read = RUNTIME.with(|runtime| {
            BUDGET.with(|budget| {
                runtime.block_on(crate::read::read_message(&mut stream, read_limits, budget))
            })
        });
        let received = match read {
            Ok(received) => received,
            Err(crate::read::ReadError::Closed) => return served,
            Err(error) => {
                served.closed_by = Some(format!("{error:?}"));
                return served;
            }
        };
        assert_eq!(received.bytes.len(), received.header.length);
        match wire::decode_message_with_depth(&received.bytes, limits.max_bson_depth) {
            Ok(Request::Msg(message)) => {
                // Kind-1 documents are counted two levels down, where the command puts them.
                let command = message.into_command();
                if let Ok(command) = command {
                    assert!(nesting_levels(&command) <= limits.max_bson_depth);
                }
                served.accepted += 1;
            }
            Ok(Request::Query(query)) => {
                assert!(nesting_levels(&query.query) <= limits.max_bson_depth);
                served.accepted += 1;
            }
            Err(crate::WireError::TooDeep { .. }) => served.too_deep += 1,
            Err(error) => {
                served.closed_by = Some(error.to_string());
                return served;
            }
        }
    }
}

/// Levels of embedded documents and arrays below `document` (0 for a flat one), by a loop.
pub fn nesting_levels(document: &bson::Document) -> usize {
    let mut deepest = 0;
    let mut open: Vec<(usize, &bson::Bson)> = document.values().map(|value| (1, value)).collect();
    while let Some((level, value)) = open.pop() {
        let children: Box<dyn Iterator<Item = &bson::Bson>> = match value {
            bson::Bson::Document(inner) => Box::new(inner.values()),
            bson::Bson::Array(inner) => Box::new(inner.iter()),
            bson::Bson::JavaScriptCodeWithScope(code) => Box::new(code.scope.values()),
            _ => continue,
        };
        deepest = deepest.max(level);
        open.extend(children.map(|child| (level + 1, child)));
    }
    deepest
}

/// The nesting check against the recursive decoders on one document's bytes (small inputs
/// only, so that the recursive decoders themselves cannot overflow the fuzzer's stack): the
/// server's decoder and `bson`'s agree; a document the check accepts nests within
/// `max_levels`; one it calls bad BSON does not decode either; one it calls too deep really
/// nests deeper.
pub fn check_nesting_agrees(bytes: &[u8], max_levels: usize) {
    let Ok(raw) = bson::RawDocument::from_bytes(bytes) else {
        return;
    };
    let checked = wire::check_nesting(raw, max_levels, "a fuzzed document");
    if bytes.len() > 16 * 1024 {
        return;
    }
    let decoded = bson::Document::try_from(raw);
    // The server's decoder (one pass over the bytes) and `bson`'s agree, compared as bytes
    // (a NaN is not equal to itself).
    let ours = spillway_doc::decode::document(raw);
    assert_eq!(ours.is_ok(), decoded.is_ok(), "the decoders disagree");
    if let (Ok(ours), Ok(theirs)) = (&ours, &decoded) {
        assert_eq!(
            ours.to_vec().ok(),
            theirs.to_vec().ok(),
            "the decoders disagree"
        );
    }
    match (checked, decoded) {
        (Ok(()), Ok(document)) => assert!(nesting_levels(&document) <= max_levels),
        (Ok(()), Err(_)) => {}
        (Err(crate::WireError::BadBson { .. }), decoded) => {
            assert!(
                decoded.is_err(),
                "the check refused BSON the decoder accepts"
            );
        }
        (Err(crate::WireError::TooDeep { .. }), Ok(document)) => {
            assert!(nesting_levels(&document) > max_levels);
        }
        (Err(crate::WireError::TooDeep { .. }), Err(_)) => {}
        (Err(other), _) => panic!("unexpected error from the nesting check: {other}"),
    }
}

/// A message nested `levels` deep at a place chosen by `shape` (its top 3 bits: the OP_MSG
/// body, a kind-1 document, an OP_QUERY query or its field selector; documents or arrays at
/// each level by its low 29 bits), around `leaf` as the innermost document when it is a
/// flat one. Built as bytes with loops, so that any depth can be made without recursion.
/// For the fuzz target and the tests: the server's answer must follow the limit exactly.
/// Returns the message and the levels its command nests (`levels` + 1, or + 3 for a kind-1
/// document, which lands under `documents: [...]`).
pub fn nested_message(levels: usize, shape: u32, leaf: &[u8]) -> (Vec<u8>, usize) {
    let default_leaf = bson::doc! { "leaf": 1 }.to_vec().unwrap_or_default();
    let flat = bson::RawDocument::from_bytes(leaf).is_ok_and(|raw| {
        wire::check_nesting(raw, 0, "a leaf").is_ok() && bson::Document::try_from(raw).is_ok()
    });
    let leaf = if flat { leaf } else { &default_leaf[..] };
    let is_array = |step: usize| shape >> (step % 29) & 1 == 1;
    let container = |step: usize| if is_array(step) { 0x04 } else { 0x03 };
    // Step i wraps step i - 1 (the leaf below step 0): length, the inner value's type, the
    // key ("0" in an array), the inner value, the closing NUL. Written outermost first.
    let mut deep = Vec::with_capacity(leaf.len() + 8 * levels);
    for step in (0..levels).rev() {
        let length = leaf.len() + 8 * (step + 1);
        deep.extend_from_slice(&(length as i32).to_le_bytes());
        deep.push(if step == 0 { 0x03 } else { container(step - 1) });
        deep.extend_from_slice(if is_array(step) { b"0\0" } else { b"n\0" });
    }
    deep.extend_from_slice(leaf);
    deep.resize(deep.len() + levels, 0);
    let deep_type = if levels == 0 {
        0x03
    } else {
        container(levels - 1)
    };
    let deep_field = Field::Raw(deep_type, &deep);
    let place = shape >> 29;
    let mut message = vec![0; 16];
    let (op_code, command_levels) = match place {
        0 | 1 => {
            message.extend_from_slice(&0u32.to_le_bytes());
            message.push(0);
            let body = raw_document(&[
                ("find", Field::String("c")),
                ("filter", deep_field),
                ("$db", Field::String("test")),
            ]);
            message.extend_from_slice(&body);
            (wire::OP_MSG, levels + 1)
        }
        2 | 3 => {
            message.extend_from_slice(&0u32.to_le_bytes());
            message.push(0);
            let body = raw_document(&[
                ("insert", Field::String("c")),
                ("$db", Field::String("test")),
            ]);
            message.extend_from_slice(&body);
            let document = raw_document(&[("d", deep_field)]);
            message.push(1);
            message.extend_from_slice(&((4 + 10 + document.len()) as i32).to_le_bytes());
            message.extend_from_slice(b"documents\0");
            message.extend_from_slice(&document);
            (wire::OP_MSG, levels + 3)
        }
        _ => {
            message.extend_from_slice(&0i32.to_le_bytes());
            message.extend_from_slice(b"admin.$cmd\0");
            message.extend_from_slice(&0i32.to_le_bytes());
            message.extend_from_slice(&(-1i32).to_le_bytes());
            if place < 6 {
                let query = raw_document(&[("hello", Field::Int(1)), ("q", deep_field)]);
                message.extend_from_slice(&query);
            } else {
                message.extend_from_slice(&raw_document(&[("hello", Field::Int(1))]));
                message.extend_from_slice(&raw_document(&[("q", deep_field)]));
            }
            (wire::OP_QUERY, levels + 1)
        }
    };
    let length = message.len() as i32;
    message[..4].copy_from_slice(&length.to_le_bytes());
    message[4..8].copy_from_slice(&1i32.to_le_bytes());
    message[12..16].copy_from_slice(&op_code.to_le_bytes());
    (message, command_levels)
}

/// A field of [`raw_document`].
#[derive(Clone, Copy)]
enum Field<'a> {
    String(&'a str),
    Int(i32),
    /// An element type and the value's bytes.
    Raw(u8, &'a [u8]),
}

/// A BSON document of `fields`, as bytes.
fn raw_document(fields: &[(&str, Field<'_>)]) -> Vec<u8> {
    let mut out = vec![0; 4];
    for (key, field) in fields {
        let (kind, value): (u8, Vec<u8>) = match field {
            Field::String(text) => {
                let mut value = ((text.len() + 1) as i32).to_le_bytes().to_vec();
                value.extend_from_slice(text.as_bytes());
                value.push(0);
                (0x02, value)
            }
            Field::Int(number) => (0x10, number.to_le_bytes().to_vec()),
            Field::Raw(kind, bytes) => (*kind, bytes.to_vec()),
        };
        out.push(kind);
        out.extend_from_slice(key.as_bytes());
        out.push(0);
        out.extend_from_slice(&value);
    }
    out.push(0);
    let length = out.len() as i32;
    out[..4].copy_from_slice(&length.to_le_bytes());
    out
}
