//! A message's memory is about its size, whatever its nesting: a command nested as deep as
//! the limit allows around a large value is decoded without copying the value once per level
//! (`bson`'s own conversion copies each embedded document or array before decoding it, so a
//! 10 MB value under 199 levels took about 2 GB). Alone in its test binary, so that the
//! process's peak RSS is this test's.

mod common;

use std::time::Duration;

use bson::{Document, doc};
use common::{connect, read_reply, send, start_with};
use spillway_server::Executor;
use spillway_server::fuzzing::nested_message;

/// Answers `{ok: 1}` to everything, so that the reply is small.
struct Quiet;

impl Executor for Quiet {
    fn execute(&self, _command: Document) -> Document {
        doc! { "ok": 1.0 }
    }
    fn reap_expired(&self) {}
    fn command_names(&self) -> &'static [&'static str] {
        &[]
    }
}

fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kib| kib / 1024)
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deep_message_around_a_large_value_costs_about_its_size() {
    let server = start_with(Quiet, common::options()).await;
    // A flat leaf document holding a 10 MB string, under 199 levels of arrays and documents.
    let leaf = doc! { "s": "x".repeat(10_000_000) }.to_vec().unwrap();
    let (message, levels) = nested_message(199, 0x0aaa_aaaa, &leaf);
    assert_eq!(levels, 200);
    let before = peak_rss_mib();
    let mut stream = connect(server.address).await;
    for request in 0..3 {
        send(&mut stream, &message).await;
        let reply = tokio::time::timeout(Duration::from_secs(60), read_reply(&mut stream))
            .await
            .expect("answered within 60 s")
            .expect("a reply");
        assert_eq!(
            reply.msg_document().get_f64("ok").ok(),
            Some(1.0),
            "{request}"
        );
    }
    let grown = peak_rss_mib().saturating_sub(before);
    // The message, its buffer and its decoded command: a few times 10 MB, never 200 times.
    assert!(grown < 300, "the peak RSS grew by {grown} MiB");
    server.stop().await;
}
