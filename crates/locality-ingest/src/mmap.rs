//! Input buffers: large files are memory-mapped (private, copy-on-write), everything
//! else is read into a `Vec`.
//!
//! A map keeps peak memory near the parsed state instead of file + state: pages of the
//! file are faulted in from the page cache as the parser reaches them, and
//! [`Input::release`] drops the ones it has passed (`MADV_DONTNEED`). A dropped page of
//! a private file mapping that was never written reads back the same bytes from the
//! file, so the error path (which re-reads the input to find positions) still works.
//!
//! The parallel JSON reader ([`crate::split`]) patches a few bytes of the buffer
//! ([`Input::patch`]) and puts them back ([`Input::restore`]); patched pages are never
//! released (releasing them would revert the patch under a live borrow).
//!
//! This is the only module with `unsafe` code (see the workspace lint in the root
//! `Cargo.toml`).
#![allow(unsafe_code)]

use std::fs::File;

use memmap2::{Advice, MmapMut, MmapOptions, UncheckedAdvice};

/// Files at least this large are mapped rather than read.
pub(crate) const MAP_THRESHOLD: u64 = 4 << 20;

/// Granularity of [`Input::release`]: a multiple of every page size Linux uses (4, 16
/// and 64 KiB), so aligned offsets in the map are page-aligned addresses.
const RELEASE_ALIGN: usize = 64 << 10;

enum Buf {
    Owned(Vec<u8>),
    Mapped(MmapMut),
}

/// One input's bytes, owned or mapped.
pub(crate) struct Input {
    buf: Buf,
    /// Patched offsets and their original bytes.
    patches: Vec<(usize, u8)>,
}

impl Input {
    /// Wraps bytes already read.
    pub(crate) fn from_vec(v: Vec<u8>) -> Self {
        Input {
            buf: Buf::Owned(v),
            patches: Vec::new(),
        }
    }

    /// Maps `file` privately (copy-on-write) and advises sequential access.
    pub(crate) fn map(file: &File) -> std::io::Result<Self> {
        // SAFETY: a private mapping of a file opened read-only. The bytes change under
        // us only if another process modifies the file while we read it, the hazard of
        // every memory-mapped reader (ripgrep, git): inputs are snapshots that nothing
        // rewrites in place (`kubectl get > file` completes before we start), and
        // smaller files are read into memory instead. Our own writes (`patch`) go to
        // private copies of the pages, never to the file.
        let map = unsafe { MmapOptions::new().map_copy(file)? };
        // Advice is a hint; failing to give it changes nothing.
        let _ = map.advise(Advice::Sequential);
        Ok(Input {
            buf: Buf::Mapped(map),
            patches: Vec::new(),
        })
    }

    /// The bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        match &self.buf {
            Buf::Owned(v) => v,
            Buf::Mapped(m) => m,
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        match &mut self.buf {
            Buf::Owned(v) => v,
            Buf::Mapped(m) => m,
        }
    }

    /// Overwrites the byte at `offset` (kept for [`Input::restore`]).
    pub(crate) fn patch(&mut self, offset: usize, byte: u8) {
        let old = self.bytes()[offset];
        self.patches.push((offset, old));
        self.bytes_mut()[offset] = byte;
    }

    /// Puts back every patched byte (latest patch first).
    pub(crate) fn restore(&mut self) {
        let patches = std::mem::take(&mut self.patches);
        for &(offset, old) in patches.iter().rev() {
            self.bytes_mut()[offset] = old;
        }
    }

    /// Tells the kernel the bytes in `from..to` (offsets) will not be read again soon:
    /// the whole aligned blocks inside the range leave this process's resident set.
    /// A no-op for owned buffers, and for a range that holds a patched byte.
    pub(crate) fn release(&self, from: usize, to: usize) {
        let Buf::Mapped(map) = &self.buf else {
            return;
        };
        let to = to.min(map.len());
        let start = from.div_ceil(RELEASE_ALIGN) * RELEASE_ALIGN;
        let end = to / RELEASE_ALIGN * RELEASE_ALIGN;
        if start >= end {
            return;
        }
        if self.patches.iter().any(|&(o, _)| (start..end).contains(&o)) {
            return;
        }
        // SAFETY: `start..end` lies inside the map and is page-aligned (RELEASE_ALIGN is
        // a multiple of the page size; the map starts on a page). MADV_DONTNEED on a
        // private file mapping drops our copies of the pages; the next access reads the
        // file again. No page in the range was written (patched pages are excluded
        // above), so every byte reads back unchanged and live borrows stay valid.
        unsafe {
            let _ = map.unchecked_advise_range(UncheckedAdvice::DontNeed, start, end - start);
        }
    }

    /// Address of the first byte (to turn borrowed pointers into offsets).
    pub(crate) fn addr(&self) -> usize {
        self.bytes().as_ptr() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn map_patch_release_restore() {
        let dir = std::env::temp_dir().join(format!("locality-mmap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("big.bin");
        let data: Vec<u8> = (0..(1u32 << 20)).map(|i| (i % 251) as u8).collect();
        std::fs::File::create(&path).unwrap().write_all(&data).unwrap();
        let mut input = Input::map(&File::open(&path).unwrap()).unwrap();
        assert_eq!(input.bytes(), &data[..]);
        input.patch(10, b'[');
        input.release(0, data.len());
        assert_eq!(input.bytes()[10], b'[');
        input.restore();
        input.release(0, data.len());
        assert_eq!(input.bytes(), &data[..]);
        assert_eq!(std::fs::read(&path).unwrap(), data, "the file is never written");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
