//! Configuration: values, fallbacks naming their key, unknown keys, environment overrides.

use super::*;

fn no_env(_: &str) -> Option<String> {
    None
}

fn kinds(warnings: &[ConfigWarning]) -> Vec<(WarningKind, &str)> {
    warnings.iter().map(|w| (w.kind, w.key.as_str())).collect()
}

#[test]
fn every_key_is_read() {
    let text = r#"
[memory]
backend = "none"
writer = { model = "openai/gpt-4.1-mini", base_url = "http://127.0.0.1:9/v1", enabled = false, trigger_tokens = 32000 }
retrieval.method = "agent"
retrieval.top_k = 10
retrieval.include_sources = false
core.inject = false
recent.limit = 500
"#;
    let (config, warnings) = parse(text);
    assert_eq!(warnings, []);
    assert_eq!(
        config,
        MemoryConfig {
            backend: BackendKind::None,
            writer_model: "openai/gpt-4.1-mini".into(),
            writer_base_url: "http://127.0.0.1:9/v1".into(),
            writer_enabled: false,
            trigger_tokens: 32_000,
            retrieval_method: RetrievalMethod::Agent,
            top_k: 10,
            include_sources: false,
            core_inject: false,
            recent_limit: 500,
        }
    );
}

#[test]
fn invalid_values_fall_back_to_defaults_naming_the_key() {
    let text = r#"
memory.backend = "remote"
memory.writer.enabled = 1
memory.writer.trigger_tokens = 12000
memory.retrieval.method = "vector"
memory.retrieval.top_k = 2.5
memory.retrieval.include_sources = "yes"
memory.core.inject = 0
memory.recent.limit = 501
"#;
    let (config, warnings) = parse(text);
    assert_eq!(config, MemoryConfig::default());
    let keys: Vec<&str> = warnings.iter().map(|w| w.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "memory.backend",
            "memory.core.inject",
            "memory.recent.limit",
            "memory.retrieval.include_sources",
            "memory.retrieval.method",
            "memory.retrieval.top_k",
            "memory.writer.enabled",
            "memory.writer.trigger_tokens",
        ]
    );
    assert!(warnings.iter().all(|w| w.kind == WarningKind::InvalidValue));
}

#[test]
fn ranges_have_their_edges() {
    for (top_k, kept) in [(0, 5), (1, 1), (10, 10), (11, 5), (-3, 5)] {
        let (config, _) = parse(&format!("memory.retrieval.top_k = {top_k}"));
        assert_eq!(config.top_k, kept, "top_k {top_k}");
    }
    for (limit, kept) in [(0, 50), (1, 1), (500, 500), (501, 50)] {
        let (config, _) = parse(&format!("memory.recent.limit = {limit}"));
        assert_eq!(config.recent_limit, kept, "limit {limit}");
    }
    for (tokens, kept) in [(8000, 8000), (16000, 16000), (32000, 32000), (16001, 16000)] {
        let (config, _) = parse(&format!("memory.writer.trigger_tokens = {tokens}"));
        assert_eq!(config.trigger_tokens, kept, "tokens {tokens}");
    }
}

#[test]
fn unknown_keys_are_reported_never_fatal() {
    let (config, warnings) = parse("memory.core.inject = false\nmemory.colour = \"red\"\n[ui]\ntheme = 1\n");
    assert!(!config.core_inject);
    assert_eq!(kinds(&warnings), [(WarningKind::UnknownKey, "memory.colour"), (WarningKind::UnknownKey, "ui.theme")]);
}

#[test]
fn a_table_where_a_value_belongs_is_invalid() {
    let (config, warnings) = parse("[memory.backend]\nname = \"none\"\n");
    assert_eq!(config.backend, BackendKind::Local);
    assert_eq!(kinds(&warnings), [(WarningKind::InvalidValue, "memory.backend")]);
}

#[test]
fn text_that_is_not_toml_gives_defaults_and_one_warning() {
    let (config, warnings) = parse("memory.backend = = none");
    assert_eq!(config, MemoryConfig::default());
    assert_eq!(warnings.len(), 1);
    assert_eq!(warnings[0].kind, WarningKind::UnreadableFile);
}

#[test]
fn load_reads_a_file_then_the_environment() {
    let dir = std::env::temp_dir().join(format!("scriptorium-backend-config-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("scriptorium")).expect("temp dir");
    let file = dir.join("scriptorium").join("config.toml");
    std::fs::write(&file, "memory.retrieval.top_k = 3\nmemory.core.inject = false\n").expect("write config");
    let dir_text = dir.display().to_string();
    let env = move |name: &str| match name {
        "XDG_CONFIG_HOME" => Some(dir_text.clone()),
        "SCRIPTORIUM_RETRIEVAL_TOP_K" => Some("7".to_owned()),
        "SCRIPTORIUM_CORE_INJECT" => Some("maybe".to_owned()),
        "SCRIPTORIUM_WRITER_MODEL" => Some("anthropic/claude-x".to_owned()),
        _ => None,
    };
    let loaded = load(None, &env);
    std::fs::remove_dir_all(&dir).expect("clean up");
    assert_eq!(loaded.path.as_deref(), Some(file.as_path()));
    assert_eq!(loaded.config.top_k, 7);
    assert!(!loaded.config.core_inject, "an invalid override leaves the file's value");
    assert_eq!(loaded.config.writer_model, "anthropic/claude-x");
    assert_eq!(kinds(&loaded.warnings), [(WarningKind::InvalidValue, "SCRIPTORIUM_CORE_INJECT")]);
}

#[test]
fn a_missing_file_is_the_defaults_without_warnings() {
    let missing = std::env::temp_dir().join("scriptorium-backend-no-such-dir/config.toml");
    let loaded = load(Some(&missing), &no_env);
    assert_eq!(loaded, LoadedConfig { config: MemoryConfig::default(), path: None, warnings: Vec::new() });
}

#[test]
fn default_path_prefers_the_explicit_variable_then_xdg_then_home() {
    let env = |name: &str| (name == "HOME").then(|| "/home/ada".to_owned());
    assert_eq!(default_config_path(&env), Some("/home/ada/.config/scriptorium/config.toml".into()));
    let env = |name: &str| match name {
        "HOME" => Some("/home/ada".to_owned()),
        "XDG_CONFIG_HOME" => Some("relative/ignored".to_owned()),
        _ => None,
    };
    assert_eq!(default_config_path(&env), Some("/home/ada/.config/scriptorium/config.toml".into()));
    let env = |name: &str| (name == CONFIG_ENV).then(|| "/etc/s.toml".to_owned());
    assert_eq!(default_config_path(&env), Some("/etc/s.toml".into()));
    assert_eq!(default_config_path(&no_env), None);
}
