//! Parallel reading of one large, pretty-printed JSON `List` (what `kubectl get -o json`
//! prints): the `items` array is cut into chunks at item boundaries and the chunks are
//! parsed on scoped threads, then merged in order.
//!
//! # Finding and proving the cuts
//!
//! In pretty-printed JSON a raw newline never occurs inside a string, so a line holding
//! only `},` at the indentation of the first item, followed by a line opening `{` at the
//! same indentation, is a cheap *candidate* boundary (found with `memmem`). A candidate
//! is only trusted once parsing proves it:
//!
//! - The few bytes around each cut are patched in a private copy of the buffer so that
//!   every chunk reads as `[[ item, …, item ]]`: at the cut after an item, `,` + newline
//!   become `]]`; the first two bytes of the next line's indentation become `[[`. The
//!   first chunk starts at the `items` array's own `[`, the last ends at its `]`. The
//!   two wrapping brackets give every item the same nesting depth as in the whole
//!   document (serde_json's recursion limit counts it).
//! - Each chunk must parse as exactly one array holding one non-empty array of items,
//!   ending on the chunk's last byte. Chunk 0 starts where the sequential parser is
//!   between items (just after `items: [`); by induction, a chunk that starts between
//!   items and whose inner array closes at a cut makes the sequential parser reach that
//!   cut's `,` between items too. So the chunks read exactly the items the sequential
//!   parser reads, with the same seeds (the item defaults of a typed List come from the
//!   keys before `items`).
//! - The document around `items` (the header up to `[` and the tail from `]`) is
//!   parsed by the sequential code as `header ] tail` (a copy of at most 1 MiB): it must
//!   succeed without reading any object, so everything outside `items` is as the
//!   sequential parse would see it.
//!
//! Compact JSON (`kubectl get --raw`, `jq -c`) has no whitespace to patch: candidates
//! are `},{"key":` (the first item's first key; an unescaped `"` is always structural),
//! and each chunk is copied piece by piece as `[[` + items + `]]` with the same proof
//! (see [`parse_compact`]).
//!
//! Anything else (a failed check, any parse error, a panic) abandons the attempt: the
//! patches are undone and the caller runs the sequential parse, which alone produces
//! errors, so messages and positions are exactly the sequential ones.

use locality_model::objects::ClusterState;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::input::Input;
use crate::object::{Ctx, ItemDefault, Sink, items_seed};

/// Inputs smaller than this are parsed sequentially.
pub(crate) const MIN_SPLIT_BYTES: usize = 8 << 20;

/// Longest header + tail (the parts of the document outside `items`) the fast path
/// copies to check.
const MAX_FRAME: usize = 1 << 20;

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

/// Where the `items` array is and where to cut it (offsets in the text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The `[` of `items`.
    pub open: usize,
    /// The `]` of `items` (the last `]` of the text; proven by the parse).
    pub close: usize,
    /// The `,` after the last item of each chunk but the last.
    pub cuts: Vec<usize>,
    /// Compact JSON: the candidate pattern `},{"key":` (`key`: the first key of the
    /// first item); empty for pretty-printed JSON.
    pub compact: Vec<u8>,
    /// Compact JSON: a chunk is read in pieces of at least this many bytes.
    pub piece: usize,
}

/// Compact JSON: bytes copied and parsed at a time (see [`parse_compact`]).
const PIECE_BYTES: usize = 4 << 20;

/// Finds the `items` array of the top-level object and up to `parts - 1` candidate cuts.
/// `None` when the input is not a List this reader can cut.
pub(crate) fn plan(text: &[u8], parts: usize) -> Option<Plan> {
    let open = crate::locate::top_level_items(text, MAX_FRAME)?;
    if text.get(open + 1) == Some(&b'{') {
        return plan_compact(text, open, parts);
    }
    let (close, indent) = frame(text, open)?;
    let mut pattern = Vec::with_capacity(2 * indent + 6);
    pattern.push(b'\n');
    pattern.extend(std::iter::repeat_n(b' ', indent));
    pattern.extend_from_slice(b"},\n");
    pattern.extend(std::iter::repeat_n(b' ', indent));
    pattern.push(b'{');
    let finder = memchr::memmem::Finder::new(&pattern);
    let mut cuts: Vec<usize> = Vec::new();
    for j in 1..parts {
        let target = open + (close - open) / parts * j;
        let from = target.max(cuts.last().map_or(open, |c| c + 4));
        let Some(m) = finder.find(text.get(from..close)?) else {
            break;
        };
        let comma = from + m + 1 + indent + 1;
        cuts.push(comma);
    }
    check_cuts(text, open, close, &cuts).then_some(Plan {
        open,
        close,
        cuts,
        compact: Vec::new(),
        piece: 0,
    })
}

/// The `]` of `items` and the indentation of its first item (pretty-printed JSON).
fn frame(text: &[u8], open: usize) -> Option<(usize, usize)> {
    let indent = text[open + 2..].iter().take_while(|&&b| b == b' ').count();
    if text.get(open + 1) != Some(&b'\n') || indent < 2 || text.get(open + 2 + indent) != Some(&b'{') {
        return None;
    }
    let close = memchr::memrchr(b']', text)?;
    (close > open + 2 && close + 1 < text.len()).then_some((close, indent))
}

/// Compact JSON (`[{"` right after `items:`): in JSON an unescaped `"` never occurs
/// inside a string, so `},{"key":` (with the first item's first key) is structural,
/// though possibly nested; [`next_cut`] skips the obviously nested ones and the parse
/// proves the rest.
fn plan_compact(text: &[u8], open: usize, parts: usize) -> Option<Plan> {
    if text.get(open + 2) != Some(&b'"') {
        return None;
    }
    let key_start = open + 3;
    let key_len = memchr::memchr(b'"', text.get(key_start..key_start + 65)?)?;
    let key = &text[key_start..key_start + key_len];
    if key.is_empty() || key.contains(&b'\\') || text.get(key_start + key_len + 1) != Some(&b':') {
        return None;
    }
    let close = memchr::memrchr(b']', text)?;
    if close <= open + 2 || close + 1 >= text.len() {
        return None;
    }
    let mut pattern = b"},{\"".to_vec();
    pattern.extend_from_slice(key);
    pattern.extend_from_slice(b"\":");
    let finder = memchr::memmem::Finder::new(&pattern);
    let mut cuts: Vec<usize> = Vec::new();
    for j in 1..parts {
        let target = open + (close - open) / parts * j;
        let from = target.max(cuts.last().map_or(open, |c| c + 1));
        let Some(c) = next_cut(text, &finder, from, close) else {
            break;
        };
        cuts.push(c);
    }
    Some(Plan {
        open,
        close,
        cuts,
        compact: pattern,
        piece: PIECE_BYTES,
    })
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

/// The patches need `,` + two whitespace bytes after the cut, room for both chunk
/// edges, and increasing cuts strictly inside the array.
fn check_cuts(text: &[u8], open: usize, close: usize, cuts: &[usize]) -> bool {
    let mut prev = open + 2;
    for &c in cuts {
        if c < prev + 2
            || c + 4 >= close
            || text[c] != b','
            || !text[c + 1..c + 4].iter().all(|b| b.is_ascii_whitespace())
        {
            return false;
        }
        prev = c + 4;
    }
    true
}

/// Reads `text` (at `start` in `input`, after a BOM) in parallel per `plan`. `None`: not
/// done (any check or parse failed); the input is unchanged, parse it sequentially.
pub(crate) fn parse(name: &str, input: &mut Input, start: usize, plan: &Plan) -> Option<Sink> {
    let text_len = input.bytes().len() - start;
    if plan.cuts.is_empty() || plan.close + 1 >= text_len {
        return None;
    }
    let default = check_frame(name, &input.bytes()[start..], plan)?;
    if !plan.compact.is_empty() {
        return merge(parse_compact(name, input, start, plan, &default)?);
    }
    // Patch the chunk edges (see the module docs), then parse, then undo.
    input.patch(start + plan.open + 1, b'[');
    for &c in &plan.cuts {
        for (k, b) in b"]][[".iter().enumerate() {
            input.patch(start + c + k, *b);
        }
    }
    input.patch(start + plan.close + 1, b']');
    let results = parse_chunks(name, input, start, plan, &default);
    input.restore();
    merge(results?)
}

/// Parses the document without its items (`header ] tail`); returns the item default
/// of the List (`PodList` → `Pod`) when that reads no object and fails nowhere.
fn check_frame(name: &str, text: &[u8], plan: &Plan) -> Option<ItemDefault> {
    let tail = &text[plan.close..];
    if plan.open + 1 + tail.len() > MAX_FRAME {
        return None;
    }
    let mut doc = Vec::with_capacity(plan.open + 1 + tail.len());
    doc.extend_from_slice(&text[..=plan.open]);
    doc.extend_from_slice(tail);
    let ctx = Ctx::new(name, &doc, false);
    crate::json::load(&ctx, &doc).ok()?;
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
        && sink.warnings.is_empty();
    match (empty, <[_; 1]>::try_from(lists)) {
        (true, Ok([default])) => Some(default),
        _ => None,
    }
}

type ChunkResult = Option<(Sink, u32)>;

fn parse_chunks(
    name: &str,
    input: &Input,
    start: usize,
    plan: &Plan,
    default: &ItemDefault,
) -> Option<Vec<(Sink, u32)>> {
    // Inclusive ranges (offsets in the text) of the chunks.
    let mut ranges = Vec::with_capacity(plan.cuts.len() + 1);
    let mut from = plan.open;
    for &c in &plan.cuts {
        ranges.push((from, c + 1));
        from = c + 2;
    }
    ranges.push((from, plan.close + 1));
    let text = &input.bytes()[start..];
    let run =
        |(a, b): (usize, usize)| -> ChunkResult { parse_chunk(name, text, &text[a..=b], default.clone()) };
    run_parallel(&ranges, run)
}

/// Runs `run` on every range, the first on this thread, the others on scoped threads;
/// the results in order, `None` if any failed.
fn run_parallel<F>(ranges: &[(usize, usize)], run: F) -> Option<Vec<(Sink, u32)>>
where
    F: Fn((usize, usize)) -> ChunkResult + Sync,
{
    let run = &run;
    std::thread::scope(|scope| {
        let mut handles = Vec::with_capacity(ranges.len() - 1);
        for &r in &ranges[1..] {
            let h = std::thread::Builder::new()
                .name("locality-ingest".into())
                .stack_size(crate::PARSE_STACK)
                .spawn_scoped(scope, move || run(r))
                .ok()?;
            handles.push(h);
        }
        let first = run(ranges[0]);
        let mut out = Vec::with_capacity(ranges.len());
        out.push(first);
        for h in handles {
            out.push(h.join().ok().flatten());
        }
        out.into_iter().collect()
    })
}

/// Compact JSON has no spare bytes around a cut to patch, so each chunk is read in
/// pieces copied into a buffer as `[[` + items + `]]` (the same proof as for patched
/// chunks: every piece must parse as one non-empty array of items ending on its last
/// byte, and the bytes between pieces are single `,`). A piece ends at the next likely
/// boundary at least `plan.piece` bytes on, which bounds the extra memory (the input is
/// never patched here).
fn parse_compact(
    name: &str,
    input: &Input,
    start: usize,
    plan: &Plan,
    default: &ItemDefault,
) -> Option<Vec<(Sink, u32)>> {
    let text = &input.bytes()[start..];
    let mut ranges = Vec::with_capacity(plan.cuts.len() + 1);
    let mut from = plan.open + 1;
    for &c in &plan.cuts {
        if c <= from || c + 1 >= plan.close || text[c] != b',' {
            return None;
        }
        ranges.push((from, c));
        from = c + 1;
    }
    ranges.push((from, plan.close));
    let failed = std::sync::atomic::AtomicBool::new(false);
    let run = |(a, b): (usize, usize)| -> ChunkResult {
        let finder = memchr::memmem::Finder::new(&plan.compact);
        let mut buf = Vec::new();
        let mut out = Sink::default();
        let mut n: u32 = 0;
        let mut pos = a;
        loop {
            if failed.load(std::sync::atomic::Ordering::Relaxed) {
                return None;
            }
            let end = if b - pos > 2 * plan.piece {
                next_cut(text, &finder, pos + plan.piece, b).unwrap_or(b)
            } else {
                b
            };
            buf.clear();
            buf.reserve(end - pos + 4);
            buf.extend_from_slice(b"[[");
            buf.extend_from_slice(&text[pos..end]);
            buf.extend_from_slice(b"]]");
            let Some((mut sink, k)) = parse_chunk(name, &buf, &buf, default.clone()) else {
                failed.store(true, std::sync::atomic::Ordering::Relaxed);
                return None;
            };
            shift_items(&mut sink.state, n);
            append(&mut out, sink);
            n = n.checked_add(k)?;
            if end == b {
                return Some((out, n));
            }
            pos = end + 1;
        }
    };
    run_parallel(&ranges, run)
}

/// Parses one chunk `[[ item, … ]]`; item indices start at 0.
fn parse_chunk<'b>(name: &'b str, text: &'b [u8], chunk: &'b [u8], default: ItemDefault) -> ChunkResult {
    let ctx = Ctx::new(name, text, false);
    let mut de = serde_json::Deserializer::from_slice(chunk);
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

/// Merges chunk results in order, shifting item indices by the items before each.
fn merge(chunks: Vec<(Sink, u32)>) -> Option<Sink> {
    let mut out = Sink::default();
    let mut offset: u32 = 0;
    for (mut sink, n) in chunks {
        shift_items(&mut sink.state, offset);
        append(&mut out, sink);
        offset = offset.checked_add(n)?;
    }
    Some(out)
}

fn shift_items(s: &mut ClusterState, by: u32) {
    if by == 0 {
        return;
    }
    let metas = s
        .nodes
        .iter_mut()
        .map(|o| &mut o.meta)
        .chain(s.pods.iter_mut().map(|o| &mut o.meta))
        .chain(s.services.iter_mut().map(|o| &mut o.meta))
        .chain(s.endpoint_slices.iter_mut().map(|o| &mut o.meta))
        .chain(s.endpoints.iter_mut().map(|o| &mut o.meta))
        .chain(s.workloads.iter_mut().map(|o| &mut o.meta))
        .chain(s.namespaces.iter_mut().map(|o| &mut o.meta));
    for m in metas {
        if let Some(i) = &mut m.origin.item {
            *i = i.saturating_add(by);
        }
    }
}

/// Appends `from` to `to` (objects, skipped counts and warnings, in order).
pub(crate) fn append(to: &mut Sink, from: Sink) {
    let (t, f) = (&mut to.state, from.state);
    extend(&mut t.nodes, f.nodes);
    extend(&mut t.pods, f.pods);
    extend(&mut t.services, f.services);
    extend(&mut t.endpoint_slices, f.endpoint_slices);
    extend(&mut t.endpoints, f.endpoints);
    extend(&mut t.workloads, f.workloads);
    extend(&mut t.namespaces, f.namespaces);
    for (k, v) in from.skipped {
        *to.skipped.entry(k).or_insert(0) += v;
    }
    to.warnings.extend(from.warnings);
}

fn extend<T>(to: &mut Vec<T>, from: Vec<T>) {
    if to.is_empty() {
        *to = from;
    } else {
        to.extend(from);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LoadOptions, Loaded, load_bytes, try_split};

    fn pod(i: usize) -> serde_json::Value {
        serde_json::json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": format!("p{i}"), "namespace": "ns", "labels": {"app": "a"},
                         "annotations": {"x": "]}{,\n\"", "topology.kubernetes.io/mode": "Auto"}},
            "spec": {"nodeName": "n1", "containers": [
                {"name": "c", "ports": [{"containerPort": 80, "name": "http"}]},
                {"name": "d", "ports": []}]},
            "status": {"phase": "Running", "podIPs": [{"ip": format!("10.0.0.{}", i % 250 + 1)}],
                       "conditions": [{"type": "Ready", "status": "True"}]}
        })
    }

    fn slice(i: usize) -> serde_json::Value {
        serde_json::json!({
            "addressType": "IPv4",
            "apiVersion": "discovery.k8s.io/v1",
            "endpoints": [{"addresses": [format!("10.1.0.{}", i % 250 + 1)], "nodeName": "n1",
                           "conditions": {"ready": true}}],
            "kind": "EndpointSlice",
            "metadata": {"name": format!("s{i}"), "namespace": "ns"},
            "ports": [{"port": 80, "protocol": "TCP"}]
        })
    }

    fn list(n: usize) -> String {
        let mut items = Vec::new();
        for i in 0..n {
            items.push(match i % 4 {
                0 => slice(i),
                1 => serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": format!("c{i}")}, "data": {"k": "v"}}),
                _ => pod(i),
            });
        }
        let v = serde_json::json!({"apiVersion": "v1", "items": items, "kind": "List",
                                   "metadata": {"resourceVersion": ""}});
        serde_json::to_string_pretty(&v).unwrap()
    }

    /// The `,` of every item boundary (the pattern `plan` looks for).
    fn boundaries(text: &str) -> Vec<usize> {
        let pat = "\n    },\n    {";
        text.match_indices(pat).map(|(i, _)| i + 6).collect()
    }

    fn split_load(text: &str, cuts: Vec<usize>) -> Result<Loaded, crate::IngestError> {
        let mut input = Input::from_vec(text.as_bytes().to_vec());
        let sink = try_split(
            "list.json",
            &mut input,
            0,
            &LoadOptions::default(),
            Sink::default(),
            2,
            Some(cuts),
        )?;
        assert_eq!(input.bytes(), text.as_bytes(), "patches are undone");
        Ok(Loaded {
            state: sink.state,
            skipped_kinds: sink.skipped,
            warnings: sink.warnings,
            ..Loaded::default()
        })
    }

    fn same(a: &Loaded, b: &Loaded) {
        assert_eq!(a.state, b.state);
        assert_eq!(a.skipped_kinds, b.skipped_kinds);
        assert_eq!(a.warnings, b.warnings);
    }

    #[test]
    fn every_boundary_gives_the_sequential_state() {
        let text = list(9);
        let seq = load_bytes("list.json", text.as_bytes(), &LoadOptions::default()).unwrap();
        let cuts = boundaries(&text);
        assert_eq!(cuts.len(), 8);
        for &c in &cuts {
            let plan = Plan {
                cuts: vec![c],
                ..plan(text.as_bytes(), 1).unwrap()
            };
            let mut input = Input::from_vec(text.as_bytes().to_vec());
            let sink = parse("list.json", &mut input, 0, &plan).expect("the cut is proven");
            assert_eq!(sink.state, seq.state, "cut at {c}");
            same(&split_load(&text, vec![c]).unwrap(), &seq);
        }
        // All cuts at once: one item per chunk.
        let plan = Plan {
            cuts: cuts.clone(),
            ..plan(text.as_bytes(), 1).unwrap()
        };
        let mut input = Input::from_vec(text.as_bytes().to_vec());
        let sink = parse("list.json", &mut input, 0, &plan).expect("all cuts proven");
        assert_eq!(sink.state, seq.state);
        assert_eq!(sink.state.pods[3].meta.origin.item, Some(7));
        // The automatic plan finds cuts near the middle.
        let auto = super::plan(text.as_bytes(), 3).unwrap();
        assert_eq!(auto.cuts.len(), 2);
        assert!(auto.cuts.iter().all(|c| cuts.contains(c)));
    }

    #[test]
    fn a_cut_inside_an_item_is_rejected() {
        let text = list(4);
        let seq = load_bytes("list.json", text.as_bytes(), &LoadOptions::default()).unwrap();
        let base = plan(text.as_bytes(), 1).unwrap();
        // Every `,` followed by a newline and two blanks that is not an item boundary
        // (inside nested arrays and objects) fails the proof and falls back.
        let good = boundaries(&text);
        let mut tried = 0;
        for (c, _) in text.match_indices(",\n  ") {
            if good.contains(&c) || c < base.open || c > base.close {
                continue;
            }
            tried += 1;
            let plan = Plan {
                cuts: vec![c],
                ..base.clone()
            };
            let mut input = Input::from_vec(text.as_bytes().to_vec());
            assert!(parse("list.json", &mut input, 0, &plan).is_none(), "cut at {c}");
            assert_eq!(input.bytes(), text.as_bytes());
            same(&split_load(&text, vec![c]).unwrap(), &seq);
        }
        assert!(tried > 10, "{tried}");
    }

    #[test]
    fn a_nested_array_at_item_indentation_is_rejected() {
        // A nested array whose elements sit at the items' indentation: the textual
        // pattern matches, the parse proves it is not a boundary.
        let text = "{\n  \"apiVersion\": \"v1\",\n  \"items\": [\n    {\"apiVersion\": \"v1\", \"kind\": \"Pod\",\
                    \"metadata\": {\"name\": \"a\", \"namespace\": \"d\"}, \"spec\": {\"containers\": [{\"name\": \"x\"\n    },\n    \
                    {\"name\": \"y\"}]}},\n    {\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"n\"}\n    },\n    \
                    {\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"m\"}}\n  ],\n  \"kind\": \"List\"\n}\n";
        let seq = load_bytes("list.json", text.as_bytes(), &LoadOptions::default()).unwrap();
        let cands: Vec<usize> = text
            .match_indices("\n    },\n    {")
            .map(|(i, _)| i + 6)
            .collect();
        assert_eq!(cands.len(), 2);
        let base = plan(text.as_bytes(), 1).unwrap();
        let mut input = Input::from_vec(text.as_bytes().to_vec());
        let bad = Plan {
            cuts: vec![cands[0]],
            ..base.clone()
        };
        assert!(parse("list.json", &mut input, 0, &bad).is_none());
        let good = Plan {
            cuts: vec![cands[1]],
            ..base
        };
        assert_eq!(parse("list.json", &mut input, 0, &good).unwrap().state, seq.state);
        same(&split_load(text, vec![cands[0]]).unwrap(), &seq);
    }

    /// An invalid IP and a syntax error in the first item address before `mid`, and again
    /// after it: errors in either half of a split.
    fn corrupt_each_half(text: &str, mid: usize) -> Vec<String> {
        let bad_ips: Vec<usize> = text.match_indices("\"10.0.0.").map(|(i, _)| i + 1).collect();
        let first = *bad_ips.iter().find(|&&i| i < mid).unwrap();
        let second = *bad_ips.iter().find(|&&i| i > mid).unwrap();
        let mut cases = Vec::new();
        for at in [first, second] {
            let mut t = text.to_owned();
            t.replace_range(at..at + 3, "999");
            cases.push(t);
            let mut t = text.to_owned();
            t.replace_range(at - 1..at, "{");
            cases.push(t);
        }
        cases
    }

    #[test]
    fn errors_in_either_half_are_the_sequential_errors() {
        let text = list(8);
        let cuts = boundaries(&text);
        let mid = cuts[3];
        let mut cases = corrupt_each_half(&text, mid);
        // Bad tail, bad header, truncated, trailing garbage, a trailing comma.
        cases.push(text.replace("\"kind\": \"List\"", "\"kind\": 7"));
        cases.push(text.replacen(
            "\"apiVersion\": \"v1\",\n  \"items\"",
            "\"items\": 3, \"items\"",
            1,
        ));
        cases.push(text[..text.len() - 3].to_owned());
        cases.push(format!("{text} x"));
        let last = text.rfind("\n  ]").unwrap();
        cases.push(format!("{},{}", &text[..last], &text[last..]));
        for (k, t) in cases.iter().enumerate() {
            let seq = load_bytes("list.json", t.as_bytes(), &LoadOptions::default())
                .expect_err(&format!("case {k} is bad"));
            let cuts = boundaries(t);
            let par = split_load(t, vec![cuts[cuts.len() / 2]]).expect_err("bad in parallel too");
            assert_eq!(par.to_string(), seq.to_string(), "case {k}");
            assert_eq!((par.line(), par.column()), (seq.line(), seq.column()));
        }
    }

    /// A compact List (as `kubectl get --raw` prints it) and the `,` of every item
    /// boundary. Pods carry `ownerReferences`, nested `},{"apiVersion":` candidates; the
    /// second owner of some has `kind` right after `apiVersion` like an item.
    fn compact_list(n: usize, owner_like_item: bool) -> (String, Vec<usize>) {
        let mut text = String::from("{\"apiVersion\":\"v1\",\"items\":[");
        let mut cuts = Vec::new();
        for i in 0..n {
            if i > 0 {
                cuts.push(text.len());
                text.push(',');
            }
            let mut item = match i % 3 {
                2 => serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                                        "metadata": {"name": format!("c{i}")}, "data": {"k": "},{\"apiVersion\":"}}),
                _ => pod(i),
            };
            if i % 3 != 2 {
                let second = if owner_like_item {
                    serde_json::json!({"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "u2"})
                } else {
                    serde_json::json!({"apiVersion": "v1", "controller": false, "kind": "Node", "name": "n",
                                       "uid": "u2"})
                };
                item["metadata"]["ownerReferences"] = serde_json::json!([
                    {"apiVersion": "apps/v1", "blockOwnerDeletion": true, "controller": true,
                     "kind": "ReplicaSet", "name": "rs", "uid": "u1"},
                    second
                ]);
            }
            text.push_str(&serde_json::to_string(&item).unwrap());
        }
        text.push_str("],\"kind\":\"List\",\"metadata\":{\"resourceVersion\":\"\"}}");
        (text, cuts)
    }

    fn compact_parse(text: &str, cuts: Vec<usize>, piece: usize) -> Option<Sink> {
        let plan = Plan {
            cuts,
            piece,
            ..plan(text.as_bytes(), 1).unwrap()
        };
        assert!(!plan.compact.is_empty());
        let mut input = Input::from_vec(text.as_bytes().to_vec());
        let out = parse("list.json", &mut input, 0, &plan);
        assert_eq!(input.bytes(), text.as_bytes());
        out
    }

    #[test]
    fn compact_every_boundary_gives_the_sequential_state() {
        let (text, cuts) = compact_list(9, false);
        let seq = load_bytes("list.json", text.as_bytes(), &LoadOptions::default()).unwrap();
        assert_eq!(seq.state.pods.len(), 6);
        assert_eq!(cuts.len(), 8);
        for &c in &cuts {
            let sink = compact_parse(&text, vec![c], PIECE_BYTES).expect("the cut is proven");
            assert_eq!(sink.state, seq.state, "cut at {c}");
            same(&split_load(&text, vec![c]).unwrap(), &seq);
        }
        let sink = compact_parse(&text, cuts.clone(), PIECE_BYTES).expect("all cuts proven");
        assert_eq!(sink.state, seq.state);
        assert_eq!(sink.state.pods[3].meta.origin.item, Some(4));
        // Pieces of one byte: every likely boundary found is a cut, all are proven.
        let sink = compact_parse(&text, vec![cuts[4]], 1).expect("every piece proven");
        assert_eq!(sink.state, seq.state);
        let finder = memchr::memmem::Finder::new(b"},{\"apiVersion\":");
        let mut found = Vec::new();
        while let Some(c) = next_cut(
            text.as_bytes(),
            &finder,
            found.last().map_or(0, |c| c + 1),
            text.len(),
        ) {
            found.push(c);
        }
        // ConfigMaps (`data` sorts before `kind`) are no candidates either: fewer cuts.
        let before_pods: Vec<usize> = (0..cuts.len())
            .filter(|j| (j + 1) % 3 != 2)
            .map(|j| cuts[j])
            .collect();
        assert_eq!(
            found, before_pods,
            "ownerReferences and strings are no candidates"
        );
        // The automatic plan finds cuts near the thirds.
        let auto = super::plan(text.as_bytes(), 3).unwrap();
        assert_eq!(auto.cuts.len(), 2);
        assert!(auto.cuts.iter().all(|c| cuts.contains(c)));
    }

    #[test]
    fn compact_nested_candidates_are_rejected() {
        let (text, good) = compact_list(6, true);
        let seq = load_bytes("list.json", text.as_bytes(), &LoadOptions::default()).unwrap();
        let nested: Vec<usize> = text
            .match_indices("},{\"apiVersion\":")
            .map(|(i, _)| i + 1)
            .filter(|c| !good.contains(c))
            .collect();
        assert_eq!(nested.len(), 4);
        for &c in &nested {
            assert!(compact_parse(&text, vec![c], PIECE_BYTES).is_none(), "cut at {c}");
            same(&split_load(&text, vec![c]).unwrap(), &seq);
        }
        // An owner that looks like an item passes the cheap filter: the parse rejects it
        // and the whole attempt falls back.
        assert!(compact_parse(&text, vec![good[2]], 1).is_none());
        let sink = compact_parse(&text, vec![good[2]], PIECE_BYTES).expect("a real boundary");
        assert_eq!(sink.state, seq.state);
        // Any other `,` inside the items fails the proof too.
        let open = text.find('[').unwrap();
        let mut tried = 0;
        for (c, _) in text.match_indices(',') {
            if good.contains(&c) || c < open || c > text.rfind(']').unwrap() {
                continue;
            }
            tried += 1;
            assert!(compact_parse(&text, vec![c], PIECE_BYTES).is_none(), "cut at {c}");
        }
        assert!(tried > 50, "{tried}");
    }

    #[test]
    fn compact_errors_in_either_half_are_the_sequential_errors() {
        let (text, cuts) = compact_list(8, false);
        let mid = cuts[3];
        let mut cases = corrupt_each_half(&text, mid);
        cases.push(text.replace("\"kind\":\"List\"", "\"kind\":7"));
        cases.push(text.replacen("{\"apiVersion\":\"v1\",\"items\"", "{\"items\":3,\"items\"", 1));
        cases.push(text[..text.len() - 3].to_owned());
        cases.push(format!("{text} x"));
        let last = text.rfind(']').unwrap();
        cases.push(format!("{},{}", &text[..last], &text[last..]));
        for (k, t) in cases.iter().enumerate() {
            let seq = load_bytes("list.json", t.as_bytes(), &LoadOptions::default())
                .expect_err(&format!("case {k} is bad"));
            let par = split_load(t, vec![mid]).expect_err("bad in parallel too");
            assert_eq!(par.to_string(), seq.to_string(), "case {k}");
            assert_eq!((par.line(), par.column()), (seq.line(), seq.column()));
            if k < 4 {
                assert!(compact_parse(t, vec![mid], 1).is_none(), "case {k}");
            }
        }
    }

    #[test]
    fn file_in_parallel() {
        let text = list(14_000);
        assert!(text.len() >= MIN_SPLIT_BYTES, "{}", text.len());
        let dir = std::env::temp_dir().join(format!("locality-split-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big.json");
        std::fs::write(&path, &text).unwrap();
        let seq = load_bytes("big.json", text.as_bytes(), &LoadOptions::default()).unwrap();
        let mut input = Input::from_vec(std::fs::read(&path).unwrap());
        let plan = plan(input.bytes(), 2).unwrap();
        assert_eq!(plan.cuts.len(), 1);
        let sink = parse("big.json", &mut input, 0, &plan).expect("splits");
        assert_eq!(sink.state, seq.state);
        assert_eq!(std::fs::read(&path).unwrap(), text.as_bytes());
        let par = crate::load_paths(&[&path], &LoadOptions::default()).unwrap();
        assert_eq!(par.state.pods.len(), seq.state.pods.len());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
