//! o200k_base token counting (spec 01 §7.1, decision Q3).
//!
//! tiktoken-rs embeds the rank file, so nothing is fetched at run time; its singleton
//! builds the encoder on first use only, so commands that never count tokens never pay
//! the ~200 ms and ~46 MB it costs (05-dependencies §A4). `encode_ordinary` treats
//! special-token strings such as `<|endoftext|>` as plain text, which is decision Q3:
//! counting never fails an install.

/// The o200k_base token ids of `text`, every special-token string read as plain text.
pub fn o200k_ids(text: &str) -> Vec<u32> {
    tiktoken_rs::o200k_base_singleton().encode_ordinary(text)
}

/// The number of o200k_base tokens of `text` (see [`o200k_ids`]).
pub fn count_o200k(text: &str) -> usize {
    o200k_ids(text).len()
}
