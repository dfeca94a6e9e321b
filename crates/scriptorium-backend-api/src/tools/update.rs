//! `memory_update` (spec 02 §7).

use serde_json::Value;

use super::{Caller, ToolSpec};
use crate::local::Host;
use crate::tier::Capability;

pub(super) const SPEC: ToolSpec = ToolSpec {
    name: "memory_update",
    description: "SCAFFOLD",
    input_schema: r#"{"type":"object","properties":{}}"#,
    max_chars: 8000,
    capability: Capability::SourceAppend,
};

pub(super) fn run(host: &Host<'_>, arguments: &Value, caller: &Caller) -> String {
    let _ = (host, arguments, caller);
    String::from("SCAFFOLD: not built yet")
}
