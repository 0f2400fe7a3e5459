//! The process's allocator: mimalloc, called the way the standard library
//! calls the C allocator.
//!
//! A request allocates and frees a few dozen small objects (header lists,
//! paths, the request context). glibc's allocator spent about a third of a
//! static request's instructions on them; mimalloc's thread-local free lists
//! a fraction of that. The `mimalloc` crate's adapter sends every request
//! through `mi_malloc_aligned`, whose generic alignment path costs about
//! twice the plain `mi_malloc` for the alignments Rust types ask for (1 to
//! 16 bytes), which `mi_malloc` already guarantees. So, like `std`'s
//! `System` allocator, only over-aligned layouts take the aligned calls.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys as mi;

/// The alignment every `mi_malloc` block has when its size is at least
/// that large (mimalloc's `MI_MAX_ALIGN_SIZE`); smaller blocks are
/// aligned to their size class, which is at least the layout's size.
const NATURAL_ALIGN: usize = 16;

pub struct Mimalloc;

fn plain(layout_align: usize, size: usize) -> bool {
    layout_align <= NATURAL_ALIGN && layout_align <= size
}

// SAFETY: every block comes from mimalloc and goes back to it; the aligned
// calls are used whenever the plain ones would not guarantee the layout's
// alignment.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe {
            if plain(layout.align(), layout.size()) {
                mi::mi_malloc(layout.size()) as *mut u8
            } else {
                mi::mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe {
            if plain(layout.align(), layout.size()) {
                mi::mi_zalloc(layout.size()) as *mut u8
            } else {
                mi::mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        unsafe { mi::mi_free(ptr as *mut c_void) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe {
            if plain(layout.align(), new_size) {
                mi::mi_realloc(ptr as *mut c_void, new_size) as *mut u8
            } else {
                mi::mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_have_the_alignment_their_layout_asks_for() {
        let a = Mimalloc;
        for align in [1usize, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [1usize, 3, 8, 15, 16, 24, 100, 5000, 70000] {
                let layout = Layout::from_size_align(size, align).unwrap();
                unsafe {
                    let p = a.alloc(layout);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "alloc size {size} align {align}");
                    p.write_bytes(0xab, size);
                    let q = a.realloc(p, layout, size * 3);
                    assert_eq!(q as usize % align, 0, "realloc size {size} align {align}");
                    assert_eq!(*q, 0xab);
                    a.dealloc(q, Layout::from_size_align(size * 3, align).unwrap());
                    let z = a.alloc_zeroed(layout);
                    assert_eq!(z as usize % align, 0, "zeroed size {size} align {align}");
                    assert!(std::slice::from_raw_parts(z, size).iter().all(|&b| b == 0));
                    a.dealloc(z, layout);
                }
            }
        }
    }
}
