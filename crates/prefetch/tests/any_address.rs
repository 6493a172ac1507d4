//! A prefetch is safe with any address: none of these may fault, as a load from them would.

use prefetch::prefetch;

#[test]
fn null_dangling_and_past_the_end_addresses_do_not_fault() {
    prefetch(std::ptr::null::<u8>());
    prefetch(std::ptr::NonNull::<u64>::dangling().as_ptr());
    // The highest address and one in the kernel's half: never mapped for a process.
    prefetch(usize::MAX as *const u8);
    prefetch(0xffff_8000_0000_0000_usize as *const u8);
    let words = vec![1_u32; 16];
    prefetch(words.as_ptr().wrapping_add(1 << 30));
    let freed = words.as_ptr();
    drop(words);
    prefetch(freed);
}

#[test]
fn an_unsized_value_can_be_asked_for() {
    let text: &str = "refund";
    prefetch(text as *const str);
    let slice: &[u64] = &[1, 2, 3];
    prefetch(slice as *const [u64]);
    assert_eq!(text.len() + slice.len(), 9);
}
