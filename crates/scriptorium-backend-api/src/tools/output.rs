//! The shapes every tool answers in (a `TxError`, a notice, the character cap) and the
//! readers of its JSON arguments, so every tool refuses a wrong type the same way.

use serde_json::{Map, Value, json};

use crate::error::{Error, ErrorCode};

/// The `TxError` JSON of spec 02 §7: `{"ok":false,"error":{"code","message","path"[,"details"]}}`.
pub(crate) fn tx_error(error: &Error) -> String {
    let mut body = Map::new();
    body.insert("code".to_owned(), Value::from(error.code().as_str()));
    body.insert("message".to_owned(), Value::from(error.message()));
    body.insert("path".to_owned(), error.path().map_or(Value::Null, Value::from));
    json!({"ok": false, "error": Value::Object(body)}).to_string()
}

/// A short notice for the model (not an error object).
pub(crate) fn notice(text: impl Into<String>) -> String {
    text.into()
}

/// `output` cut to at most `max_chars` characters, never inside a character.
pub(crate) fn cap_chars(output: String, max_chars: usize) -> String {
    match output.char_indices().nth(max_chars) {
        Some((cut, _)) => output.get(..cut).unwrap_or_default().to_owned(),
        None => output,
    }
}

/// An `INVALID_ARGUMENT` error.
pub(crate) fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidArgument, message)
}

/// A tool's arguments: a JSON object (`null` reads as no arguments).
pub(crate) struct Args<'a> {
    object: Option<&'a Map<String, Value>>,
}

impl<'a> Args<'a> {
    /// The arguments of one call; anything but an object or `null` is `INVALID_ARGUMENT`.
    pub(crate) fn new(arguments: &'a Value) -> Result<Self, Error> {
        match arguments {
            Value::Object(object) => Ok(Args { object: Some(object) }),
            Value::Null => Ok(Args { object: None }),
            _ => Err(invalid("the arguments must be a JSON object")),
        }
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.object.and_then(|object| object.get(name)).filter(|value| !value.is_null())
    }

    /// A string argument; absent or `null` is `None`, another type `INVALID_ARGUMENT`.
    pub(crate) fn string(&self, name: &str) -> Result<Option<&'a str>, Error> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.as_str())),
            Some(_) => Err(invalid(format!("{name} must be a string"))),
        }
    }

    /// A string argument that is not blank, trimmed; blank or absent is `None`.
    pub(crate) fn text(&self, name: &str) -> Result<Option<&'a str>, Error> {
        Ok(self.string(name)?.map(str::trim).filter(|text| !text.is_empty()))
    }

    /// A boolean argument, `default` when absent.
    pub(crate) fn boolean(&self, name: &str, default: bool) -> Result<bool, Error> {
        match self.get(name) {
            None => Ok(default),
            Some(Value::Bool(value)) => Ok(*value),
            Some(_) => Err(invalid(format!("{name} must be true or false"))),
        }
    }

    /// An integer argument clamped to `range`, `default` when absent; a number with a
    /// fraction or another type is `INVALID_ARGUMENT`.
    pub(crate) fn clamped(&self, name: &str, default: usize, min: usize, max: usize) -> Result<usize, Error> {
        let Some(value) = self.get(name) else { return Ok(default) };
        let wrong = || invalid(format!("{name} must be an integer"));
        let number = match value {
            Value::Number(number) => number,
            _ => return Err(wrong()),
        };
        let clamp = |n: i128| -> usize {
            let (min_i, max_i) = (i128::try_from(min).unwrap_or(0), i128::try_from(max).unwrap_or(i128::MAX));
            usize::try_from(n.clamp(min_i, max_i)).unwrap_or(min)
        };
        if let Some(n) = number.as_i64() {
            return Ok(clamp(i128::from(n)));
        }
        if let Some(n) = number.as_u64() {
            return Ok(clamp(i128::from(n)));
        }
        match number.as_f64() {
            // 8.0 is the integer 8 (JSON does not tell them apart); 8.5 is not.
            // `as` saturates, and the clamp brings any huge value into range.
            Some(n) if n.fract() == 0.0 && n.is_finite() => Ok(clamp(n as i128)),
            _ => Err(wrong()),
        }
    }
}
