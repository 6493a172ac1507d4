//! A prefetch instruction behind a safe function. A scan that follows pointers (a word's bytes, its entry
//! in a hash table, the list that entry points to) spends most of its time waiting on memory; asking for
//! the lines it will read a step later, while it works on what it has, hides those waits. An ordinary
//! load cannot stand in: the processor retires instructions in order, so a load that misses holds up all
//! the work after it until its line arrives, where a prefetch retires at once (docs/phrases.md, How
//! matching is fast).
//!
//! Stable Rust has the instruction only as `unsafe` intrinsics (`std::hint::prefetch_read` is not stable
//! yet), so it lives in this crate, which exists so that the rest of the workspace can go on forbidding
//! `unsafe`.

/// Asks for the cache line holding `address`, to be read soon, into every level of the cache.
///
/// Safe with any address, even null, dangling or past the end of an allocation: a prefetch never
/// faults, reads nothing into the program and changes nothing but what the cache holds. On processors
/// other than x86-64 it does nothing.
#[inline(always)]
pub fn prefetch<T: ?Sized>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` only hints the cache: it does not access memory as far as the program can
    // tell, and it does not fault on an address that is unmapped or invalid, so no pointer can make it
    // undefined behaviour. SSE, which the intrinsic requires, is part of every x86-64 processor.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
