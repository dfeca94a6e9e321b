//! The `core.md` render report as kept in `<runtime-dir>/core-report.json`: stable,
//! versioned JSON that `scriptorium status` reads back, so a person can see why a block
//! is missing from `core.md` without rendering again.

use serde_json::{Map, Value, json};

use crate::core_render::{CoreReport, LeftOut, LeftOutReason};

/// The report file's format version; a reader ignores a report of any other version.
pub const CORE_REPORT_FORMAT: u64 = 1;

impl CoreReport {
    /// The report as a JSON value: `format`, `budget`, `tokens_used`, `rendered` (block
    /// ids) and `left_out` (`[{"block_id", "reason": "pending"|"over_budget"}]`).
    pub fn to_json(&self) -> Value {
        let left_out: Vec<Value> = self
            .left_out
            .iter()
            .map(|left| json!({"block_id": left.block_id, "reason": left.reason.as_str()}))
            .collect();
        json!({
            "format": CORE_REPORT_FORMAT,
            "budget": self.budget,
            "tokens_used": self.tokens_used,
            "rendered": self.rendered,
            "left_out": left_out,
        })
    }

    /// The bytes of the report file: pretty JSON, keys sorted, plus LF.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut text = serde_json::to_string_pretty(&self.to_json()).unwrap_or_default();
        text.push('\n');
        text.into_bytes()
    }

    /// Read a report file back; `None` when it is not a report of this format version
    /// (a damaged or newer file is shown as "no report", never trusted).
    pub fn from_bytes(bytes: &[u8]) -> Option<CoreReport> {
        let value: Value = serde_json::from_slice(bytes).ok()?;
        let object = value.as_object()?;
        if object.get("format")?.as_u64()? != CORE_REPORT_FORMAT {
            return None;
        }
        let number = |key: &str| object.get(key)?.as_u64().and_then(|n| usize::try_from(n).ok());
        let rendered: Option<Vec<String>> =
            object.get("rendered")?.as_array()?.iter().map(|id| id.as_str().map(str::to_owned)).collect();
        let left_out: Option<Vec<LeftOut>> =
            object.get("left_out")?.as_array()?.iter().map(|item| left_out(item.as_object()?)).collect();
        Some(CoreReport {
            tokens_used: number("tokens_used")?,
            budget: number("budget")?,
            rendered: rendered?,
            left_out: left_out?,
        })
    }
}

fn left_out(item: &Map<String, Value>) -> Option<LeftOut> {
    let reason = match item.get("reason")?.as_str()? {
        "pending" => LeftOutReason::Pending,
        "over_budget" => LeftOutReason::OverBudget,
        _ => return None,
    };
    Some(LeftOut { block_id: item.get("block_id")?.as_str()?.to_owned(), reason })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_round_trips_and_other_versions_are_ignored() {
        let report = CoreReport {
            tokens_used: 12,
            budget: 2000,
            rendered: vec!["aaaa".to_owned()],
            left_out: vec![
                LeftOut { block_id: "bbbb".to_owned(), reason: LeftOutReason::Pending },
                LeftOut { block_id: "cccc".to_owned(), reason: LeftOutReason::OverBudget },
            ],
        };
        let bytes = report.to_bytes();
        assert_eq!(CoreReport::from_bytes(&bytes), Some(report.clone()));
        let text = String::from_utf8(bytes).expect("UTF-8");
        assert!(text.starts_with("{\n  \"budget\": 2000,\n  \"format\": 1,\n"), "{text}");
        assert!(text.ends_with("}\n"));
        let newer = text.replace("\"format\": 1", "\"format\": 2");
        assert_eq!(CoreReport::from_bytes(newer.as_bytes()), None);
        assert_eq!(CoreReport::from_bytes(b"not json"), None);
    }
}
