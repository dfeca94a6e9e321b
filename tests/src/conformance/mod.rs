//! The conformance runner: runs every case of a golden-vector set laid out as
//! `tests/vectors/FORMAT.md` describes, and reports one line per case.
//!
//! Each kind lives in its own module with one `run(&Case) -> Outcome` function. A kind
//! whose layer does not exist yet reports `TODO <id> <layer>`; a case that this project
//! decided to answer differently (DIVERGENCES.md) reports `DIVERGES <id> <decision>`.

mod archive_parse;
mod archive_write;
mod fn_archive;
mod retrieval;
mod source_view;
mod temp_dir;
mod topic;
mod transaction;
mod transaction_inputs;
mod views;

use std::path::{Path, PathBuf};

use serde_json::Value;

/// One case of a vector set.
#[derive(Debug)]
pub struct Case {
    /// The case id, for example `archive_parse/hand-valid`.
    pub id: String,
    /// The case kind, for example `archive_parse`.
    pub kind: String,
    /// The folder of the vector set (the one holding `index.json`).
    pub root: PathBuf,
    /// The folder of this case (parent of its `input.json`).
    pub dir: PathBuf,
    /// The parsed `input.json`.
    pub input: Value,
    /// The parsed `expected.json`.
    pub expected: Value,
}

impl Case {
    /// Read a file of this case, relative to the case folder.
    pub fn read(&self, relative: &str) -> Result<Vec<u8>, String> {
        std::fs::read(self.dir.join(relative)).map_err(|e| format!("cannot read {relative}: {e}"))
    }

    /// A path inside the vector set (for `_resources/…` trees).
    pub fn resource(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }
}

/// What running one case gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The result matched the expectation.
    Pass,
    /// The result differed; the text says how, briefly.
    Fail(String),
    /// The case is one of the recorded divergences; the text names the decision.
    Diverges(String),
    /// The layer that owns this kind does not exist yet; the text names it.
    Todo(&'static str),
}

impl Outcome {
    /// A failing outcome from anything displayable.
    pub fn fail(why: impl std::fmt::Display) -> Self {
        Outcome::Fail(why.to_string())
    }

    /// Pass when the check returned `Ok`, else fail with its message.
    pub fn from_check(check: Result<(), String>) -> Self {
        match check {
            Ok(()) => Outcome::Pass,
            Err(why) => Outcome::Fail(why),
        }
    }
}

/// Load every case listed in `<root>/index.json`.
pub fn load_cases(root: &Path) -> Result<Vec<Case>, String> {
    let index_path = root.join("index.json");
    let index: Value = read_json(&index_path)?;
    let cases = index.get("cases").and_then(Value::as_array).ok_or("index.json has no `cases` array")?;
    let mut loaded = Vec::with_capacity(cases.len());
    for entry in cases {
        let field = |name: &str| {
            entry.get(name).and_then(Value::as_str).map(str::to_owned).ok_or(format!("case without `{name}`: {entry}"))
        };
        let id = field("id")?;
        let kind = field("kind")?;
        let input_rel = entry
            .get("inputs")
            .and_then(Value::as_array)
            .and_then(|inputs| inputs.first())
            .and_then(Value::as_str)
            .ok_or(format!("{id}: no inputs"))?;
        let input_path = root.join(input_rel);
        let dir = input_path.parent().map(Path::to_path_buf).unwrap_or_else(|| root.to_path_buf());
        let input = read_json(&input_path)?;
        let expected = read_json(&root.join(field("expected")?))?;
        loaded.push(Case { id, kind, root: root.to_path_buf(), dir, input, expected });
    }
    Ok(loaded)
}

fn read_json(path: &Path) -> Result<Value, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_slice(&bytes).map_err(|e| format!("{} is not JSON: {e}", path.display()))
}

/// Run one case, catching panics so that one broken case cannot hide the others.
pub fn run_case(case: &Case) -> Outcome {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| dispatch(case))) {
        Ok(outcome) => outcome,
        Err(_) => Outcome::fail("panicked"),
    }
}

fn dispatch(case: &Case) -> Outcome {
    match case.kind.as_str() {
        "archive_parse" => archive_parse::run(case),
        "archive_write" => archive_write::run(case),
        "legacy_source_parse" => source_view::run_legacy(case),
        "fn_speaker_decode" => source_view::run_legacy_speaker(case),
        "fn_source_location"
        | "fn_speaker_id"
        | "fn_source_metadata"
        | "fn_identity_header"
        | "fn_structured_speaker" => fn_archive::run(case),
        "topic_parse" | "topic_normalize" | "fn_topic_syntax" | "fn_temporal" | "fn_definition" => topic::run(case),
        "patch_apply" => transaction_inputs::run_patch(case),
        "fn_source_identity" => transaction_inputs::run_source_identity(case),
        "transaction" => transaction::run(case),
        "bm25_index" | "bm25_search" | "fn_bm25_tokenize" | "fn_path_prefix" => retrieval::run(case),
        "fn_o200k" => views::run_o200k(case),
        other => Outcome::fail(format!("unknown kind `{other}`")),
    }
}

/// The `function` of a single-function case, or an error naming its absence.
pub(crate) fn function_of(case: &Case) -> Result<&str, String> {
    case.input.get("function").and_then(Value::as_str).ok_or_else(|| "input without function".to_owned())
}

/// The failure for a function no table of this runner dispatches: it names the function.
pub(crate) fn undispatched(function: &str) -> String {
    format!("cannot dispatch function `{function}`")
}

/// Compare two JSON values and describe the first difference, with its JSON path.
pub fn diff_json(path: &str, got: &Value, want: &Value) -> Result<(), String> {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => {
            for (key, wv) in w {
                let sub = format!("{path}.{key}");
                match g.get(key) {
                    Some(gv) => diff_json(&sub, gv, wv)?,
                    None => return Err(format!("{sub}: missing")),
                }
            }
            if let Some(extra) = g.keys().find(|k| !w.contains_key(*k)) {
                return Err(format!("{path}.{extra}: unexpected"));
            }
            Ok(())
        }
        (Value::Array(g), Value::Array(w)) => {
            if g.len() != w.len() {
                return Err(format!("{path}: {} items, want {}", g.len(), w.len()));
            }
            g.iter().zip(w).enumerate().try_for_each(|(n, (gv, wv))| diff_json(&format!("{path}[{n}]"), gv, wv))
        }
        (Value::Number(g), Value::Number(w))
            if g.as_f64().zip(w.as_f64()).is_some_and(|(a, b)| (a - b).abs() <= 1e-6) =>
        {
            Ok(())
        }
        _ if got == want => Ok(()),
        _ => Err(format!("{path}: got {}, want {}", short(got), short(want))),
    }
}

fn short(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 80 { format!("{}…", text.chars().take(80).collect::<String>()) } else { text }
}
