//! JSON, YAML and XML documents that carry text from outside, written so that every
//! character [`display::is_unsafe`] names is escaped in the document's own syntax: the
//! document means the same to a parser and stays inert when it is printed on a terminal.
//!
//! serde_json escapes only C0 controls and YAML emitters write DEL, C1 controls, the bidi
//! and the zero-width characters raw. Here:
//! - JSON: each of them as a `\uXXXX` escape (all are in the Basic Multilingual Plane);
//! - YAML: when the usual block-style document would carry one, the document is written in
//!   JSON's syntax instead (YAML 1.2 reads JSON; the escapes above are YAML's too);
//! - XML (JUnit): each of them written visibly, as [`display::term`] does.

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{Formatter, PrettyFormatter};

use crate::display::{self, is_unsafe};

/// A formatter that escapes every unsafe character of a string as `\uXXXX` and otherwise
/// formats as `F` does (serde_json has already escaped C0 controls, quotes and backslashes
/// by the time a fragment reaches it).
struct Inert<F>(F);

macro_rules! delegate {
    ($($name:ident($($arg:ident: $ty:ty),*);)*) => {$(
        fn $name<W: ?Sized + io::Write>(&mut self, w: &mut W $(, $arg: $ty)*) -> io::Result<()> {
            self.0.$name(w $(, $arg)*)
        }
    )*};
}

impl<F: Formatter> Formatter for Inert<F> {
    delegate! {
        begin_array();
        end_array();
        begin_array_value(first: bool);
        end_array_value();
        begin_object();
        end_object();
        begin_object_key(first: bool);
        end_object_key();
        begin_object_value();
        end_object_value();
    }

    fn write_string_fragment<W: ?Sized + io::Write>(&mut self, w: &mut W, fragment: &str) -> io::Result<()> {
        let mut rest = fragment;
        while let Some(i) = rest.find(is_unsafe) {
            w.write_all(&rest.as_bytes()[..i])?;
            let c = rest[i..].chars().next().unwrap_or_default();
            write!(w, "\\u{:04x}", c as u32)?;
            rest = &rest[i + c.len_utf8()..];
        }
        w.write_all(rest.as_bytes())
    }
}

/// Writes `value` as indented JSON (two spaces, as `serde_json::to_writer_pretty`).
pub fn json_pretty<T: Serialize + ?Sized>(value: &T, out: &mut dyn Write) -> io::Result<()> {
    let mut ser = serde_json::Serializer::with_formatter(out, Inert(PrettyFormatter::new()));
    value.serialize(&mut ser).map_err(io::Error::from)
}

/// `value` as indented JSON text.
pub fn json_pretty_string<T: Serialize + ?Sized>(value: &T) -> io::Result<String> {
    let mut buf = Vec::new();
    json_pretty(value, &mut buf)?;
    String::from_utf8(buf).map_err(io::Error::other)
}

/// `value` as compact JSON text.
pub fn json_compact_string<T: Serialize + ?Sized>(value: &T) -> io::Result<String> {
    let mut buf = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, Inert(serde_json::ser::CompactFormatter));
    value.serialize(&mut ser).map_err(io::Error::from)?;
    String::from_utf8(buf).map_err(io::Error::other)
}

/// `value` as a YAML document: block style, or JSON's syntax (ending in a line break) when
/// a string of it carries an unsafe character that block style would write raw.
pub fn yaml_string<T: Serialize>(value: &T) -> io::Result<String> {
    let text = serde_saphyr::to_string(value).map_err(io::Error::other)?;
    if !text.chars().any(|c| c != '\n' && is_unsafe(c)) {
        return Ok(text);
    }
    let mut text = json_pretty_string(value)?;
    text.push('\n');
    Ok(text)
}

/// An XML document (`xml`, as a writer made it) with every unsafe character other than a
/// line break written visibly: a character reference would be read back as the character,
/// and most C0 controls are not XML at all. Only text and attribute values can carry them.
pub fn xml_document(xml: String) -> String {
    if !xml.chars().any(|c| c != '\n' && is_unsafe(c)) {
        return xml;
    }
    display::term_lines(&xml)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "a\u{1b}[2J\u{7f}\u{9b}\u{202e}\u{2066}\u{200b}\u{feff}\"\\\nz é";

    fn clean(text: &str) -> bool {
        !text.chars().any(|c| c != '\n' && is_unsafe(c))
    }

    #[test]
    fn json_escapes_every_unsafe_character_and_reads_back_the_same() {
        let doc = serde_json::json!({"k": HOSTILE, HOSTILE: [HOSTILE]});
        for text in [
            json_pretty_string(&doc).unwrap(),
            json_compact_string(&doc).unwrap(),
        ] {
            assert!(clean(&text), "{text:?}");
            assert!(text.contains("\\u202e") && text.contains("é"), "{text}");
            let back: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(back, doc);
        }
        assert_eq!(
            json_pretty_string(&doc).unwrap(),
            serde_json::to_string_pretty(&serde_json::json!({"k": "a", "a": ["a"]}))
                .unwrap()
                .replace("\"a\"", &serde_json::to_string(HOSTILE).unwrap())
                .replace('\u{7f}', "\\u007f")
                .replace('\u{9b}', "\\u009b")
                .replace('\u{202e}', "\\u202e")
                .replace('\u{2066}', "\\u2066")
                .replace('\u{200b}', "\\u200b")
                .replace('\u{feff}', "\\ufeff"),
            "indented as serde_json indents"
        );
    }

    #[test]
    fn yaml_stays_block_style_unless_a_string_needs_an_escape() {
        #[derive(Serialize)]
        struct Doc<'a> {
            name: &'a str,
            list: Vec<&'a str>,
        }
        let plain = Doc {
            name: "web",
            list: vec!["a", "é"],
        };
        assert_eq!(
            yaml_string(&plain).unwrap(),
            serde_saphyr::to_string(&plain).unwrap()
        );
        let hostile = Doc {
            name: HOSTILE,
            list: vec!["a", HOSTILE],
        };
        let text = yaml_string(&hostile).unwrap();
        assert!(clean(&text), "{text:?}");
        let back: serde_json::Value = serde_saphyr::from_str(&text).unwrap();
        assert_eq!(back, serde_json::json!({"name": HOSTILE, "list": ["a", HOSTILE]}));
    }

    #[test]
    fn xml_writes_unsafe_characters_visibly_and_keeps_line_breaks() {
        let xml = format!("<a x=\"{HOSTILE}\">\n{HOSTILE}</a>\n");
        let out = xml_document(xml);
        assert!(clean(&out), "{out:?}");
        assert!(out.contains("\\u{202e}") && out.ends_with("</a>\n"), "{out}");
        assert_eq!(xml_document("<a>é</a>".into()), "<a>é</a>");
    }
}
