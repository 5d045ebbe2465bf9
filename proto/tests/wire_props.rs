//! Property tests of the frame codec: round trip, garbage never panics, oversized
//! prefixes are refused before any allocation.

use chrono::{TimeZone, Utc};
use proptest::prelude::*;
use raven_proto::wire::{self, FrameDecoder, Hello, WireError, MAX_FRAME};
use raven_proto::{BusyPolicy, Origin, PlannerDecision, TurnRequest};
use std::io::Read;

fn turn_strategy() -> impl Strategy<Value = TurnRequest> {
    (
        ".{0,40}",
        prop_oneof![Just(Origin::User), Just(Origin::Sentinel), Just(Origin::Cron)],
        ".{0,20}",
        ".{0,200}",
        prop_oneof![Just(BusyPolicy::Append), Just(BusyPolicy::Inject), Just(BusyPolicy::Interrupt)],
        0i64..4_000_000_000,
    )
        .prop_map(|(id, origin, conv, content, bp, secs)| {
            let at = Utc.timestamp_opt(secs, 0).unwrap();
            TurnRequest::new(id, origin, conv.clone(), "cli", conv, content, bp, at)
        })
}

proptest! {
    #[test]
    fn turn_request_frames_round_trip(turn in turn_strategy()) {
        let frame = wire::encode_frame(&turn, MAX_FRAME).unwrap();
        let mut dec = FrameDecoder::new(MAX_FRAME);
        // Feed it in two pieces to exercise partial frames.
        let cut = frame.len() / 2;
        dec.push(&frame[..cut]);
        prop_assert!(dec.next_frame::<TurnRequest>().unwrap().is_none() || cut >= frame.len());
        dec.push(&frame[cut..]);
        let back: TurnRequest = dec.next_frame().unwrap().unwrap();
        prop_assert_eq!(back, turn.clone());
        let mut slice = &frame[..];
        let back2: TurnRequest = wire::read_frame(&mut slice, MAX_FRAME).unwrap().unwrap();
        prop_assert_eq!(back2, turn);
    }

    #[test]
    fn decision_frames_round_trip(msg in ".{0,300}", score in 0.0f64..1.0) {
        let mut d = PlannerDecision::with_message(raven_proto::Action::Nudge, msg, "why");
        d.proactivity_score = score;
        let frame = wire::encode_frame(&d, MAX_FRAME).unwrap();
        let back: PlannerDecision = wire::decode_body(&frame[4..]).unwrap();
        prop_assert_eq!(back, d);
    }

    #[test]
    fn arbitrary_bytes_never_panic_the_decoder(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let mut dec = FrameDecoder::new(MAX_FRAME);
        dec.push(&bytes);
        // Any outcome is fine as long as it is a value, not a panic.
        let _ = dec.next_frame::<TurnRequest>();
        let _ = wire::decode_body::<Hello>(&bytes);
        let _ = wire::decode_body::<PlannerDecision>(&bytes);
        let mut slice = &bytes[..];
        let _ = wire::read_frame::<TurnRequest>(&mut slice, MAX_FRAME);
    }

    #[test]
    fn oversized_prefixes_are_rejected(len in (MAX_FRAME as u32 + 1)..=u32::MAX) {
        let mut dec = FrameDecoder::new(MAX_FRAME);
        dec.push(&len.to_be_bytes());
        let err = dec.next_body().unwrap_err();
        let too_large = matches!(err, WireError::TooLarge { .. });
        prop_assert!(too_large);
    }
}

/// A reader that hands out a 4 GiB length prefix and then fails the test if anyone reads
/// further: rejecting the frame must not wait for (or allocate) its body.
struct PrefixThenPoison {
    served: usize,
}

impl Read for PrefixThenPoison {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let prefix = u32::MAX.to_be_bytes();
        assert!(self.served < 4, "decoder read past an oversized length prefix");
        let n = buf.len().min(4 - self.served);
        buf[..n].copy_from_slice(&prefix[self.served..self.served + n]);
        self.served += n;
        Ok(n)
    }
}

#[test]
fn four_gib_prefix_is_rejected_without_reading_or_allocating_the_body() {
    let mut r = PrefixThenPoison { served: 0 };
    let err = wire::read_frame::<TurnRequest>(&mut r, MAX_FRAME).unwrap_err();
    assert!(matches!(err, WireError::TooLarge { len, .. } if len == u32::MAX as usize));
    assert_eq!(r.served, 4);

    let mut dec = FrameDecoder::new(MAX_FRAME);
    dec.push(&u32::MAX.to_be_bytes());
    assert!(matches!(dec.next_body(), Err(WireError::TooLarge { .. })));
    assert_eq!(dec.buffered(), 4, "nothing was reserved for the body");
}

#[test]
fn encode_refuses_a_body_over_the_maximum() {
    let big = "x".repeat(200);
    let err = wire::encode_frame(&big, 64).unwrap_err();
    assert!(matches!(err, WireError::TooLarge { .. }));
}

#[test]
fn handshake_checks_magic_and_version() {
    assert!(Hello::new("t").check().is_ok());
    let mut bad = Hello::new("t");
    bad.version += 1;
    assert!(matches!(bad.check(), Err(WireError::VersionMismatch { .. })));
    bad = Hello::new("t");
    bad.magic = *b"HTTP";
    assert!(matches!(bad.check(), Err(WireError::BadMagic)));
}

#[test]
fn truncated_frame_is_an_error_and_clean_eof_is_none() {
    let frame = wire::encode_frame(&Hello::new("x"), MAX_FRAME).unwrap();
    let mut short = &frame[..frame.len() - 1];
    assert!(matches!(wire::read_frame::<Hello>(&mut short, MAX_FRAME), Err(WireError::Truncated)));
    let mut empty: &[u8] = &[];
    assert!(wire::read_frame::<Hello>(&mut empty, MAX_FRAME).unwrap().is_none());
}

#[test]
fn trailing_bytes_are_an_error() {
    let mut frame = wire::encode_frame(&Hello::new("x"), MAX_FRAME).unwrap();
    frame.push(0);
    assert!(matches!(wire::decode_body::<Hello>(&frame[4..]), Err(WireError::Trailing { trailing: 1 })));
}

#[test]
fn decoded_turn_request_cannot_smuggle_a_proactive_inject() {
    // Build the bytes of a SENTINEL turn with INJECT by hand-encoding an equivalent struct.
    #[derive(serde::Serialize)]
    struct Forged<'a> {
        request_id: &'a str,
        origin: Origin,
        conversation_id: &'a str,
        channel: &'a str,
        chat_id: &'a str,
        content: &'a str,
        busy_policy: BusyPolicy,
        created_at: chrono::DateTime<Utc>,
    }
    let forged = Forged {
        request_id: "r",
        origin: Origin::Sentinel,
        conversation_id: "c",
        channel: "cli",
        chat_id: "1",
        content: "x",
        busy_policy: BusyPolicy::Inject,
        created_at: Utc.timestamp_opt(0, 0).unwrap(),
    };
    let frame = wire::encode_frame(&forged, MAX_FRAME).unwrap();
    let t: TurnRequest = wire::decode_body(&frame[4..]).unwrap();
    assert_eq!(t.busy_policy(), BusyPolicy::Append);
}
