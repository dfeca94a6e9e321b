//! Reading the configuration: the TOML file, then the environment overrides.

use std::path::{Path, PathBuf};

use toml::Value;

use super::{BackendKind, ConfigWarning, LoadedConfig, MemoryConfig, RetrievalMethod, WarningKind};

/// The environment variable naming the configuration file (instead of the default path).
pub const CONFIG_ENV: &str = "SCRIPTORIUM_CONFIG";

/// A value as the file or the environment gives it.
enum Raw<'a> {
    Toml(&'a Value),
    Env(&'a str),
}

impl Raw<'_> {
    fn string(&self) -> Option<String> {
        match self {
            Raw::Toml(Value::String(text)) => Some(text.clone()),
            Raw::Toml(_) => None,
            Raw::Env(text) => Some((*text).to_owned()),
        }
    }

    /// A boolean: TOML `true`/`false` only (an int is invalid, spec 02 §11); the
    /// environment's `true`/`false`/`1`/`0`.
    fn boolean(&self) -> Option<bool> {
        match self {
            Raw::Toml(Value::Boolean(value)) => Some(*value),
            Raw::Toml(_) => None,
            Raw::Env(text) => match text.trim().to_ascii_lowercase().as_str() {
                "true" | "1" => Some(true),
                "false" | "0" => Some(false),
                _ => None,
            },
        }
    }

    /// An integer: TOML integers only (a float or a bool is invalid); decimal in the environment.
    fn integer(&self) -> Option<i64> {
        match self {
            Raw::Toml(Value::Integer(value)) => Some(*value),
            Raw::Toml(_) => None,
            Raw::Env(text) => text.trim().parse().ok(),
        }
    }
}

/// One known key: its dotted name, its environment variable, and how it is set.
struct Key {
    name: &'static str,
    env: &'static str,
    set: fn(&mut MemoryConfig, &Raw<'_>) -> bool,
}

fn in_range(value: Option<i64>, range: std::ops::RangeInclusive<i64>) -> Option<usize> {
    value.filter(|v| range.contains(v)).and_then(|v| usize::try_from(v).ok())
}

const KEYS: &[Key] = &[
    Key {
        name: "memory.backend",
        env: "SCRIPTORIUM_BACKEND",
        set: |config, raw| match raw.string().as_deref() {
            Some("local") => {
                config.backend = BackendKind::Local;
                true
            }
            Some("none") => {
                config.backend = BackendKind::None;
                true
            }
            _ => false,
        },
    },
    Key {
        name: "memory.writer.model",
        env: "SCRIPTORIUM_WRITER_MODEL",
        set: |config, raw| raw.string().map(|model| config.writer_model = model.trim().to_owned()).is_some(),
    },
    Key {
        name: "memory.writer.base_url",
        env: "SCRIPTORIUM_WRITER_BASE_URL",
        set: |config, raw| raw.string().map(|url| config.writer_base_url = url.trim().to_owned()).is_some(),
    },
    Key {
        name: "memory.writer.enabled",
        env: "SCRIPTORIUM_WRITER_ENABLED",
        set: |config, raw| raw.boolean().map(|on| config.writer_enabled = on).is_some(),
    },
    Key {
        name: "memory.writer.trigger_tokens",
        env: "SCRIPTORIUM_WRITER_TRIGGER_TOKENS",
        // The writer runtime owns the rule; a value it would not keep is invalid here.
        set: |config, raw| {
            let value = raw.integer();
            let kept = scriptorium_writer_runtime::trigger_tokens(value);
            let valid = value.and_then(|v| usize::try_from(v).ok()) == Some(kept);
            if valid {
                config.trigger_tokens = kept;
            }
            valid
        },
    },
    Key {
        name: "memory.retrieval.method",
        env: "SCRIPTORIUM_RETRIEVAL_METHOD",
        set: |config, raw| {
            let method = match raw.string().as_deref() {
                Some("agent") => RetrievalMethod::Agent,
                Some("bm25") => RetrievalMethod::Bm25,
                Some("embedding") => RetrievalMethod::Embedding,
                Some("hybrid") => RetrievalMethod::Hybrid,
                _ => return false,
            };
            config.retrieval_method = method;
            true
        },
    },
    Key {
        name: "memory.retrieval.top_k",
        env: "SCRIPTORIUM_RETRIEVAL_TOP_K",
        set: |config, raw| in_range(raw.integer(), 1..=10).map(|k| config.top_k = k).is_some(),
    },
    Key {
        name: "memory.retrieval.include_sources",
        env: "SCRIPTORIUM_RETRIEVAL_INCLUDE_SOURCES",
        set: |config, raw| raw.boolean().map(|on| config.include_sources = on).is_some(),
    },
    Key {
        name: "memory.core.inject",
        env: "SCRIPTORIUM_CORE_INJECT",
        set: |config, raw| raw.boolean().map(|on| config.core_inject = on).is_some(),
    },
    Key {
        name: "memory.recent.limit",
        env: "SCRIPTORIUM_RECENT_LIMIT",
        // Derived-views owns the range; a value it would not keep is invalid here.
        set: |config, raw| {
            let value = raw.integer();
            let kept = value.map(scriptorium_derived_views::recent_limit_from_config);
            let valid = value.is_some() && value.and_then(|v| usize::try_from(v).ok()) == kept;
            if let (true, Some(kept)) = (valid, kept) {
                config.recent_limit = kept;
            }
            valid
        },
    },
];

/// Every leaf of `table` with its dotted key.
fn leaves<'a>(prefix: &str, table: &'a toml::Table, out: &mut Vec<(String, &'a Value)>) {
    for (key, value) in table {
        let dotted = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
        let known_leaf = KEYS.iter().any(|k| k.name == dotted);
        match value {
            Value::Table(inner) if !known_leaf => leaves(&dotted, inner, out),
            _ => out.push((dotted, value)),
        }
    }
}

/// The settings of a configuration file's text, with a warning for each invalid value
/// and unknown key; a text that is not TOML gives the defaults and one warning.
pub fn parse(text: &str) -> (MemoryConfig, Vec<ConfigWarning>) {
    let mut config = MemoryConfig::default();
    let mut warnings = Vec::new();
    let table: toml::Table = match text.parse() {
        Ok(table) => table,
        Err(error) => {
            warnings.push(ConfigWarning {
                kind: WarningKind::UnreadableFile,
                key: String::new(),
                message: format!("not TOML: {error}"),
            });
            return (config, warnings);
        }
    };
    let mut found = Vec::new();
    leaves("", &table, &mut found);
    for (dotted, value) in found {
        match KEYS.iter().find(|key| key.name == dotted) {
            Some(key) => {
                if !(key.set)(&mut config, &Raw::Toml(value)) {
                    warnings.push(ConfigWarning {
                        kind: WarningKind::InvalidValue,
                        message: format!("{dotted}: invalid value ({}); using the default", value.type_str()),
                        key: dotted,
                    });
                }
            }
            None => warnings.push(ConfigWarning {
                kind: WarningKind::UnknownKey,
                message: format!("{dotted}: unknown key, ignored"),
                key: dotted,
            }),
        }
    }
    (config, warnings)
}

/// The environment overrides over `config`: an invalid override is reported and ignored.
fn apply_env(config: &mut MemoryConfig, env: &dyn Fn(&str) -> Option<String>, warnings: &mut Vec<ConfigWarning>) {
    for key in KEYS {
        let Some(value) = env(key.env) else { continue };
        let mut candidate = config.clone();
        if (key.set)(&mut candidate, &Raw::Env(&value)) {
            *config = candidate;
        } else {
            warnings.push(ConfigWarning {
                kind: WarningKind::InvalidValue,
                key: key.env.to_owned(),
                message: format!("{} ({}): invalid value; the file's value stands", key.env, key.name),
            });
        }
    }
}

/// The default configuration file: `$SCRIPTORIUM_CONFIG`, else
/// `$XDG_CONFIG_HOME/scriptorium/config.toml` (when absolute), else
/// `$HOME/.config/scriptorium/config.toml`; `None` without a home.
pub fn default_config_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let non_empty = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    if let Some(path) = non_empty(CONFIG_ENV) {
        return Some(PathBuf::from(path));
    }
    let base = non_empty("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
        .or_else(|| non_empty("HOME").map(|home| Path::new(&home).join(".config")))?;
    Some(base.join("scriptorium").join("config.toml"))
}

/// The configuration from `path` (or [`default_config_path`]), then `env`'s overrides.
/// A missing file is no warning; an unreadable one is.
pub fn load(path: Option<&Path>, env: &dyn Fn(&str) -> Option<String>) -> LoadedConfig {
    let path = path.map(Path::to_path_buf).or_else(|| default_config_path(env));
    let mut warnings = Vec::new();
    let mut config = MemoryConfig::default();
    let mut read_path = None;
    if let Some(path) = path {
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let (parsed, found) = parse(&text);
                config = parsed;
                warnings.extend(found.into_iter().map(|mut warning| {
                    if warning.kind == WarningKind::UnreadableFile {
                        warning.key = path.display().to_string();
                    }
                    warning
                }));
                read_path = Some(path);
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => warnings.push(ConfigWarning {
                kind: WarningKind::UnreadableFile,
                key: path.display().to_string(),
                message: format!("{}: cannot read: {error}", path.display()),
            }),
        }
    }
    apply_env(&mut config, env, &mut warnings);
    LoadedConfig { config, path: read_path, warnings }
}
