//! The tool definitions the LLM client sends with every writer request: a name, a
//! description in our own words, and the parameters as a JSON Schema object (the shape
//! both the Chat Completions `function.parameters` and the Messages API `input_schema` take).

use serde_json::{Value, json};

use super::tools::{GLOB_LIMIT, GREP_LIMIT, GREP_LINE_CHARS, READ_LIMIT_CHARS, TOOL_NAMES};

/// One tool as the model is told about it.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolDefinition {
    /// The tool name the model calls.
    pub name: &'static str,
    /// What the tool does and when to use it.
    pub description: String,
    /// The JSON Schema of the arguments object.
    pub parameters: Value,
}

impl ToolDefinition {
    /// The definition as `{name, description, parameters}`.
    pub fn to_json(&self) -> Value {
        json!({"name": self.name, "description": self.description, "parameters": self.parameters})
    }
}

/// An object schema with these `properties` and `required` names, no other fields.
fn object(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// The seven tools of the writer stage, in [`TOOL_NAMES`] order.
pub fn tool_definitions() -> Vec<ToolDefinition> {
    let path = "Path relative to the workspace root, for example topics/people/ada.md.";
    let definitions = vec![
        ToolDefinition {
            name: "Read",
            description: format!(
                "Read an existing file of the workspace as text. Files longer than {READ_LIMIT_CHARS} characters are cut, with a marker. sources/ is not readable: the conversation's text is in the prompt."
            ),
            parameters: object(json!({"file_path": string(path)}), &["file_path"]),
        },
        ToolDefinition {
            name: "Write",
            description: "Create or replace a whole topic file (topics/**/*.md) in one call; missing parent directories are created. Nothing outside topics/ can be written, and sources/ is read-only.".to_owned(),
            parameters: object(
                json!({"file_path": string(path), "content": string("The complete new content of the file.")}),
                &["file_path", "content"],
            ),
        },
        ToolDefinition {
            name: "Edit",
            description: "Replace exact text in an existing topic file you have just read. old_string must occur exactly once, unless replace_all is true. If an Edit fails twice, read the file again instead of retrying.".to_owned(),
            parameters: object(
                json!({
                    "file_path": string(path),
                    "old_string": string("Text to replace, copied exactly from the file (whitespace included)."),
                    "new_string": string("The replacement text."),
                    "replace_all": {"type": "boolean", "description": "Replace every occurrence of old_string (default false).", "default": false},
                }),
                &["file_path", "old_string", "new_string"],
            ),
        },
        ToolDefinition {
            name: "Glob",
            description: format!(
                "List the files and directories (ending in /) whose path matches a glob pattern: * and ? within one path component, ** across components, [abc] and {{a,b}}. At most {GLOB_LIMIT} sorted paths."
            ),
            parameters: object(
                json!({"pattern": string("Glob pattern relative to the workspace root, for example topics/**/*.md.")}),
                &["pattern"],
            ),
        },
        ToolDefinition {
            name: "Grep",
            description: format!(
                "Search file contents with a regular expression. Prints path:line:text for each matching line (text cut at {GREP_LINE_CHARS} characters), at most {GREP_LIMIT} matches."
            ),
            parameters: object(
                json!({
                    "pattern": string("Regular expression (Rust regex syntax); (?i) makes it case-insensitive."),
                    "path": string("A file or directory to search, relative to the workspace root (default: everything)."),
                }),
                &["pattern"],
            ),
        },
        ToolDefinition {
            name: "Move",
            description: "Move or rename a topic file, or a directory of topic files, within topics/. The destination must not exist. Fix links to moved paragraphs in the same turn.".to_owned(),
            parameters: object(
                json!({
                    "source_path": string("The existing file or directory."),
                    "destination_path": string("The new path; it must not exist."),
                }),
                &["source_path", "destination_path"],
            ),
        },
        ToolDefinition {
            name: "Delete",
            description: "Delete a topic file, or a directory and every topic file in it. Fix links to deleted paragraphs in the same turn.".to_owned(),
            parameters: object(json!({"path": string("The file or directory to delete.")}), &["path"]),
        },
    ];
    debug_assert!(definitions.iter().map(|d| d.name).eq(TOOL_NAMES), "one definition per tool, in order");
    definitions
}
