//! Tidy checks: plain `#[test]`s, so `cargo test --workspace` enforces them with no extra CI step
//! (rust-analyzer's tidy tests).
//!
//! - `layering`: every edge between workspace crates points down the ladder in `LAYERS`, members outside
//!   the ladder are never depended on, and each layer uses only the third-party crates allowed for it.
//! - `architecture_layer_table`: the layer table in docs/ARCHITECTURE.md lists `LAYERS` in order.
//! - `manifest_hygiene`: workspace lints, folder name = package name, `publish = false` where required.
//! - `file_hygiene`: every Rust file opens with `//!`, has no trailing whitespace, and holds no ignored
//!   test, panic-expecting test or stub macro.
//! - `error_code_registry`: docs/error-codes.md and the code strings in `crates/` agree.
//! - `cli_facade`: the CLI's normal dependencies name no layer but backend-api (whose `layers`
//!   re-exports it reaches the rest through) and archive-format (for `archive parse`).
//!
//! Each test collects every violation before it fails, so one run shows the whole list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::LAYERS;

/// Members outside the ladder: they may depend on any layer, and nothing may depend on them.
const TOP_ONLY: &[&str] = &["scriptorium-tests", "xtask", "scriptorium-benches"];

/// The only dependencies xtask may have, so it builds in seconds and survives a broken layer.
const XTASK_DEPS: &[&str] = &["anyhow", "serde_json"];

/// Third-party crates each layer may use as normal dependencies; anything else fails `layering`.
/// Every entry carries its reason. An entry the crate no longer declares fails too, so the table stays true.
/// A layer that is not written yet has no entry: the issue that writes it adds one.
const ALLOWED_EXTERNAL: &[(&str, &[&str])] = &[
    (
        "scriptorium-archive-format",
        &[
            // The frame and field grammar; private, no nom type in the public API (05-dependencies).
            "nom",
            // Line splitting in the scanner's hot loop.
            "memchr",
            // Anchors are the first 16 hex digits of SHA-256 of the source id.
            "sha2",
            // Fast UTF-8 validation of whole archive files before scanning.
            "simdutf8",
            // The source-meta token is unpadded base64url.
            "base64",
            // Canonical JSON of source-meta tokens and of the writer record lines.
            "serde_json",
            // NFC for path-collision keys (decision Q2: Rust's own Unicode tables).
            "unicode-normalization",
            // General categories for Python's `str.isprintable` (decision Q2).
            "unicode-general-category",
            // Python's full case folding for path-collision keys (decision Q2).
            "caseless",
            // Optional, behind the `arbitrary` feature only: structured inputs for the roundtrip fuzz target.
            "arbitrary",
        ],
    ),
    (
        "scriptorium-topic-markdown",
        &[
            // The topic grammar (block ids, footnotes, citations); the workspace's one combinator library.
            "nom",
            // Generated block ids are SHA-256 prefixes of their content, as the reference derives them.
            "sha2",
        ],
    ),
    (
        "scriptorium-transaction",
        &[
            // runtime.json, the journal manifest and the JSON details of rejection errors.
            "serde_json",
            // The journal manifest records the old and new SHA-256 of every file it installs (spec 04 C2).
            "sha2",
            // Git history without a git binary (decision "history", 05-dependencies §A7); no gix type in the API.
            "gix",
        ],
    ),
    (
        "scriptorium-retrieval",
        &[
            // grep's regex mode (spec 02 §6.8): linear-time search, no backtracking.
            "regex",
        ],
    ),
    (
        "scriptorium-derived-views",
        &[
            // core.md's token budget is counted with o200k_base; bpe-openai embeds the table prebuilt (docs/ARCHITECTURE.md, Decisions).
            "bpe-openai",
            // JSON string escapes of recent_events.jsonl and relations.json, as Python's json.dumps writes them.
            "serde_json",
        ],
    ),
    (
        "scriptorium-writer-runtime",
        &[
            // The session store: one SQLite file, bundled so a fresh machine needs nothing installed (05-dependencies).
            "rusqlite",
            // Node metadata and content parts, writer-status.json, session-end.json and the unpaired quota file.
            "serde_json",
            // Unpaired group speech gets its message id from SHA-256 of its identity (spec 02 §2.12).
            "sha2",
            // The LLM clients' wire types (Chat Completions, Messages): derive, no hand-written JSON walking.
            "serde",
            // The LLM clients' HTTP: synchronous, rustls, no tokio below the CLI (05-dependencies §A10); private to src/llm/http.rs.
            "ureq",
            // The writer stage's Grep and Glob (spec 02 §10.4): linear-time regex, no backtracking on model input.
            "regex",
        ],
    ),
    (
        "scriptorium-backend-api",
        &[
            // sanitize_context's fence patterns (spec 02 §1.3): linear-time, non-greedy across lines.
            "regex",
            // The configuration file (05-dependencies: toml 1.2 for backend-api); no toml type in the API.
            "toml",
            // The tools' JSON arguments, input schemas, TxError objects and pretty status/result output (spec 02 §7).
            "serde_json",
            // The warm backend's file-system watcher (decision P9; see ARCHITECTURE.md Decisions).
            "notify",
        ],
    ),
    (
        "scriptorium-cli",
        &[
            // Argument parsing for the `scriptorium` binary (05-dependencies: front-ends).
            "clap",
            // Machine-readable output (`--json`) and the JSON-RPC of the MCP stdio server.
            "serde_json",
            // SIGINT/SIGTERM during `update`: a safe flag handler, so the CLI can finish or
            // cancel the install and say which happened (`#![forbid(unsafe_code)]`).
            "signal-hook",
            // `serve`: the HTTP API on loopback (05-dependencies §A8: axum + tokio in the CLI
            // crate only; the layers below stay synchronous).
            "axum",
            "tokio",
            // `serve`'s history diff: the unified diff of one file between two revisions.
            "similar",
            // Progress bars on long work (index build, backfill, export), drawn only on a TTY (05-dependencies).
            "indicatif",
            // `export`: the gzip stream and the tar archive of the workspace (05-dependencies).
            "flate2",
            "tar",
            // `watch`: the transcript directories of the agents it imports from (05-dependencies: notify 8).
            "notify",
        ],
    ),
];

/// Third-party crates a layer may use only as an optional dependency, so no default build pulls them in.
const OPTIONAL_ONLY: &[(&str, &str)] = &[("scriptorium-archive-format", "arbitrary")];

/// Public contract codes spelled by the spec that happen to start with a layer prefix (spec 02 §2.9).
/// Their spelling is fixed by the spec, not by the layer naming rule, so any layer that raises them may own the row.
const SPEC_CODES_WITH_LAYER_PREFIX: &[&str] =
    &["WRITER_PRECONDITION_FAILED", "WRITER_FAILURE_UNKNOWN", "WRITER_NO_PROGRESS"];

/// Members that must never be published: they are tooling, not libraries.
const UNPUBLISHED: &[&str] = &["xtask", "scriptorium-tests", "scriptorium-benches"];

/// Layer prefixes of error codes, and the crate that owns each prefix.
const CODE_PREFIXES: &[(&str, &str)] = &[
    ("ARCHIVE", "scriptorium-archive-format"),
    ("TOPIC", "scriptorium-topic-markdown"),
    ("TXN", "scriptorium-transaction"),
    ("RETRIEVAL", "scriptorium-retrieval"),
    ("VIEWS", "scriptorium-derived-views"),
    ("WRITER", "scriptorium-writer-runtime"),
    ("BACKEND", "scriptorium-backend-api"),
    ("CLI", "scriptorium-cli"),
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask/ sits directly in the workspace root").to_path_buf()
}

/// `$CARGO metadata --format-version 1 --no-deps`: declared dependencies only, no resolution, no network.
fn cargo_metadata() -> Value {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .current_dir(workspace_root())
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .expect("cargo metadata can be started");
    assert!(output.status.success(), "cargo metadata failed:\n{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON")
}

fn packages(meta: &Value) -> &[Value] {
    meta["packages"].as_array().expect("cargo metadata has a packages array")
}

fn str_field<'a>(value: &'a Value, key: &str) -> &'a str {
    value[key].as_str().unwrap_or_else(|| panic!("cargo metadata: `{key}` is a string in {value}"))
}

fn rank(name: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| *layer == name)
}

fn allowed_external(layer: &str) -> &'static [&'static str] {
    ALLOWED_EXTERNAL.iter().find(|(name, _)| *name == layer).map_or(&[], |(_, allowed)| allowed)
}

fn fail_if_any(what: &str, errors: &[String]) {
    assert!(errors.is_empty(), "\n{what} ({} found):\n  {}\n", errors.len(), errors.join("\n  "));
}

#[test]
fn layering() {
    let meta = cargo_metadata();
    let members: BTreeSet<&str> = packages(&meta).iter().map(|pkg| str_field(pkg, "name")).collect();
    let mut errors = Vec::new();
    for (layer, _) in ALLOWED_EXTERNAL {
        if rank(layer).is_none() {
            errors.push(format!("ALLOWED_EXTERNAL names `{layer}`, which is not in LAYERS"));
        }
    }
    for pkg in packages(&meta) {
        let name = str_field(pkg, "name");
        let deps = pkg["dependencies"].as_array().expect("a package has a dependencies array");
        if name == "xtask" {
            for dep in deps {
                let dep_name = str_field(dep, "name");
                if !XTASK_DEPS.contains(&dep_name) {
                    errors.push(format!("xtask -> {dep_name}: xtask depends only on {}", XTASK_DEPS.join(" and ")));
                }
            }
        }
        let me = rank(name);
        if me.is_none() && !TOP_ONLY.contains(&name) {
            errors.push(format!("{name}: workspace member is neither in LAYERS nor in TOP_ONLY"));
            continue;
        }
        let mut declared_external = BTreeSet::new();
        for dep in deps {
            let dep_name = str_field(dep, "name");
            let kind = dep["kind"].as_str().unwrap_or("normal");
            if TOP_ONLY.contains(&dep_name) {
                errors.push(format!("{name} -> {dep_name} ({kind}): nothing may depend on {dep_name}"));
            } else if let Some(them) = rank(dep_name) {
                // A self dev-dependency (to turn on features in tests) is fine; anything else points down.
                if let Some(me) = me
                    && them >= me
                    && !(kind == "dev" && dep_name == name)
                {
                    errors.push(format!("{name} -> {dep_name} ({kind}): edge does not point down the ladder"));
                }
                if kind == "normal" && str_field(dep, "req") == "*" {
                    errors.push(format!("{name} -> {dep_name}: an internal dependency needs a version"));
                }
            } else if members.contains(dep_name) {
                errors.push(format!("{name} -> {dep_name}: workspace crate outside LAYERS and TOP_ONLY"));
            } else if me.is_some() && kind == "normal" {
                declared_external.insert(dep_name);
                if !allowed_external(name).contains(&dep_name) {
                    errors.push(format!(
                        "{name} -> {dep_name}: not in ALLOWED_EXTERNAL for {name} (add it with a reason)"
                    ));
                }
                let optional = dep["optional"].as_bool().unwrap_or(false);
                if OPTIONAL_ONLY.contains(&(name, dep_name)) && !optional {
                    errors.push(format!("{name} -> {dep_name}: allowed only as an optional dependency"));
                }
            }
        }
        if me.is_some() {
            for allowed in allowed_external(name) {
                if !declared_external.contains(allowed) {
                    errors.push(format!("{name}: ALLOWED_EXTERNAL lists `{allowed}`, which it does not declare"));
                }
            }
        }
    }
    fail_if_any("layering violations", &errors);
}

/// The front end and the layers it may name as normal dependencies: it reaches every
/// other layer through backend-api's `layers` re-exports, so the contract crate stays the
/// one door (archive-format stays direct for `archive parse`, which needs nothing else).
const FACADE: (&str, &[&str]) = ("scriptorium-cli", &["scriptorium-backend-api", "scriptorium-archive-format"]);

/// The facade violations among `deps`, `(name, kind)` pairs of the front end's declared
/// dependencies: a normal dependency on a layer `FACADE` does not allow. Tests may use
/// any lower layer as a dev-dependency.
fn facade_violations<'a>(deps: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
    let (front, allowed) = FACADE;
    deps.into_iter()
        .filter(|(dep, kind)| *kind == "normal" && rank(dep).is_some() && !allowed.contains(dep))
        .map(|(dep, _)| {
            format!("{front} -> {dep}: reach it through scriptorium_backend_api::layers, not as a dependency")
        })
        .collect()
}

#[test]
fn cli_facade() {
    let meta = cargo_metadata();
    let (front, _) = FACADE;
    let cli = packages(&meta).iter().find(|pkg| str_field(pkg, "name") == front).expect("the CLI is a member");
    let deps = cli["dependencies"].as_array().expect("a package has a dependencies array");
    let errors =
        facade_violations(deps.iter().map(|dep| (str_field(dep, "name"), dep["kind"].as_str().unwrap_or("normal"))));
    fail_if_any("facade violations", &errors);
}

#[test]
fn facade_rule_allows_only_backend_api_and_archive_format() {
    let deps = [
        ("scriptorium-backend-api", "normal"),
        ("scriptorium-archive-format", "normal"),
        ("scriptorium-transaction", "dev"),
        ("serde_json", "normal"),
        ("scriptorium-retrieval", "normal"),
        ("scriptorium-writer-runtime", "build"),
        ("scriptorium-topic-markdown", "normal"),
    ];
    let errors = facade_violations(deps);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("-> scriptorium-retrieval:"), "{errors:?}");
    assert!(errors[1].contains("-> scriptorium-topic-markdown:"), "{errors:?}");
}

/// `cargo xtask layers` must name every ladder crate in the workspace, so `.ci/run` checks each alone.
#[test]
fn layers_command_covers_workspace() {
    let meta = cargo_metadata();
    let mut in_workspace: Vec<&str> =
        packages(&meta).iter().map(|pkg| str_field(pkg, "name")).filter(|n| rank(n).is_some()).collect();
    in_workspace.sort_by_key(|name| rank(name));
    let ctx = crate::Ctx { root: workspace_root(), cargo: "cargo".into() };
    assert_eq!(crate::existing_layers(&ctx), in_workspace);
}

/// The cells of a Markdown table row, trimmed; `None` when the line is not a table row.
fn table_cells(line: &str) -> Option<Vec<&str>> {
    let inner = line.trim().strip_prefix('|')?;
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    Some(inner.split('|').map(str::trim).collect())
}

fn is_separator_row(cells: &[&str]) -> bool {
    cells.iter().all(|cell| !cell.is_empty() && cell.chars().all(|c| matches!(c, '-' | ':' | ' ')))
}

/// A cell without surrounding backticks or emphasis.
fn plain(cell: &str) -> &str {
    cell.trim_matches(|c| c == '`' || c == '*' || c == ' ')
}

/// The `(rank, crate)` rows of the first table after the `## Layers` heading.
fn layer_table(doc: &str) -> Vec<(String, String)> {
    let mut rows = Vec::new();
    let mut in_section = false;
    let mut in_table = false;
    for line in doc.lines() {
        if line.starts_with("## ") {
            if in_table {
                break;
            }
            in_section = line.trim() == "## Layers";
            continue;
        }
        if !in_section {
            continue;
        }
        match table_cells(line) {
            Some(cells) => {
                in_table = true;
                if is_separator_row(&cells) || cells.first().is_some_and(|c| plain(c) == "rank") {
                    continue;
                }
                let cell = |i: usize| cells.get(i).map_or_else(String::new, |c| plain(c).to_owned());
                rows.push((cell(0), cell(1)));
            }
            None if in_table => break,
            None => {}
        }
    }
    rows
}

#[test]
fn architecture_layer_table() {
    let path = workspace_root().join("docs").join("ARCHITECTURE.md");
    let doc = std::fs::read_to_string(&path).expect("docs/ARCHITECTURE.md exists and is UTF-8");
    let rows = layer_table(&doc);
    let mut errors = Vec::new();
    if rows.is_empty() {
        errors.push("no `| rank | crate | … |` table under a `## Layers` heading".to_owned());
    }
    for (index, (rank_cell, name)) in rows.iter().enumerate() {
        match LAYERS.get(index) {
            Some(expected) if expected == name => {}
            Some(expected) => errors.push(format!("row {}: `{name}`, LAYERS has `{expected}` here", index + 1)),
            None => errors.push(format!("row {}: `{name}` is not in LAYERS", index + 1)),
        }
        if *rank_cell != index.to_string() {
            errors.push(format!("row {}: rank `{rank_cell}`, expected {index}", index + 1));
        }
    }
    for missing in LAYERS.iter().skip(rows.len()) {
        errors.push(format!("`{missing}` is in LAYERS but missing from the table"));
    }
    fail_if_any("docs/ARCHITECTURE.md layer table differs from LAYERS", &errors);
}

/// Whether a manifest opts into the workspace lints (`[lints] workspace = true` or a dotted form).
fn has_workspace_lints(manifest: &str) -> bool {
    let mut section = String::new();
    for line in manifest.lines() {
        let compact: String =
            line.split('#').next().unwrap_or_default().chars().filter(|c| !c.is_whitespace()).collect();
        if compact.starts_with('[') {
            section = compact.trim_matches(|c| c == '[' || c == ']').to_owned();
            continue;
        }
        let found = match section.as_str() {
            "lints" => compact == "workspace=true",
            "" => compact == "lints.workspace=true" || compact == "lints={workspace=true}",
            _ => false,
        };
        if found {
            return true;
        }
    }
    false
}

/// Whether the `[package]` table of a manifest says `publish = false`.
fn publish_false(manifest: &str) -> bool {
    let mut in_package = false;
    for line in manifest.lines() {
        let compact: String =
            line.split('#').next().unwrap_or_default().chars().filter(|c| !c.is_whitespace()).collect();
        if compact.starts_with('[') {
            in_package = compact == "[package]";
        } else if in_package && compact == "publish=false" {
            return true;
        }
    }
    false
}

#[test]
fn manifest_hygiene() {
    let root = workspace_root();
    let meta = cargo_metadata();
    let mut errors = Vec::new();
    for pkg in packages(&meta) {
        let name = str_field(pkg, "name");
        let manifest_path = PathBuf::from(str_field(pkg, "manifest_path"));
        let shown = manifest_path.strip_prefix(&root).unwrap_or(&manifest_path).display().to_string();
        match std::fs::read_to_string(&manifest_path) {
            Ok(text) if !has_workspace_lints(&text) => {
                errors.push(format!("{shown}: missing `[lints] workspace = true`"))
            }
            Ok(_) => {}
            Err(err) => errors.push(format!("{shown}: cannot read: {err}")),
        }
        let dir = manifest_path.parent().expect("a manifest path has a parent directory");
        if dir.parent() == Some(root.join("crates").as_path()) {
            let folder = dir.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
            if folder != name {
                errors.push(format!("{shown}: folder `crates/{folder}` holds package `{name}`; they must match"));
            }
        }
        // cargo metadata reports `publish = false` as an empty list of allowed registries.
        let unpublished = pkg["publish"].as_array().is_some_and(Vec::is_empty);
        if UNPUBLISHED.contains(&name) && !unpublished {
            errors.push(format!("{shown}: `{name}` must say `publish = false`"));
        }
    }
    let fuzz = root.join("fuzz").join("Cargo.toml");
    if let Ok(text) = std::fs::read_to_string(&fuzz)
        && !publish_false(&text)
    {
        errors.push("fuzz/Cargo.toml: must say `publish = false`".to_owned());
    }
    fail_if_any("manifest hygiene violations", &errors);
}

/// Directory names under the scanned roots that hold data or build output, not our code.
const SKIPPED_DIRS: &[&str] = &["target", "vectors", "fixtures", "proptest-regressions"];

/// Every `.rs` file under the workspace's code roots, sorted.
fn rust_files(root: &Path, roots: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                let name = entry.file_name();
                if !SKIPPED_DIRS.iter().any(|skip| name == *skip) {
                    walk(&path, out);
                }
            } else if kind.is_file() && path.extension().is_some_and(|ext| ext == "rs") {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for sub in roots {
        walk(&root.join(sub), &mut files);
    }
    files.sort();
    files
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).display().to_string()
}

/// Markers that must not appear in Rust files. Built with `concat!` so this file does not match itself.
const FORBIDDEN: &[(&str, &str)] = &[
    (concat!("#[", "ignore"), "ignored test: make it run, or gate a slow one on an env var"),
    (concat!("#[", "should_panic"), "panic-expecting test: assert on the error code instead"),
    (concat!("todo", "!("), "stub macro: finish the code"),
    (concat!("unimplemented", "!("), "stub macro: finish the code"),
];

#[test]
fn file_hygiene() {
    let root = workspace_root();
    let mut errors = Vec::new();
    let files = rust_files(&root, &["crates", "tests", "xtask/src", "benches"]);
    assert!(!files.is_empty(), "found no Rust files under {}", root.display());
    for path in files {
        let shown = relative(&root, &path);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(err) => {
                errors.push(format!("{shown}: cannot read as UTF-8: {err}"));
                continue;
            }
        };
        if !text.starts_with("//!") {
            errors.push(format!("{shown}: does not start with a `//!` comment saying what it is for"));
        }
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            if line.ends_with(' ') || line.ends_with('\t') {
                errors.push(format!("{shown}:{number}: trailing whitespace"));
            }
            for (marker, why) in FORBIDDEN {
                if line.contains(marker) {
                    errors.push(format!("{shown}:{number}: `{marker}`: {why}"));
                }
            }
        }
    }
    fail_if_any("file hygiene violations", &errors);
}

/// Every string literal that is exactly a prefixed error code, with the crates it appears in.
///
/// A literal counts when it is `"PREFIX_REST"` with PREFIX from `CODE_PREFIXES` and REST made of `A-Z`,
/// `0-9` and `_`, not ending in `_` (a literal ending in `_` is a prefix used for matching, not a code).
fn code_literals(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('"') {
        let after = &rest[open + 1..];
        let len =
            after.find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')).unwrap_or(after.len());
        let candidate = &after[..len];
        let closed = after[len..].starts_with('"');
        let prefixed = CODE_PREFIXES.iter().any(|(prefix, _)| {
            candidate.strip_prefix(prefix).and_then(|r| r.strip_prefix('_')).is_some_and(|r| !r.is_empty())
        });
        if closed && prefixed && !candidate.ends_with('_') {
            found.push(candidate);
            // Skip past the closing quote so it is not read as the opening quote of another literal.
            rest = &after[len + 1..];
        } else {
            rest = after;
        }
    }
    found
}

/// One row of docs/error-codes.md.
struct RegistryRow {
    line: usize,
    code: String,
    krate: String,
    retired: bool,
}

fn registry_rows(doc: &str, errors: &mut Vec<String>) -> Vec<RegistryRow> {
    let mut rows = Vec::new();
    for (index, line) in doc.lines().enumerate() {
        let Some(cells) = table_cells(line) else { continue };
        if is_separator_row(&cells) || cells.first().is_some_and(|c| plain(c) == "code") {
            continue;
        }
        let line = index + 1;
        let [code, krate, meaning] = cells.as_slice() else {
            errors.push(format!("docs/error-codes.md:{line}: a row has exactly three cells: code, crate, meaning"));
            continue;
        };
        let code = plain(code);
        let well_formed = code.starts_with(|c: char| c.is_ascii_uppercase())
            && code.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
        if !well_formed {
            errors.push(format!("docs/error-codes.md:{line}: `{code}` is not a SCREAMING_SNAKE_CASE code"));
            continue;
        }
        rows.push(RegistryRow {
            line,
            code: code.to_owned(),
            krate: plain(krate).to_owned(),
            retired: plain(meaning).starts_with("retired"),
        });
    }
    rows
}

#[test]
fn error_code_registry() {
    let root = workspace_root();
    let mut errors = Vec::new();
    // code -> crates (folder names under crates/) whose sources hold it as a literal.
    let mut used: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut sources = Vec::new();
    for path in rust_files(&root, &["crates"]) {
        let krate = path
            .strip_prefix(root.join("crates"))
            .ok()
            .and_then(|p| p.components().next())
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        for code in code_literals(&text) {
            used.entry(code.to_owned()).or_default().insert(krate.clone());
        }
        sources.push(text);
    }

    let doc_path = root.join("docs").join("error-codes.md");
    let doc = std::fs::read_to_string(&doc_path).expect("docs/error-codes.md exists and is UTF-8");
    let rows = registry_rows(&doc, &mut errors);
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for row in &rows {
        let at = format!("docs/error-codes.md:{}", row.line);
        if let Some(first) = seen.insert(&row.code, row.line) {
            errors.push(format!("{at}: `{}` already has a row at line {first}; codes are unique", row.code));
        }
        let quoted = format!("\"{}\"", row.code);
        let in_code = used.contains_key(&row.code) || sources.iter().any(|text| text.contains(&quoted));
        match (row.retired, in_code) {
            (true, true) => {
                errors.push(format!("{at}: `{}` is retired but used again; a retired code never comes back", row.code))
            }
            (false, false) => {
                errors.push(format!("{at}: `{}` appears in no crate; mark it `retired`, never delete it", row.code))
            }
            _ => {}
        }
        let owner = CODE_PREFIXES
            .iter()
            .find(|(prefix, _)| row.code.strip_prefix(prefix).is_some_and(|rest| rest.starts_with('_')));
        if let Some((prefix, owner)) = owner.filter(|_| !SPEC_CODES_WITH_LAYER_PREFIX.contains(&row.code.as_str())) {
            let named = if row.krate.starts_with("scriptorium-") {
                row.krate.clone()
            } else {
                format!("scriptorium-{}", row.krate)
            };
            if named != *owner {
                errors.push(format!(
                    "{at}: `{}` has the {prefix}_ prefix, so its crate is {owner}, not `{}`",
                    row.code, row.krate
                ));
            }
        }
    }
    for (code, crates) in &used {
        if !seen.contains_key(code.as_str()) {
            let crates: Vec<&str> = crates.iter().map(String::as_str).collect();
            errors.push(format!("`{code}` (in {}) has no row in docs/error-codes.md", crates.join(", ")));
        }
    }
    fail_if_any("error-code registry violations", &errors);
}

#[test]
fn finds_code_literals_only() {
    let text = r##"
        Self::A => "ARCHIVE_NOT_UTF8",
        x.starts_with("ARCHIVE_STOP_")
        "TOPIC_" "ARCHIVE" "NOT_ARCHIVE_X" "archive_x"
        format!("{}: ARCHIVE_IN_PROSE is not a literal", y)
        r#"CLI_RAW"# "TXN_A""BACKEND_B"
    "##;
    assert_eq!(code_literals(text), ["ARCHIVE_NOT_UTF8", "CLI_RAW", "TXN_A", "BACKEND_B"]);
}

#[test]
fn reads_registry_rows() {
    let doc = "\
| code | crate | meaning |
|---|---|---|
| `ARCHIVE_NOT_UTF8` | scriptorium-archive-format | The bytes are not UTF-8. |
| `ARCHIVE_OLD` | `archive-format` | retired: replaced by `ARCHIVE_NEW`. |
| not a code | x | y |
| `A` | b |
";
    let mut errors = Vec::new();
    let rows = registry_rows(doc, &mut errors);
    let summary: Vec<(&str, &str, bool, usize)> =
        rows.iter().map(|r| (r.code.as_str(), r.krate.as_str(), r.retired, r.line)).collect();
    assert_eq!(
        summary,
        [("ARCHIVE_NOT_UTF8", "scriptorium-archive-format", false, 3), ("ARCHIVE_OLD", "archive-format", true, 4)]
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
}

#[test]
fn reads_layer_table() {
    let doc = "\
# Architecture

| rank | crate | owns |
|---|---|---|
| 9 | `not-this-table` | x |

## Layers

Some prose.

| rank | crate | owns |
|---:|---|---|
| 0 | `scriptorium-archive-format` | frames |
| 1 | scriptorium-topic-markdown | topics |

| rank | crate | owns |
|---|---|---|
| 5 | `second-table` | x |
";
    let rows = layer_table(doc);
    let expected = [("0", "scriptorium-archive-format"), ("1", "scriptorium-topic-markdown")];
    assert_eq!(rows.iter().map(|(r, c)| (r.as_str(), c.as_str())).collect::<Vec<_>>(), expected);
}

#[test]
fn reads_manifest_flags() {
    assert!(has_workspace_lints("[package]\nname = \"a\"\n\n[lints]\nworkspace = true\n"));
    assert!(has_workspace_lints("lints.workspace = true\n[package]\nname = \"a\"\n"));
    assert!(!has_workspace_lints("[package]\nlints.workspace = true\n"));
    assert!(!has_workspace_lints("[lints.rust]\nworkspace = true\n"));
    assert!(!has_workspace_lints("[lints]\n# workspace = true\n"));
    assert!(publish_false("[package]\nname = \"a\"\npublish = false # tooling\n"));
    assert!(!publish_false("[package]\nname = \"a\"\n[features]\npublish = false\n"));
}
