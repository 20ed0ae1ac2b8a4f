//! Reading a description's text (YAML or JSON) into a JSON value, within [`Limits`].
//!
//! YAML is read event by event (saphyr-parser, YAML 1.2) and built without recursion, so that
//! nesting, the number of values and the values copied by aliases are counted as they are made:
//! an alias bomb stops at its first million copies, a file nested a hundred thousand levels deep
//! at its 65th. JSON goes through serde_json with the same counting. Both refuse what has no
//! place in a description rather than guess:
//!
//! * a key given twice in one mapping (YAML and JSON);
//! * tags other than the core schema's (`!!python/...`, `!custom`, `!!binary`, `!!set`), and a
//!   core tag its value does not fit (`!!int abc`);
//! * numbers that are not finite (`.inf`, `.nan`) or too large for 64 bits;
//! * control characters in any text (a NUL in a name), which no output format can carry.
//!
//! Plain YAML scalars follow the YAML 1.2 core schema, with digit separators (`1_000`) and
//! `0b` binary integers accepted as the YAML 1.1 reader did. Where YAML 1.1 and 1.2 read a plain
//! scalar as different numbers, it stays text, so the field that expects a number refuses it by
//! name: `010` (octal 8 in YAML 1.1, 10 in YAML 1.2) and sexagesimal `1:30`. YAML 1.1's `yes`,
//! `no`, `on` and `off` are text (a node may be named `on`); dates are text as written
//! (`!!timestamp` is accepted on a date and gives its text).

use super::limits::{exceeded, grouped, how_to_raise, Limits};
use saphyr_parser::{Event, Marker, Parser, ScalarStyle, Tag};
use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;

/// The notation of a description's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Yaml,
    Json,
}

impl Format {
    /// The format of a file by its extension (`.yaml`, `.yml`, `.json`), if it is native.
    pub fn from_extension(ext: &str) -> Option<Format> {
        match ext.to_ascii_lowercase().as_str() {
            "yaml" | "yml" => Some(Format::Yaml),
            "json" => Some(Format::Json),
            _ => None,
        }
    }
}

/// Why a text is not a description's value: where (line and column, 1-based, when known) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
    /// The limit the text passed (one of [`super::limits::NAMES`]), when that is why.
    pub limit: Option<&'static str>,
}

impl ParseError {
    fn at(line: usize, column: usize, message: impl Into<String>) -> Self {
        ParseError { line: Some(line), column: Some(column), message: message.into(), limit: None }
    }
    fn whole(message: impl Into<String>) -> Self {
        ParseError { line: None, column: None, message: message.into(), limit: None }
    }
    fn at_mark(mark: Marker, message: impl Into<String>) -> Self {
        ParseError::at(mark.line(), mark.col() + 1, message)
    }
    /// The same error, said to be the passing of `limit` when it is one.
    fn passing(self, limit: Option<&'static str>) -> Self {
        ParseError { limit, ..self }
    }
    /// `source:line:column` (or `source` alone), the place of this error in `source`.
    pub fn place(&self, source: &str) -> String {
        match (self.line, self.column) {
            (Some(l), Some(c)) => format!("{source}:{l}:{c}"),
            _ => source.to_string(),
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.column) {
            (Some(l), Some(c)) => write!(f, "{l}:{c}: {}", self.message),
            _ => f.write_str(&self.message),
        }
    }
}

/// Reads `text` as a description in `format`, within `limits`.
pub fn parse(text: &str, format: Format, limits: &Limits) -> Result<Value, ParseError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.len() as u64 > limits.size {
        return Err(ParseError::whole(size_refusal(text.len() as u64, limits)).passing(Some("size")));
    }
    let value = match format {
        Format::Yaml => parse_yaml(text, limits)?,
        Format::Json if text.trim().is_empty() => Value::Null,
        Format::Json => parse_json(text, limits)?,
    };
    if value.is_null() {
        return Err(ParseError::whole("the file is empty"));
    }
    Ok(value)
}

/// The refusal of a file of `bytes` bytes, if it passes the `size` limit.
pub fn size_refusal(bytes: u64, limits: &Limits) -> String {
    exceeded(format!("the file has {} bytes", grouped(bytes)), "size", limits.size)
}

/// A character no text of a description may hold: control characters (tab, line feed and
/// carriage return aside, for descriptions) and the two non-characters XML refuses.
fn forbidden_char(s: &str) -> Option<char> {
    s.chars().find(|&c| {
        (c.is_control() && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{fffe}' | '\u{ffff}')
    })
}

fn check_text(s: &str) -> Result<(), String> {
    match forbidden_char(s) {
        Some(c) => Err(format!(
            "text may not hold control characters, got U+{:04X} in '{}'",
            c as u32,
            s.escape_debug()
        )),
        None => Ok(()),
    }
}

/// Counts what is read against the limits.
struct Budget<'a> {
    limits: &'a Limits,
    values: Cell<u64>,
    aliased: Cell<u64>,
    depth: Cell<u64>,
    /// The limit passed, once one is.
    passed: Cell<Option<&'static str>>,
}

impl<'a> Budget<'a> {
    fn new(limits: &'a Limits) -> Self {
        Budget {
            limits,
            values: Cell::new(0),
            aliased: Cell::new(0),
            depth: Cell::new(0),
            passed: Cell::new(None),
        }
    }
    fn add_values(&self, n: u64) -> Result<(), String> {
        let v = self.values.get() + n;
        self.values.set(v);
        if v > self.limits.values {
            self.passed.set(Some("values"));
            return Err(format!(
                "the description holds more values than the limit of {} ({})",
                grouped(self.limits.values),
                how_to_raise("values")
            ));
        }
        Ok(())
    }
    fn add_aliased(&self, n: u64) -> Result<(), String> {
        let a = self.aliased.get() + n;
        self.aliased.set(a);
        if a > self.limits.aliases {
            self.passed.set(Some("aliases"));
            return Err(format!(
                "aliases copy more values than the limit of {} ({})",
                grouped(self.limits.aliases),
                how_to_raise("aliases")
            ));
        }
        Ok(())
    }
    fn enter(&self) -> Result<(), String> {
        let d = self.depth.get() + 1;
        self.depth.set(d);
        if d > self.limits.depth {
            self.passed.set(Some("depth"));
            return Err(format!(
                "lists and mappings nest deeper than the limit of {} levels ({})",
                self.limits.depth,
                how_to_raise("depth")
            ));
        }
        Ok(())
    }
    fn leave(&self) {
        self.depth.set(self.depth.get() - 1);
    }
}

// ---------------------------------------------------------------------------------------------
// JSON

fn parse_json(text: &str, limits: &Limits) -> Result<Value, ParseError> {
    let budget = Budget::new(limits);
    let mut de = serde_json::Deserializer::from_str(text);
    // The budget's depth limit stops recursion first (at most MAX_DEPTH levels).
    de.disable_recursion_limit();
    let value = JsonNode(&budget).deserialize(&mut de).and_then(|v| de.end().map(|()| v));
    value.map_err(|e| {
        let msg = e.to_string();
        let msg = match msg.rfind(" at line ") {
            Some(i) => msg[..i].to_string(),
            None => msg,
        };
        let msg = if e.is_syntax() || e.is_eof() { format!("not valid JSON: {msg}") } else { msg };
        let error = if e.line() == 0 {
            ParseError::whole(msg)
        } else {
            ParseError::at(e.line(), e.column().max(1), msg)
        };
        error.passing(budget.passed.get())
    })
}

/// One JSON value, counted and checked as it is read.
struct JsonNode<'b, 'a>(&'b Budget<'a>);

impl<'de> DeserializeSeed<'de> for JsonNode<'_, '_> {
    type Value = Value;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for JsonNode<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        self.0.add_values(1).map_err(E::custom)?;
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        self.0.add_values(1).map_err(E::custom)?;
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        self.0.add_values(1).map_err(E::custom)?;
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        self.0.add_values(1).map_err(E::custom)?;
        Number::from_f64(v).map(Value::Number).ok_or_else(|| E::custom(format!("{v} is not a finite number")))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        self.0.add_values(1).map_err(E::custom)?;
        check_text(v).map_err(E::custom)?;
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        self.0.add_values(1).map_err(E::custom)?;
        check_text(&v).map_err(E::custom)?;
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.0.add_values(1).map_err(E::custom)?;
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let b = self.0;
        b.add_values(1).map_err(de::Error::custom)?;
        b.enter().map_err(de::Error::custom)?;
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(JsonNode(b))? {
            items.push(v);
        }
        b.leave();
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let b = self.0;
        b.add_values(1).map_err(de::Error::custom)?;
        b.enter().map_err(de::Error::custom)?;
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            check_text(&key).map_err(de::Error::custom)?;
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!("key '{key}' is given twice in one mapping")));
            }
            let v = map.next_value_seed(JsonNode(b))?;
            out.insert(key, v);
        }
        b.leave();
        Ok(Value::Object(out))
    }
}

// ---------------------------------------------------------------------------------------------
// YAML

/// A list or mapping being read.
enum Open {
    Seq {
        items: Vec<Value>,
        start: Marker,
        anchor: usize,
        /// Values counted before it, so that an anchor knows how many values it holds.
        before: u64,
    },
    Map {
        map: Map<String, Value>,
        /// The key read and waiting for its value, with where it was; `merge` for `<<`.
        key: Option<(String, Marker, bool)>,
        /// Mappings merged in by `<<`, in order of precedence.
        merged: Vec<Map<String, Value>>,
        start: Marker,
        anchor: usize,
        before: u64,
    },
}

struct YamlBuilder<'b, 'a> {
    budget: &'b Budget<'a>,
    open: Vec<Open>,
    /// Finished anchored values and how many values each holds.
    anchors: HashMap<usize, (Value, u64)>,
    root: Option<Value>,
    documents: usize,
    /// Where the last error is, when not at the event that found it (a key given twice).
    error_at: Option<Marker>,
}

fn parse_yaml(text: &str, limits: &Limits) -> Result<Value, ParseError> {
    let budget = Budget::new(limits);
    let mut b = YamlBuilder {
        budget: &budget,
        open: Vec::new(),
        anchors: HashMap::new(),
        root: None,
        documents: 0,
        error_at: None,
    };
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|e| {
            let msg = match e.info() {
                // The scanner's own cap on flow nesting ([[[...), met before any value is built.
                "recursion limit exceeded" => {
                    "lists and mappings nest deeper than YAML's flow style allows here (255 levels)"
                        .to_string()
                }
                info => format!("not valid YAML: {info}{}", b.context()),
            };
            ParseError::at_mark(*e.marker(), msg)
        })?;
        b.event(event, span.start).map_err(|msg| {
            ParseError::at_mark(b.error_at.unwrap_or(span.start), msg).passing(budget.passed.get())
        })?;
    }
    Ok(b.root.unwrap_or(Value::Null))
}

fn core_tag(tag: &Tag) -> Option<&str> {
    tag.is_yaml_core_schema().then_some(tag.suffix.as_str())
}

/// `!` alone: the non-specific tag, which makes a plain scalar text.
fn non_specific(tag: &Tag) -> bool {
    (tag.handle.is_empty() && tag.suffix == "!") || (tag.handle == "!" && tag.suffix.is_empty())
}

fn tag_name(tag: &Tag) -> String {
    match core_tag(tag) {
        Some(s) => format!("!!{s}"),
        None => tag.to_string(),
    }
}

fn refused_tag(tag: &Tag) -> String {
    format!(
        "the tag {} is not allowed: a description holds text, numbers, true/false, lists and mappings",
        tag_name(tag)
    )
}

impl YamlBuilder<'_, '_> {
    fn event(&mut self, event: Event<'_>, mark: Marker) -> Result<(), String> {
        match event {
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => Ok(()),
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err("expected a single document in the file, found a second one".into());
                }
                Ok(())
            }
            Event::Scalar(text, style, anchor, tag) => {
                if self.expects_key() {
                    let key = key_text(&text, style, tag.as_deref())?;
                    return self.set_key(key, mark, style == ScalarStyle::Plain && tag.is_none());
                }
                let value = scalar(&text, style, tag.as_deref())?;
                let before = self.budget.values.get();
                self.budget.add_values(1)?;
                self.finish(value, anchor, before)
            }
            Event::SequenceStart(anchor, tag) => {
                self.collection_start("a list", tag.as_deref(), "seq")?;
                let before = self.budget.values.get();
                self.budget.add_values(1)?;
                self.open.push(Open::Seq { items: Vec::new(), start: mark, anchor, before });
                Ok(())
            }
            Event::MappingStart(anchor, tag) => {
                self.collection_start("a mapping", tag.as_deref(), "map")?;
                let before = self.budget.values.get();
                self.budget.add_values(1)?;
                self.open.push(Open::Map {
                    map: Map::new(),
                    key: None,
                    merged: Vec::new(),
                    start: mark,
                    anchor,
                    before,
                });
                Ok(())
            }
            Event::SequenceEnd | Event::MappingEnd => {
                self.budget.leave();
                match self.open.pop() {
                    Some(Open::Seq { items, anchor, before, .. }) => {
                        self.finish(Value::Array(items), anchor, before)
                    }
                    Some(Open::Map { mut map, merged, anchor, before, .. }) => {
                        for m in merged {
                            for (k, v) in m {
                                map.entry(k).or_insert(v);
                            }
                        }
                        self.finish(Value::Object(map), anchor, before)
                    }
                    None => Ok(()),
                }
            }
            Event::Alias(id) => {
                let Some((value, count)) = self.anchors.get(&id) else {
                    return Err("an alias may not refer to a list or mapping that contains it".into());
                };
                let (value, count) = (value.clone(), *count);
                if self.expects_key() {
                    let key =
                        match &value {
                            Value::String(s) => s.clone(),
                            Value::Number(n) => n.to_string(),
                            Value::Bool(b) => b.to_string(),
                            _ => return Err(
                                "a mapping key must be text or a number, got an alias to a list or mapping"
                                    .into(),
                            ),
                        };
                    return self.set_key(key, mark, false);
                }
                self.budget.add_aliased(count)?;
                let before = self.budget.values.get();
                self.budget.add_values(count)?;
                self.finish(value, 0, before)
            }
        }
    }

    /// Where the innermost list or mapping still open began, often the real slip when the
    /// text breaks off inside it.
    fn context(&self) -> String {
        match self.open.last() {
            Some(Open::Seq { start, .. }) => {
                format!(" (in the list started at {}:{})", start.line(), start.col() + 1)
            }
            Some(Open::Map { start, .. }) => {
                format!(" (in the mapping started at {}:{})", start.line(), start.col() + 1)
            }
            None => String::new(),
        }
    }

    fn expects_key(&self) -> bool {
        matches!(self.open.last(), Some(Open::Map { key: None, .. }))
    }

    fn collection_start(&mut self, what: &str, tag: Option<&Tag>, own_tag: &str) -> Result<(), String> {
        if self.expects_key() {
            return Err(format!("a mapping key must be text or a number, got {what}"));
        }
        if let Some(t) = tag {
            if core_tag(t) != Some(own_tag) {
                return Err(
                    if core_tag(t).is_some_and(|s| {
                        matches!(s, "str" | "int" | "float" | "bool" | "null" | "seq" | "map")
                    }) {
                        format!("the tag {} does not fit {what}", tag_name(t))
                    } else {
                        refused_tag(t)
                    },
                );
            }
        }
        self.budget.enter()
    }

    fn set_key(&mut self, key: String, mark: Marker, plain: bool) -> Result<(), String> {
        check_text(&key)?;
        if let Some(Open::Map { key: slot, .. }) = self.open.last_mut() {
            *slot = Some((key, mark, plain));
        }
        Ok(())
    }

    /// A value is complete: remember it if anchored, then put it where it belongs.
    fn finish(&mut self, value: Value, anchor: usize, before: u64) -> Result<(), String> {
        if anchor != 0 {
            self.anchors.insert(anchor, (value.clone(), self.budget.values.get() - before));
        }
        match self.open.last_mut() {
            None => self.root = Some(value),
            Some(Open::Seq { items, .. }) => items.push(value),
            Some(Open::Map { map, key, merged, .. }) => {
                let (k, key_mark, plain) = key.take().expect("a value follows its key");
                if plain && k == "<<" {
                    // YAML 1.1's merge key, as PyYAML read it: keys of the mapping itself win,
                    // then those of the first mapping merged, and so on.
                    match value {
                        Value::Object(m) => merged.push(m),
                        Value::Array(items) if items.iter().all(Value::is_object) => {
                            merged.extend(items.into_iter().filter_map(|v| match v {
                                Value::Object(m) => Some(m),
                                _ => None,
                            }))
                        }
                        _ => return Err("a merge key '<<' takes a mapping or a list of mappings".into()),
                    }
                } else if map.contains_key(&k) {
                    self.error_at = Some(key_mark);
                    return Err(format!("key '{k}' is given twice in one mapping"));
                } else {
                    map.insert(k, value);
                }
            }
        }
        Ok(())
    }
}

/// The text of a scalar used as a mapping key (a tag, if any, must fit it).
fn key_text(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<String, String> {
    if let Some(t) = tag {
        scalar(text, style, Some(t))?;
    }
    Ok(text.to_string())
}

/// The value of a scalar: quoted and block scalars are text, plain ones are resolved by the
/// YAML 1.2 core schema (see the module's description), tags are checked against the text.
fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Value, String> {
    check_text(text)?;
    let Some(tag) = tag else {
        return if style == ScalarStyle::Plain { plain(text) } else { Ok(Value::String(text.to_string())) };
    };
    if non_specific(tag) {
        return Ok(Value::String(text.to_string()));
    }
    let not = |what: &str| format!("'{}' is not {what} (tagged {})", text.escape_debug(), tag_name(tag));
    match core_tag(tag) {
        Some("str") => Ok(Value::String(text.to_string())),
        Some("int") => match integer(text) {
            Integer::Value(n) => Ok(Value::Number(n)),
            Integer::TooLarge => Err(too_large(text)),
            Integer::Ambiguous | Integer::No => Err(not("an integer")),
        },
        Some("float") => match integer(text) {
            Integer::Value(n) => Ok(Value::Number(n)),
            _ => match float(text) {
                Some(Ok(v)) => Ok(v),
                Some(Err(e)) => Err(e),
                None => Err(not("a number")),
            },
        },
        Some("bool") => match text {
            "true" | "True" | "TRUE" => Ok(Value::Bool(true)),
            "false" | "False" | "FALSE" => Ok(Value::Bool(false)),
            _ => Err(not("true or false")),
        },
        Some("null") => match text {
            "" | "~" | "null" | "Null" | "NULL" => Ok(Value::Null),
            _ => Err(not("null")),
        },
        Some("timestamp") if is_timestamp(text) => Ok(Value::String(text.to_string())),
        Some("timestamp") => Err(not("a date")),
        Some("seq") | Some("map") => Err(format!("the tag {} does not fit a scalar", tag_name(tag))),
        _ => Err(refused_tag(tag)),
    }
}

fn too_large(text: &str) -> String {
    let shown: String = text.chars().take(24).collect();
    let more = if text.chars().count() > 24 { "..." } else { "" };
    format!("the number {shown}{more} is too large (at most 64 bits)")
}

fn plain(text: &str) -> Result<Value, String> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Value::Null),
        "true" | "True" | "TRUE" => return Ok(Value::Bool(true)),
        "false" | "False" | "FALSE" => return Ok(Value::Bool(false)),
        _ => {}
    }
    match integer(text) {
        Integer::Value(n) => return Ok(Value::Number(n)),
        Integer::TooLarge => return Err(too_large(text)),
        Integer::Ambiguous => return Ok(Value::String(text.to_string())),
        Integer::No => {}
    }
    match float(text) {
        Some(r) => r,
        None => Ok(Value::String(text.to_string())),
    }
}

enum Integer {
    Value(Number),
    TooLarge,
    /// Read differently by YAML 1.1 and 1.2 (`010`).
    Ambiguous,
    No,
}

/// Digits of `radix` with single `_` between them, the `_` removed.
fn digits(s: &str, radix: u32) -> Option<String> {
    if s.is_empty() || s.starts_with('_') || s.ends_with('_') || s.contains("__") {
        return None;
    }
    s.chars().all(|c| c == '_' || c.is_digit(radix)).then(|| s.replace('_', ""))
}

fn integer(text: &str) -> Integer {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, rest) = match body.get(..2) {
        Some("0x") => (16, &body[2..]),
        Some("0o") => (8, &body[2..]),
        Some("0b") => (2, &body[2..]),
        _ => (10, body),
    };
    let Some(d) = digits(rest, radix) else { return Integer::No };
    if radix == 10 && d.len() > 1 && d.starts_with('0') {
        return Integer::Ambiguous;
    }
    match u64::from_str_radix(&d, radix) {
        Ok(n) if !negative => Integer::Value(n.into()),
        Ok(n) if n <= i64::MAX as u64 + 1 => Integer::Value((-(n as i128) as i64).into()),
        _ => Integer::TooLarge,
    }
}

/// A float of the YAML 1.2 core schema (digit separators allowed); `.inf` and `.nan` are
/// refused, since no engine can use them.
fn float(text: &str) -> Option<Result<Value, String>> {
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    if matches!(body, ".inf" | ".Inf" | ".INF" | ".nan" | ".NaN" | ".NAN") {
        return Some(Err(format!("'{text}' is not a finite number")));
    }
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (whole, frac) = match mantissa.split_once('.') {
        Some((w, f)) => (w, Some(f)),
        None => (mantissa, None),
    };
    let whole_ok = whole.is_empty() || digits(whole, 10).is_some();
    let frac_ok = frac.is_none_or(|f| f.is_empty() || digits(f, 10).is_some());
    let some_digit = !whole.is_empty() || frac.is_some_and(|f| !f.is_empty());
    let exp_ok = exponent.is_none_or(|e| digits(e.strip_prefix(['-', '+']).unwrap_or(e), 10).is_some());
    if !(whole_ok && frac_ok && some_digit && exp_ok) {
        return None;
    }
    let v: f64 = text.replace('_', "").parse().ok()?;
    Some(match Number::from_f64(v) {
        Some(n) if v.is_finite() => Ok(Value::Number(n)),
        _ => Err(too_large(text)),
    })
}

/// A YAML 1.1 timestamp: `2001-12-14`, or with a time (`2001-12-14t21:59:43.10-05:00`).
fn is_timestamp(text: &str) -> bool {
    let b = text.as_bytes();
    let date = b.len() >= 8 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-';
    let mut parts = text.get(5..).unwrap_or("").splitn(2, '-');
    let month = parts.next().unwrap_or("");
    let day_and_time = parts.next().unwrap_or("");
    let day: String = day_and_time.chars().take_while(char::is_ascii_digit).collect();
    let rest = &day_and_time[day.len()..];
    date && (1..=2).contains(&month.len())
        && month.chars().all(|c| c.is_ascii_digit())
        && (1..=2).contains(&day.len())
        && (rest.is_empty() || rest.starts_with(['T', 't', ' ', '\t']))
}

#[cfg(test)]
mod tests;
