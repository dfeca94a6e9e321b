//! `fn_o200k`: o200k_base token ids and counts, the encoding of `core.md`'s budget.
//!
//! The reference's default `encode` raises on special-token strings; by decision Q3 we
//! count them as plain text, which is the vector's `ids`/`count` (`disallowed_special=()`).
//! So a `default_encode` error is the recorded divergence, checked as that count.

use serde_json::{Value, json};

use scriptorium_derived_views::{count_o200k, o200k_ids};

use super::{Case, Outcome, diff_json, function_of, undispatched};

/// Run one `fn_o200k` case.
/// A case whose special-token strings the reference's default `encode` refuses prints
/// DIVERGES (decision Q3) once its ids and counts match.
pub(super) fn run_o200k(case: &Case) -> Outcome {
    match check_o200k(case) {
        Ok(0) => Outcome::Pass,
        Ok(refused) => Outcome::Diverges(format!("Q3: {refused} special-token case(s) counted as plain text")),
        Err(why) => Outcome::Fail(why),
    }
}

/// Check every case; the number of cases whose default encode the reference refused.
fn check_o200k(case: &Case) -> Result<usize, String> {
    let function = function_of(case)?;
    if function != "tiktoken.get_encoding('o200k_base').encode" {
        return Err(undispatched(function));
    }
    let mut refused = 0;
    let cases = case.input.get("cases").and_then(Value::as_array).ok_or("input without cases")?;
    let results = case.expected.get("results").and_then(Value::as_array).ok_or("expected without results")?;
    if cases.len() != results.len() {
        return Err(format!("{} cases but {} results", cases.len(), results.len()));
    }
    for (n, (text, want)) in cases.iter().zip(results).enumerate() {
        let text = text.as_str().ok_or(format!("cases[{n}] is not a string"))?;
        let count = count_o200k(text);
        diff_json(&format!("results[{n}].ids"), &json!(o200k_ids(text)), &want["ids"])?;
        diff_json(&format!("results[{n}].count"), &json!(count), &want["count"])?;
        let default = &want["default_encode"];
        if default["ok"].as_bool() == Some(true) {
            diff_json(&format!("results[{n}].default_encode.value"), &json!(count), &default["value"])?;
        } else {
            refused += 1;
        }
    }
    Ok(refused)
}
