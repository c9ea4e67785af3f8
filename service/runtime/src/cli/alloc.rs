//! The binary's global allocator: mimalloc, called the way the standard library calls the
//! system allocator.
//!
//! The `mimalloc` crate passes every request to `mi_malloc_aligned`, and mimalloc 3 serves
//! an aligned request from its plain fast path only when the block is small and happens to
//! sit at the requested alignment; every other one (any request over 1 KiB, a page whose
//! next free block is off by 8) takes an over-allocating path at about three times the cost.
//! Measured under callgrind: ten allocations per `tools/call` went that way, ~1.8 k
//! instructions. But almost no Rust allocation needs more than mimalloc gives every block:
//! blocks of 16 bytes or more are 16-byte aligned (sizes are rounded to 16-byte bins and a
//! page's first block is 16-aligned), smaller ones 8-byte aligned. So a request whose
//! alignment is at most 16 and at most its size is a plain `mi_malloc` (the rule the standard
//! library applies to `malloc`); only larger alignments ask for alignment.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// The alignment every mimalloc block of at least this size already has
/// (mimalloc's `MI_MAX_ALIGN_SIZE` on 64-bit targets).
const MIN_ALIGN: usize = 16;

/// True when a plain allocation of `size` bytes satisfies `align`.
fn plain(size: usize, align: usize) -> bool {
    align <= MIN_ALIGN && align <= size
}

/// mimalloc as the global allocator (see the module doc).
#[derive(Debug, Clone, Copy, Default)]
pub struct Allocator;

// SAFETY: every pointer handed out comes from mimalloc with at least the layout's size and
// alignment (`plain` holds only where mimalloc's bins guarantee it, the aligned calls
// otherwise), and `mi_free`/`mi_realloc*` accept any pointer mimalloc returned, whichever
// call allocated it.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: mimalloc's allocation functions take any size and a power-of-two alignment
        // (a `Layout`'s alignment always is one).
        unsafe {
            if plain(layout.size(), layout.align()) {
                mi::mi_malloc(layout.size()).cast()
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        unsafe {
            if plain(layout.size(), layout.align()) {
                mi::mi_zalloc(layout.size()).cast()
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator, so from mimalloc.
        unsafe { mi::mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from this allocator; the new block keeps the layout's alignment
        // by the same rule as `alloc`.
        unsafe {
            if plain(new_size, layout.align()) {
                mi::mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi::mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

#[cfg(test)]
#[allow(unsafe_code)]
mod tests {
    use super::*;

    /// Every size up to 5 KiB (small, medium and large bins) at every alignment up to 4 KiB,
    /// allocated, zeroed, grown and shrunk: each block is aligned and keeps its contents.
    #[test]
    fn blocks_have_the_alignment_asked_for() {
        let a = Allocator;
        for align in (0..=12).map(|s| 1usize << s) {
            for size in (1..=5120).step_by(7).chain([8, 16, 24, 32, 48, 1024, 1025, 4096]) {
                let layout = Layout::from_size_align(size, align).unwrap();
                let aligned = |p: *mut u8| !p.is_null() && p.addr().is_multiple_of(align);
                // SAFETY: non-zero sizes; each block is used within its size and freed once.
                unsafe {
                    let z = a.alloc_zeroed(layout);
                    assert!(aligned(z), "alloc_zeroed({size}, {align})");
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|b| *b == 0));
                    a.dealloc(z, layout);

                    let p = a.alloc(layout);
                    assert!(aligned(p), "alloc({size}, {align})");
                    p.write_bytes(0xA5, size);
                    let grown = size * 3 + 1;
                    let p = a.realloc(p, layout, grown);
                    assert!(aligned(p) && *p.add(size - 1) == 0xA5, "realloc({size} -> {grown}, {align})");
                    let shrunk = size.div_ceil(2);
                    let p = a.realloc(p, Layout::from_size_align(grown, align).unwrap(), shrunk);
                    assert!(aligned(p) && *p == 0xA5, "realloc({grown} -> {shrunk}, {align})");
                    a.dealloc(p, Layout::from_size_align(shrunk, align).unwrap());
                }
            }
        }
    }
}
