//! Software prefetch: a hint to the CPU to bring cache lines closer before they are needed, so
//! that their misses overlap other work.

/// Bytes of a cache line on the targets we run on.
const LINE: usize = 64;

/// Asks for the cache lines of the bytes from `from` to `to` (exclusive).
#[inline(always)]
pub fn range<A, B>(from: &A, to: &B) {
    let mut a = (from as *const A as usize) & !(LINE - 1);
    let end = to as *const B as usize;
    while a < end {
        line(a);
        a += LINE;
    }
}

/// Asks for the cache lines of `*r`.
#[inline(always)]
pub fn value<T: ?Sized>(r: &T) {
    let start = r as *const T as *const u8 as usize;
    let mut a = start & !(LINE - 1);
    while a < start + std::mem::size_of_val(r) {
        line(a);
        a += LINE;
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn line(addr: usize) {
    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
    // SAFETY: `_mm_prefetch` needs SSE, which every x86_64 CPU has (it is in the target's
    // baseline). A prefetch is a hint: it never faults and reads nothing the program sees, so any
    // address, valid or not, is sound.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(addr as *const i8) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn line(_addr: usize) {}
