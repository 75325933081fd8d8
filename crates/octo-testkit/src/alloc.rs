//! A counting global allocator for benchmarks that report allocations per operation.
//!
//! ```
//! use octo_testkit::alloc::{allocations, Counting};
//!
//! #[global_allocator]
//! static ALLOC: Counting = Counting;
//!
//! fn main() {
//!     let before = allocations();
//!     let v = std::hint::black_box(vec![1u8; 64]);
//!     assert!(allocations() > before);
//!     drop(v);
//! }
//! ```

#![allow(unsafe_code)] // implementing GlobalAlloc is unsafe by definition; this only counts and forwards

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// Forwards to the system allocator and counts every allocation.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counting;

// SAFETY: every call is forwarded unchanged to `System`, which upholds the GlobalAlloc contract.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same layout, forwarded as is.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Allocations made so far by a program whose global allocator is [`Counting`].
pub fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}
