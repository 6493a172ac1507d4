//! The C functions of PocketSphinx 5prealpha and SphinxBase that the binding calls, declared by hand from
//! the Debian headers (`/usr/include/pocketsphinx/pocketsphinx.h`, `.../sphinxbase/{cmd_ln,err,logmath}.h`)
//! so that building needs no libclang. Only this 5prealpha API is declared: later PocketSphinx releases
//! renamed and reshaped it (`ps_config_t`, `ps_seg_iter` without a score), so the declarations must follow
//! the installed headers, not the newest ones.

use std::ffi::{c_char, c_double, c_int, c_void};

/// `ps_decoder_t`: a decoder, owned by whoever called `ps_init`.
#[repr(C)]
pub struct PsDecoder {
    _opaque: [u8; 0],
}

/// `cmd_ln_t`: a parsed configuration (reference counted; `ps_init` takes its own reference).
#[repr(C)]
pub struct CmdLn {
    _opaque: [u8; 0],
}

/// `arg_t`: the table of argument definitions that `ps_args` returns.
#[repr(C)]
pub struct ArgDef {
    _opaque: [u8; 0],
}

/// `ps_seg_t`: the word segment iterator of the last hypothesis.
#[repr(C)]
pub struct PsSeg {
    _opaque: [u8; 0],
}

/// `logmath_t`: the decoder's log-domain arithmetic (its base gives meaning to scores).
#[repr(C)]
pub struct LogMath {
    _opaque: [u8; 0],
}

/// The leading fields of SphinxBase's `feat_t` (`sphinxbase/feat.h`), up to the cepstral mean
/// normalization state, which is the one field read. Only ever used through a pointer the library
/// returned, never created or sized here.
#[repr(C)]
pub struct FeatPrefix {
    pub refcount: c_int,
    pub name: *mut c_char,
    pub cepsize: i32,
    pub n_stream: i32,
    pub stream_len: *mut u32,
    pub window_size: i32,
    pub n_sv: i32,
    pub sv_len: *mut u32,
    pub subvecs: *mut *mut i32,
    pub sv_buf: *mut f32,
    pub sv_dim: i32,
    /// `cmn_type_t`: 0 none, 1 batch, 2 live.
    pub cmn: c_int,
    pub varnorm: i32,
    /// `agc_type_t`.
    pub agc: c_int,
    pub compute_feat: Option<unsafe extern "C" fn()>,
    pub cmn_struct: *mut Cmn,
}

/// SphinxBase's `cmn_t` (`sphinxbase/cmn.h`): the running cepstral mean of live decoding. `mfcc_t` is
/// `float`, as the Debian build leaves `FIXED_POINT` undefined.
#[repr(C)]
pub struct Cmn {
    pub cmn_mean: *mut f32,
    pub cmn_var: *mut f32,
    pub sum: *mut f32,
    pub nframe: i32,
    pub veclen: i32,
}

/// `err_cb_f`: SphinxBase's log callback (`void (*)(void *, err_lvl_t, const char *, ...)`). Only the
/// null pointer is ever passed, which turns logging off.
pub type ErrCallback = Option<unsafe extern "C" fn(*mut c_void, c_int, *const c_char, ...)>;

#[link(name = "pocketsphinx")]
#[link(name = "sphinxbase")]
extern "C" {
    // pocketsphinx.h
    pub fn ps_args() -> *const ArgDef;
    pub fn ps_init(config: *mut CmdLn) -> *mut PsDecoder;
    pub fn ps_free(ps: *mut PsDecoder) -> c_int;
    pub fn ps_get_logmath(ps: *mut PsDecoder) -> *mut LogMath;
    pub fn ps_start_stream(ps: *mut PsDecoder) -> c_int;
    pub fn ps_get_feat(ps: *mut PsDecoder) -> *mut FeatPrefix;
    pub fn ps_start_utt(ps: *mut PsDecoder) -> c_int;
    pub fn ps_process_raw(
        ps: *mut PsDecoder,
        data: *const i16,
        n_samples: usize,
        no_search: c_int,
        full_utt: c_int,
    ) -> c_int;
    pub fn ps_end_utt(ps: *mut PsDecoder) -> c_int;
    pub fn ps_get_in_speech(ps: *mut PsDecoder) -> u8;
    pub fn ps_get_hyp(ps: *mut PsDecoder, out_best_score: *mut i32) -> *const c_char;
    pub fn ps_seg_iter(ps: *mut PsDecoder) -> *mut PsSeg;
    pub fn ps_seg_next(seg: *mut PsSeg) -> *mut PsSeg;
    pub fn ps_seg_word(seg: *mut PsSeg) -> *const c_char;
    pub fn ps_seg_frames(seg: *mut PsSeg, out_sf: *mut c_int, out_ef: *mut c_int);
    pub fn ps_seg_prob(
        seg: *mut PsSeg,
        out_ascr: *mut i32,
        out_lscr: *mut i32,
        out_lback: *mut i32,
    ) -> i32;

    // sphinxbase/cmd_ln.h
    pub fn cmd_ln_parse_r(
        inout_cmdln: *mut CmdLn,
        defn: *const ArgDef,
        argc: i32,
        argv: *mut *mut c_char,
        strict: c_int,
    ) -> *mut CmdLn;
    pub fn cmd_ln_free_r(cmdln: *mut CmdLn) -> c_int;
    pub fn cmd_ln_int_r(cmdln: *mut CmdLn, name: *const c_char) -> std::ffi::c_long;
    pub fn cmd_ln_float_r(cmdln: *mut CmdLn, name: *const c_char) -> c_double;

    // sphinxbase/logmath.h
    pub fn logmath_exp(lmath: *mut LogMath, logb_p: c_int) -> c_double;

    // sphinxbase/err.h
    pub fn err_set_callback(callback: ErrCallback, user_data: *mut c_void);
}
