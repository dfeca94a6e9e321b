//! The regex mode of grep: a pattern in Python `re` syntax (the reference's) read the
//! way Python reads it, then spelled for the `regex` crate or refused
//! ([`super::GrepRequest::regex`] lists what is refused and why).
//!
//! Spelling rather than passing the pattern through keeps Python's meaning where the
//! crate's syntax differs: every literal punctuation character is written `\x{…}` (so a
//! `[`, `&&` or `--` inside a class, or a `\<`, stays a literal, as in Python), a `{`
//! that starts no valid repetition becomes a literal, `{,n}` becomes `{0,n}`, `\Z`
//! becomes `\z`, `\b` inside a class a backspace, and `(?#…)` comments are dropped.

use regex::{Regex, RegexBuilder};

use crate::error::{Error, ErrorCode};

/// The largest compiled program a pattern may build: a hostile pattern such as
/// `(\w{500}){500}` is refused instead of allocating. The crate's default, 10 MiB, lets
/// a refusal take half a second; 4 MiB still admits `\w{50}` (a Unicode `\w` is large).
const PROGRAM_SIZE_LIMIT: usize = 4 << 20;
/// The lazy DFA's cache per search. Not an error when exceeded: the search falls back
/// to a slower engine, still linear, so memory stays bounded.
const DFA_CACHE_LIMIT: usize = 2 << 20;

/// `pattern` compiled for grep, or [`ErrorCode::InvalidPattern`].
///
/// No guard against catastrophic backtracking is needed: the `regex` crate guarantees
/// search time linear in the pattern size times the line length (the reason lookaround
/// and backreferences are refused rather than emulated), and the size limit bounds the
/// pattern size.
pub(super) fn compile(pattern: &str, case_sensitive: bool) -> Result<Regex, Error> {
    let spelled = Translator::new(pattern).run().map_err(|refusal| Error::new(ErrorCode::InvalidPattern, refusal))?;
    RegexBuilder::new(&spelled)
        .case_insensitive(!case_sensitive)
        .size_limit(PROGRAM_SIZE_LIMIT)
        .dfa_size_limit(DFA_CACHE_LIMIT)
        .build()
        .map_err(|error| Error::new(ErrorCode::InvalidPattern, describe(&error)))
}

/// One line for the crate's error: its syntax errors span several lines and quote the
/// translated pattern, which the caller never wrote.
fn describe(error: &regex::Error) -> String {
    match error {
        regex::Error::CompiledTooBig(limit) => {
            format!("invalid regex: the pattern is too large (its compiled form exceeds {limit} bytes)")
        }
        other => {
            let text = other.to_string();
            let reason = text.lines().rev().find_map(|line| line.strip_prefix("error: ")).unwrap_or(&text);
            format!("invalid regex: {reason}")
        }
    }
}

/// What precedes a quantifier, for Python's "nothing to repeat" and "multiple repeat".
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    /// The start of the pattern, a group or an alternative.
    Nothing,
    /// `^`, `$`, `\A`, `\Z`, `\b`, `\B`.
    Assertion,
    /// Something that can be repeated.
    Atom,
    /// A quantifier.
    Repeat,
}

/// An escape sequence, read the way Python reads it.
enum Escape {
    Literal(char),
    /// `\d`, `\D`, `\s`, `\S`, `\w`, `\W`.
    Class(char),
    /// Spelled for the `regex` crate.
    Assertion(&'static str),
}

struct Translator {
    chars: Vec<char>,
    at: usize,
    out: String,
    last: Last,
    open_groups: usize,
    /// How much of `out` is global flag groups: Python accepts `(?i)` only while the
    /// whole pattern so far is such groups.
    flags_prefix_len: usize,
}

impl Translator {
    fn new(pattern: &str) -> Self {
        Translator {
            chars: pattern.chars().collect(),
            at: 0,
            out: String::with_capacity(pattern.len() * 2),
            last: Last::Nothing,
            open_groups: 0,
            flags_prefix_len: 0,
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    fn eat(&mut self, expected: char) -> bool {
        let found = self.peek() == Some(expected);
        if found {
            self.at += 1;
        }
        found
    }

    fn run(mut self) -> Result<String, String> {
        while let Some(c) = self.next() {
            match c {
                '\\' => match self.escape(false)? {
                    Escape::Literal(c) => self.atom_literal(c),
                    Escape::Class(c) => self.atom(&['\\', c]),
                    Escape::Assertion(spelled) => {
                        self.out.push_str(spelled);
                        self.last = Last::Assertion;
                    }
                },
                '[' => self.class()?,
                '(' => self.group()?,
                ')' => {
                    if self.open_groups == 0 {
                        return Err("invalid regex: unbalanced parenthesis".into());
                    }
                    self.open_groups -= 1;
                    self.atom(&[')']);
                }
                '|' => {
                    self.out.push('|');
                    self.last = Last::Nothing;
                }
                '^' | '$' => {
                    self.out.push(c);
                    self.last = Last::Assertion;
                }
                '.' => self.atom(&['.']),
                '*' | '+' | '?' => self.quantifier(&c.to_string())?,
                '{' => match self.counted_repetition() {
                    Some(spelled) => self.quantifier(&spelled)?,
                    // Python reads a `{` that starts no valid repetition as itself.
                    None => self.atom_literal('{'),
                },
                c => self.atom_literal(c),
            }
        }
        if self.open_groups > 0 {
            return Err("invalid regex: missing ), unterminated subpattern".into());
        }
        Ok(self.out)
    }

    fn atom(&mut self, spelled: &[char]) {
        self.out.extend(spelled);
        self.last = Last::Atom;
    }

    fn atom_literal(&mut self, c: char) {
        push_literal(&mut self.out, c);
        self.last = Last::Atom;
    }

    /// `spelled` is `*`, `+`, `?` or `{m,n}`; the `?` or `+` right after it is read here.
    fn quantifier(&mut self, spelled: &str) -> Result<(), String> {
        match self.last {
            Last::Nothing | Last::Assertion => return Err("invalid regex: nothing to repeat".into()),
            Last::Repeat => return Err("invalid regex: multiple repeat".into()),
            Last::Atom => {}
        }
        self.out.push_str(spelled);
        if self.eat('?') {
            self.out.push('?');
        } else if self.peek() == Some('+') {
            return Err(format!("unsupported regex construct: possessive quantifier `{spelled}+`"));
        }
        self.last = Last::Repeat;
        Ok(())
    }

    /// After `{`: a valid `{m}`, `{m,}`, `{,n}` or `{m,n}` spelled for the crate, or
    /// `None` (and nothing consumed) when Python would read the `{` as a literal.
    fn counted_repetition(&mut self) -> Option<String> {
        let start = self.at;
        let low = self.digits();
        let high = if self.eat(',') { Some(self.digits()) } else { None };
        if low.is_empty() && high.is_none() || !self.eat('}') {
            self.at = start;
            return None;
        }
        let low = if low.is_empty() { "0".to_owned() } else { low };
        Some(match high {
            None => format!("{{{low}}}"),
            Some(high) => format!("{{{low},{high}}}"),
        })
    }

    fn digits(&mut self) -> String {
        let mut digits = String::new();
        while let Some(c) = self.peek().filter(char::is_ascii_digit) {
            digits.push(c);
            self.at += 1;
        }
        digits
    }

    /// After `(`.
    fn group(&mut self) -> Result<(), String> {
        if !self.eat('?') {
            self.open(&['(']);
            return Ok(());
        }
        let Some(kind) = self.next() else { return Err("invalid regex: unexpected end of pattern".into()) };
        let unsupported = |what: &str| Err(format!("unsupported regex construct: {what}"));
        match kind {
            ':' => self.open(&['(', '?', ':']),
            '=' => return unsupported("lookahead `(?=…)`"),
            '!' => return unsupported("negative lookahead `(?!…)`"),
            '>' => return unsupported("atomic group `(?>…)`"),
            '(' => return unsupported("conditional group `(?(…)…)`"),
            '<' => {
                return match self.peek() {
                    Some('=') => unsupported("lookbehind `(?<=…)`"),
                    Some('!') => unsupported("negative lookbehind `(?<!…)`"),
                    _ => unsupported("named group `(?<name>…)`; Python spells it `(?P<name>…)`"),
                };
            }
            'P' => match self.next() {
                Some('<') => {
                    let name = self.group_name()?;
                    self.open(&['(', '?', 'P', '<']);
                    self.out.push_str(&name);
                    self.out.push('>');
                }
                Some('=') => return unsupported("backreference `(?P=name)`"),
                _ => return Err("invalid regex: unknown extension after `(?P`".into()),
            },
            '#' => {
                // A comment: Python drops it up to the first `)`; what came before it stays
                // the thing a following quantifier repeats.
                while let Some(c) = self.next() {
                    if c == ')' {
                        return Ok(());
                    }
                }
                return Err("invalid regex: missing ), unterminated comment".into());
            }
            _ => {
                self.at -= 1;
                self.flags()?;
            }
        }
        Ok(())
    }

    fn open(&mut self, spelled: &[char]) {
        self.out.extend(spelled);
        self.open_groups += 1;
        self.last = Last::Nothing;
    }

    /// After `(?P<`: a Python identifier, then `>`.
    fn group_name(&mut self) -> Result<String, String> {
        let mut name = String::new();
        loop {
            match self.next() {
                Some('>') => break,
                Some(c) if c == '_' || c.is_alphabetic() || (!name.is_empty() && c.is_alphanumeric()) => name.push(c),
                _ => return Err("invalid regex: bad character in group name".into()),
            }
        }
        if name.is_empty() {
            return Err("invalid regex: missing group name".into());
        }
        Ok(name)
    }

    /// After `(?`, at a flag letter or `-`: `(?ims)` at the start, or `(?ims-ims:…)`.
    fn flags(&mut self) -> Result<(), String> {
        let mut on = String::new();
        let mut off = String::new();
        let mut removing = false;
        loop {
            match self.next() {
                Some('-') if !removing => removing = true,
                Some(c @ ('i' | 'm' | 's')) => (if removing { &mut off } else { &mut on }).push(c),
                Some('u') if !removing => on.push('u'),
                Some('x') => return Err("unsupported regex construct: verbose flag `x`".into()),
                Some('a') => return Err("unsupported regex construct: ASCII flag `a`".into()),
                Some('L') => return Err("unsupported regex construct: locale flag `L`".into()),
                Some(':') if !(on.is_empty() && off.is_empty()) => {
                    self.open(&['(', '?']);
                    self.out.push_str(&on);
                    if removing {
                        self.out.push('-');
                        self.out.push_str(&off);
                    }
                    self.out.push(':');
                    return Ok(());
                }
                Some(')') if !removing && !on.is_empty() => {
                    if self.out.len() != self.flags_prefix_len {
                        return Err("unsupported regex construct: global flag `(?…)` not at the start".into());
                    }
                    self.out.push_str("(?");
                    self.out.push_str(&on);
                    self.out.push(')');
                    self.flags_prefix_len = self.out.len();
                    return Ok(());
                }
                Some(c) => return Err(format!("invalid regex: unknown extension or flag `{c}` after `(?`")),
                None => return Err("invalid regex: missing -, : or ) after flags".into()),
            }
        }
    }

    /// After `[`: the whole class, read as Python reads it (no nested classes and no set
    /// operators: `[`, `&&`, `--`, `~~` inside are literals).
    fn class(&mut self) -> Result<(), String> {
        self.out.push('[');
        if self.eat('^') {
            self.out.push('^');
        }
        let mut first = true;
        loop {
            let Some(c) = self.next() else { return Err("invalid regex: unterminated character set".into()) };
            if c == ']' && !first {
                break;
            }
            first = false;
            let low = if c == '\\' { self.escape(true)? } else { Escape::Literal(c) };
            let is_range = self.peek() == Some('-') && self.peek_at(1).is_some_and(|next| next != ']');
            if !is_range {
                match low {
                    Escape::Literal(c) => push_literal(&mut self.out, c),
                    Escape::Class(c) => self.out.extend(['\\', c]),
                    // `escape(true)` yields no assertions.
                    Escape::Assertion(spelled) => self.out.push_str(spelled),
                }
                continue;
            }
            self.at += 1;
            let high = match self.next() {
                Some('\\') => self.escape(true)?,
                Some(c) => Escape::Literal(c),
                None => return Err("invalid regex: unterminated character set".into()),
            };
            match (low, high) {
                (Escape::Literal(low), Escape::Literal(high)) if low <= high => {
                    push_literal(&mut self.out, low);
                    self.out.push('-');
                    push_literal(&mut self.out, high);
                }
                _ => return Err("invalid regex: bad character range".into()),
            }
        }
        self.out.push(']');
        self.last = Last::Atom;
        Ok(())
    }

    /// After `\`, inside a class or not.
    fn escape(&mut self, in_class: bool) -> Result<Escape, String> {
        let Some(c) = self.next() else { return Err("invalid regex: bad escape (end of pattern)".into()) };
        let literal = |code: u32| Escape::Literal(char::from_u32(code).unwrap_or('\0'));
        Ok(match c {
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => Escape::Class(c),
            'b' if in_class => literal(0x08),
            'A' if !in_class => Escape::Assertion("\\A"),
            'b' if !in_class => Escape::Assertion("\\b"),
            'B' if !in_class => Escape::Assertion("\\B"),
            'Z' if !in_class => Escape::Assertion("\\z"),
            'a' => literal(0x07),
            'f' => literal(0x0c),
            'n' => literal(0x0a),
            'r' => literal(0x0d),
            't' => literal(0x09),
            'v' => literal(0x0b),
            'x' => self.hex(c, 2)?,
            'u' => self.hex(c, 4)?,
            'U' => self.hex(c, 8)?,
            'N' => return Err("unsupported regex construct: named character escape `\\N{…}`".into()),
            '0'..='7' if in_class || c == '0' || self.octal_follows() => self.octal(c)?,
            '1'..='9' if !in_class => return Err(format!("unsupported regex construct: backreference `\\{c}`")),
            c if c.is_ascii_alphanumeric() => return Err(format!("invalid regex: bad escape `\\{c}`")),
            c => Escape::Literal(c),
        })
    }

    /// Outside a class, `\1`–`\7` is an octal escape only with three octal digits
    /// (Python: "octal escape *or* decimal group reference").
    fn octal_follows(&self) -> bool {
        let octal = |c: Option<char>| c.is_some_and(|c| ('0'..='7').contains(&c));
        octal(self.peek()) && octal(self.peek_at(1))
    }

    /// After `\` and the first octal digit `first`: up to two more octal digits.
    fn octal(&mut self, first: char) -> Result<Escape, String> {
        let mut value = first.to_digit(8).unwrap_or(0);
        for _ in 0..2 {
            match self.peek().and_then(|c| c.to_digit(8)) {
                Some(digit) => {
                    value = value * 8 + digit;
                    self.at += 1;
                }
                None => break,
            }
        }
        if value > 0o377 {
            return Err("invalid regex: octal escape value outside of range 0-0o377".into());
        }
        char::from_u32(value).map(Escape::Literal).ok_or_else(|| "invalid regex: bad octal escape".into())
    }

    /// After `\x`, `\u` or `\U`: exactly `count` hex digits naming a character.
    fn hex(&mut self, letter: char, count: usize) -> Result<Escape, String> {
        let mut value: u32 = 0;
        for _ in 0..count {
            let Some(digit) = self.peek().and_then(|c| c.to_digit(16)) else {
                return Err(format!("invalid regex: incomplete escape `\\{letter}` (needs {count} hex digits)"));
            };
            value = value.saturating_mul(16).saturating_add(digit);
            self.at += 1;
        }
        char::from_u32(value).map(Escape::Literal).ok_or_else(|| {
            format!("invalid regex: `\\{letter}` escape names no character (a surrogate or beyond U+10FFFF)")
        })
    }
}

/// A literal character as the crate must read it whatever surrounds it: letters and
/// digits as they are, anything else as `\x{…}` (no punctuation is special then, inside
/// a class or out).
fn push_literal(out: &mut String, c: char) {
    if c.is_alphanumeric() {
        out.push(c);
    } else {
        out.push_str(&format!("\\x{{{:x}}}", u32::from(c)));
    }
}

#[cfg(test)]
mod tests;
