//! writer-status.json: exact bytes, round trip, and what reads as nothing recorded.

use super::*;

#[test]
fn the_file_has_the_spec_shape_and_round_trips() {
    let status = WriterStatus {
        last_outcome: Some("success"),
        last_success_at: Some("2024-05-01T10:00:00+00:00".into()),
        last_failure: Some(LastFailure {
            at: "2024-05-01T09:00:00+00:00".into(),
            reason_code: MemoryWriteFailureCode::ModelRateLimit,
            retryable: true,
        }),
    };
    let expected = "{\n  \"version\": 1,\n  \"last_outcome\": \"success\",\n  \"last_success_at\": \"2024-05-01T10:00:00+00:00\",\n  \"last_failure\": {\n    \"at\": \"2024-05-01T09:00:00+00:00\",\n    \"reason_code\": \"MODEL_RATE_LIMIT\",\n    \"retryable\": true\n  }\n}\n";
    assert_eq!(String::from_utf8(status.to_bytes()).expect("utf8"), expected);
    assert_eq!(WriterStatus::parse(expected.as_bytes()), status);
    let empty =
        "{\n  \"version\": 1,\n  \"last_outcome\": null,\n  \"last_success_at\": null,\n  \"last_failure\": null\n}\n";
    assert_eq!(String::from_utf8(WriterStatus::default().to_bytes()).expect("utf8"), empty);
}

#[test]
fn wrong_versions_and_malformed_fields_read_as_null() {
    assert_eq!(WriterStatus::parse(br#"{"version": 2, "last_outcome": "success"}"#), WriterStatus::default());
    assert_eq!(WriterStatus::parse(b"not json"), WriterStatus::default());
    let odd = WriterStatus::parse(
        br#"{"version": 1, "last_outcome": "maybe", "last_success_at": "yesterday", "last_failure": {"at": "2024-05-01T09:00:00+00:00", "reason_code": "SOMETHING_ELSE", "retryable": false}}"#,
    );
    assert_eq!(odd, WriterStatus::default());
}
