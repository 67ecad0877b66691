//! Parallel reading of one large JSON `List` (what `kubectl get -o json` prints, or
//! `kubectl get --raw` compact): the input is read as a stream, block by block; the
//! `items` array is cut into chunks at item boundaries as the bytes arrive, and worker
//! threads parse the chunks while the next ones are read; the results are merged in
//! order. Memory is a few blocks per thread plus the parsed state, whatever the input's
//! size, and the input is read once, sequentially (a file is never memory-mapped: see
//! the crate docs).
//!
//! # Finding and proving the cuts
//!
//! A *candidate* boundary is cheap to find:
//!
//! - Pretty-printed JSON: a raw newline never occurs inside a JSON string, so a line
//!   holding only `},` at the indentation of the first item, followed by a line opening
//!   `{` at the same indentation, is a candidate (found with `memmem`).
//! - Compact JSON (`kubectl get --raw`, `jq -c`): an unescaped `"` never occurs inside a
//!   string, so `},{"key":` with the first item's first key is structural, though
//!   possibly nested; [`next_cut`] skips the obviously nested ones.
//!
//! A candidate is only trusted once parsing proves it. Each chunk is the bytes between
//! two cuts (the `,` of the candidates), copied into its own buffer as `[[` + items +
//! `]]`; the first chunk starts right after the `items` array's `[`, the last ends at
//! its `]`. The two wrapping brackets give every item the same nesting depth as in the
//! whole document (serde_json's recursion limit counts it).
//!
//! - Each chunk must parse as exactly one array holding one non-empty array of items,
//!   ending on the chunk's last byte. Chunk 0 starts where the sequential parser is
//!   between items (just after `items: [`); by induction, a chunk that starts between
//!   items and whose inner array closes at a cut makes the sequential parser reach that
//!   cut's `,` between items too. So the chunks read exactly the items the sequential
//!   parser reads, with the same seeds (the item defaults of a typed List come from the
//!   keys before `items`, all in the first block).
//! - The document around `items` (the header up to `[` and the tail from the last `]`)
//!   is parsed by the sequential code as `header ] tail` (at most 1 MiB): it must
//!   succeed without reading any object, so everything outside `items` is as the
//!   sequential parse would see it.
//!
//! Anything else (a failed check, any parse error, a panic) abandons the attempt and the
//! caller runs the sequential parse over the whole input, which alone produces errors,
//! so messages and positions are exactly the sequential ones.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, mpsc};

use locality_model::objects::ClusterState;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::ctx::{Ctx, ItemDefault, Sink};
use crate::object::items_seed;

/// Inputs smaller than this are parsed sequentially.
pub(crate) const MIN_SPLIT_BYTES: usize = 8 << 20;

/// Longest header + tail (the parts of the document outside `items`) the reader copies
/// to check; the header must lie in the first [`MAX_FRAME`] bytes.
const MAX_FRAME: usize = 1 << 20;

/// Bytes read at a time; a chunk ends at the first boundary after this many bytes.
/// Measured on a 420 MB compact dump (bench/README.md): 1 MiB chunks take no more time
/// than 8 MiB ones and hold 30 MiB less at the peak (the reader's, the channel's and the
/// workers' buffers), and a chunk is still parsed while its bytes are in the cache.
pub(crate) const BLOCK_BYTES: usize = 1 << 20;

/// Bytes read at a time while looking for the next cut (at most a block).
const READ_STEP: usize = 1 << 20;

/// Number of parser threads: `LOCALITY_INGEST_THREADS` if set (1 disables the
/// parallel path), else the available cores (at most 8).
pub(crate) fn threads() -> usize {
    if let Some(n) = std::env::var("LOCALITY_INGEST_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
    {
        return n.clamp(1, 64);
    }
    std::thread::available_parallelism().map_or(1, |n| n.get()).min(8)
}

/// How [`parse_stream`] reads: block size and worker threads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Config {
    /// A chunk ends at the first candidate boundary at least this many bytes in.
    pub block: usize,
    /// Worker threads parsing chunks.
    pub threads: usize,
    /// Pods are counted, not decoded ([`crate::Pods::Count`]).
    pub count_pods: bool,
}

impl Config {
    /// [`BLOCK_BYTES`] and [`threads`]; Pods counted rather than decoded when `count_pods`.
    pub(crate) fn new(count_pods: bool) -> Self {
        Config {
            block: BLOCK_BYTES,
            threads: threads(),
            count_pods,
        }
    }
}

/// How the items of a List are separated.
struct Boundary {
    /// The candidate pattern: pretty `\n<indent>},\n<indent>{`, compact `},{"key":`.
    pattern: Vec<u8>,
    /// Offset of the `,` in a match.
    comma: usize,
}

impl Boundary {
    /// The boundary of the List whose `items` array opens at `text[open]`; `None` when it
    /// is neither pretty-printed nor compact as kubectl prints them.
    fn detect(text: &[u8], open: usize) -> Option<Boundary> {
        match text.get(open + 1)? {
            b'\n' => {
                let indent = text[open + 2..].iter().take_while(|&&b| b == b' ').count();
                if indent < 2 || text.get(open + 2 + indent) != Some(&b'{') {
                    return None;
                }
                let mut pattern = Vec::with_capacity(2 * indent + 6);
                pattern.push(b'\n');
                pattern.extend(std::iter::repeat_n(b' ', indent));
                pattern.extend_from_slice(b"},\n");
                pattern.extend(std::iter::repeat_n(b' ', indent));
                pattern.push(b'{');
                Some(Boundary {
                    pattern,
                    comma: indent + 2,
                })
            }
            b'{' => {
                if text.get(open + 2) != Some(&b'"') {
                    return None;
                }
                let key_start = open + 3;
                let key_len = memchr::memchr(b'"', text.get(key_start..key_start + 65)?)?;
                let key = &text[key_start..key_start + key_len];
                if key.is_empty() || key.contains(&b'\\') || text.get(key_start + key_len + 1) != Some(&b':')
                {
                    return None;
                }
                let mut pattern = b"},{\"".to_vec();
                pattern.extend_from_slice(key);
                pattern.extend_from_slice(b"\":");
                Some(Boundary { pattern, comma: 1 })
            }
            _ => None,
        }
    }

    /// The `,` of the first candidate in `buf[from..]`.
    fn next(&self, finder: &memchr::memmem::Finder<'_>, buf: &[u8], from: usize) -> Option<usize> {
        if self.comma == 1 {
            return next_cut(buf, finder, from, buf.len());
        }
        let m = from + finder.find(buf.get(from..)?)?;
        Some(m + self.comma)
    }
}

/// Reads `src` until `buf` holds `want` bytes or the input ends; the bytes read.
fn fill(src: &mut dyn Read, buf: &mut Vec<u8>, want: usize) -> std::io::Result<usize> {
    let before = buf.len();
    if buf.len() < want {
        src.take((want - buf.len()) as u64).read_to_end(buf)?;
    }
    Ok(buf.len() - before)
}

/// What [`parse_stream`] made of an input.
pub(crate) enum Streamed {
    /// Parsed: the objects, and the number of bytes read.
    Parsed(Box<Sink>, u64),
    /// Not a List this reader cuts, or a check or chunk failed: parse sequentially.
    Declined,
}

/// Reads a JSON List from `src` and parses it in parallel (see the module docs).
/// Errors: only reading errors; anything about the content declines.
pub(crate) fn parse_stream(name: &str, src: &mut dyn Read, cfg: Config) -> std::io::Result<Streamed> {
    let mut first = Vec::new();
    let mut total = fill(src, &mut first, cfg.block.max(MAX_FRAME + 4096))? as u64;
    let bom = first.len() - crate::position::strip_bom(&first).len();
    let text = &first[bom..];
    let Some(open) = crate::locate::top_level_items(text, MAX_FRAME) else {
        return Ok(Streamed::Declined);
    };
    let Some(boundary) = Boundary::detect(text, open) else {
        return Ok(Streamed::Declined);
    };
    let header = text[..=open].to_vec();
    // The item default comes from the keys before `items`: the header closed as an empty
    // List (with a `kind` after `items` when it has none before, as kubectl prints it)
    // gives it; the whole frame is checked against it at the end.
    let probe = |end: &[u8]| {
        let mut doc = header.clone();
        doc.extend_from_slice(end);
        check_frame(name, &doc)
    };
    let Some(default) = probe(b"]}").or_else(|| probe(b"],\"kind\":\"List\"}")) else {
        return Ok(Streamed::Declined);
    };
    let mut pending = Vec::with_capacity(2 * cfg.block + 4);
    pending.extend_from_slice(b"[[");
    pending.extend_from_slice(&text[open + 1..]);
    drop(first);
    let finder = memchr::memmem::Finder::new(&boundary.pattern);
    let failed = AtomicBool::new(false);
    let results: Mutex<Merger> = Mutex::new(Merger::default());
    let (tx, rx) = mpsc::sync_channel::<(usize, Vec<u8>)>(cfg.threads.max(1));
    let rx = Mutex::new(rx);
    // Chunk buffers go back to the reader once parsed: fresh 16 MiB buffers would be
    // page-faulted in (and unmapped again) for every chunk, costing system time.
    let pool: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());
    let outcome = std::thread::scope(|scope| -> std::io::Result<Option<usize>> {
        let mut workers = Vec::with_capacity(cfg.threads);
        for _ in 0..cfg.threads.max(1) {
            let worker = std::thread::Builder::new()
                .name("locality-ingest".into())
                .stack_size(crate::stack::PARSE_STACK)
                .spawn_scoped(scope, || {
                    loop {
                        let job = rx.lock().map_err(|_| ()).and_then(|r| r.recv().map_err(|_| ()));
                        let Ok((i, mut buf)) = job else { return };
                        if failed.load(Ordering::Relaxed) {
                            continue;
                        }
                        // A panic is a failed chunk: the worker lives on to drain the
                        // channel (else the reader could wait forever to hand over a chunk).
                        let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            parse_chunk(name, &buf, &buf, default.clone(), cfg.count_pods)
                        }));
                        buf.clear();
                        if let Ok(mut p) = pool.lock() {
                            p.push(buf);
                        }
                        match parsed.ok().flatten() {
                            Some((sink, n)) => {
                                let added = results.lock().is_ok_and(|mut r| r.add(i, sink, n));
                                if !added {
                                    failed.store(true, Ordering::Relaxed);
                                }
                            }
                            None => failed.store(true, Ordering::Relaxed),
                        }
                    }
                });
            match worker {
                Ok(w) => workers.push(w),
                Err(_) => {
                    failed.store(true, Ordering::Relaxed);
                    break;
                }
            }
        }
        let read = (|| -> std::io::Result<Option<usize>> {
            let mut index = 0;
            loop {
                // Hand over every chunk that ends at a boundary past the block size.
                while let Some(cut) = boundary.next(&finder, &pending, cfg.block.min(pending.len())) {
                    if failed.load(Ordering::Relaxed) {
                        return Ok(None);
                    }
                    let mut rest = pool
                        .lock()
                        .ok()
                        .and_then(|mut p| p.pop())
                        .unwrap_or_else(|| Vec::with_capacity(2 * cfg.block + 4));
                    rest.extend_from_slice(b"[[");
                    rest.extend_from_slice(&pending[cut + 1..]);
                    pending.truncate(cut);
                    pending.extend_from_slice(b"]]");
                    if tx.send((index, std::mem::replace(&mut pending, rest))).is_err() {
                        return Ok(None);
                    }
                    index += 1;
                }
                // Read in steps smaller than a block: what follows a cut is copied into
                // the next chunk's buffer, so a short step keeps that copy short.
                let want = pending.len() + cfg.block.min(READ_STEP);
                let n = fill(src, &mut pending, want)?;
                total += n as u64;
                if n == 0 {
                    break;
                }
            }
            // The last chunk ends at the last `]`; what follows is the tail of the frame.
            let Some(close) = memchr::memrchr(b']', &pending[2..]).map(|c| c + 2) else {
                return Ok(None);
            };
            let tail = &pending[close..];
            if close <= 2 || header.len() + tail.len() > MAX_FRAME {
                return Ok(None);
            }
            let mut frame = header.clone();
            frame.extend_from_slice(tail);
            if check_frame(name, &frame).as_ref() != Some(&default) {
                return Ok(None);
            }
            pending.truncate(close);
            pending.extend_from_slice(b"]]");
            let last = std::mem::take(&mut pending);
            Ok(tx.send((index, last)).ok().map(|()| index + 1))
        })();
        drop(tx);
        let all_started = workers.len() == cfg.threads.max(1);
        for w in workers {
            if w.join().is_err() {
                failed.store(true, Ordering::Relaxed);
            }
        }
        Ok(read?.filter(|_| all_started))
    })?;
    let Some(sent) = outcome else {
        return Ok(Streamed::Declined);
    };
    if failed.load(Ordering::Relaxed) {
        return Ok(Streamed::Declined);
    }
    match results.into_inner().ok().and_then(|m| m.finish(sent)) {
        Some(sink) => Ok(Streamed::Parsed(Box::new(sink), total)),
        None => Ok(Streamed::Declined),
    }
}

/// The `,` of the first likely item boundary (`finder` matches `},{"key":`) in
/// `text[from..to]`. For `apiVersion` (kubectl sorts keys, so every built-in object
/// starts with it) the value must be followed by `,"kind":`, which rules out nested
/// objects such as `ownerReferences` and `managedFields` entries (and items with keys
/// between, like a ConfigMap's `data`: those boundaries are simply not used).
fn next_cut(text: &[u8], finder: &memchr::memmem::Finder<'_>, from: usize, to: usize) -> Option<usize> {
    let api = finder.needle() == b"},{\"apiVersion\":";
    let mut at = from;
    loop {
        let m = at + finder.find(text.get(at..to)?)?;
        let value = m + finder.needle().len();
        if !api || kind_follows(text.get(value..to)?) {
            return Some(m + 1);
        }
        at = m + 1;
    }
}

/// `rest` starts with a short string without escapes followed by `,"kind":`.
fn kind_follows(rest: &[u8]) -> bool {
    let Some(s) = rest.strip_prefix(b"\"") else {
        return false;
    };
    let s = &s[..s.len().min(256)];
    match memchr::memchr2(b'"', b'\\', s) {
        Some(q) if s[q] == b'"' => s[q + 1..].starts_with(b",\"kind\":"),
        _ => false,
    }
}

/// Parses a document without its items (`header ] tail`); returns the item default of
/// the List (`PodList` → `Pod`) when that reads no object and fails nowhere.
fn check_frame(name: &str, doc: &[u8]) -> Option<ItemDefault> {
    let ctx = Ctx::new(name, doc, false);
    crate::json::load(&ctx, doc).ok()?;
    let lists = ctx.lists.take();
    let sink = ctx.sink.into_inner();
    let s = &sink.state;
    let empty = s.nodes.is_empty()
        && s.pods.is_empty()
        && s.services.is_empty()
        && s.endpoint_slices.is_empty()
        && s.endpoints.is_empty()
        && s.workloads.is_empty()
        && s.namespaces.is_empty()
        && sink.skipped.is_empty()
        && sink.unread_pods == 0
        && sink.warnings.is_empty();
    match (empty, <[_; 1]>::try_from(lists)) {
        (true, Ok([default])) => Some(default),
        _ => None,
    }
}

type ChunkResult = Option<(Sink, u32)>;

/// Parses one chunk `[[ item, … ]]`; item indices start at 0.
fn parse_chunk<'b>(
    name: &'b str,
    text: &'b [u8],
    chunk: &'b [u8],
    default: ItemDefault,
    count_pods: bool,
) -> ChunkResult {
    let ctx = Ctx::new(name, text, false).counting_pods(count_pods);
    // Checked once as UTF-8 here, the chunk's strings are not checked again one by one
    // (as `from_slice` would); a chunk that is not UTF-8 declines (the sequential parse
    // then reports where).
    let chunk = std::str::from_utf8(chunk).ok()?;
    let mut de = serde_json::Deserializer::from_str(chunk);
    let n = OuterSeed { ctx: &ctx, default }.deserialize(&mut de).ok()?;
    de.end().ok()?;
    if n == 0 || ctx.failure.borrow().inner.is_some() {
        return None;
    }
    Some((ctx.sink.into_inner(), n))
}

/// `[ items ]`: one element, the items array (the stand-in for the top-level object).
struct OuterSeed<'c, 'b> {
    ctx: &'c Ctx<'b>,
    default: ItemDefault,
}

impl<'de> DeserializeSeed<'de> for OuterSeed<'_, '_> {
    type Value = u32;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<u32, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for OuterSeed<'_, '_> {
    type Value = u32;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a chunk of items")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<u32, A::Error> {
        let seed = items_seed::<&'de RawValue>(self.ctx, self.default);
        let n = seq
            .next_element_seed(seed)?
            .ok_or_else(|| de::Error::custom("empty chunk"))?;
        if seq.next_element::<IgnoredAny>()?.is_some() {
            return Err(de::Error::custom("chunk holds more than the items"));
        }
        Ok(n)
    }
}

/// Merges chunk results in order as they arrive, shifting item indices by the items
/// before each. A chunk is appended as soon as all chunks before it are, and its own
/// vectors freed: the parsed state is then held about once, not twice (all chunks, then
/// their merged copy) at the end of the read.
#[derive(Default)]
struct Merger {
    /// The merged chunks `0..next`.
    out: Sink,
    /// The index of the next chunk to append.
    next: usize,
    /// Items in the merged chunks.
    offset: u32,
    /// Chunks parsed before one that precedes them.
    waiting: std::collections::BTreeMap<usize, (Sink, u32)>,
}

impl Merger {
    /// Adds chunk `i` of `n` items and appends every chunk now in order; false when the
    /// item count overflows.
    fn add(&mut self, i: usize, sink: Sink, n: u32) -> bool {
        self.waiting.insert(i, (sink, n));
        while let Some((mut sink, n)) = self.waiting.remove(&self.next) {
            shift_items(&mut sink.state, self.offset);
            append(&mut self.out, sink);
            let Some(offset) = self.offset.checked_add(n) else {
                return false;
            };
            self.offset = offset;
            self.next += 1;
        }
        true
    }

    /// The merged state once all `sent` chunks are in.
    fn finish(self, sent: usize) -> Option<Sink> {
        (self.next == sent && self.waiting.is_empty()).then_some(self.out)
    }
}

fn shift_items(s: &mut ClusterState, by: u32) {
    if by == 0 {
        return;
    }
    for m in s.metas_mut() {
        if let Some(i) = &mut m.origin.item {
            *i = i.saturating_add(by);
        }
    }
}

/// Appends `from` to `to` (objects, skipped counts and warnings, in order).
pub(crate) fn append(to: &mut Sink, from: Sink) {
    to.state.append(from.state);
    for (k, v) in from.skipped {
        *to.skipped.entry(k).or_insert(0) += v;
    }
    to.unread_pods += from.unread_pods;
    to.warnings.extend(from.warnings);
}

#[cfg(test)]
mod tests;
