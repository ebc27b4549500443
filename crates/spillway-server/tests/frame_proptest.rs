//! The framing decoder on random input (the same entry points as the `server_frame` and
//! `server_message` fuzz targets): it never panics, whatever arrives; valid messages survive
//! encode and decode; with a checksum, any flipped byte of the sections is caught; the
//! nesting limit refuses exactly the messages deeper than it, and the iterative check agrees
//! with the recursive decoder.

use bson::{Bson, Document};
use proptest::prelude::*;
use spillway_server::fuzzing::{check_nesting_agrees, decode_frame, nested_message, serve_bytes};
use spillway_server::wire::{self, MAX_BSON_DEPTH, OpMsg, Request};

fn value() -> impl Strategy<Value = Bson> {
    let leaf = prop_oneof![
        any::<i32>().prop_map(Bson::Int32),
        any::<i64>().prop_map(Bson::Int64),
        any::<bool>().prop_map(Bson::Boolean),
        "[a-z]{0,8}".prop_map(Bson::String),
        Just(Bson::Null),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Bson::Array),
            prop::collection::vec(("[a-z]{1,4}", inner), 0..4)
                .prop_map(|fields| Bson::Document(fields.into_iter().collect())),
        ]
    })
}

fn document() -> impl Strategy<Value = Document> {
    prop::collection::vec(("[a-z$]{1,6}", value()), 0..5)
        .prop_map(|fields| fields.into_iter().collect())
}

fn op_msg() -> impl Strategy<Value = OpMsg> {
    (
        any::<bool>(),
        any::<bool>(),
        document(),
        prop::collection::vec(
            ("[a-z]{1,6}", prop::collection::vec(document(), 0..3)),
            0..3,
        ),
    )
        .prop_map(|(checksum, more_to_come, body, sequences)| OpMsg {
            flags: u32::from(checksum) | (u32::from(more_to_come) << 1),
            body,
            sequences,
        })
}

/// Random bytes behind a plausible header (the right length, a real opcode), so that the
/// decoder gets past the header into sections and documents.
fn framed_bytes() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::sample::select(vec![2013i32, 2004, 2012, 1]),
        prop::collection::vec(any::<u8>(), 0..200),
    )
        .prop_map(|(op_code, body)| {
            let mut bytes = Vec::new();
            bytes.extend_from_slice(&((16 + body.len()) as i32).to_le_bytes());
            bytes.extend_from_slice(&3i32.to_le_bytes());
            bytes.extend_from_slice(&0i32.to_le_bytes());
            bytes.extend_from_slice(&op_code.to_le_bytes());
            bytes.extend_from_slice(&body);
            bytes
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        decode_frame(&bytes);
    }

    #[test]
    fn random_bodies_behind_a_valid_header_never_panic(bytes in framed_bytes()) {
        decode_frame(&bytes);
    }

    #[test]
    fn encoded_messages_decode_to_themselves(message in op_msg()) {
        let bytes = message.encode(5, 0).unwrap();
        prop_assert!(decode_frame(&bytes));
        prop_assert_eq!(wire::decode_message(&bytes).unwrap(), Request::Msg(message));
    }

    #[test]
    fn a_flipped_byte_under_a_checksum_is_refused(
        message in op_msg(),
        position in any::<prop::sample::Index>(),
        flip in 1u8..,
    ) {
        let message = OpMsg { flags: wire::FLAG_CHECKSUM_PRESENT, ..message };
        let mut bytes = message.encode(5, 0).unwrap();
        // Any byte after the header and the flags: the sections or the checksum itself.
        let at = 20 + position.index(bytes.len() - 20);
        bytes[at] ^= flip;
        prop_assert!(wire::decode_message(&bytes).is_err());
    }

    #[test]
    fn mutated_messages_never_panic(
        message in op_msg(),
        mutations in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = message.encode(5, 0).unwrap();
        for (position, byte) in mutations {
            let at = position.index(bytes.len());
            bytes[at] = byte;
        }
        decode_frame(&bytes);
    }
}

// The read path and the nesting limit: fewer cases, each reads whole streams.
proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn a_stream_of_random_bytes_is_read_as_a_connection_reads_it(
        bytes in prop::collection::vec(any::<u8>(), 0..300),
    ) {
        serve_bytes(&bytes);
    }

    #[test]
    fn a_stream_of_valid_and_mutated_messages_never_panics(
        messages in prop::collection::vec(op_msg(), 1..4),
        mutation in (any::<prop::sample::Index>(), any::<u8>()),
    ) {
        let mut bytes = Vec::new();
        for message in &messages {
            bytes.extend(message.encode(5, 0).unwrap());
        }
        let served = serve_bytes(&bytes);
        prop_assert_eq!(served.accepted, messages.len());
        prop_assert_eq!(served.closed_by, None);
        let at = mutation.0.index(bytes.len());
        bytes[at] = mutation.1;
        serve_bytes(&bytes);
    }

    #[test]
    fn nesting_is_refused_exactly_past_the_limit(
        levels in prop_oneof![
            (MAX_BSON_DEPTH - 6)..(MAX_BSON_DEPTH + 4),
            0usize..3_000,
        ],
        shape in any::<u32>(),
    ) {
        let (bytes, command_levels) = nested_message(levels, shape, &[]);
        let served = serve_bytes(&bytes);
        if command_levels > MAX_BSON_DEPTH {
            prop_assert_eq!(served.too_deep, 1);
        } else {
            prop_assert_eq!(served.accepted, 1);
        }
        prop_assert_eq!(served.closed_by, None);
    }

    #[test]
    fn the_nesting_check_agrees_with_the_decoder(document in document(), cut in any::<prop::sample::Index>(), byte in any::<u8>()) {
        let mut bytes = document.to_vec().unwrap();
        check_nesting_agrees(&bytes, 1);
        check_nesting_agrees(&bytes, MAX_BSON_DEPTH);
        let at = cut.index(bytes.len());
        bytes[at] = byte;
        check_nesting_agrees(&bytes, 1);
    }
}

#[test]
fn a_hand_built_message_decodes_with_its_sequences_merged() {
    let body = bson::doc! { "insert": "c", "$db": "test" };
    let documents = vec![bson::doc! { "_id": 1 }, bson::doc! { "_id": 2 }];
    let message = OpMsg {
        flags: wire::FLAG_CHECKSUM_PRESENT,
        body,
        sequences: vec![("documents".to_owned(), documents)],
    };
    let bytes = message.encode(1, 0).unwrap();
    let Ok(Request::Msg(decoded)) = wire::decode_message(&bytes) else {
        panic!("decodes");
    };
    assert_eq!(
        decoded.into_command().unwrap(),
        bson::doc! { "insert": "c", "$db": "test", "documents": [{ "_id": 1 }, { "_id": 2 }] }
    );
}
