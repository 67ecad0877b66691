//! Accumulates inputs into one state: each input parsed (in parallel for a large JSON
//! List, else sequentially as JSON or YAML), appended, and checked for duplicates.

use std::io::{Read, Seek};
use std::path::Path;

use crate::ctx::{Ctx, Sink};
use crate::dedup::Dedup;
use crate::error::{ErrorKind, IngestError};
use crate::files::{check_size, io_error, read_file, too_large};
use crate::stack::on_big_stack;
use crate::{LoadOptions, Loaded, Pods, json, split, stream, yaml};

/// Accumulates inputs and checks for duplicates as it goes.
pub(crate) struct Loader<'o> {
    opts: &'o LoadOptions,
    pub(crate) sink: Sink,
    bytes_read: u64,
    files: Vec<String>,
    regular: std::collections::BTreeMap<String, u64>,
    dedup: Dedup,
}

impl<'o> Loader<'o> {
    pub(crate) fn new(opts: &'o LoadOptions) -> Self {
        Loader {
            opts,
            sink: Sink::default(),
            bytes_read: 0,
            files: Vec::new(),
            regular: std::collections::BTreeMap::new(),
            dedup: Dedup::default(),
        }
    }

    /// Adds an input held in memory: a large JSON List through the parallel reader
    /// ([`split`]), anything else (or what that reader declines) sequentially.
    pub(crate) fn add(&mut self, name: &str, bytes: &[u8]) -> Result<(), IngestError> {
        let cfg = split::Config::new(self.opts.pods == Pods::Count);
        if cfg.threads > 1 && bytes.len() >= split::MIN_SPLIT_BYTES {
            let mut src = bytes;
            let streamed = on_big_stack(name, || {
                split::parse_stream(name, &mut src, cfg).map_err(|e| io_error(name, &e))
            })?;
            if let split::Streamed::Parsed(sink, _) = streamed {
                return self.add_parsed(name, *sink, bytes.len() as u64, Some(bytes));
            }
        }
        self.add_sequential(name, bytes)
    }

    /// Adds a file: a regular file is streamed through the parallel reader when large
    /// (never held whole in memory then), else, or when that reader declines, read into
    /// memory and parsed sequentially; a FIFO or device is read as a bounded stream.
    pub(crate) fn add_path(&mut self, path: &Path, name: &str) -> Result<(), IngestError> {
        let io = |e: std::io::Error| io_error(name, &e);
        let mut file = std::fs::File::open(path).map_err(io)?;
        let meta = file.metadata().map_err(io)?;
        if !meta.is_file() {
            let buf = stream::read(file, name, self.opts.max_stream_size)?;
            return self.add_sequential(name, &buf);
        }
        let limit = self.opts.max_file_size;
        if meta.len() > limit {
            return Err(too_large(name, limit));
        }
        self.regular.insert(name.to_owned(), meta.len());
        let cfg = split::Config::new(self.opts.pods == Pods::Count);
        if cfg.threads > 1 && meta.len() >= split::MIN_SPLIT_BYTES as u64 {
            let mut src = (&file).take(limit.saturating_add(1));
            let streamed = on_big_stack(name, || {
                split::parse_stream(name, &mut src, cfg).map_err(|e| io_error(name, &e))
            })?;
            if let split::Streamed::Parsed(sink, read) = streamed {
                check_size(name, read, meta.len(), limit)?;
                return self.add_parsed(name, *sink, read, None);
            }
            file.rewind().map_err(io)?;
        }
        let buf = read_file(&file, name, meta.len(), limit)?;
        self.add_sequential(name, &buf)
    }

    /// Parses `bytes` on one thread.
    fn add_sequential(&mut self, name: &str, bytes: &[u8]) -> Result<(), IngestError> {
        let sink = std::mem::take(&mut self.sink);
        let opts = self.opts;
        self.sink = on_big_stack(name, move || parse_input(name, bytes, opts, sink))?;
        self.add_parsed(name, Sink::default(), bytes.len() as u64, Some(bytes))
    }

    /// Records an input parsed into `sink` (appended) and checks for duplicates; `bytes`
    /// (the input, when held) places them, else the file is read again to do so.
    fn add_parsed(
        &mut self,
        name: &str,
        sink: Sink,
        read: u64,
        bytes: Option<&[u8]>,
    ) -> Result<(), IngestError> {
        self.bytes_read += read;
        self.files.push(name.to_owned());
        split::append(&mut self.sink, sink);
        self.dedup.check(&self.sink.state, name, bytes)
    }

    pub(crate) fn finish(self) -> Loaded {
        Loaded {
            state: self.sink.state,
            skipped_kinds: self.sink.skipped,
            unread_pods: self.sink.unread_pods,
            warnings: self.sink.warnings,
            bytes_read: self.bytes_read,
            files: self.files,
            regular_files: self.regular,
        }
    }
}

/// Detects the format and parses one input into `sink`.
fn parse_input(name: &str, bytes: &[u8], opts: &LoadOptions, sink: Sink) -> Result<Sink, IngestError> {
    if bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF") {
        return Err(IngestError::file(
            ErrorKind::Encoding,
            name,
            "UTF-16 input is not supported; convert it to UTF-8",
        ));
    }
    let text = crate::position::strip_bom(bytes);
    let Some(first) = text.iter().position(|b| !b.is_ascii_whitespace()) else {
        let what = if name == "-" {
            "empty input on stdin"
        } else {
            "empty file"
        };
        return Err(IngestError::file(
            ErrorKind::Empty,
            name,
            format!("{what}: no Kubernetes objects"),
        ));
    };
    if matches!(text[first], b'{' | b'[') {
        let ctx = Ctx::with_sink(name, text, false, sink).counting_pods(opts.pods == Pods::Count);
        json::load(&ctx, text)?;
        Ok(ctx.sink.into_inner())
    } else {
        let s = std::str::from_utf8(text).map_err(|e| {
            let (l, c) = crate::position::line_col(text, e.valid_up_to());
            IngestError::file(ErrorKind::Encoding, name, "not UTF-8 text (binary data?)").at(l, c)
        })?;
        let ctx = Ctx::with_sink(name, text, true, sink).counting_pods(opts.pods == Pods::Count);
        yaml::load(&ctx, s, &opts.yaml)?;
        Ok(ctx.sink.into_inner())
    }
}
